"""The fan-out: one message per outlet on the outlet queue (``newsdesk.aws.outlet_queue``,
which sends again what SQS failed on its side and raises on what still fails, so the schedule
retries the run).

Before sending, it reads every outlet's records: those whose breaker is open are skipped, and
those silent (no successful feed for OUTLET_SILENT_HOURS, ``core.schedule.silence``) are
counted (metric ``SilentOutlets``) and named, one log line each, as are the skipped ones.
A round whose time is more than MAX_CLOCK_SKEW ahead of the clock is refused whole (issue 39):
its messages would keep every feed from being due, and open breakers, until that time.
First of all, the latest round is judged from those records: one that reached no outlet at all
(the collector's own network) is forgiven (``collect.unreached``, issue 41), counted (metric
``RoundsUnreachable``) and logged, so that no outlet cools down for it."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from aws_lambda_powertools import Logger

from newsdesk.aws.outlet_queue import OutletQueue
from newsdesk.aws.state_table import OutletRecords, StateTable
from newsdesk.collect.unreached import forgive
from newsdesk.core.breaker import BREAKER_OPEN
from newsdesk.core.messages import REFUSED_AHEAD, OutletMessage
from newsdesk.core.schedule import Silence, SilencePolicy, open_breakers, silence
from newsdesk.core.sources import Feed, Outlet, group_by_outlet
from newsdesk.core.times import ahead_of_clock, format_time, utc_now

logger = Logger(child=True)


@dataclass(frozen=True)
class FanOutResult:
    outlets: int
    feeds: int
    messages_sent: int
    batches: int
    retried: int
    outlets_skipped_open: int = 0
    outlets_silent: int = 0
    # the outlets skipped, each {"source", "open_until" (…Z), "trips"}: a round's report
    # lists them as cooling down
    outlets_cooling: tuple[dict[str, Any], ...] = ()
    refused: str | None = None  # why nothing was sent: REFUSED_AHEAD (a time ahead of the clock)
    # the time (…Z) of the round before, when it reached nothing and was forgiven (issue 41)
    unreachable_round: str | None = None
    outlets_forgiven: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "outlets_cooling": list(self.outlets_cooling)}

    def metric_counts(self) -> dict[str, int]:
        """The fan-out's EMF metrics by name."""
        return {
            "OutletsScheduled": self.outlets,
            "FeedsScheduled": self.feeds,
            "MessagesSent": self.messages_sent,
            "OutletsSkippedOpenBreaker": self.outlets_skipped_open,
            "SilentOutlets": self.outlets_silent,
            "RoundsRefused": int(self.refused is not None),
            "RoundsUnreachable": int(self.unreachable_round is not None),
        }


def fan_out_round(
    feeds: Sequence[Feed],
    scheduled_at: datetime,
    queue: OutletQueue,
    states: StateTable,
    ignore_schedule: bool = False,
    silence_policy: SilencePolicy | None = None,
    now: datetime | None = None,
) -> FanOutResult:
    """A round: a message for every outlet but those whose breaker is open at
    ``scheduled_at`` (they cool down; the worker would skip them anyway), and the outlets
    silent at ``scheduled_at`` counted and logged; nothing, and the refusal logged, when
    ``scheduled_at`` is more than MAX_CLOCK_SKEW ahead of ``now`` (by default the clock's)."""
    if is_ahead_of_clock(scheduled_at, now or utc_now()):
        return FanOutResult(0, 0, 0, 0, 0, refused=REFUSED_AHEAD)
    outlets = group_by_outlet(feeds)
    records = states.every_outlet([outlet.name for outlet in outlets])
    unreachable = forgive(records, states)  # before the breakers are read: they may close
    skip = open_breakers({name: outlet for name, (outlet, _) in records.items()}, scheduled_at)
    cooling = cooling_down(skip, records, scheduled_at)
    silent = silent_outlets(outlets, records, scheduled_at, silence_policy or SilencePolicy())
    result = fan_out(
        feeds,
        scheduled_at,
        queue,
        skip=skip,
        ignore_schedule=ignore_schedule,
        outlets_silent=len(silent),
    )
    return dataclasses.replace(
        result,
        outlets_cooling=tuple(cooling),
        unreachable_round=format_time(unreachable.at) if unreachable else None,
        outlets_forgiven=len(unreachable.outlets) if unreachable else 0,
    )


def cooling_down(
    skip: Collection[str], records: dict[str, OutletRecords], at: datetime
) -> list[dict[str, Any]]:
    """The outlets skipped, each logged, as the round's report lists them cooling down."""
    cooling: list[dict[str, Any]] = []
    for name in sorted(skip):
        breaker = records[name][0].breaker
        open_until = format_time(breaker.open_until or at)
        logger.info(
            "outlet skipped: breaker open",
            extra={"outlet": name, "breaker": BREAKER_OPEN, "open_until": open_until},
        )
        cooling.append({"source": name, "open_until": open_until, "trips": breaker.trips})
    return cooling


def is_ahead_of_clock(scheduled_at: datetime, now: datetime) -> bool:
    """Whether the round's time is more than MAX_CLOCK_SKEW ahead of ``now`` (logged so)."""
    ahead = ahead_of_clock(scheduled_at, now)
    if ahead is None:
        return False
    logger.warning(
        "round refused",
        extra={
            "reason": REFUSED_AHEAD,
            "scheduled_at": format_time(scheduled_at),
            "now": format_time(now),
            "ahead_seconds": int(ahead.total_seconds()),
        },
    )
    return True


def silent_outlets(
    outlets: Sequence[Outlet],
    records: dict[str, OutletRecords],
    at: datetime,
    policy: SilencePolicy,
) -> list[Silence]:
    """The outlets silent at ``at``, each named in a log line of its own (a Contributor
    Insights rule and the dashboard read them)."""
    found: list[Silence] = []
    for outlet in outlets:
        breaker, feed_states = records[outlet.name]
        quiet = silence(breaker, feed_states, [f.url for f in outlet.feeds], at, policy)
        if quiet is None:
            continue
        found.append(quiet)
        logger.warning(
            "outlet silent",
            extra={
                "outlet": quiet.source,
                "silent_since": format_time(quiet.since),
                "silent_hours": quiet.hours,
                "ever_succeeded": quiet.ever_succeeded,
                "feeds": quiet.feeds,
                "feeds_failing": quiet.feeds_failing,
                "last_error": quiet.last_error or "",
            },
        )
    return found


def fan_out(
    feeds: Sequence[Feed],
    scheduled_at: datetime,
    queue: OutletQueue,
    skip: Collection[str] = (),
    ignore_schedule: bool = False,
    outlets_silent: int = 0,
) -> FanOutResult:
    """``skip``: outlets whose breaker is open; ``ignore_schedule``: a round on demand, in which
    every feed is due; ``outlets_silent``: counted by the caller, reported here."""
    outlets = group_by_outlet(feeds)
    messages = [
        OutletMessage(outlet, scheduled_at, ignore_schedule)
        for outlet in outlets
        if outlet.name not in skip
    ]
    delivered = queue.send(messages)
    result = FanOutResult(
        outlets=len(outlets),
        feeds=len(feeds),
        messages_sent=len(messages),
        batches=delivered.batches,
        retried=delivered.retried,
        outlets_skipped_open=len(outlets) - len(messages),
        outlets_silent=outlets_silent,
    )
    logger.info("outlets fanned out", extra=result.as_dict())
    return result
