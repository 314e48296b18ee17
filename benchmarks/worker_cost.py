"""A worker's CPU per entry, by stage: 10,000 entries (100 feeds of 100) parsed, filtered,
canonicalised and inserted into PostgreSQL (pgserver), then the same feeds again (every entry
a duplicate). Stages:

  feedparser   feedparser.parse itself
  parse (ours) the rest of parse_feed: encoding checks, entity defusing, entries
  filter+urls  store_entries without the insert: photo filter, canonical_url, in-message dedup
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

from newsdesk.collect.collector import store_entries
from newsdesk.collect.parse import parse_feed
from newsdesk.collect.photo import PhotoFilter
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
    feedparser: Clock = field(default_factory=Clock)
    parse: Clock = field(default_factory=Clock)  # parse_feed, feedparser included
    store: Clock = field(default_factory=Clock)  # store_entries, the insert included
    postgres: Clock = field(default_factory=Clock)


def timed(clock: Clock, function: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with clock.timing():
            return function(*args, **kwargs)

    return wrapper


class TimedStore(ArticleStore):
    def __init__(self, database: Database, clock: Clock) -> None:
        super().__init__(database)
        self._clock = clock

    def insert_articles(self, *args: Any, **kwargs: Any) -> InsertResult:
        with self._clock.timing():
            return super().insert_articles(*args, **kwargs)


def feed_body(feed: int, entries: int) -> bytes:
    at = datetime(2026, 12, 1, 9, tzinfo=UTC)
    items = "".join(
        f"<item><title>[속보] 정부, {feed}번 분야 대책 {n}차 발표…시장 반응 엇갈려</title>"
        f"<link>https://www.news.example/article/{feed}/{n}?utm_source=rss&amp;utm_medium=feed"
        f"</link><guid>https://www.news.example/article/{feed}/{n}</guid>"
        f"<description><![CDATA[<p>{'기사 본문 요약 문장입니다. ' * 8}</p>]]></description>"
        f"<pubDate>{format_datetime(at - timedelta(minutes=n))}</pubDate></item>"
        for n in range(entries)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>뉴스</title>'
        f"<link>https://www.news.example/</link>{items}</channel></rss>"
    ).encode()


def run_pass(bodies: list[bytes], articles: ArticleStore, stages: Stages) -> tuple[int, int]:
    photo = PhotoFilter(Settings().photo_title_patterns)
    new = duplicate = 0
    for number, body in enumerate(bodies):
        feed = Feed("연합뉴스", f"https://www.news.example/rss/{number}.xml", "정치")
        report = FeedReport(feed.source, feed.category, feed.url)
        with stages.parse.timing():
            parsed = parse_feed(body, "application/rss+xml; charset=utf-8")
        with stages.store.timing():
            store_entries(parsed, feed, report, set(), articles, photo, datetime.now(UTC))
        new, duplicate = new + report.new, duplicate + report.duplicate
    return new, duplicate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--feeds", type=int, default=100)
    parser.add_argument("--entries", type=int, default=100)
    args = parser.parse_args()
    bodies = [feed_body(f, args.entries) for f in range(args.feeds)]
    total = args.feeds * args.entries
    with tempfile.TemporaryDirectory(prefix="newsdesk-bench-") as folder:
        Path(folder).chmod(0o755)  # pgserver runs PostgreSQL as its own user when run as root
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pgserver

            postgres = pgserver.get_server(Path(folder) / "pg", cleanup_mode="stop")
        database = Database(lambda: str(postgres.get_uri()))
        migrate(database)
        print(
            f"{args.feeds} feeds x {args.entries} entries = {total:,} entries, "
            f"{sum(map(len, bodies)) / 1e6:.1f} MB"
        )
        print(f"{'pass':<12} {'stage':<13} {'CPU s':>7} {'wall s':>7} {'CPU µs/entry':>13}")
        for name in ("new", "duplicates"):
            stages = Stages()
            feedparser.parse = timed(stages.feedparser, original_parse)
            new, duplicate = run_pass(bodies, TimedStore(database, stages.postgres), stages)
            rows = [
                ("feedparser", stages.feedparser.cpu, stages.feedparser.wall),
                (
                    "parse (ours)",
                    stages.parse.cpu - stages.feedparser.cpu,
                    stages.parse.wall - stages.feedparser.wall,
                ),
                (
                    "filter+urls",
                    stages.store.cpu - stages.postgres.cpu,
                    stages.store.wall - stages.postgres.wall,
                ),
                ("postgres", stages.postgres.cpu, stages.postgres.wall),
                (
                    "total",
                    stages.parse.cpu + stages.store.cpu,
                    stages.parse.wall + stages.store.wall,
                ),
            ]
            for stage, cpu, wall in rows:
                print(f"{name:<12} {stage:<13} {cpu:>7.2f} {wall:>7.2f} {cpu / total * 1e6:>13.0f}")
            print(
                f"{name:<12} new {new:,}, duplicate {duplicate:,}; insert_articles "
                f"{total / stages.postgres.wall:,.0f} entries/s (wall, one transaction a feed)"
            )
        feedparser.parse = original_parse
        database.close()
        postgres.cleanup()


original_parse = feedparser.parse

if __name__ == "__main__":
    main()
