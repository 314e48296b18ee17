"""Every file of feedparser's own test corpus through newsdesk's parse-and-store path, with the
Content-Type its header comment names: each becomes stored articles or a counted failure, and
nothing raises. The corpus is fetched by `make corpus` (tests.feedparser_corpus)."""

from __future__ import annotations

import os
import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from newsdesk.collect.collector import store_entries
from newsdesk.collect.parse import parse_feed
from newsdesk.collect.photo import PhotoFilter
from newsdesk.core.errors import FeedParseError
from newsdesk.core.report import FeedReport
from newsdesk.core.settings import Settings
from newsdesk.core.sources import Feed
from newsdesk.storage.articles import ArticleStore
from newsdesk.storage.database import Database
from tests.feedparser_corpus import CORPUS

_CONTENT_TYPE = re.compile(rb"^Header:\s*Content-type:\s*(.+?)\s*$", re.MULTILINE | re.IGNORECASE)


def corpus_files() -> list[Path]:
    if not (CORPUS / "VERSION").exists():
        if os.environ.get("CI"):
            pytest.fail(f"feedparser's corpus is missing from {CORPUS}: run `make corpus`")
        pytest.skip(f"feedparser's corpus is not in {CORPUS}: run `make corpus`")
    return sorted(
        path
        for path in CORPUS.rglob("*")
        if path.is_file() and path.parent != CORPUS  # not LICENSE, VERSION
    )


def test_every_corpus_feed_is_articles_or_a_counted_failure(database: Database) -> None:
    files = corpus_files()
    articles = ArticleStore(database)
    photo = PhotoFilter(Settings().photo_title_patterns)
    outcomes: Counter[str] = Counter()
    crashed: list[str] = []
    for path in files:
        content = path.read_bytes()
        header = _CONTENT_TYPE.search(content[:2000])
        content_type = header.group(1).decode("latin-1") if header else None
        name = str(path.relative_to(CORPUS))
        feed = Feed("corpus", f"https://corpus.example/{name}", path.parent.name)
        report = FeedReport(feed.source, feed.category, feed.url)
        try:
            parsed = parse_feed(content, content_type)
            store_entries(parsed, feed, report, set(), articles, photo, datetime.now(UTC))
        except FeedParseError:
            outcomes["failed: not a feed"] += 1
        except Exception as e:  # what this test is for: nothing else may escape
            crashed.append(f"{name}: {type(e).__name__}: {e}")
        else:
            outcomes[
                "with articles" if report.new + report.duplicate else "a feed, no article"
            ] += 1
    assert crashed == []
    assert sum(outcomes.values()) == len(files) > 2000
    # most of the corpus tests one element of a channel; 6.0.x: 69 store articles, 43 fail
    assert outcomes["with articles"] > 50
