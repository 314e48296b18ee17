"""Feed bytes to entries: decoded as the evidence says (decode), read by the fast RSS reader
where it fully understands the document (rss) and by feedparser everywhere else, and kept as
text."""

from __future__ import annotations

import re
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from html import unescape
from typing import Any
from urllib.parse import urljoin, urlsplit

import feedparser

from newsdesk.collect.dates import to_datetime
from newsdesk.collect.decode import Decoded, declared_encoding, decode_feed
from newsdesk.collect.rss import Item, read_rss
from newsdesk.core.entry import Entry
from newsdesk.core.errors import FeedParseError

_ENTITY_DECLARATION = re.compile(rb"<!ENTITY[^>]*>")
_SAFE_ENTITY = re.compile(rb'<!ENTITY\s+[A-Za-z_][\w.-]*\s+"(?:&#\w+;|[^&%"]*)"\s*>')
# Longer links and guids are refused: PostgreSQL cannot index a key of much over 2,700 bytes,
# and no article needs one.
MAX_KEY_BYTES = 2000
_TAGS = re.compile(r"<[^>]+>")
# What a browser never shows: scripts, styles and comments, up to their end (or the text's).
_HIDDEN = re.compile(
    r"<(script|style)\b.*?(?:</\1\s*>|\Z)|<!--.*?(?:-->|\Z)", re.IGNORECASE | re.DOTALL
)
# C0 controls but tab, newline and carriage return, and DEL: PostgreSQL refuses NUL in text,
# and none of them belongs in a title, a summary or a link.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# What a document that is no feed is, from its first bytes: the words of its failure.
_PROLOGUE = re.compile(
    rb"\s*(?:<\?.*?\?>|<!--.*?-->|<!DOCTYPE(?!\s+html)[^>]*>|\s)*", re.DOTALL | re.IGNORECASE
)
_HTML = re.compile(rb"\s*(?:<!DOCTYPE\s+html|<html\b|<head\b|<body\b)", re.IGNORECASE)
_ROOT_NAME = re.compile(rb"<([A-Za-z_][\w:.-]{0,40})")


@dataclass(frozen=True)
class ParsedFeed:
    version: str
    entries: list[Entry]
    entries_without_link: int
    ttl: str | None = None  # RSS <ttl>, minutes
    encoding: str | None = None  # as decided in decode, or as feedparser detected it
    fast: bool = False  # read by newsdesk.collect.rss, not feedparser


def parse_feed(
    content: bytes,
    content_type: str | None = None,
    base_url: str | None = None,
    fast: bool = True,
) -> ParsedFeed:
    """Parse ``content``; raise FeedParseError when it is not an RSS or Atom feed. Relative
    links are resolved against ``base_url`` (the feed's final URL). ``fast=False`` leaves every
    document to feedparser (what the parity test and the benchmark compare against)."""
    if not content.strip():
        raise FeedParseError("empty body")
    decoded = decode_feed(content, content_type)
    content = without_unsafe_entities(decoded.content)
    channel = read_rss(content) if fast and decoded.utf8 else None
    encoding: str | None
    if channel is not None:  # an ASCII body, as labelled, or one decided here
        label = decoded.encoding or declared_encoding(content, content_type) or "utf-8"
        version, ttl, encoding, items = "rss20", channel.ttl, label.lower(), channel.items
    else:
        version, ttl, encoding, items = _read_with_feedparser(content, decoded)
    entries: list[Entry] = []
    without_link = 0
    for item in items:
        entry = _entry(item, base_url)
        if entry is None:
            without_link += 1
        else:
            entries.append(entry)
    return ParsedFeed(version, entries, without_link, ttl, encoding, fast=channel is not None)


def what_it_is(content: bytes) -> str:
    """What a body that is no feed looks like, in a few words."""
    head = content[:4096].lstrip(b"\xef\xbb\xbf")
    prologue = _PROLOGUE.match(head)
    start = head[prologue.end() :] if prologue else head
    if _HTML.match(head) or _HTML.match(start):
        return "an HTML page"
    if start[:1] in (b"{", b"["):
        return "JSON"
    root = _ROOT_NAME.match(start)
    if root:
        return f"an XML document whose root is <{root.group(1).decode('ascii', 'replace')}>"
    if start.startswith(b"<"):
        return "malformed markup"
    return "text, not markup"


