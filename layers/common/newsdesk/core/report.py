"""What one round did, per feed and per outlet: the funnel the CLI prints and metrics count."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, tzinfo
from typing import Any

from newsdesk.core.times import local_time

FEED_OK = "ok"
FEED_NOT_MODIFIED = "not_modified"
FEED_FAILED = "failed"
FEED_SKIPPED = "skipped"  # the in-message breaker opened
FEED_NOT_DUE = "not_due"
FEED_SKIPPED_OPEN = "skipped_open_breaker"  # the outlet's remembered breaker is open
FETCHED = (FEED_OK, FEED_NOT_MODIFIED, FEED_FAILED)
SUCCEEDED = (FEED_OK, FEED_NOT_MODIFIED)
COOLING_DOWN = "cooling_down"  # an outlet skipped whole: its breaker is open

FAILURE_CLASSES = (
    "timeout",
    "http_4xx",
    "http_5xx",
    "too_large",
    "not_a_feed",
    "blocked",
    "connection",
    "parse_error",
)

# The keys of one outlet in `newsdesk collect --json`: the contract's (docs/architecture.md)
# first, then the funnel.
CONTRACT_KEYS = (
    "feeds_attempted",
    "feeds_failed",
    "feeds_skipped",
    "new",
    "duplicate",
    "photo_filtered",
    "total",
)
# The feeds' own counts, summed per outlet under the same names.
SUMMED = (
    "entries_seen",
    "too_old",
    "undated",
    "with_replacement_char",
    "truncated",
    "unstorable",
    "references_replaced",
    "duplicate_in_message",
    "duplicate_url",
    "duplicate_guid",
    "revised",
    "bytes_received",
)
COUNT_KEYS = (
    *CONTRACT_KEYS,
    "messages_stale",
    "feeds_due",
    "feeds_not_due",
    "feeds_skipped_open_breaker",
    "feeds_ok",
    "feeds_not_modified",
    *SUMMED,
    "raw_bodies_stored",
    *tuple(f"failed_{name}" for name in FAILURE_CLASSES),
)


@dataclass
class FeedReport:
    source: str
    category: str
    url: str
    status: str = FEED_SKIPPED
    new: int = 0
    duplicate_in_message: int = 0
    duplicate_url: int = 0
    duplicate_guid: int = 0
    revised: int = 0  # of the duplicates, stored articles whose title or time changed
    photo_filtered: int = 0
    without_link: int = 0
    too_old: int = 0  # published longer ago than ENTRY_MAX_AGE_HOURS: not stored
    undated: int = 0  # no date, or none plausible: stored, the collected time stands for it
    with_replacement_char: int = 0  # U+FFFD in the title or summary: a decoding went wrong
    truncated: int = 0  # stored with its title or summary cut to its bound (core.bounds)
    unstorable: int = 0  # refused by the store: a link over a key's bound, data it refused
    # character references to a lone surrogate or past U+10FFFF, read as U+FFFD (the feed kept)
    references_replaced: int = 0
    entries_seen: int = 0
    bytes_received: int = 0
    raw_stored: bool = False
    error: str | None = None
    reason: str | None = None
    failure_class: str | None = None
    next_check_at: str | None = None

    @property
    def duplicate(self) -> int:
        return self.duplicate_in_message + self.duplicate_url + self.duplicate_guid

    @property
    def total(self) -> int:
        """Articles offered to the store, as the seed's ``Total`` (photo articles excluded)."""
        return self.new + self.duplicate

    def seed_line(self) -> str:
        """The seed's line for a feed that was read (the worker's log message)."""
        return (
            f"Source: {self.source} | New: {self.new} | Skip: {self.duplicate} "
            f"| Total: {self.total}"
        )

    def log_line(self, zone: tzinfo = UTC) -> str:
        """The seed's human-readable line, and its kin for feeds with nothing to store; each
        ends with the feed's category and URL. Times in ``zone``."""
        where = f"{self.category} {self.url}"
        if self.status == FEED_OK:
            return f"{self.seed_line()} | {where}"
        if self.status == FEED_FAILED:
            return f"Source: {self.source} | Failed: {self.error} | {where}"
        if self.status == FEED_NOT_MODIFIED:
            return f"Source: {self.source} | Not modified | {where}"
        if self.status == FEED_NOT_DUE:
            due = local_time(self.next_check_at, zone) if self.next_check_at else "later"
            return f"Source: {self.source} | Not due before {due} | {where}"
        if self.status == FEED_SKIPPED_OPEN:
            return f"Source: {self.source} | Skipped: outlet breaker open (cooling down) | {where}"
        return f"Source: {self.source} | Skipped: outlet breaker open | {where}"

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "duplicate": self.duplicate, "total": self.total}

    def entry(self) -> dict[str, Any]:
        """The feed in `newsdesk collect --json` (docs/architecture.md)."""
        return {
            "url": self.url,
            "category": self.category,
            "status": self.status,
            "error_class": self.failure_class,
            "error": self.error,
            "new": self.new,
            "duplicate": self.duplicate,
        }


