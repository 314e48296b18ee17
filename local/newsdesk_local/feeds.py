"""`newsdesk feeds`: what the state table says of every feed and outlet (last status, error,
failures in a row, next check, the outlet's breaker) and of every host article pages come from
(its breaker, failures, robots.txt), and `newsdesk feeds reset`, which closes breakers and
makes feeds due.

Where the records are read: a deployed stack's table (``--table`` or ``STATE_TABLE_NAME``, with
boto3's default credentials; Scan to read, UpdateItem to reset), an emulator's
(``AWS_ENDPOINT_URL``), else the items the local runtime saved in ``NEWSDESK_DATA_DIR``, read
(and, to reset, written) in place with nothing started.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, Protocol

from newsdesk.aws.state_table import (
    HOST_SK,
    OUTLET_SK,
    StateTable,
    feed_key,
    from_item,
    outlet_key,
    records,
    to_item,
)
from newsdesk.core.breaker import BREAKER_CLOSED, BREAKER_OPEN, Breaker
from newsdesk.core.errors import ConfigError
from newsdesk.core.hosts import HostState
from newsdesk.core.schedule import FeedState, OutletState
from newsdesk.core.sources import Outlet
from newsdesk.core.times import local_time
from newsdesk_local.folder_lock import FolderLock
from newsdesk_local.output import json_time, plural, terminal_time
from newsdesk_local.saved_state import STATE_FILE, load_tables, store_tables

STATE_TABLE = "StateTable"  # the template's logical id
# Why a feed of the sources file has no attempt to show (`feeds --json`'s "skipped"): it never
# had one, or its outlet's breaker tripped before its turn in the outlet's last round.
NEVER_TRIED, NOT_TRIED_THIS_ROUND = "never_tried", "not_tried_this_round"


@dataclass
class OutletRecords:
    """An outlet as the state table knows it: its breaker (closed if it has no item) and its
    feeds' records."""

    source: str
    breaker: Breaker
    feeds: list[FeedState] = field(default_factory=list)
    # the outlet's last round: the newest attempt of its feeds (a round's feeds share their
    # message's time), kept when a listing leaves some of them out
    round_at: datetime | None = None

    def __post_init__(self) -> None:
        if self.round_at is None:
            attempts = [f.last_attempt_at for f in self.feeds if f.last_attempt_at]
            self.round_at = max(attempts, default=None)

    def breaker_state(self, at: datetime) -> str:
        return self.breaker.state_at(at)

    def failing(self, at: datetime) -> bool:
        return self.breaker_state(at) != BREAKER_CLOSED or any(f.failing for f in self.feeds)

    def skipped(self, feed: FeedState) -> str | None:
        """NEVER_TRIED, NOT_TRIED_THIS_ROUND (the breaker tripped in the outlet's last round,
        before this feed's turn), or None: the feed's record says what happened to it."""
        if feed.last_attempt_at is None:
            return NEVER_TRIED
        last = self.round_at
        if last is not None and self.breaker.opened_at == last and feed.last_attempt_at < last:
            return NOT_TRIED_THIS_ROUND
        return None

    def next_check(self, feed: FeedState, at: datetime) -> datetime | None:
        """When ``feed`` is next asked: while the outlet's breaker is open (at ``at``), not
        before the breaker lets the outlet be tried; else the feed's own next check (None: at
        the next round)."""
        due, until = feed.next_check_at, self.breaker.open_until
        if self.breaker_state(at) == BREAKER_OPEN and until is not None:
            return until if due is None or due < until else due
        return due

    def untried(self) -> int:
        return sum(self.skipped(f) is not None for f in self.feeds)


def with_sources(
    known: Mapping[str, OutletRecords], outlets: Iterable[Outlet]
) -> dict[str, OutletRecords]:
    """Every outlet and feed of the sources file in use, with what the state records of them
    (a feed it has no record of, never tried), and the outlets and feeds it records that the
    file no longer names."""
    merged = {name: dataclasses.replace(o, feeds=list(o.feeds)) for name, o in known.items()}
    for outlet in outlets:
        records = merged.setdefault(outlet.name, OutletRecords(outlet.name, Breaker()))
        recorded = {f.url for f in records.feeds}
        records.feeds += [
            FeedState(outlet.name, feed.url, feed.category)
            for feed in outlet.feeds
            if feed.url not in recorded
        ]
    return dict(sorted(merged.items()))


class StateStore(Protocol):
    where: str  # for messages: which table or file

    def read(self) -> dict[str, OutletRecords]: ...

    def hosts(self) -> list[HostState]: ...

    def reset(self, outlet: OutletRecords, at: datetime) -> None: ...


def outlets_of(
    breakers: Mapping[str, OutletState], feeds: Mapping[str, list[FeedState]]
) -> dict[str, OutletRecords]:
    return {
        source: OutletRecords(
            source,
            breakers[source].breaker if source in breakers else Breaker(),
            list(feeds.get(source, [])),
        )
        for source in sorted({*breakers, *feeds})
    }