def _read_with_feedparser(
    content: bytes, decoded: Decoded
) -> tuple[str, str | None, str | None, list[Item]]:
    # Neither sanitising nor resolving URIs inside HTML: newsdesk keeps text (html_text), and
    # the two are about a third of feedparser's time.
    parsed = feedparser.parse(
        content,
        response_headers=decoded.headers,
        sanitize_html=False,
        resolve_relative_uris=False,
    )
    if not parsed.get("version"):
        problem = parsed.get("bozo_exception")
        content_type = decoded.headers.get("content-type") or "none"
        raise FeedParseError(
            f"not an RSS or Atom feed: {what_it_is(content)}",
            detail=f"Content-Type {content_type}; feedparser: {problem or 'no feed version'}",
        )
    items = [
        Item(
            raw.get("title") or "",
            raw.get("link") or "",
            raw.get("id") or "",
            raw.get("summary") or "",
            _published(raw),
        )
        for raw in parsed.entries
    ]
    encoding = decoded.encoding or parsed.get("encoding")
    return parsed.version, parsed.feed.get("ttl"), encoding, items


def without_unsafe_entities(content: bytes) -> bytes:
    """Drop entity declarations but those defining plain text or one character.

    An entity made of other entities is how the "billion laughs" multiply, and an external one
    (SYSTEM, PUBLIC, %) asks for a file or a URL. feedparser strips such declarations only when
    each begins a line; on one line with the DOCTYPE they reach expat, whose amplification
    limit stops the expansion only after tens of megabytes. References left undefined make
    feedparser fall back to its loose parser, which keeps them as text. Declarations are
    dropped wherever they are: they mean something only in the DTD, and finding where the
    DTD ends (past comments, past a ">" in a quoted value) is where a defence gets bypassed;
    the same text in an article's CDATA is worth less than that risk.
    """
    if b"<!ENTITY" not in content:
        return content
    return _ENTITY_DECLARATION.sub(
        lambda m: m.group(0) if _SAFE_ENTITY.fullmatch(m.group(0)) else b"", content
    )


def _entry(item: Item, base_url: str | None) -> Entry | None:
    link = _CONTROL.sub("", item.link).strip()
    if link and base_url:
        try:
            if not urlsplit(link).scheme:  # "/news/1", "news/1", "//host/news/1"
                link = urljoin(base_url, link)
        except ValueError:  # "http://[not an address": no link to store
            return None
    if not link.lower().startswith(("http://", "https://")) or not fits_a_key(link):
        return None  # feedparser fills "link" from an Atom id such as urn:uuid:…
    guid = _CONTROL.sub("", item.guid).strip()
    return Entry(
        # Titles are text: "<속보>" is emphasis there, not a tag.
        title=_text(item.title),
        link=link,
        summary=html_text(item.summary),
        guid=guid if guid and fits_a_key(guid) else None,
        published_at=to_datetime(item.published),
    )


def _published(raw: Mapping[str, Any]) -> time.struct_time | None:
    with warnings.catch_warnings():
        # feedparser warns that it maps a missing published_parsed to updated_parsed; we want
        # exactly that fallback.
        warnings.simplefilter("ignore", DeprecationWarning)
        parsed: time.struct_time | None = raw.get("published_parsed") or raw.get("updated_parsed")
        return parsed


def fits_a_key(text: str) -> bool:
    return len(text.encode("utf-8")) <= MAX_KEY_BYTES


def html_text(html: str) -> str:
    """A summary's text: tags, and what a browser never shows, removed; entities decoded."""
    if "<" in html:
        html = _TAGS.sub(" ", _HIDDEN.sub(" ", html))
    return _text(unescape(html) if "&" in html else html)


def _text(text: str) -> str:
    return " ".join(_CONTROL.sub("", text).split())