@dataclass
class OutletReport:
    source: str
    feeds: list[FeedReport] = field(default_factory=list)
    stale: bool = False
    breaker_tripped: bool = False
    skipped: str | None = None  # COOLING_DOWN: the outlet's breaker was open, nothing asked
    open_until: str | None = None  # when cooling down or tripped now: the breaker's (…Z)
    trips: int | None = None

    def cooling_down(self, feeds: Iterable[tuple[str, str]], open_until: str, trips: int) -> None:
        """Skipped whole, its breaker open until ``open_until``: ``feeds`` (category, URL)
        are counted as skipped while their outlet cools down."""
        self.skipped, self.open_until, self.trips = COOLING_DOWN, open_until, trips
        self.feeds = [
            FeedReport(self.source, category, url, FEED_SKIPPED_OPEN) for category, url in feeds
        ]

    def cooling_line(self, zone: tzinfo = UTC) -> str:
        until = local_time(self.open_until, zone) if self.open_until else "later"
        return f"Source: {self.source} | Skipped: cooling down until {until} (trip {self.trips})"

    def counts(self) -> dict[str, int]:
        statuses = [f.status for f in self.feeds]
        failures = [f.failure_class for f in self.feeds if f.status == FEED_FAILED]
        counts = {
            "feeds_attempted": sum(s in FETCHED for s in statuses),
            "feeds_failed": statuses.count(FEED_FAILED),
            "feeds_skipped": statuses.count(FEED_SKIPPED),
            "new": sum(f.new for f in self.feeds),
            "duplicate": sum(f.duplicate for f in self.feeds),
            "photo_filtered": sum(f.photo_filtered for f in self.feeds),
            "total": sum(f.total for f in self.feeds),
            "messages_stale": int(self.stale),
            "feeds_due": sum(s not in (FEED_NOT_DUE, FEED_SKIPPED_OPEN) for s in statuses),
            "feeds_not_due": statuses.count(FEED_NOT_DUE),
            "feeds_skipped_open_breaker": statuses.count(FEED_SKIPPED_OPEN),
            "feeds_ok": statuses.count(FEED_OK),
            "feeds_not_modified": statuses.count(FEED_NOT_MODIFIED),
        }
        for name in (*SUMMED, "raw_stored"):
            counts[name] = sum(getattr(f, name) for f in self.feeds)
        counts["raw_bodies_stored"] = counts.pop("raw_stored")
        for name in FAILURE_CLASSES:
            counts[f"failed_{name}"] = failures.count(name)
        return counts

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            **self.counts(),
            "stale": self.stale,
            "breaker_tripped": self.breaker_tripped,
            "skipped": self.skipped,
            "open_until": self.open_until,
            "trips": self.trips,
            "feeds": [f.as_dict() for f in self.feeds],
        }

    def entry(self) -> dict[str, Any]:
        """The outlet in `newsdesk collect --json`: the contract's keys first (source, then
        CONTRACT_KEYS), the funnel, whether and until when it cools down, its feeds."""
        return {
            "source": self.source,
            **self.counts(),
            "skipped": self.skipped,
            "open_until": self.open_until,
            "trips": self.trips,
            "feeds": [f.entry() for f in self.feeds],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OutletReport:
        computed = {"duplicate", "total"}
        feeds = [
            FeedReport(**{k: v for k, v in f.items() if k not in computed}) for f in data["feeds"]
        ]
        return cls(
            data["source"],
            feeds,
            data["stale"],
            data["breaker_tripped"],
            data.get("skipped"),
            data.get("open_until"),
            data.get("trips"),
        )


def totals(outlets: Iterable[OutletReport]) -> dict[str, int]:
    summed = dict.fromkeys(COUNT_KEYS, 0)
    for outlet in outlets:
        for key, value in outlet.counts().items():
            summed[key] += value
    return summed
