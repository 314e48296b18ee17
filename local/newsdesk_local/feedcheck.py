"""`newsdesk sources check --live`: every feed of a sources file fetched once, with the worker's
fetch policy and the feed's own User-Agent, parsed, and described in one line.

Outlets are checked side by side, each one's feeds in order with the worker's pause between
them, so that no outlet sees more than one request at a time from here.
"""

from __future__ import annotations

import codecs
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any

from newsdesk.collect.collector import failure_class
from newsdesk.collect.decode import declared_encoding
from newsdesk.collect.fetch import FetchPolicy, fetch
from newsdesk.collect.parse import parse_feed
from newsdesk.core.errors import BlockedAddressError, FeedError, HTTPStatusError
from newsdesk.core.sources import Feed, Outlet
from newsdesk.core.times import format_time, local_time
from newsdesk_local.output import plural


@dataclass(frozen=True)
class FeedCheck:
    feed: Feed
    http_status: int | None = None
    final_url: str | None = None  # only when it differs from the feed's URL (redirected)
    encoding: str | None = None
    entries: int | None = None  # None: no feed was read
    newest: datetime | None = None  # the newest entry's published (or updated) time
    failure_class: str | None = None  # as the worker counts it: timeout, http_4xx, blocked, …
    error: str | None = None  # one line, in words

    @property
    def ok(self) -> bool:
        return self.error is None

    def line(self, zone: tzinfo = UTC) -> str:
        feed = self.feed
        where = feed.url + (f" -> {self.final_url}" if self.final_url else "")
        if not self.ok:
            return f"Source: {feed.source} | {feed.category} | Failed: {self.error} | {where}"
        newest = f"newest {local_time(self.newest, zone)}" if self.newest else "no entry dated"
        return (
            f"Source: {feed.source} | {feed.category} | HTTP {self.http_status} | "
            f"{self.encoding or 'encoding unknown'} | {plural(self.entries or 0, 'entry')} | "
            f"{newest} | {where}"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.feed.source,
            "category": self.feed.category,
            "url": self.feed.url,
            "ok": self.ok,
            "status": self.http_status,
            "final_url": self.final_url,
            "encoding": self.encoding,
            "entries": self.entries,
            "newest_published_at": format_time(self.newest) if self.newest else None,
            "failure_class": self.failure_class,
            "error": self.error,
        }


def check_feed(feed: Feed, policy: FetchPolicy) -> FeedCheck:
    """Fetch and parse ``feed`` once; whatever fails is described, never raised."""
    status = final_url = None
    try:
        fetched = fetch(feed.url, policy.with_user_agent(feed.user_agent))
        status = fetched.status
        final_url = fetched.url if fetched.url != feed.url else None
        parsed = parse_feed(
            fetched.content, fetched.content_type, fetched.url, headers=fetched.headers
        )
    except FeedError as e:
        if isinstance(e, HTTPStatusError):
            status, final_url = e.status, (e.url if e.url != feed.url else None)
        return FeedCheck(feed, status, final_url, failure_class=failure_class(e), error=_words(e))
    except Exception as e:  # a parser crash on a poison entry: the feed's failure, as in the worker
        error = _one_line(f"could not be read: {type(e).__name__}: {e}")
        return FeedCheck(feed, status, final_url, failure_class="parse_error", error=error)
    dates = [e.published_at for e in parsed.entries if e.published_at is not None]
    return FeedCheck(
        feed,
        status,
        final_url,
        encoding=_encoding(
            parsed.encoding, declared_encoding(fetched.content, fetched.content_type)
        ),
        entries=len(parsed.entries) + parsed.entries_without_link,
        newest=max(dates, default=None),
    )


def check_outlets(
    outlets: Sequence[Outlet],
    policy: FetchPolicy,
    interval_seconds: float,
    concurrency: int,
) -> list[FeedCheck]:
    """Every feed checked, in the order of ``outlets`` and their feeds."""

    def one_outlet(outlet: Outlet) -> list[FeedCheck]:
        checks = []
        for index, feed in enumerate(outlet.feeds):
            if index:
                time.sleep(interval_seconds)  # be as gentle with one outlet as the worker is
            checks.append(check_feed(feed, policy))
        return checks

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        return [check for checks in pool.map(one_outlet, outlets) for check in checks]


def failed_outlets(checks: Sequence[FeedCheck]) -> list[str]:
    """The outlets none of whose feeds answered, in order."""
    names = list(dict.fromkeys(c.feed.source for c in checks))
    return [n for n in names if not any(c.ok for c in checks if c.feed.source == n)]


def summary(checks: Sequence[FeedCheck], zone_name: str = "UTC", zone: tzinfo = UTC) -> str:
    failed = sum(not c.ok for c in checks)
    outlets = len({c.feed.source for c in checks})
    line = (
        f"Feeds: {len(checks) - failed} ok, {failed} failed ({plural(len(checks), 'feed')}, "
        f"{plural(outlets, 'outlet')}); dates in {zone_name} time ({datetime.now(zone):%Z})"
    )
    dead = failed_outlets(checks)
    return line + (f"; every feed failed: {', '.join(dead)}" if dead else "")


def _encoding(read: str | None, declared: str | None) -> str | None:
    """The encoding the body was read in, and the label when it claimed another: "utf-8
    (declared euc-kr)" is a feed the worker reads right despite its label."""
    if not declared or read is None:
        return read or declared
    try:
        same = codecs.lookup(declared).name == codecs.lookup(read).name
    except LookupError:
        same = False
    return read if same else f"{read} (declared {declared})"


def _words(error: FeedError) -> str:
    text = _one_line(str(error))
    if isinstance(error, BlockedAddressError) and "FETCH_ALLOW_PRIVATE_NETWORKS" not in text:
        text += " (FETCH_ALLOW_PRIVATE_NETWORKS=true allows it, on your own network only)"
    return text


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "no message"
