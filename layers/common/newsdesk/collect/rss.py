"""RSS 2.0 without feedparser, for the documents this module fully understands.

feedparser spends most of a worker's CPU (issue 12: 514 of 633 µs an entry) in its SAX
machinery, most of it on what newsdesk throws away. The standard library's ElementTree builds
the same tree with expat in C in a hundredth of that. It is used only for what it reads exactly
as feedparser would — checked on feedparser's whole corpus and every test feed
(tests/test_fast_parse.py) — and refuses everything else, which feedparser then reads:

- well-formed UTF-8 XML, without a DOCTYPE (entities) and without ``xml:base``;
- a root ``<rss version="2.0">`` with one ``<channel>`` and nothing beside it;
- items whose children are all in ``_ITEM_CHILDREN``, the modelled ones once each and text only.
"""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from newsdesk.collect.dates import parse_struct

_DC = "{http://purl.org/dc/elements/1.1/}"
_CONTENT = "{http://purl.org/rss/1.0/modules/content/}"
_MEDIA = "{http://search.yahoo.com/mrss/}"
_MODELLED = frozenset(
    {"title", "link", "guid", "description", "pubDate", f"{_DC}date", f"{_CONTENT}encoded"}
)
# What feedparser reads into nothing newsdesk keeps (author, tags, enclosures, media).
_IGNORED = frozenset(
    {
        "author",
        "category",
        "comments",
        "enclosure",
        "source",
        f"{_DC}creator",
        f"{_DC}subject",
        f"{_MEDIA}thumbnail",
        f"{_MEDIA}content",
    }
)
_ITEM_CHILDREN = _MODELLED | _IGNORED
_ENTRIES = frozenset({"item", "entry"})
# feedparser maps U+0080..U+009F in text to what those bytes mean in windows-1252.
_C1 = re.compile("[\x80-\x9f]")
_CP1252 = {
    code: char
    for code in range(0x80, 0xA0)
    if (char := bytes([code]).decode("cp1252", errors="ignore"))
}


@dataclass(frozen=True)
class Item:
    title: str
    link: str
    guid: str
    summary: str  # as the feed writes it: HTML or text
    published: time.struct_time | None
    title_is_html: bool | None = None  # as feedparser says; None: by feedparser's test
    guid_is_link: bool = False  # a permalink guid, still to resolve (feedparser resolves it)


@dataclass(frozen=True)
class Channel:
    items: list[Item]
    ttl: str | None


def read_rss(content: bytes) -> Channel | None:
    """The channel, or None where feedparser must read the document."""
    if b"<!DOCTYPE" in content or b"xml:base" in content:  # anywhere: after a long comment too
        return None
    try:
        root = ET.fromstring(content, parser=ET.XMLParser(encoding="utf-8"))  # noqa: S314 - no DOCTYPE, so no entity
    except ET.ParseError:
        return None
    if root.tag != "rss" or root.get("version") != "2.0" or len(root) != 1:
        return None
    (channel,) = root
    if channel.tag != "channel":
        return None
    items: list[Item] = []
    ttl: str | None = None
    for child in channel:
        if child.tag == "item":
            item = _item(child)
            if item is None:
                return None
            items.append(item)
        elif any(_local(e.tag) in _ENTRIES for e in child.iter()):
            return None  # an item inside <image> or anything else: feedparser counts it
        elif child.tag == "ttl":
            ttl = _text(child)
    return Channel(items, ttl)


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _item(element: ET.Element) -> Item | None:
    fields: dict[str, str] = {}
    permalink = True
    for child in element:
        tag = child.tag
        if tag not in _ITEM_CHILDREN or len(child):
            return None  # unknown, or elements inside (a <link> in <category>): feedparser's
        if tag in _IGNORED:
            continue
        if tag in fields:
            return None  # twice: feedparser's to read
        if tag == "guid":
            attributes = {name.lower(): value for name, value in child.attrib.items()}
            permalink = attributes.get("ispermalink", "true") == "true"
        fields[tag] = _text(child)
    guid = fields.get("guid", "")
    # a permalink guid stands in for a missing <link>, not for an empty one
    link = fields.get("link", guid if permalink else "")
    date = fields.get("pubDate")
    published = parse_struct(date) if date else None
    if published is None and (updated := fields.get(f"{_DC}date")):
        published = parse_struct(updated)
    summary = fields.get("description")
    if summary is None:
        summary = fields.get(f"{_CONTENT}encoded", "")
    return Item(
        fields.get("title", ""),
        link,
        guid,
        summary,
        published,
        guid_is_link=permalink and bool(guid),
    )


def _text(element: ET.Element) -> str:
    text = (element.text or "").strip()
    return text.translate(_CP1252) if _C1.search(text) else text
