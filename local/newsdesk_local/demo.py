"""The demo: bundled sample feeds served on 127.0.0.1 (each item's page from ``demo_site``),
and a sources file pointing at the feeds.

Four outlets publish Korean sample feeds (one of them in CP949 labelled EUC-KR, with photo
articles among the rest); a fifth, 프레시안, answers 503 to everything, so the round shows the
outlet breaker skipping its remaining feeds after two failures. The feeds are served with
their items' origin (``demo_site.DEMO_ORIGIN``) replaced by the server's own, dated as of the
demo's start.
"""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from newsdesk_local.demo_site import CATEGORIES, DemoItem, demo_pages, feed_items, served_here
from newsdesk_local.feedserver import FeedServer, Route

_OUTLETS = {"yonhap": "연합뉴스", "newsis": "뉴시스", "hani": "한겨레", "mk": "매일경제"}


_DOWN_OUTLET = "프레시안"


SECOND_ROUND = "second_round"  # the feeds that change for the demo's second round


_DATES = re.compile(rb"<(pubDate|updated|published)>([^<]+)</\1>")


def dated_recently(body: bytes, now: datetime | None = None) -> bytes:
    """``body`` with every RSS and Atom date moved by one amount, so that the newest is an hour
    before ``now`` (to the hour, so a body served twice in an hour is the same): the sample
    feeds stay as recent as a live feed's, however old the files (entries older than
    ENTRY_MAX_AGE_HOURS are not stored)."""
    dates = [_read_date(m.group(1), m.group(2)) for m in _DATES.finditer(body)]
    known = [d for d in dates if d is not None]
    if not known:
        return body
    hour = (now or datetime.now(UTC)).replace(minute=0, second=0, microsecond=0)
    shift = hour - timedelta(hours=1) - max(known)
    moved = iter(dates)

    def replace(match: re.Match[bytes]) -> bytes:
        at = next(moved)
        if at is None:
            return match.group(0)
        at += shift
        text = format_datetime(at) if match.group(1) == b"pubDate" else at.isoformat()
        return b"<%s>%s</%s>" % (match.group(1), text.encode(), match.group(1))

    return _DATES.sub(replace, body)


def _read_date(tag: bytes, text: bytes) -> datetime | None:
    try:
        if tag == b"pubDate":
            return parsedate_to_datetime(text.decode())
        return datetime.fromisoformat(text.decode())
    except (ValueError, TypeError):
        return None


def serve_demo_feeds(server: FeedServer, now: datetime) -> list[dict[str, str]]:
    """Add the demo routes to ``server`` (the feeds, dated as of ``now`` and linking to
    ``server``'s own article pages, and the pages); return the sources entries that point at
    the feeds."""
    entries: list[dict[str, str]] = []
    items: list[DemoItem] = []
    folder = resources.files("newsdesk_local").joinpath("demo_feeds")
    names = {item.name for item in folder.iterdir()}
    for outlet, category in itertools.product(_OUTLETS, CATEGORIES):
        if f"{outlet}-{category}.xml" not in names:
            continue
        url, body = _serve_feed(server, folder.joinpath(f"{outlet}-{category}.xml"), now)
        entries.append({"source": _OUTLETS[outlet], "url": url, "category": CATEGORIES[category]})
        items.extend(feed_items(body, server.base_url))
    # the second round's new items have their pages from the start
    for later in folder.joinpath(SECOND_ROUND).iterdir():
        body = served_here(dated_recently(later.read_bytes(), now), server.base_url)
        known = {item.path for item in items}
        items.extend(i for i in feed_items(body, server.base_url) if i.path not in known)
    for path, route in demo_pages(items, server.base_url).items():
        server.add(path, route)
    for slug, category in CATEGORIES.items():
        url = server.add(f"/pressian/{slug}.xml", Route(b"Service Unavailable", 503, "text/plain"))
        entries.append({"source": _DOWN_OUTLET, "url": url, "category": category})
    return entries


def serve_second_round(server: FeedServer, now: datetime) -> list[str]:
    """The feeds as they stand a round later (``demo_feeds/second_round/``: 뉴시스 adds an
    update of the budget story), dated as of ``now``, the first round's moment: dated as of
    another hour, every entry they share with the first round would have moved and be stored
    again as an update; the paths of the feeds replaced."""
    folder = resources.files("newsdesk_local").joinpath("demo_feeds", SECOND_ROUND)
    return [_serve_feed(server, later, now)[0] for later in folder.iterdir()]


def _serve_feed(server: FeedServer, item: Any, now: datetime) -> tuple[str, bytes]:
    """Serve a bundled feed file at ``/<its name>``, dated as of ``now``; (its URL, the body
    served)."""
    body = served_here(dated_recently(item.read_bytes(), now), server.base_url)
    charset = "euc-kr" if b'encoding="EUC-KR"' in body[:100] else "utf-8"
    url = server.add(
        f"/{item.name}", Route(body, content_type=f"application/rss+xml; charset={charset}")
    )
    return url, body


def write_sources(entries: list[dict[str, str]], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(entries, allow_unicode=True, sort_keys=False), "utf-8")
    return path
