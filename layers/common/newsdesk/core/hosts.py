"""What the extractor keeps per host it fetches article pages from: when it last asked (the
pacing), until when it asked not to be asked (a 429 or 503's Retry-After), its breaker (as an
outlet's: failed pages in a row open it, a cool-down doubling per trip, then a half-open
probe), and its robots.txt, cached for ``ROBOTS_MAX_AGE``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from newsdesk.core.schedule import BREAKER_CLOSED, BREAKER_OPEN, BreakerPolicy, OutletState

ROBOTS_MAX_AGE = timedelta(hours=24)
ROBOTS_OK = "ok"  # read; its rules apply
ROBOTS_MISSING = "missing"  # 4xx: no rules, everything allowed (RFC 9309, 2.3.1.3)
ROBOTS_UNREACHABLE = "unreachable"  # 5xx or no answer: everything disallowed for now (2.3.1.4)


@dataclass
class HostState:
    host: str
    # when its last answer came, in Unix milliseconds (pacing needs more than a second's)
    last_request_ms: int | None = None
    consecutive_failures: int = 0
    last_error: str | None = None
    last_error_at: datetime | None = None
    breaker: str = BREAKER_CLOSED
    trips: int = 0
    opened_at: datetime | None = None
    open_until: datetime | None = None
    robots_status: str | None = None
    robots_txt: str | None = None
    robots_fetched_at: datetime | None = None
    pages_fetched: int = 0
    # a 429 or 503 answer's Retry-After (a page's or robots.txt's): nothing is asked before it
    retry_after_until: datetime | None = None

    def breaker_at(self, at: datetime) -> str:
        return self._outlet().breaker_at(at)

    def held_until(self, at: datetime) -> datetime | None:
        """When the host's Retry-After ends, while it has not."""
        until = self.retry_after_until
        return until if until is not None and until > at else None

    def hold(self, until: datetime) -> None:
        """The host said (Retry-After) not to ask before ``until``; a later one stands."""
        if self.retry_after_until is None or until > self.retry_after_until:
            self.retry_after_until = until

    def failing(self, at: datetime) -> bool:
        """A failure in a row not yet followed by a page, or a breaker not closed."""
        return bool(self.consecutive_failures) or self.breaker_at(at) != BREAKER_CLOSED

    def robots_fresh(self, at: datetime, unreachable_for: timedelta) -> bool:
        """Whether the kept robots.txt answer still holds: ROBOTS_MAX_AGE, or, when it could
        not be read, ``unreachable_for``."""
        fetched = self.robots_fetched_at
        unreachable = self.robots_status == ROBOTS_UNREACHABLE
        return fetched is not None and at - fetched < (
            unreachable_for if unreachable else ROBOTS_MAX_AGE
        )

    @property
    def last_request_at(self) -> datetime | None:
        ms = self.last_request_ms
        return None if ms is None else datetime.fromtimestamp(ms / 1000, UTC)

    def requested(self, at: datetime) -> None:
        self.last_request_ms = round(at.timestamp() * 1000)
        self.pages_fetched += 1

    def succeeded(self) -> None:
        """A page (or robots.txt) came back: the failures forgotten, the breaker closed."""
        self.consecutive_failures = 0
        self.last_error = self.last_error_at = None
        self.retry_after_until = None
        if self.breaker != BREAKER_CLOSED:
            self._apply(self._outlet(closed=True))

    def failed(self, at: datetime, error: str, max_failures: int, policy: BreakerPolicy) -> bool:
        """A page failed for a reason of the host's (no answer, 5xx, 429); True when this
        opened the breaker (``max_failures`` in a row, or a half-open probe that failed)."""
        self.consecutive_failures += 1
        self.last_error, self.last_error_at = error, at
        probing = self.breaker == BREAKER_OPEN
        if probing or self.consecutive_failures >= max_failures:
            outlet = self._outlet()
            outlet.tripped(at, policy)
            self._apply(outlet)
            return True
        return False

    def _outlet(self, closed: bool = False) -> OutletState:
        outlet = OutletState(self.host, self.breaker, self.trips, self.opened_at, self.open_until)
        if closed:
            outlet.closed()
        return outlet

    def _apply(self, outlet: OutletState) -> None:
        self.breaker, self.trips = outlet.breaker, outlet.trips
        self.opened_at, self.open_until = outlet.opened_at, outlet.open_until
