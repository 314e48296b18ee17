"""Every file of feedparser's own test corpus through newsdesk's parse-and-store path, with the
Content-Type its header comment names: each becomes stored articles or a counted failure, and
nothing raises. The corpus is fetched by `make corpus` (tests.feedparser_corpus)."""

from __future__ import annotations

import os
import re
import time
import warnings
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import feedparser
import pytest

from newsdesk.collect.collector import EntryFilter, store_entries
from newsdesk.collect.decode import decode_feed
from newsdesk.collect.parse import parse_feed, without_unsafe_entities
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
    entry_filter = EntryFilter.from_settings(Settings())
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
            store_entries(parsed, feed, report, set(), articles, entry_filter, datetime.now(UTC))
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


# ---- decoding: never worse than feedparser alone ---------------------------------------------

_HEADER = re.compile(rb"^Header:\s*([\w-]+):\s*(.+?)\s*$", re.MULTILINE)
_EXPECT = re.compile(rb"Description:\s*(.*?)\s*Expect:\s*(.*)\s*-->")
_SKIP_UNLESS = re.compile(rb"SkipUnless:\s*(.*?)\n")
# How the corpus's header comment reads in files that are not ASCII-compatible (by BOM or, as
# XML 1.0's appendix F says, by how "<?xml" begins).
_WIDE = (
    (b"\x00\x00\xfe\xff", 4, "utf-32-be"),
    (b"\xff\xfe\x00\x00", 4, "utf-32-le"),
    (b"\x00\x00\x00\x3c", 0, "utf-32-be"),
    (b"\x3c\x00\x00\x00", 0, "utf-32-le"),
    (b"\xfe\xff", 2, "utf-16-be"),
    (b"\xff\xfe", 2, "utf-16-le"),
    (b"\x00\x3c\x00\x3f", 0, "utf-16-be"),
    (b"\x3c\x00\x3f\x00", 0, "utf-16-le"),
    (b"\x4c\x6f\xa7\x94", 0, "cp037"),
)
# The one deliberate exception: broken UTF-8, which feedparser alone re-reads whole as
# windows-1252 (every Korean title turned to mojibake) and newsdesk reads as UTF-8 with the bad
# bytes replaced (tests/test_hostile_feeds.py requires that).
WINDOWS_1252_FALLBACKS = frozenset({"encoding/bozo_linenoise.xml"})
EXPECT_GLOBALS = {"datetime": datetime, "feedparser": feedparser, "time": time}


def _header_text(data: bytes) -> bytes:
    for start, skip, codec in _WIDE:
        if data.startswith(start):
            return data[skip:].decode(codec, errors="replace").encode("utf-8")
    return data


def _expectations(path: Path) -> tuple[str, dict[str, str]] | None:
    """The file's Expect: expression and its HTTP headers; None where the corpus skips it."""
    text = _header_text(path.read_bytes())
    found = _EXPECT.search(text)
    if not found:
        return None
    skip = _SKIP_UNLESS.search(text)
    try:
        if skip and not eval(skip.group(1).strip()):
            return None
    except (ImportError, LookupError, AttributeError):
        return None
    headers = {
        name.decode().lower(): value.decode("latin-1") for name, value in _HEADER.findall(text)
    }
    return found.group(2).strip().decode("utf-8"), headers


def _holds(expect: str, result: Any) -> bool:
    try:
        return bool(eval(expect, dict(EXPECT_GLOBALS), result))
    except Exception:  # an Expect that does not evaluate does not hold
        return False


def test_newsdesk_decoding_never_does_worse_than_feedparser_alone() -> None:
    """Every corpus file of encoding/, wellformed/, illformed/ and entities/ whose Expect holds
    with feedparser alone must hold when feedparser reads what decode_feed makes of it."""
    corpus_files()  # skips, or fails in CI, without the corpus
    held = 0
    regressed: list[str] = []
    for folder in ("encoding", "wellformed", "illformed", "entities"):
        for path in sorted((CORPUS / folder).rglob("*.xml")):
            expectation = _expectations(path)
            if expectation is None:
                continue
            expect, headers = expectation
            content = path.read_bytes()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if not _holds(expect, feedparser.parse(content, response_headers=headers)):
                    continue
                held += 1
                decoded = decode_feed(content, headers.get("content-type"))
                ours = feedparser.parse(
                    without_unsafe_entities(decoded.content), response_headers=decoded.headers
                )
            if not _holds(expect, ours):
                regressed.append(str(path.relative_to(CORPUS)))
    assert held > 2000
    assert sorted(set(regressed) - WINDOWS_1252_FALLBACKS) == []
