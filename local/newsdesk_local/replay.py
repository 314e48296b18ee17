"""A labelled stream replayed through the clustering job as it runs in production: the articles
stored up front as ``raw_article`` rows collected when the stream says, then the pass of
`newsdesk cluster --at T` (``newsdesk_local.commands.cluster.cluster``) for every tick T of a
cadence (the job sees only what was collected by T), and the issues read back from the database
at the end.

``replay`` runs the pass with the environment it is given, whose DATABASE_URL names an
empty, migrated database. ``ReplayServices`` gives a benchmark one: pgserver where the local
runtime keeps it (NEWSDESK_DATA_DIR/pg, here a temporary folder, so the user's own local state is
untouched) with a new database for each replay, and moto, both started once, so that a tick costs
what the command costs past its services' start (benchmarks/cluster_quality.py).
"""

from __future__ import annotations

import contextlib
import math
import shutil
import tempfile
import time
import warnings
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg2
import psycopg2.extras
import psycopg2.sql

from newsdesk.core.entry import Entry
from newsdesk.core.errors import ConfigError, InfrastructureError
from newsdesk.core.times import format_time
from newsdesk.storage.articles import Article, ArticleStore
from newsdesk.storage.database import Database
from newsdesk.storage.migrate import migrate
from newsdesk_local.commands import cluster, context
from newsdesk_local.emulator import moto_server
from newsdesk_local.local_postgres import PG_FOLDER
from newsdesk_local.services import FAKE_CREDENTIALS, REAL_CREDENTIALS

SOURCE = "replay"  # every replayed article's outlet
URL = "https://replay.test/{}"  # an article's link, by its key (nothing is fetched)


class ReplayError(Exception):
    """A tick's clustering pass did not finish (a configuration error, a service that cannot be
    reached: what `newsdesk cluster` would say, exit 2), or the stream was not stored."""


@dataclass(frozen=True)
class StreamArticle:
    key: str  # the caller's name for it; the issues come back in these
    title: str
    category: str
    collected_at: datetime  # aware


@dataclass
class Replay:
    groups: list[list[str]]  # the stored issues' members, by key
    # each tick's answer (the cluster function's: what `newsdesk cluster --json` prints, and more)
    runs: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0  # from storing the stream to reading the issues back


def ticks(stream: Sequence[StreamArticle], cadence: timedelta) -> list[datetime]:
    """Every ``cadence`` from the first article's time up to the first tick at or after the
    last's. Whole seconds, the first rounded up: `--at` is read to the second, and the first
    tick then sees the first article."""
    times = [a.collected_at for a in stream]
    first, last = min(times), max(times)
    start = first.replace(microsecond=0) + timedelta(seconds=first.microsecond > 0)
    count = max(0, math.ceil((last - start) / cadence)) + 1
    return [start + k * cadence for k in range(count)]


def store(database: Database, stream: Sequence[StreamArticle]) -> None:
    """The stream as the collector stores articles (ArticleStore), in time order within each
    category, so that ids follow collection as the job's window expects; then each row's
    collection times set to the stream's."""
    by_category: dict[str, list[StreamArticle]] = defaultdict(list)
    for article in sorted(stream, key=lambda a: a.collected_at):
        by_category[article.category].append(article)
    articles = ArticleStore(database)
    for category, members in by_category.items():
        entries = [
            Article(Entry(a.title, URL.format(a.key), "", None, a.collected_at), URL.format(a.key))
            for a in members
        ]
        result = articles.insert_articles(SOURCE, category, entries, members[0].collected_at)
        if result.inserted != len(members):
            raise ReplayError(f"{category}: {result.inserted} of {len(members)} stored")
    with database.transaction() as cursor:
        psycopg2.extras.execute_values(
            cursor,
            """
            UPDATE raw_article a SET collected_at = v.at, first_seen_at = v.at, last_seen_at = v.at
            FROM (VALUES %s) AS v (url, at) WHERE a.origin_url = v.url
            """,
            [(URL.format(a.key), a.collected_at) for a in stream],
            template="(%s, %s::timestamptz)",
            page_size=1000,
        )


def cluster_at(at: datetime, environ: Mapping[str, str]) -> dict[str, Any]:
    """`newsdesk cluster --at AT`'s pass in this process; its answer."""
    try:
        return cluster.cluster(context.environment(environ), at)
    except (ConfigError, InfrastructureError) as e:
        raise ReplayError(f"newsdesk cluster --at {format_time(at)}: {e}") from e


def issues(database: Database) -> list[list[str]]:
    """Every stored issue's members, by the stream's keys."""
    prefix = URL.format("")
    with database.transaction() as cursor:
        cursor.execute(
            "SELECT issue_id, origin_url FROM raw_article WHERE issue_id IS NOT NULL"
            " ORDER BY issue_id, id"
        )
        members: dict[int, list[str]] = defaultdict(list)
        for issue_id, url in cursor.fetchall():
            members[issue_id].append(url.removeprefix(prefix))
    return list(members.values())


def replay(
    stream: Sequence[StreamArticle], cadence: timedelta, environ: Mapping[str, str]
) -> Replay:
    """The stream stored in ``environ``'s DATABASE_URL (empty and migrated), clustered at
    every tick by the command's pass, with ``environ`` as its environment."""
    started = time.perf_counter()
    database = Database(lambda: environ["DATABASE_URL"])
    try:
        store(database, stream)
        runs = [cluster_at(at, environ) for at in ticks(stream, cadence)]
        groups = issues(database)
    finally:
        database.close()
    return Replay(groups, runs, time.perf_counter() - started)


class ReplayServices:
    """PostgreSQL (pgserver, in a temporary NEWSDESK_DATA_DIR) and moto for replays, started
    once; ``environ(name)`` is the command's environment over a new, migrated database."""

    def __init__(self, base: Mapping[str, str]) -> None:
        """``base``: the rest of the command's environment (its AWS credentials are replaced
        by moto's fake ones)."""
        self._base = {k: v for k, v in base.items() if k not in REAL_CREDENTIALS}
        self._stack = contextlib.ExitStack()
        self._server: Any = None
        self._aws = ""
        self.data_dir = Path()

    def __enter__(self) -> ReplayServices:
        try:
            self.data_dir = Path(tempfile.mkdtemp(prefix="newsdesk-replay-"))
            self._stack.callback(shutil.rmtree, self.data_dir, ignore_errors=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
                import pgserver

                self._server = pgserver.get_server(self.data_dir / PG_FOLDER, cleanup_mode="stop")
            self._stack.callback(self._server.cleanup)
            moto = self._stack.enter_context(moto_server())
            moto.wait_ready()
            self._aws = moto.url
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stack.close()

    def environ(self, name: str) -> dict[str, str]:
        """A new database ``name`` (migrated) and the environment that names it."""
        connection = psycopg2.connect(str(self._server.get_uri()))
        try:
            connection.autocommit = True
            with connection.cursor() as cursor:
                cursor.execute(
                    psycopg2.sql.SQL("CREATE DATABASE {}").format(psycopg2.sql.Identifier(name))
                )
        finally:
            connection.close()
        url = str(self._server.get_uri(name))
        database = Database(lambda: url)
        try:
            migrate(database)
        finally:
            database.close()
        return {
            **self._base,
            "NEWSDESK_DATA_DIR": str(self.data_dir),
            "DATABASE_URL": url,
            "AWS_ENDPOINT_URL": self._aws,
            **FAKE_CREDENTIALS,
        }
