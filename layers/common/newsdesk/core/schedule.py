"""When each feed and outlet is checked next: the records the worker keeps per feed and per
outlet (whose breaker is ``core.breaker``'s), each with its own transitions (as miniflux's feed
model has them): the collector calls methods, the state table (``newsdesk.aws.state_table``)
stores them.

Times are those of the schedule (the message's ``scheduled_at``), so that a feed checked every
run is due on the next run however long the fetch took.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from newsdesk.core.breaker import BREAKER_OPEN, Breaker
from newsdesk.core.settings import CollectSettings

# The policies' defaults are the collect table's: COLLECT_PERIOD_SECONDS (a round) and
# OUTLET_SILENT_HOURS.
ROUND = timedelta(seconds=CollectSettings.collect_period_seconds)
SILENT_AFTER = timedelta(hours=CollectSettings.outlet_silent_hours)

# The longest a server's Retry-After, Cache-Control max-age or RSS <ttl> defers a feed, as a
# page's Retry-After is held (docs/extraction.md): past it, the value is read as this.
MAX_FLOOR = timedelta(days=7)

STATUS_OK = "ok"
STATUS_NOT_MODIFIED = "not_modified"
STATUS_FAILED = "failed"


@dataclass(frozen=True)
class SchedulePolicy:
    """How often feeds are checked: every ``period`` while they publish, doubling toward
    ``max_interval`` while they do not; failures back off the same way (never disabled). A
    server's floor (Retry-After, max-age, ttl) may defer a check further, up to ``max_floor``."""

    period: timedelta = ROUND
    max_interval: timedelta = timedelta(hours=6)
    max_floor: timedelta = MAX_FLOOR

    def interval(self, streak: int, floor_seconds: float = 0.0) -> timedelta:
        doubled = self.period * int(2 ** min(streak, 16))
        floor = timedelta(seconds=min(floor_seconds, self.max_floor.total_seconds()))
        return max(min(doubled, self.max_interval), floor)


@dataclass
class FeedState:
    source: str
    url: str
    category: str = ""
    last_attempt_at: datetime | None = None
    last_success_at: datetime | None = None
    last_changed_at: datetime | None = None
    next_check_at: datetime | None = None
    last_status: str | None = None
    last_error: str | None = None
    last_error_class: str | None = None  # the report's failure class: timeout, http_4xx, …
    consecutive_failures: int = 0
    unchanged_checks: int = 0
    entries_seen: int = 0
    etag: str | None = None
    last_modified: str | None = None
    body_hash: str | None = None
    first_attempt_at: datetime | None = None  # since when it is tried (None before 0.2)

    def is_due(self, at: datetime) -> bool:
        return self.next_check_at is None or self.next_check_at <= at

    @property
    def failing(self) -> bool:
        return self.last_status == STATUS_FAILED

    @property
    def last_error_at(self) -> datetime | None:
        """When the failure ``last_error`` describes happened (errors clear on success)."""
        return self.last_attempt_at if self.failing else None

    def made_due(self, at: datetime) -> None:
        """An operator's reset: checked at the next round, whatever the back-off said."""
        self.next_check_at = at

    def forgiven(self, at: datetime) -> None:
        """Its failure at ``at`` not held against it (a round that reached no outlet at all:
        the collector's own network, ``collect.unreached``): due again from ``at``, its streak
        as before; ``last_error`` still says what happened."""
        self.consecutive_failures = max(self.consecutive_failures - 1, 0)
        self.next_check_at = at

    def attempted(self, at: datetime, category: str) -> None:
        if self.first_attempt_at is None:
            self.first_attempt_at = at
        self.last_attempt_at = at
        self.category = category

    def succeeded(
        self,
        at: datetime,
        policy: SchedulePolicy,
        *,
        published: bool,
        entries_seen: int,
        floor_seconds: float = 0.0,
        etag: str | None = None,
        last_modified: str | None = None,
        body_hash: str | None = None,
    ) -> None:
        """A fetch that worked. ``published``: it brought new articles."""
        self.last_success_at = at
        self.last_status = STATUS_OK
        self.last_error = self.last_error_class = None
        self.consecutive_failures = 0
        self.entries_seen = entries_seen
        self.etag, self.last_modified, self.body_hash = etag, last_modified, body_hash
        if published:
            self.last_changed_at = at
            self.unchanged_checks = 0
        else:
            self.unchanged_checks += 1
        self.next_check_at = at + policy.interval(self.unchanged_checks, floor_seconds)

    def not_modified(
        self, at: datetime, policy: SchedulePolicy, floor_seconds: float = 0.0
    ) -> None:
        """A 304, or the same body again: not a failure, and it ends a failure streak."""
        self.last_success_at = at
        self.last_status = STATUS_NOT_MODIFIED
        self.last_error = self.last_error_class = None
        self.consecutive_failures = 0
        self.unchanged_checks += 1
        self.next_check_at = at + policy.interval(self.unchanged_checks, floor_seconds)

    def failed(
        self,
        at: datetime,
        error: str,
        policy: SchedulePolicy,
        floor_seconds: float = 0.0,
        error_class: str | None = None,
    ) -> None:
        self.last_status = STATUS_FAILED
        self.last_error = error[:1000]
        self.last_error_class = error_class
        self.consecutive_failures += 1
        self.next_check_at = at + policy.interval(self.consecutive_failures - 1, floor_seconds)


