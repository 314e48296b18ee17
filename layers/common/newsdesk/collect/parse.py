"""Feed bytes to entries: decoded as the evidence says (decode), read by the fast RSS reader
where it fully understands the document (rss) and by feedparser everywhere else, and kept as
the text a reader sees (markup)."""

from __future__ import annotations

import re
import time
import warnings
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import feedparser
from feedparser.encodings import convert_to_utf8

from newsdesk.collect.dates import to_datetime
from newsdesk.collect.decode import Decoded, declared_encoding, decode_feed
from newsdesk.collect.markup import html_text, looks_like_html, well_formed_references
from newsdesk.collect.rss import Item, read_rss
from newsdesk.core.entry import Entry
from newsdesk.core.errors import FeedParseError

# ">" optional: a declaration the document never closes is matched to its end, once, and kept as
# it is (a search that needed the ">" would scan to the end again from every later "<!ENTITY").
_ENTITY_DECLARATION = re.compile(rb"<!ENTITY[^>]*>?")
_SAFE_ENTITY = re.compile(rb'<!ENTITY\s+([A-Za-z_][\w.-]*)\s+"(?:(&#\w+;)|([^&%"]*))"\s*>')
_ENTITY_REFERENCE = re.compile(rb"&([A-Za-z_][\w.-]*);")
# What plain-text entities may add to a document, all their uses together (bytes of their
# values); past it, the declarations that would go over are dropped, in document order.
ENTITY_EXPANSION_BUDGET = 64 * 1024
MAX_PLAIN_ENTITIES = 1000  # declarations of plain text weighed; later ones are dropped
# Longer links and guids are refused: PostgreSQL cannot index a key of much over 2,700 bytes,
# and no article needs one.
MAX_KEY_BYTES = 2000
# C0 controls but tab, newline and carriage return, and DEL: PostgreSQL refuses NUL in text,
# and none of them belongs in a guid, a title, a summary or a link.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# In a title or a summary, C1 controls too, but NEL (U+0085), which like tab, newline and
# carriage return becomes a space: a C1 control, from a reference XML allows (&#157;), is one
# a terminal may act on (issue 39).
_TEXT_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f]")
# In a link, tab, newline and carriage return too: the URL standard's basic parser removes
# them wherever they are (a CR or LF in a stored link forged a line where it was printed).
_LINK_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# What a document that is no feed is, from its first bytes: the words of its failure.
_PROLOGUE = re.compile(
    rb"\s*(?:<\?.*?\?>|<!--.*?-->|<!DOCTYPE(?!\s+html)[^>]*>|\s)*", re.DOTALL | re.IGNORECASE
)
_HTML = re.compile(rb"\s*(?:<!DOCTYPE\s+html|<html\b|<head\b|<body\b)", re.IGNORECASE)
_ROOT_NAME = re.compile(rb"<([A-Za-z_][\w:.-]{0,40})")
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


@dataclass(frozen=True)
class ParsedFeed:
    version: str
    entries: list[Entry]
    entries_without_link: int
    ttl: str | None = None  # RSS <ttl>, minutes
    encoding: str | None = None  # as decided in decode, or as feedparser detected it
    fast: bool = False  # read by newsdesk.collect.rss, not feedparser
    references_replaced: int = 0  # to a lone surrogate or past U+10FFFF: now U+FFFD


