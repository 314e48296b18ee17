"""The breaker, one value for outlets and hosts alike, its transitions on itself (as miniflux
keeps a feed's on the feed): failures open it, a cool-down doubling per trip keeps it open, then
one half-open probe either closes it (trips forgotten) or opens it again, for longer.

An outlet's breaker (``core.schedule.OutletState``) counts its feeds that failed within one
message, cumulatively (a flapping outlet is as slow as a dead one), and stores only its state;
a host's (``core.hosts.HostState``) counts the pages that failed in a row, and stores that too.
The state table keeps both in the items' attributes of before (``aws.state_table``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from newsdesk.core.settings import CollectSettings

BREAKER_CLOSED = "closed"
BREAKER_OPEN = "open"
BREAKER_HALF_OPEN = "half_open"


@dataclass(frozen=True)
class BreakerPolicy:
    """The cool-down after a breaker trips: doubling from ``cooldown`` on each consecutive
    trip, up to ``max_cooldown``."""

    cooldown: timedelta = timedelta(seconds=CollectSettings.collect_period_seconds)  # a round
    max_cooldown: timedelta = timedelta(hours=6)

    def cooldown_after(self, trips: int) -> timedelta:
        return min(self.cooldown * int(2 ** min(trips - 1, 16)), self.max_cooldown)


@dataclass
class Breaker:
    """``state`` as stored (closed or open: half-open is an open one whose cool-down is over),
    ``trips`` since it last closed, when it opened and until when, and the ``failures`` counted
    toward the next trip."""

    state: str = BREAKER_CLOSED
    trips: int = 0
    opened_at: datetime | None = None
    open_until: datetime | None = None
    failures: int = 0

    def state_at(self, at: datetime) -> str:
        """closed, open (nothing is asked) or half_open (one probe is)."""
        if self.state != BREAKER_OPEN:
            return BREAKER_CLOSED
        if self.open_until is not None and at < self.open_until:
            return BREAKER_OPEN
        return BREAKER_HALF_OPEN

    def failed(self, at: datetime, max_failures: int, policy: BreakerPolicy) -> bool:
        """One more failure; True when it opened the breaker: ``max_failures`` of them, or a
        failure while open (a half-open probe's)."""
        self.failures += 1
        if self.state == BREAKER_OPEN or self.failures >= max_failures:
            self.tripped(at, policy)
            return True
        return False

    def tripped(self, at: datetime, policy: BreakerPolicy) -> None:
        self.trips += 1
        self.state = BREAKER_OPEN
        self.opened_at = at
        self.open_until = at + policy.cooldown_after(self.trips)

    def succeeded(self) -> None:
        """An answer came (a host's page, an outlet's half-open probe): the failures forgotten,
        the breaker closed."""
        self.failures = 0
        if self.state != BREAKER_CLOSED:
            self.closed()

    def forgiven(self, at: datetime) -> None:
        """The trip at ``at`` taken back (a round that reached no outlet at all: the collector's
        own network, ``collect.unreached``): closed if it had not tripped before, else as it was
        before its half-open probe failed, open with its cool-down over (probed next round)."""
        self.trips = max(self.trips - 1, 0)
        if self.trips == 0:
            self.closed()
        else:
            self.open_until = at

    def closed(self) -> None:
        """After a half-open probe worked, or an operator's reset: closed, trips forgotten."""
        self.state = BREAKER_CLOSED
        self.trips = 0
        self.opened_at = self.open_until = None
