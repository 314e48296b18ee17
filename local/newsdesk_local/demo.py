"""The demo: bundled sample feeds served on 127.0.0.1, and a sources file pointing at them.

Four outlets publish Korean sample feeds (one of them in CP949 labelled EUC-KR, with photo
articles among the rest); a fifth, 프레시안, answers 503 to everything, so the round shows the
outlet breaker skipping its remaining feeds after two failures.
"""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime
from importlib import resources
from pathlib import Path

import yaml

from newsdesk_local.feedserver import FeedServer, Route

_OUTLETS = {"yonhap": "연합뉴스", "newsis": "뉴시스", "hani": "한겨레", "mk": "매일경제"}
_CATEGORIES = {"politics": "정치", "economy": "경제", "society": "사회"}
_DOWN_OUTLET = "프레시안"
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


def serve_demo_feeds(server: FeedServer) -> list[dict[str, str]]:
    """Add the demo routes to ``server``; return the sources entries that point at them."""
    entries: list[dict[str, str]] = []
    folder = resources.files("newsdesk_local").joinpath("demo_feeds")
    names = {item.name for item in folder.iterdir()}
    for outlet, category in itertools.product(_OUTLETS, _CATEGORIES):
        if f"{outlet}-{category}.xml" not in names:
            continue
        item = folder.joinpath(f"{outlet}-{category}.xml")
        body = dated_recently(item.read_bytes())
        charset = "euc-kr" if b'encoding="EUC-KR"' in body[:100] else "utf-8"
        url = server.add(
            f"/{item.name}", Route(body, content_type=f"application/rss+xml; charset={charset}")
        )
        entries.append({"source": _OUTLETS[outlet], "url": url, "category": _CATEGORIES[category]})
    for slug, category in _CATEGORIES.items():
        url = server.add(f"/pressian/{slug}.xml", Route(b"Service Unavailable", 503, "text/plain"))
        entries.append({"source": _DOWN_OUTLET, "url": url, "category": category})
    return entries


def write_sources(entries: list[dict[str, str]], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(entries, allow_unicode=True, sort_keys=False), "utf-8")
    return path