def parse_feed(
    content: bytes,
    content_type: str | None = None,
    base_url: str | None = None,
    fast: bool = True,
    headers: Mapping[str, str] | None = None,
) -> ParsedFeed:
    """Parse ``content``; raise FeedParseError when it is not an RSS or Atom feed. Relative
    references (links, Atom ids, permalink guids) are resolved against ``base_url``, the feed's
    final URL, and the ``xml:base`` the document sets on it, as ``feedparser.parse(url)``
    resolves them: feedparser is given that URL as the response's Content-Location, which is how
    it learns a document's address when it is given bytes. ``headers``: the response's, which
    reach feedparser (Content-Language, the text's language) but the server's own
    Content-Location: since RFC 7231 it is no base for relative references (RFC 9110, 8.7), and
    servers send internal addresses there. ``fast=False`` leaves every document to feedparser
    (what the parity test and the benchmark compare against)."""
    if not content.strip():
        raise FeedParseError("empty body")
    passed = {k: v for k, v in (headers or {}).items() if k.lower() != "content-location"}
    if base_url:
        passed["content-location"] = base_url
    decoded = decode_feed(content, content_type, passed)
    noted: Exception | None = None
    if not decoded.utf8:
        decoded, noted = as_feedparser_decodes(decoded)
    content, replaced = well_formed_references(without_unsafe_entities(decoded.content))
    channel = read_rss(content) if fast and decoded.utf8 else None
    encoding: str | None
    if channel is not None:  # an ASCII body, as labelled, or one decided here
        label = decoded.encoding or declared_encoding(content, content_type) or "utf-8"
        version, ttl, encoding, items = "rss20", channel.ttl, label.lower(), channel.items
    else:
        version, ttl, encoding, items = _read_with_feedparser(content, decoded, noted)
    read = [_entry(item, base_url) for item in items]
    entries = [entry for entry in read if entry is not None]
    without_link = len(read) - len(entries)
    return ParsedFeed(version, entries, without_link, ttl, encoding, channel is not None, replaced)


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
    content: bytes, decoded: Decoded, noted: Exception | None = None
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
        problem = parsed.get("bozo_exception") or noted
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
            (raw.get("title_detail") or {}).get("type") in _HTML_TYPES,
        )
        for raw in parsed.entries
    ]
    encoding = decoded.encoding or parsed.get("encoding")
    return parsed.version, parsed.feed.get("ttl"), encoding, items


def as_feedparser_decodes(decoded: Decoded) -> tuple[Decoded, Exception | None]:
    """A body left to feedparser, in UTF-8 as feedparser decodes it (its own
    ``convert_to_utf8``, whose reading it then repeats unchanged), and what feedparser noted
    while decoding (a charset it could not use: its bozo_exception, which the second reading
    no longer sees). So the entity budget and the references XML refuses judge the text expat
    will read: in EBCDIC, UTF-16, UTF-32 or UTF-7 named by a header only, "<!ENTITY" is not
    spelled in ASCII, and a 1.2 MB entity used 96 times grew a worker by 400 MB (issue 39).
    Left as it came when feedparser finds no encoding that reads it. The encoding reported is
    feedparser's."""
    verdict: dict[str, Any] = {}
    utf8 = convert_to_utf8(decoded.headers, decoded.content, verdict)
    if not verdict.get("encoding"):
        return decoded, None
    headers = dict(decoded.headers)
    if headers.get("content-type"):
        media_type = headers["content-type"].partition(";")[0].strip()
        headers["content-type"] = f"{media_type}; charset=utf-8"
    return Decoded(utf8, headers, verdict["encoding"], utf8=False), verdict.get("bozo_exception")