@dataclass
class OutletState:
    """An outlet's record: its breaker, tripped by its feeds failing within one message (see
    ``core.breaker``); the feeds' records are ``FeedState``."""

    source: str
    breaker: Breaker = field(default_factory=Breaker)


def open_breakers(outlets: dict[str, OutletState], at: datetime) -> set[str]:
    """The outlets cooling down at ``at``: the fan-out sends them no message."""
    return {name for name, state in outlets.items() if state.breaker.state_at(at) == BREAKER_OPEN}


@dataclass(frozen=True)
class SilencePolicy:
    """An outlet is silent when none of its feeds has succeeded for ``window``
    (OUTLET_SILENT_HOURS), counted from its last success or, when it never had one, from its
    first attempt, and it is not merely waiting: one of its feeds failed at its last attempt, or
    is overdue by more than ``period`` (a round), or its breaker is open."""

    window: timedelta = SILENT_AFTER
    period: timedelta = ROUND


@dataclass(frozen=True)
class Silence:
    """An outlet silent at ``at``: since when, and what its feeds say."""

    source: str
    since: datetime
    hours: float
    ever_succeeded: bool
    feeds: int
    feeds_failing: int
    last_error: str | None


def silence(
    outlet: OutletState,
    feeds: Mapping[str, FeedState],
    urls: Collection[str],
    at: datetime,
    policy: SilencePolicy,
) -> Silence | None:
    """The outlet's silence at ``at``, or None. Only the feeds of ``urls`` (sources.yaml's)
    count. An outlet with no record is new, not silent; nor is one tried for less than the
    window, nor one whose records predate ``first_attempt_at`` and never succeeded (its next
    attempt starts the count)."""
    records = [feeds[url] for url in urls if url in feeds]
    if not records:
        return None
    successes = [f.last_success_at for f in records if f.last_success_at is not None]
    starts = [f.first_attempt_at for f in records if f.first_attempt_at is not None]
    since = max(successes) if successes else min(starts, default=None)
    if since is None or at - since < policy.window:
        return None
    failing = [f for f in records if f.last_status == STATUS_FAILED]
    overdue = any(f.is_due(at - policy.period) for f in records)
    if not failing and not overdue and outlet.breaker.state != BREAKER_OPEN:
        return None  # its feeds are due later (a long ttl or Cache-Control): waiting
    latest = max(failing, key=lambda f: f.last_attempt_at or since, default=None)
    return Silence(
        source=outlet.source,
        since=since,
        hours=round((at - since).total_seconds() / 3600, 1),
        ever_succeeded=bool(successes),
        feeds=len(records),
        feeds_failing=len(failing),
        last_error=latest.last_error if latest else None,
    )
