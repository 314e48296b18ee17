"""Feed bytes to entries, with feedparser, decoding Korean legacy encodings right."""

from __future__ import annotations

import calendar
import codecs
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from html import unescape
from typing import Any

import feedparser

from newsdesk.errors import FeedParseError

_XML_DECLARATION = re.compile(rb"^\s*<\?xml[^>]*?encoding=[\"']([A-Za-z0-9._-]+)[\"'][^>]*\?>")
_CHARSET = re.compile(r"charset=[\"']?([A-Za-z0-9._-]+)", re.IGNORECASE)
_TAGS = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Entry:
    title: str
    link: str
    summary: str
    guid: str | None
    published_at: datetime | None


@dataclass(frozen=True)
class ParsedFeed:
    version: str
    entries: list[Entry]
    entries_without_link: int
    ttl: str | None = None  # RSS <ttl>, minutes


def parse_feed(content: bytes, content_type: str | None = None) -> ParsedFeed:
    """Parse ``content``; raise FeedParseError when it is not an RSS or Atom feed."""
    if not content.strip():
        raise FeedParseError("empty body")
    content, headers = _as_utf8_if_korean_legacy(content, content_type)
    parsed = feedparser.parse(content, response_headers=headers, sanitize_html=True)
    if not parsed.get("version"):
        problem = parsed.get("bozo_exception")
        detail = f": {problem}" if problem else ""
        raise FeedParseError(f"not an RSS or Atom feed{detail}")
    entries: list[Entry] = []
    without_link = 0
    for raw in parsed.entries:
        entry = _entry(raw)
        if entry is None:
            without_link += 1
        else:
            entries.append(entry)
    return ParsedFeed(
        version=parsed.version,
        entries=entries,
        entries_without_link=without_link,
        ttl=parsed.feed.get("ttl"),
    )


def declared_encoding(content: bytes, content_type: str | None) -> str | None:
    """The charset the HTTP header names, else the XML declaration's (RFC 7303 order)."""
    header = _CHARSET.search(content_type) if content_type else None
    if header:
        return header.group(1)
    declaration = _XML_DECLARATION.match(content[:200])
    return declaration.group(1).decode("ascii") if declaration else None


def _as_utf8_if_korean_legacy(
    content: bytes, content_type: str | None
) -> tuple[bytes, dict[str, str]]:
    """Feeds labelled EUC-KR are often CP949 (its superset, with the 8,822 syllables EUC-KR
    lacks). feedparser would decode them as EUC-KR, fail on the first such syllable and fall
    back to a Western encoding, so they are decoded here as CP949 and handed over as UTF-8."""
    headers = {"content-type": content_type} if content_type else {}
    label = declared_encoding(content, content_type)
    if label is None or not _is_euc_kr(label):
        return content, headers
    text = content.decode("cp949", errors="replace")
    text = re.sub(
        r"^(\s*<\?xml[^>]*?encoding=[\"'])[A-Za-z0-9._-]+",
        r"\g<1>utf-8",
        text,
        count=1,
    )
    return text.encode("utf-8"), {"content-type": "application/xml; charset=utf-8"}


def _is_euc_kr(label: str) -> bool:
    try:
        return codecs.lookup(label).name in {"euc_kr", "cp949"}
    except LookupError:
        return False


def _entry(raw: Mapping[str, Any]) -> Entry | None:
    link = (raw.get("link") or "").strip()
    if not link.lower().startswith(("http://", "https://")):
        return None  # feedparser fills "link" from an Atom id such as urn:uuid:…
    return Entry(
        # Titles are text: "<속보>" is emphasis there, not a tag.
        title=_SPACE.sub(" ", raw.get("title") or "").strip(),
        link=link,
        summary=_plain(raw.get("summary") or ""),
        guid=(raw.get("id") or None),
        published_at=_timestamp(_published(raw)),
    )


def _published(raw: Mapping[str, Any]) -> Any:
    with warnings.catch_warnings():
        # feedparser warns that it maps a missing published_parsed to updated_parsed; we want
        # exactly that fallback.
        warnings.simplefilter("ignore", DeprecationWarning)
        return raw.get("published_parsed") or raw.get("updated_parsed")


def _plain(html: str) -> str:
    return _SPACE.sub(" ", unescape(_TAGS.sub(" ", html))).strip()


def _timestamp(parsed: Any) -> datetime | None:
    if parsed is None:
        return None
    try:
        return datetime.fromtimestamp(calendar.timegm(parsed), tz=UTC)
    except (OverflowError, ValueError, TypeError):
        return None
