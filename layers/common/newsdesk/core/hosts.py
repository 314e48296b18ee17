"""What the extractor keeps per host it fetches article pages from: when it last asked (the
pacing), until when it asked not to be asked (a 429 or 503's Retry-After), its breaker
(``core.breaker``, an outlet's kind: failed pages in a row open it, a cool-down doubling per
trip, then a half-open probe), and its robots.txt, cached for ``ROBOTS_MAX_AGE``."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from newsdesk.core.breaker import BREAKER_CLOSED, Breaker, BreakerPolicy

ROBOTS_MAX_AGE = timedelta(hours=24)
ROBOTS_OK = "ok"  # read; its rules apply
ROBOTS_MISSING = "missing"  # 4xx: no rules, everything allowed (RFC 9309, 2.3.1.3)
ROBOTS_UNREACHABLE = "unreachable"  # 5xx or no answer: everything disallowed for now (2.3.1.4)


@dataclass
class HostState:
    host: str
    # when its last answer came, in Unix milliseconds (pacing needs more than a second's)
    last_request_ms: int | None = None
    last_error: str | None = None
    last_error_at: datetime | None = None
    # its failures are the pages that failed in a row
    breaker: Breaker = field(default_factory=Breaker)
    robots_status: str | None = None
    robots_txt: str | None = None
    robots_fetched_at: datetime | None = None
    pages_fetched: int = 0
    # a 429 or 503 answer's Retry-After (a page's or robots.txt's): nothing is asked before it
    retry_after_until: datetime | None = None

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
        return bool(self.breaker.failures) or self.breaker.state_at(at) != BREAKER_CLOSED

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
        self.last_error = self.last_error_at = None
        self.retry_after_until = None
        self.breaker.succeeded()

    def failed(self, at: datetime, error: str, max_failures: int, policy: BreakerPolicy) -> bool:
        """A page failed for a reason of the host's (no answer, 5xx, 429); True when this
        opened the breaker (``max_failures`` in a row, or a half-open probe that failed)."""
        self.last_error, self.last_error_at = error, at
        return self.breaker.failed(at, max_failures, policy)
