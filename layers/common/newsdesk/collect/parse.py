"""Feed bytes to entries, with feedparser, decoding Korean legacy encodings right."""

from __future__ import annotations

import calendar
import codecs
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from html import unescape
from typing import Any
from urllib.parse import urljoin, urlsplit

import feedparser
from feedparser.datetimes.rfc822 import _parse_date_rfc822

from newsdesk.core.entry import Entry
from newsdesk.core.errors import FeedParseError

_ROOT_ELEMENT = re.compile(rb"<[A-Za-z_]")
_ENTITY_DECLARATION = re.compile(rb"<!ENTITY[^>]*>")
_SAFE_ENTITY = re.compile(rb'<!ENTITY\s+[A-Za-z_][\w.-]*\s+"(?:&#\w+;|[^&%"]*)"\s*>')
_XML_DECLARATION = re.compile(rb"^\s*<\?xml[^>]*?encoding=[\"']([A-Za-z0-9._-]+)[\"'][^>]*\?>")
_CHARSET = re.compile(r"charset=[\"']?([A-Za-z0-9._-]+)", re.IGNORECASE)
# Longer links and guids are refused: PostgreSQL cannot index a key of much over 2,700 bytes,
# and no article needs one.
MAX_KEY_BYTES = 2000
_TAGS = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")
# C0 controls but tab, newline and carriage return, and DEL: PostgreSQL refuses NUL in text,
# and none of them belongs in a title, a summary or a link.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)  # UTF-32's begin alike
_KOREAN_LEGACY = {"euc_kr", "cp949"}
# Dates outside these bounds are feedparser's guesses at garbage ("99999…" becomes 9999-12-01)
# and are stored as no date.
_EARLIEST = datetime(1990, 1, 1, tzinfo=UTC)
_FUTURE_SLACK = timedelta(days=1)


def _parse_kst(date: str) -> Any:
    """RFC 822 dates with Korea's zone name: feedparser knows no "KST" and reads them as UTC,
    nine hours late."""
    stripped = date.strip()
    if not stripped.upper().endswith(" KST"):
        return None
    return _parse_date_rfc822(stripped[:-4] + " +0900")


feedparser.registerDateHandler(_parse_kst)


@dataclass(frozen=True)
class ParsedFeed:
    version: str
    entries: list[Entry]
    entries_without_link: int
    ttl: str | None = None  # RSS <ttl>, minutes
    # feedparser's: what it decoded the bytes it was handed from (utf-8 for a body newsdesk
    # re-coded first, a Korean legacy or broken UTF-8 one)
    encoding: str | None = None


def parse_feed(
    content: bytes, content_type: str | None = None, base_url: str | None = None
) -> ParsedFeed:
    """Parse ``content``; raise FeedParseError when it is not an RSS or Atom feed. Relative
    links are resolved against ``base_url`` (the feed's final URL)."""
    if not content.strip():
        raise FeedParseError("empty body")
    content, headers = _as_reliable_utf8(content, content_type)
    content = _without_unsafe_entities(content)
    parsed = feedparser.parse(content, response_headers=headers, sanitize_html=True)
    if not parsed.get("version"):
        problem = parsed.get("bozo_exception")
        detail = f": {problem}" if problem else ""
        raise FeedParseError(f"not an RSS or Atom feed{detail}")
    entries: list[Entry] = []
    without_link = 0
    for raw in parsed.entries:
        entry = _entry(raw, base_url)
        if entry is None:
            without_link += 1
        else:
            entries.append(entry)
    return ParsedFeed(
        version=parsed.version,
        entries=entries,
        entries_without_link=without_link,
        ttl=parsed.feed.get("ttl"),
        encoding=parsed.get("encoding"),
    )


def _without_unsafe_entities(content: bytes) -> bytes:
    """Drop the prolog's entity declarations but those defining plain text or one character.

    An entity made of other entities is how the "billion laughs" multiply, and an external one
    (SYSTEM, PUBLIC, %) asks for a file or a URL. feedparser strips such declarations only when
    each begins a line; on one line with the DOCTYPE they reach expat, whose amplification
    limit stops the expansion only after tens of megabytes. References left undefined make
    feedparser fall back to its loose parser, which keeps them as text.
    """
    root = _ROOT_ELEMENT.search(content)
    head = content[: root.start()] if root else content
    if b"<!ENTITY" not in head:
        return content
    safe = _ENTITY_DECLARATION.sub(
        lambda m: m.group(0) if _SAFE_ENTITY.fullmatch(m.group(0)) else b"", head
    )
    return safe + content[len(head) :]


