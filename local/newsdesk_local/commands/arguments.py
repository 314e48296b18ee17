"""The argument types the commands share: each refuses a value in words (argparse's exit 2,
``newsdesk COMMAND: error: argument …``) before anything runs.

Every option that takes a time reads it one way (``read_time``), in the zone the output prints
in (NEWSDESK_TIMEZONE), at the moment the command started: ``newsdesk_local.cli.main`` sets
both (``reading_times``) around its parsing, since argparse hands a type only the text."""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import re
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TypeAlias
from zoneinfo import ZoneInfo

from newsdesk.core.settings import DEFAULT_TIMEZONE
from newsdesk.core.times import checked_replay_time, local_time, utc_now

# what each command module's ``add`` adds its parser to: ``newsdesk``'s subcommands
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

JSON_HELP = "print one JSON object"
STACK_READ_HELP = (
    "a deployed stack's name: read through its read function with your AWS credentials "
    "(no way into the VPC needed); default: the local data folder"
)


def whole_number(value: str) -> int:
    """``value`` as a whole number, or argparse's error in words (left to argparse, a type's
    ValueError would name the function: ``invalid positive value: 'x'``)."""
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None


def positive(value: str) -> int:
    number = whole_number(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {number}")
    return number


def port(value: str) -> int:
    number = whole_number(value)
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"a port is from 0 to 65535, not {number}")
    return number


def ipv4(value: str) -> str:
    try:
        return str(ipaddress.IPv4Address(value))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an IPv4 address: {value!r}") from None


# --- times ------------------------------------------------------------------------------------

# what an unreadable time is told, and what --help says of TIME
TIME_FORMS = (
    "ISO 8601 (2026-12-02T04:45, 2026-12-02; NEWSDESK_TIMEZONE unless it ends in Z or an "
    "offset such as +09:00), as printed (2026-12-02 04:45 KST), an age (30m, 24h, 2d: that "
    "long ago), today or yesterday (their start in NEWSDESK_TIMEZONE)"
)
# what each time option's --help adds
TIME_HELP = (
    "TIME: ISO 8601, in NEWSDESK_TIMEZONE unless it names an offset; as printed "
    "(2026-12-02 04:45 KST); an age (30m, 24h, 2d); today; yesterday"
)
AGE_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_AGE = re.compile(r"(\d+)\s*([mhdw])")
# local_time's output: a date, a time to the minute (or second), then the zone's abbreviation
# (KST, UTC) or, for a zone without one, its offset (+04, -0330)
_PRINTED = re.compile(r"(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?) +([A-Za-z]{1,6}|[+-]\d{2,4})")
_UTC_NAMES = ("UTC", "GMT", "Z")


def read_time(text: str, zone: tzinfo, now: datetime) -> datetime:
    """``text`` as a command-line time, in UTC: ISO 8601 (in ``zone`` when it names no offset),
    the output's own form (``2026-12-02 04:45 KST``), an age before ``now`` (``30m``, ``24h``,
    ``2d``, ``1w``), ``today`` or ``yesterday`` (midnight in ``zone``). A ValueError in words
    for anything else, or for an abbreviation ``zone`` does not use at that time."""
    try:
        return _read_time(text, zone, now)
    except OverflowError:  # year 1 in a zone east of UTC, 10000000d
        raise ValueError(f"out of range: {text!r}") from None


def _read_time(text: str, zone: tzinfo, now: datetime) -> datetime:
    value = text.strip()
    word = value.lower()
    if word in ("today", "yesterday"):
        day = now.astimezone(zone).date() - timedelta(days=1 if word == "yesterday" else 0)
        return datetime(day.year, day.month, day.day, tzinfo=zone).astimezone(UTC)
    if age := _AGE.fullmatch(word):
        return now.astimezone(UTC) - timedelta(**{AGE_UNITS[age[2]]: int(age[1])})
    if printed := _PRINTED.fullmatch(value):
        return _printed(printed[1], printed[2], zone)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"not a time: {text!r}") from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=zone)).astimezone(UTC)


def _printed(clock: str, name: str, zone: tzinfo) -> datetime:
    """``clock`` (bare) in the zone ``name`` names: UTC, a fixed offset, or ``zone`` at a time
    it is called so (of the two readings of a wall time a change of offset repeats, the one
    the abbreviation names: ``01:30 EDT`` and ``01:30 EST``)."""
    bare = datetime.fromisoformat(clock)
    if name.upper() in _UTC_NAMES:
        return bare.replace(tzinfo=UTC)
    if name[0] in "+-":
        hours, minutes = int(name[1:3]), int(name[3:] or 0)
        sign = -1 if name[0] == "-" else 1
        offset = sign * timedelta(hours=hours, minutes=minutes)
        return (bare - offset).replace(tzinfo=UTC)
    for fold in (0, 1):
        moment = bare.replace(tzinfo=zone, fold=fold)
        if moment.strftime("%Z").upper() == name.upper():
            return moment.astimezone(UTC)
    raise ValueError(
        f"{name} is not what NEWSDESK_TIMEZONE ({zone}) is called then "
        f"({bare.replace(tzinfo=zone).strftime('%Z')}): give it so, or an offset"
    )


@dataclass(frozen=True)
class Clock:
    """What a command's times are read against: NEWSDESK_TIMEZONE's zone (looked up when a
    time is read, so that a bad zone fails only a command given one), and its start."""

    zone: Callable[[], tzinfo]
    now: datetime


_CLOCK: ContextVar[Clock | None] = ContextVar("newsdesk_clock", default=None)


@contextlib.contextmanager
def reading_times(zone: Callable[[], tzinfo], now: datetime) -> Iterator[None]:
    """Time options parsed within are read in ``zone()``, ``now`` their present."""
    token = _CLOCK.set(Clock(zone, now))
    try:
        yield
    finally:
        _CLOCK.reset(token)


def _clock() -> Clock:
    clock = _CLOCK.get()
    return clock if clock is not None else Clock(lambda: ZoneInfo(DEFAULT_TIMEZONE), utc_now())


def time(value: str) -> datetime:
    """A time option's value (``read_time``); refused with the forms it accepts."""
    clock = _clock()
    try:
        return read_time(value, clock.zone(), clock.now)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"{e}; a time is {TIME_FORMS}") from None


def cluster_time(value: str) -> datetime:
    """``cluster --at``: a time (``time``) that the cluster function's event check would take
    (``core.times.checked_replay_time``: not before 1970, not in the future), refused in its
    words otherwise."""
    at, clock = time(value), _clock()
    zone = clock.zone()
    try:
        return checked_replay_time(at, clock.now, lambda now: local_time(now, zone))
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"{value} {e}") from None
