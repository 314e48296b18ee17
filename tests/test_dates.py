"""Dates as outlets write them (newsdesk.collect.dates), and what an entry's age decides."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from newsdesk.collect.collector import EntryFilter, store_entries
from newsdesk.collect.dates import parse_date
from newsdesk.collect.parse import parse_feed
from newsdesk.collect.photo import PhotoFilter
from newsdesk.core.report import FeedReport
from newsdesk.core.sources import Feed
from newsdesk.storage.articles import ArticleStore
from newsdesk.storage.database import Database

KST_3PM = datetime(2024, 3, 1, 6, 0, tzinfo=UTC)  # 15:00 in Korea

DATES = [
    # what feedparser already reads, unchanged
    ("Tue, 01 Dec 2026 09:00:00 +0900", datetime(2026, 12, 1, 0, 0, tzinfo=UTC)),
    ("2026-12-01T09:00:00+09:00", datetime(2026, 12, 1, 0, 0, tzinfo=UTC)),
    ("2024-03-01 15:30:00", datetime(2024, 3, 1, 15, 30, tzinfo=UTC)),  # ISO, no zone: UTC
    # Korea's zone by name
    ("Fri, 29 Nov 2024 09:00:00 KST", datetime(2024, 11, 29, 0, 0, tzinfo=UTC)),
    # a numeric month (feedparser: no date)
    ("Sun, 27 09 2026 10:00:00 +0900", datetime(2026, 9, 27, 1, 0, tzinfo=UTC)),
    ("27 09 2026 10:00 +0900", datetime(2026, 9, 27, 1, 0, tzinfo=UTC)),
    ("Sun, 27 09 2026 10:00:00 KST", datetime(2026, 9, 27, 1, 0, tzinfo=UTC)),
    # no space after the comma (feedparser: no date)
    ("Sun,27 Sep 2026 10:00:00 +0900", datetime(2026, 9, 27, 1, 0, tzinfo=UTC)),
    ("Sun,27 Sep 2026 10:00:00 KST", datetime(2026, 9, 27, 1, 0, tzinfo=UTC)),
    # Korean, in Korea's time (feedparser: 2024-12-01)
    ("2024년 3월 1일 오후 3시", KST_3PM),
    ("2024년 03월 01일 15:00", KST_3PM),
    ("2024년 3월 1일 오후 3시 20분", KST_3PM + timedelta(minutes=20)),
    ("2024년 3월 1일 오전 12시", datetime(2024, 2, 29, 15, 0, tzinfo=UTC)),  # midnight
    ("2024년 3월 1일", datetime(2024, 2, 29, 15, 0, tzinfo=UTC)),
    ("2024.03.01 15:00", KST_3PM),
    ("2024.03.01(금) 15:00", KST_3PM),
    ("2024/03/01 15:00:00", KST_3PM),
    ("2024-03-01 오후 3:00:00", KST_3PM),
    # no date at all
    ("2024년 13월 1일", None),
    ("Sun, 27 13 2026 10:00:00 +0900", None),
    ("내일", None),
    ("Mon, 01 Jan 0001 00:00:00 +0900", None),  # before year 1 in UTC: no crash, no date
    ("", None),
]


@pytest.mark.parametrize(("text", "expected"), DATES, ids=[d for d, _ in DATES])
def test_dates_outlets_write(text, expected):
    assert parse_date(text) == expected


@pytest.mark.parametrize("fast", [True, False])
def test_both_readers_read_dates_alike(fast):
    items = "".join(
        f"<item><link>https://n.test/{n}</link><pubDate>{text}</pubDate></item>"
        for n, (text, _) in enumerate(DATES)
    )
    body = f'<rss version="2.0"><channel><title>t</title>{items}</channel></rss>'.encode()
    feed = parse_feed(body, fast=fast)
    assert feed.fast is fast
    assert [e.published_at for e in feed.entries] == [expected for _, expected in DATES]


NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def rss(*items: tuple[str, str | None]) -> bytes:
    body = "".join(
        f"<item><title>{title}</title><link>https://n.test/{title}</link>"
        + (f"<pubDate>{date}</pubDate>" if date else "")
        + "</item>"
        for title, date in items
    )
    return f'<rss version="2.0"><channel><title>t</title>{body}</channel></rss>'.encode()


def store(database: Database, body: bytes, max_age_hours: float = 72) -> FeedReport:
    feed = Feed("연합뉴스", "https://n.test/rss", "정치")
    report = FeedReport(feed.source, feed.category, feed.url)
    entry_filter = EntryFilter(PhotoFilter([]), timedelta(hours=max_age_hours))
    store_entries(parse_feed(body), feed, report, set(), ArticleStore(database), entry_filter, NOW)
    return report


def test_entries_older_than_the_maximum_age_are_counted_not_stored(database):
    # GIVEN a feed republishing its archive beside today's news, and one entry without a date
    report = store(
        database,
        rss(
            ("오늘", "Tue, 01 Dec 2026 17:00:00 +0900"),
            ("사흘 전", "Sat, 28 Nov 2026 10:00:00 +0000"),  # 71 hours before NOW
            ("나흘 전", "Fri, 27 Nov 2026 08:00:00 +0000"),
            ("작년", "2025년 12월 1일 오전 9시"),
            ("날짜 없음", None),
        ),
    )
    # THEN the two older than 72 hours are too old, the undated one is stored and counted
    assert (report.new, report.too_old, report.undated) == (3, 2, 1)
    assert report.entries_seen == 5
    # AND a longer maximum keeps them
    assert store(database, rss(("작년", "2025년 12월 1일 오전 9시")), 24 * 400).new == 1


def test_titles_and_summaries_with_replacement_characters_are_counted(database):
    body = rss(("깨진 \ufffd 제목", None), ("멀쩡한 제목", None))
    report = store(database, body)
    assert (report.new, report.with_replacement_char) == (2, 1)