class TableStore:
    """A DynamoDB table: read by Scan, reset by UpdateItem (the breaker's fields and the feeds'
    ``next_check_at`` only, so that a worker writing the same item loses nothing)."""

    def __init__(self, table: StateTable, name: str) -> None:
        self._table = table
        self.where = f"the state table {name}"

    def read(self) -> dict[str, OutletRecords]:
        return outlets_of(*self._table.scan())

    def hosts(self) -> list[HostState]:
        return self._table.hosts()

    def reset(self, outlet: OutletRecords, at: datetime) -> None:
        self._table.close_breaker(outlet.source)
        for feed in outlet.feeds:
            self._table.make_due(outlet.source, feed.url, at)


class SavedStore:
    """The local runtime's saved items (``aws-state.json``), changed by the records' own
    transitions and written back whole, with the data folder held (``folder_lock``): a local
    round running meanwhile would write its own copy when it ends, so a reset then is refused
    in one line naming it (a running ``newsdesk stack``'s table is a TableStore instead)."""

    def __init__(self, data_dir: Path) -> None:
        self._data_dir = data_dir
        self.where = f"the local state in {data_dir / STATE_FILE}"

    def read(self) -> dict[str, OutletRecords]:
        return outlets_of(*records(load_tables(self._data_dir).get(STATE_TABLE, [])))

    def hosts(self) -> list[HostState]:
        items = load_tables(self._data_dir).get(STATE_TABLE, [])
        found = (from_item(HostState, i) for i in items if i["sk"]["S"] == HOST_SK)
        return sorted(found, key=lambda h: h.host)

    def reset(self, outlet: OutletRecords, at: datetime) -> None:
        with FolderLock(self._data_dir, "newsdesk feeds reset"):
            self._reset(outlet, at)

    def _reset(self, outlet: OutletRecords, at: datetime) -> None:
        tables = load_tables(self._data_dir)
        items = tables.get(STATE_TABLE, [])
        changed: dict[tuple[str, str], dict[str, Any]] = {}
        if outlet.breaker.state != BREAKER_CLOSED or outlet.breaker.trips:
            closed = OutletState(outlet.source, dataclasses.replace(outlet.breaker))
            closed.breaker.closed()
            changed[(outlet_key(outlet.source), OUTLET_SK)] = to_item(closed)
        for feed in outlet.feeds:
            due = dataclasses.replace(feed)
            due.made_due(at)
            changed[(outlet_key(outlet.source), feed_key(feed.url))] = to_item(due)
        tables[STATE_TABLE] = [
            changed.get((item["pk"]["S"], item["sk"]["S"]), item) for item in items
        ]
        store_tables(self._data_dir, tables)


# --- what is shown ----------------------------------------------------------------------------


def ordered(
    outlets: Iterable[OutletRecords], at: datetime, failing_only: bool
) -> list[OutletRecords]:
    """Failing outlets first (an open or half-open breaker, or a failing feed), then by name;
    within each, failing feeds first, then by category and URL. ``failing_only``: only those,
    and only their failing feeds."""
    shown: list[OutletRecords] = []
    for outlet in outlets:
        if failing_only and not outlet.failing(at):
            continue
        feeds = [f for f in outlet.feeds if f.failing or not failing_only]
        feeds.sort(key=lambda f: (not f.failing, f.category, f.url))
        shown.append(OutletRecords(outlet.source, outlet.breaker, feeds, outlet.round_at))
    shown.sort(key=lambda o: (not o.failing(at), o.source))
    return shown


def as_json(outlets: Iterable[OutletRecords], at: datetime) -> dict[str, Any]:
    """The document of `newsdesk feeds --json` (docs/architecture.md): times UTC (…Z)."""
    return {
        "outlets": [
            {
                "source": o.source,
                "breaker": {
                    "state": o.breaker_state(at),
                    "open_until": json_time(o.breaker.open_until)
                    if o.breaker.state == BREAKER_OPEN
                    else None,
                    "trips": o.breaker.trips,
                },
                "feeds": [
                    {
                        "url": f.url,
                        "category": f.category,
                        "last_status": f.last_status,
                        "last_error": f.last_error,
                        "last_error_at": json_time(f.last_error_at),
                        "consecutive_failures": f.consecutive_failures,
                        "last_success_at": json_time(f.last_success_at),
                        "next_check_at": json_time(f.next_check_at),
                        "last_error_class": f.last_error_class,
                        "last_attempt_at": json_time(f.last_attempt_at),
                        "skipped": o.skipped(f),
                    }
                    for f in o.feeds
                ],
            }
            for o in outlets
        ]
    }


def breaker_text(outlet: OutletRecords, at: datetime, zone: tzinfo) -> str:
    state, breaker = outlet.breaker_state(at), outlet.breaker
    until = local_time(breaker.open_until, zone) if breaker.open_until else "now"
    if state == BREAKER_OPEN:
        return f"open until {until} (trip {breaker.trips})"
    if state != BREAKER_CLOSED:
        return f"half-open since {until} (trip {breaker.trips}): the next round tries one feed"
    return "closed"


