"""A worker's CPU per entry, by stage: 10,000 entries (100 feeds of 100) parsed, filtered,
canonicalised and inserted into PostgreSQL (pgserver), then the same feeds again (every entry
a duplicate) — once for each reader, in the same run:

  feedparser, sanitising  what the worker did before issue 12: feedparser with its HTML
                          sanitiser and URI resolver on
  feedparser              the fallback today: feedparser without them
  fast                    the default today: newsdesk.collect.rss, feedparser where it refuses

Stages:

  decode       decode_feed and the entity defusing
  reader       feedparser.parse, or read_rss
  entries      the rest of parse_feed: links, text, dates
  filter+urls  store_entries without the insert: age and photo filters, canonical_url, dedup
  postgres     ArticleStore.insert_articles (client CPU; wall time includes the server's work)

Usage: .venv/bin/python benchmarks/worker_cost.py [--feeds 100] [--entries 100]
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import feedparser

import newsdesk.collect.parse as parse_module
from newsdesk.collect.collector import EntryFilter, store_entries
from newsdesk.collect.decode import decode_feed
from newsdesk.collect.parse import parse_feed
from newsdesk.collect.rss import read_rss
from newsdesk.core.report import FeedReport
from newsdesk.core.settings import Settings
from newsdesk.core.sources import Feed
from newsdesk.storage.articles import ArticleStore, InsertResult
from newsdesk.storage.database import Database
from newsdesk.storage.migrate import migrate


@dataclass
class Clock:
    cpu: float = 0.0
    wall: float = 0.0

    @contextmanager
    def timing(self) -> Iterator[None]:
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            yield
        finally:
            self.cpu += time.process_time() - cpu
            self.wall += time.perf_counter() - wall


@dataclass
class Stages:
    decode: Clock = field(default_factory=Clock)
    reader: Clock = field(default_factory=Clock)
    parse: Clock = field(default_factory=Clock)  # parse_feed, decode and reader included
    store: Clock = field(default_factory=Clock)  # store_entries, the insert included
    postgres: Clock = field(default_factory=Clock)

    def rows(self) -> list[tuple[str, Clock]]:
        def minus(a: Clock, *others: Clock) -> Clock:
            return Clock(a.cpu - sum(o.cpu for o in others), a.wall - sum(o.wall for o in others))

        total = Clock(self.parse.cpu + self.store.cpu, self.parse.wall + self.store.wall)
        return [
            ("decode", self.decode),
            ("reader", self.reader),
            ("entries", minus(self.parse, self.decode, self.reader)),
            ("filter+urls", minus(self.store, self.postgres)),
            ("postgres", self.postgres),
            ("total", total),
        ]


def timed(clock: Clock, function: Callable[..., Any], **forced: Any) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with clock.timing():
            return function(*args, **{**kwargs, **forced})

    return wrapper


class TimedStore(ArticleStore):
    def __init__(self, database: Database, clock: Clock) -> None:
        super().__init__(database)
        self._clock = clock

    def insert_articles(self, *args: Any, **kwargs: Any) -> InsertResult:
        with self._clock.timing():
            return super().insert_articles(*args, **kwargs)


def feed_body(feed: int, entries: int, now: datetime) -> bytes:
    items = "".join(
        f"<item><title>[속보] 정부, {feed}번 분야 대책 {n}차 발표…시장 반응 엇갈려</title>"
        f"<link>https://www.news.example/article/{feed}/{n}?utm_source=rss&amp;utm_medium=feed"
        f"</link><guid>https://www.news.example/article/{feed}/{n}</guid>"
        f"<description><![CDATA[<p>{'기사 본문 요약 문장입니다. ' * 8}</p>]]></description>"
        f"<pubDate>{format_datetime(now - timedelta(minutes=n))}</pubDate></item>"
        for n in range(entries)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>뉴스</title>'
        f"<link>https://www.news.example/</link>{items}</channel></rss>"
    ).encode()


READERS = {  # name: (parse_feed's fast, feedparser.parse's forced keywords)
    "feedparser, sanitising": (False, {"sanitize_html": True, "resolve_relative_uris": True}),
    "feedparser": (False, {}),
    "fast": (True, {}),
}


def run_pass(bodies: list[bytes], database: Database, reader: str) -> tuple[Stages, int, int]:
    stages = Stages()
    fast, forced = READERS[reader]
    # parse_feed's own names for them, wrapped in clocks
    setattr(parse_module, "decode_feed", timed(stages.decode, decode_feed))  # noqa: B010
    setattr(parse_module, "read_rss", timed(stages.reader, read_rss))  # noqa: B010
    feedparser.parse = timed(stages.reader, original_parse, **forced)
    articles = TimedStore(database, stages.postgres)
    entry_filter = EntryFilter.from_settings(Settings())
    new = duplicate = 0
    for number, body in enumerate(bodies):
        feed = Feed("연합뉴스", f"https://www.news.example/rss/{number}.xml", "정치")
        report = FeedReport(feed.source, feed.category, feed.url)
        with stages.parse.timing():
            parsed = parse_feed(body, "application/rss+xml; charset=utf-8", fast=fast)
        with stages.store.timing():
            store_entries(parsed, feed, report, set(), articles, entry_filter, datetime.now(UTC))
        new, duplicate = new + report.new, duplicate + report.duplicate
    return stages, new, duplicate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--feeds", type=int, default=100)
    parser.add_argument("--entries", type=int, default=100)
    args = parser.parse_args()
    total = args.feeds * args.entries
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory(prefix="newsdesk-bench-") as folder:
        Path(folder).chmod(0o755)  # pgserver runs PostgreSQL as its own user when run as root
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pgserver

            postgres = pgserver.get_server(Path(folder) / "pg", cleanup_mode="stop")
        database = Database(lambda: str(postgres.get_uri()))
        migrate(database)
        print(f"{args.feeds} feeds x {args.entries} entries = {total:,} entries a pass")
        print(f"{'reader':<23} {'pass':<11} {'stage':<12} {'CPU s':>6} {'wall s':>7} {'µs':>9}")
        totals: dict[str, float] = {}
        for index, reader in enumerate(READERS):
            # each reader's own articles, so that its first pass inserts them all
            offset = index * args.feeds
            bodies = [feed_body(offset + f, args.entries, now) for f in range(args.feeds)]
            for name in ("new", "duplicates"):
                stages, new, duplicate = run_pass(bodies, database, reader)
                for stage, clock in stages.rows():
                    print(
                        f"{reader:<23} {name:<11} {stage:<12} {clock.cpu:>6.2f} "
                        f"{clock.wall:>7.2f} {clock.cpu / total * 1e6:>9.0f}"
                    )
                print(f"{reader:<23} {name:<11} new {new:,}, duplicate {duplicate:,}")
                if name == "new":
                    totals[reader] = stages.rows()[-1][1].cpu / total * 1e6
        before = totals["feedparser, sanitising"]
        print(
            "whole path, CPU per new entry: "
            + ", ".join(f"{r} {us:.0f} µs ({before / us:.1f}x)" for r, us in totals.items())
        )
        database.close()
        postgres.cleanup()


original_parse = feedparser.parse

if __name__ == "__main__":
    main()