def without_unsafe_entities(content: bytes) -> bytes:
    """Drop entity declarations but those defining one character, and those defining plain
    text as long as all their uses together add at most ENTITY_EXPANSION_BUDGET bytes (the
    first MAX_PLAIN_ENTITIES of them, in document order).

    An entity made of other entities is how the "billion laughs" multiply, and an external one
    (SYSTEM, PUBLIC, %) asks for a file or a URL. feedparser strips such declarations only when
    each begins a line; on one line with the DOCTYPE they reach expat, whose amplification
    limit stops the expansion only after tens of megabytes. A plain one multiplies too: one of
    1.2 MB used 30 times made a title of 12 million characters (issue 22). References left
    undefined make feedparser fall back to its loose parser, which keeps them as text.
    Declarations are dropped wherever they are: they mean something only in the DTD, and
    finding where the DTD ends (past comments, past a ">" in a quoted value) is where a
    defence gets bypassed; the same text in an article's CDATA is worth less than that risk.
    """
    if b"<!ENTITY" not in content:
        return content
    plain: dict[bytes, int] = {}  # name: the bytes of its value
    for declaration in _ENTITY_DECLARATION.finditer(content):
        safe = _SAFE_ENTITY.fullmatch(declaration.group(0))
        if safe and safe.group(3) is not None and len(plain) < MAX_PLAIN_ENTITIES:
            plain.setdefault(safe.group(1), len(safe.group(3)))
    kept = _within_budget(content, plain)

    def decided(declaration: re.Match[bytes]) -> bytes:
        text = declaration.group(0)
        if not text.endswith(b">"):
            return text  # never closed: not a declaration a parser would read
        safe = _SAFE_ENTITY.fullmatch(text)
        if safe is None or (safe.group(2) is None and safe.group(1) not in kept):
            return b""
        return text

    return _ENTITY_DECLARATION.sub(decided, content)


def _within_budget(content: bytes, plain: dict[bytes, int]) -> set[bytes]:
    """The plain-text entities whose uses stay within ENTITY_EXPANSION_BUDGET, in order."""
    if not plain:
        return set()
    uses = Counter(
        found.group(1) for found in _ENTITY_REFERENCE.finditer(content) if found.group(1) in plain
    )
    kept: set[bytes] = set()
    spent = 0
    for name, size in plain.items():
        spent += size * uses[name]
        if spent > ENTITY_EXPANSION_BUDGET:
            break
        kept.add(name)
    return kept


def _entry(item: Item, base_url: str | None) -> Entry | None:
    link = _absolute(_LINK_CONTROL.sub("", item.link).strip(), base_url)
    if link is None:  # "http://[not an address": no link to store
        return None
    if not link.lower().startswith(("http://", "https://")) or not fits_a_key(link):
        return None  # feedparser fills "link" from an Atom id such as urn:uuid:…
    guid = _CONTROL.sub("", item.guid).strip()
    if item.guid_is_link:  # the fast reader's permalink guid, which feedparser resolves
        guid = _absolute(guid, base_url) or ""
    return Entry(
        title=title_text(item.title, item.title_is_html),
        link=link,
        summary=summary_text(item.summary),
        guid=guid if guid and fits_a_key(guid) else None,
        published_at=to_datetime(item.published),
    )


def _absolute(reference: str, base_url: str | None) -> str | None:
    """``reference`` resolved against ``base_url`` when it is relative ("/news/1", "news/1",
    "//host/news/1"); None when it cannot be read."""
    if not reference or not base_url:
        return reference
    try:
        return reference if urlsplit(reference).scheme else urljoin(base_url, reference)
    except ValueError:
        return None


def _published(raw: Mapping[str, Any]) -> time.struct_time | None:
    with warnings.catch_warnings():
        # feedparser warns that it maps a missing published_parsed to updated_parsed; we want
        # exactly that fallback.
        warnings.simplefilter("ignore", DeprecationWarning)
        parsed: time.struct_time | None = raw.get("published_parsed") or raw.get("updated_parsed")
        return parsed


def fits_a_key(text: str) -> bool:
    return len(text.encode("utf-8")) <= MAX_KEY_BYTES


def summary_text(summary: str) -> str:
    """A summary's text, as a reader sees it: a summary is HTML (RSS 2.0; feedparser reads
    every description so)."""
    return _text(html_text(summary))


def title_text(title: str, is_html: bool | None = None) -> str:
    """A title's text: its markup removed and its references decoded when it is HTML (as
    feedparser says, or, from the fast reader, by feedparser's test: a double-escaped
    ``&amp;#39;`` is a quote); otherwise the text as it is ("<속보>" is emphasis, not a tag)."""
    if is_html is None:
        is_html = looks_like_html(title)
    return _text(html_text(title) if is_html else title)


def _text(text: str) -> str:
    return " ".join(_TEXT_CONTROL.sub("", text).split())
