"""What one round did, per feed and per outlet: the funnel the CLI prints and metrics count."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

FEED_OK = "ok"
FEED_FAILED = "failed"
FEED_SKIPPED = "skipped"

# The keys of one outlet in `newsdesk collect --json` (DESIGN.md), in order.
COUNT_KEYS = (
    "feeds_attempted",
    "feeds_failed",
    "feeds_skipped",
    "new",
    "duplicate",
    "photo_filtered",
    "total",
)


@dataclass
class FeedReport:
    source: str
    category: str
    url: str
    status: str = FEED_SKIPPED
    new: int = 0
    duplicate: int = 0
    photo_filtered: int = 0
    without_link: int = 0
    error: str | None = None
    reason: str | None = None

    @property
    def total(self) -> int:
        """Articles offered to the store, as the seed's ``Total`` (photo articles excluded)."""
        return self.new + self.duplicate

    def log_line(self) -> str:
        """The seed's human-readable line."""
        if self.status == FEED_OK:
            return (
                f"Source: {self.source} | New: {self.new} | Skip: {self.duplicate} "
                f"| Total: {self.total}"
            )
        if self.status == FEED_FAILED:
            return f"Source: {self.source} | Failed: {self.error} | {self.category} {self.url}"
        return f"Source: {self.source} | Skipped: outlet breaker open | {self.category} {self.url}"

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "total": self.total}


@dataclass
class OutletReport:
    source: str
    feeds: list[FeedReport] = field(default_factory=list)

    @property
    def breaker_tripped(self) -> bool:
        return any(f.status == FEED_SKIPPED for f in self.feeds)

    def counts(self) -> dict[str, int]:
        return {
            "feeds_attempted": sum(f.status != FEED_SKIPPED for f in self.feeds),
            "feeds_failed": sum(f.status == FEED_FAILED for f in self.feeds),
            "feeds_skipped": sum(f.status == FEED_SKIPPED for f in self.feeds),
            "new": sum(f.new for f in self.feeds),
            "duplicate": sum(f.duplicate for f in self.feeds),
            "photo_filtered": sum(f.photo_filtered for f in self.feeds),
            "total": sum(f.total for f in self.feeds),
        }

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, **self.counts(), "feeds": [f.as_dict() for f in self.feeds]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OutletReport:
        feeds = [FeedReport(**{k: v for k, v in f.items() if k != "total"}) for f in data["feeds"]]
        return cls(source=data["source"], feeds=feeds)


def totals(outlets: Iterable[OutletReport]) -> dict[str, int]:
    summed = dict.fromkeys(COUNT_KEYS, 0)
    for outlet in outlets:
        for key, value in outlet.counts().items():
            summed[key] += value
    return summed