def outlet_line(outlet: OutletRecords, at: datetime, zone: tzinfo) -> str:
    failing, untried = sum(f.failing for f in outlet.feeds), outlet.untried()
    return (
        f"Outlet: {outlet.source} | Breaker: {breaker_text(outlet, at, zone)} | "
        f"{failing} of {plural(len(outlet.feeds), 'feed')} failing"
        + (f", {untried} not tried" if untried else "")
    )


SKIPPED_WORDS = {
    NEVER_TRIED: "Never tried",
    NOT_TRIED_THIS_ROUND: "Not tried this round (its outlet's breaker tripped first)",
}


def feed_line(outlet: OutletRecords, feed: FeedState, at: datetime, zone: tzinfo) -> str:
    """A feed of ``outlet`` in one line, as of ``at``: its record, why it shows no attempt of
    the outlet's last round if it shows none (``OutletRecords.skipped``), and when it is next
    asked (``OutletRecords.next_check``: not while its outlet's breaker is open)."""
    skipped = outlet.skipped(feed)
    if skipped is not None:
        status = SKIPPED_WORDS[skipped]
    elif feed.failing:
        failed_at = terminal_time(feed.last_error_at, zone)
        status = f"Failed ({feed.last_error_class or 'unknown'}) {failed_at}"
        status += f": {feed.last_error}" if feed.last_error else ""
        status += f" | {plural(feed.consecutive_failures, 'failure')} in a row"
    else:
        status = {"ok": "OK", "not_modified": "Not modified"}.get(
            feed.last_status or "", "Never checked"
        )
    return (
        f"Feed: {feed.source} | {feed.category or '-'} | {status} | last success "
        f"{terminal_time(feed.last_success_at, zone)} | next check "
        f"{terminal_time(outlet.next_check(feed, at), zone, 'at the next round')} | {feed.url}"
    )


def hosts_json(hosts: Iterable[HostState], at: datetime) -> list[dict[str, Any]]:
    return [
        {
            "host": h.host,
            "breaker": {
                "state": h.breaker.state_at(at),
                "open_until": json_time(h.breaker.open_until)
                if h.breaker.state == BREAKER_OPEN
                else None,
                "trips": h.breaker.trips,
            },
            "consecutive_failures": h.breaker.failures,
            "last_error": h.last_error,
            "last_error_at": json_time(h.last_error_at),
            "robots": h.robots_status,
            "robots_fetched_at": json_time(h.robots_fetched_at),
            "requests": h.pages_fetched,
        }
        for h in hosts
    ]


def host_line(host: HostState, at: datetime, zone: tzinfo) -> str:
    """A host the extractor fetched pages from: its breaker, failures and robots.txt."""
    state, trips = host.breaker.state_at(at), host.breaker.trips
    until = local_time(host.breaker.open_until, zone) if host.breaker.open_until else "now"
    breaker = {
        BREAKER_OPEN: f"open until {until} (trip {trips}): its pages wait",
        BREAKER_CLOSED: "closed",
    }.get(state, f"half-open since {until} (trip {trips}): the next page is a probe")
    failed = f"{plural(host.breaker.failures, 'failure')} in a row"
    if host.last_error:
        failed += f", last {local_time(host.last_error_at, zone) if host.last_error_at else ''}: "
        failed += host.last_error
    robots = host.robots_status or "not read"
    if host.robots_fetched_at:
        robots += f" ({local_time(host.robots_fetched_at, zone)})"
    return (
        f"Host: {host.host} | Breaker: {breaker} | {failed} | robots.txt {robots} | "
        f"{plural(host.pages_fetched, 'request')}"
    )


def summary(outlets: Iterable[OutletRecords], at: datetime, zone_name: str, zone: tzinfo) -> str:
    listed = list(outlets)
    states = [o.breaker_state(at) for o in listed]
    feeds = [f for o in listed for f in o.feeds]
    failing = sum(f.failing for f in feeds)
    never = sum(o.skipped(f) == NEVER_TRIED for o in listed for f in o.feeds)
    skipped = sum(o.skipped(f) == NOT_TRIED_THIS_ROUND for o in listed for f in o.feeds)
    untried = f", {never} never tried" if never else ""
    untried += f", {skipped} not tried this round" if skipped else ""
    abbreviation = at.astimezone(zone).strftime("%Z")
    return (
        f"Outlets: {len(listed)} ({states.count(BREAKER_OPEN)} cooling down, "
        f"{sum(s not in (BREAKER_OPEN, BREAKER_CLOSED) for s in states)} half-open); "
        f"feeds: {len(feeds)} ({failing} failing{untried}); times in {zone_name} ({abbreviation})"
    )


def reset_line(outlet: OutletRecords, at: datetime, zone: tzinfo) -> str:
    was = breaker_text(outlet, at, zone)
    return (
        f"Reset: {outlet.source} | Breaker: closed, trips 0; was {was} | "
        f"{plural(len(outlet.feeds), 'feed')} due now"
    )


def chosen(known: Mapping[str, OutletRecords], names: list[str], every: bool) -> list[str]:
    """The outlets a reset names, all of them known, or all outlets with ``every``."""
    if every:
        return list(known)
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ConfigError(f"no state recorded for outlet {', '.join(map(repr, unknown))}")
    return list(dict.fromkeys(names))