def declared_encoding(content: bytes, content_type: str | None) -> str | None:
    """The charset the HTTP header names, else the XML declaration's (RFC 7303 order)."""
    header = _CHARSET.search(content_type) if content_type else None
    if header:
        return header.group(1)
    declaration = _XML_DECLARATION.match(content[:200])
    return declaration.group(1).decode("ascii") if declaration else None


def _as_reliable_utf8(content: bytes, content_type: str | None) -> tuple[bytes, dict[str, str]]:
    """Hand feedparser UTF-8 where it would guess wrong, with a header saying so.

    Feeds labelled EUC-KR are often CP949 (its superset, with the 8,822 syllables EUC-KR
    lacks): feedparser would decode them as EUC-KR, fail on the first such syllable and fall
    back to a Western encoding. Feeds labelled UTF-8 (or not labelled, which means UTF-8) with
    one invalid byte fare the same: feedparser re-decodes the whole document as windows-1252
    and every Korean title turns to mojibake. Those are decoded here as CP949 when they are
    wholly valid CP949 (a mislabelled Korean feed), else as UTF-8 with the bad bytes replaced.
    """
    headers = {"content-type": content_type} if content_type else {}
    if content.startswith(_BOMS):
        return content, headers  # the byte order mark decides, and feedparser reads it
    label = declared_encoding(content, content_type) or "utf-8"
    codec = _codec(label)
    if codec in _KOREAN_LEGACY:
        text = content.decode("cp949", errors="replace")
    elif codec == "utf-8":
        try:
            content.decode("utf-8")
        except UnicodeDecodeError:
            text = _decode_broken_utf8(content)
        else:
            return content, headers
    else:
        return content, headers
    text = re.sub(
        r"^(\s*<\?xml[^>]*?encoding=[\"'])[A-Za-z0-9._-]+",
        r"\g<1>utf-8",
        text,
        count=1,
    )
    return text.encode("utf-8"), {"content-type": "application/xml; charset=utf-8"}


def _decode_broken_utf8(content: bytes) -> str:
    try:
        return content.decode("cp949")
    except UnicodeDecodeError:
        return content.decode("utf-8", errors="replace")


def _codec(label: str) -> str | None:
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def _entry(raw: Mapping[str, Any], base_url: str | None) -> Entry | None:
    link = _CONTROL.sub("", raw.get("link") or "").strip()
    if link and base_url:
        try:
            if not urlsplit(link).scheme:  # "/news/1", "news/1", "//host/news/1"
                link = urljoin(base_url, link)
        except ValueError:  # "http://[not an address": no link to store
            return None
    if not link.lower().startswith(("http://", "https://")) or not fits_a_key(link):
        return None  # feedparser fills "link" from an Atom id such as urn:uuid:…
    guid = _CONTROL.sub("", raw.get("id") or "").strip()
    return Entry(
        # Titles are text: "<속보>" is emphasis there, not a tag.
        title=_text(raw.get("title") or ""),
        link=link,
        summary=_text(unescape(_TAGS.sub(" ", raw.get("summary") or ""))),
        guid=guid if guid and fits_a_key(guid) else None,
        published_at=_timestamp(_published(raw)),
    )


def _published(raw: Mapping[str, Any]) -> Any:
    with warnings.catch_warnings():
        # feedparser warns that it maps a missing published_parsed to updated_parsed; we want
        # exactly that fallback.
        warnings.simplefilter("ignore", DeprecationWarning)
        return raw.get("published_parsed") or raw.get("updated_parsed")


def fits_a_key(text: str) -> bool:
    return len(text.encode("utf-8")) <= MAX_KEY_BYTES


def _text(text: str) -> str:
    return _SPACE.sub(" ", _CONTROL.sub("", text)).strip()


def _timestamp(parsed: Any) -> datetime | None:
    if parsed is None:
        return None
    try:
        at = datetime.fromtimestamp(calendar.timegm(parsed), tz=UTC)
    except (OverflowError, ValueError, TypeError):
        return None
    return at if _EARLIEST <= at <= datetime.now(UTC) + _FUTURE_SLACK else None
