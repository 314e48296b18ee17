"""A round that reached nothing is the collector's fault, not the outlets' (issue 41).

When the collector's own network is gone (no DNS, no route, a NAT gateway down, packets
dropped) every outlet it tries fails at once, by DNS or connection or timeout, and each would
be charged for it: its breaker tripped, its failed feeds backed off, so that the collector stays
dark hours after the network is back. No function sees a round whole when deployed (the fan-out
returns before the workers run; a worker sees one outlet), but the next fan-out's Scan sees
every outlet's records, and so the round's last attempts: all of one round share its
``scheduled_at``. The latest round (the latest ``last_attempt_at``) reached nothing when

- at least ``MIN_OUTLETS`` outlets were tried in it (fewer cannot tell the machine from them),
- each of them has a feed that failed unreached (``UNREACHED``: DNS, connection, timeout), and
- not one feed of the round got an answer: every feed tried failed, unreached or ``NEUTRAL``
  (an address the guard refused, which asks no network). One answer, an HTTP error included,
  says that the network works: then the outlets that failed are charged as always.

Such a round is forgiven: each of its feeds that failed is due again with its streak as before,
and each breaker it tripped is as it was (closed, or open with its cool-down over), by
conditional updates that leave alone a record a worker wrote since (so forgiving twice changes
nothing). The fan-out forgives before it reads the breakers for its own round, counts it
(``RoundsUnreachable``) and logs it (``round unreachable``); ``newsdesk collect``, which sees
its round's end, forgives its own round at once and says that the machine looks offline.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from aws_lambda_powertools import Logger

from newsdesk.aws.state_table import OutletRecords, StateTable
from newsdesk.core.breaker import BREAKER_OPEN
from newsdesk.core.schedule import STATUS_FAILED, FeedState, OutletState
from newsdesk.core.times import format_time

logger = Logger(child=True)

UNREACHED = frozenset({"connection", "timeout"})  # failure classes that need no answer
NEUTRAL = frozenset({"blocked"})  # refused before any packet: says nothing of the network
MIN_OUTLETS = 3


@dataclass(frozen=True)
class Unreached:
    """A round that reached nothing: its time, its outlets, and what was taken back."""

    at: datetime
    outlets: tuple[str, ...]
    feeds_forgiven: int = 0
    breakers_forgiven: int = 0

    @property
    def forgave(self) -> bool:
        return bool(self.feeds_forgiven or self.breakers_forgiven)


def judge(records: Mapping[str, OutletRecords]) -> Unreached | None:
    """The latest round of ``records``, if it reached nothing (above); else None."""
    tried = [f.last_attempt_at for _, feeds in records.values() for f in feeds.values()]
    at = max((t for t in tried if t is not None), default=None)
    if at is None:
        return None
    unreached: list[str] = []
    for name, (_, feeds) in records.items():
        attempts = [f for f in feeds.values() if f.last_attempt_at == at]
        if any(_answered(f) for f in attempts):
            return None
        if any(f.last_error_class in UNREACHED for f in attempts):
            unreached.append(name)
    if len(unreached) < MIN_OUTLETS:
        return None
    return Unreached(at, tuple(sorted(unreached)))


def _answered(feed: FeedState) -> bool:
    """Whether the feed's last attempt says the network works: it succeeded, or failed in a way
    only an answer gives (an HTTP status, a body too large or no feed) or that is not known."""
    if feed.last_status != STATUS_FAILED:
        return True
    return feed.last_error_class not in UNREACHED | NEUTRAL


def forgive(records: Mapping[str, OutletRecords], states: StateTable) -> Unreached | None:
    """The latest round of ``records`` forgiven if it reached nothing: in the table and in
    ``records`` (the caller reads the breakers after). None when it reached something, or when
    there was nothing left to forgive (forgiven already); else what was taken back, logged."""
    found = judge(records)
    if found is None:
        return None
    feeds = breakers = 0
    for name in found.outlets:
        outlet, outlet_feeds = records[name]
        feeds += sum(_forgive_feed(feed, found.at, states) for feed in outlet_feeds.values())
        breakers += _forgive_breaker(outlet, found.at, states)
    done = Unreached(found.at, found.outlets, feeds, breakers)
    if done.forgave:
        logger.warning(
            "round unreachable: no outlet was reached, none is charged for it",
            extra={
                "round_at": format_time(done.at),
                "outlets": len(done.outlets),
                "feeds_forgiven": feeds,
                "breakers_forgiven": breakers,
            },
        )
    return done if done.forgave else None


def _forgive_feed(feed: FeedState, at: datetime, states: StateTable) -> bool:
    due = feed.next_check_at
    if feed.last_attempt_at != at or feed.last_status != STATUS_FAILED:
        return False
    if due is None or due <= at:  # forgiven already
        return False
    feed.forgiven(at)
    return states.forgive_feed(feed, at, due)


def _forgive_breaker(outlet: OutletState, at: datetime, states: StateTable) -> bool:
    breaker = outlet.breaker
    until = breaker.open_until
    if breaker.state != BREAKER_OPEN or breaker.opened_at != at:
        return False
    if until is None or until <= at:  # forgiven already (or never cooling down)
        return False
    breaker.forgiven(at)
    return states.forgive_breaker(outlet, at, until)


def forgive_latest_round(states: StateTable, outlets: list[str]) -> Unreached | None:
    """``forgive`` over the table's records of ``outlets`` (one Scan)."""
    return forgive(states.every_outlet(outlets), states)
