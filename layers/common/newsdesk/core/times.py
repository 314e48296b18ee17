"""Times as newsdesk writes them everywhere (messages, state items, raw metadata, JSON): ISO
8601 in UTC with a ``Z``, to the second. A bare time read back is taken as UTC. Terminal
output, for a person, is in a zone of their choosing (``local_time``), which is also the zone
the command line reads its time options in (``newsdesk_local.commands.arguments.read_time``).
Times and numbers of seconds read from outside are checked here: a message's time against the
clock (``ahead_of_clock``), a server's delta-seconds by their grammar (``delta_seconds``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, tzinfo


def parse_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def format_time(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)  # a replay's time no article can be older than


def replay_time(value: object, now: datetime) -> datetime:
    """A clustering replay's ``at`` (the cluster event's, `newsdesk cluster --at`'s), checked:
    a ValueError whose words follow the time (``is in the future …``) for one that is no ISO
    8601 time, one before 1970 (the window before it is no time Python can count), or one
    after ``now`` (a run then would close every open issue for good: their idle hours would
    have passed)."""
    try:
        at = parse_time(str(value).strip())
    except ValueError:
        raise ValueError("is not an ISO 8601 time") from None
    return checked_replay_time(at, now)


def checked_replay_time(
    at: datetime, now: datetime, shown: Callable[[datetime], str] = format_time
) -> datetime:
    """``at`` as ``replay_time`` checks it (a ValueError for one before 1970 or after ``now``,
    which it names as ``shown`` writes it)."""
    if at < EARLIEST:
        raise ValueError("is before 1970: no article is that old")
    if at > now:
        raise ValueError(f"is in the future (it is {shown(now)} now)")
    return at


# A person's time: to the minute, in their zone, named by its abbreviation (``%Z``: ``KST``,
# ``UTC``, or an offset such as ``+04`` for a zone that has none). The command line reads it back.
LOCAL_FORMAT = "%Y-%m-%d %H:%M %Z"


def local_time(value: datetime | str, zone: tzinfo = UTC) -> str:
    """``2026-12-01 14:30 KST``: ``value`` in ``zone``, as LOCAL_FORMAT writes it."""
    moment = parse_time(value) if isinstance(value, str) else value
    return moment.astimezone(zone).strftime(LOCAL_FORMAT)


def utc_now() -> datetime:
    return datetime.now(UTC)


# How far ahead of a function's clock a round's or a message's time may be (issue 39): far
# more than clocks NTP keeps ever differ (milliseconds). A time past it is a clock gone wrong or
# a message written by hand, and is refused: its feeds would not be due, nor its outlet's
# breaker closed, until then.
MAX_CLOCK_SKEW = timedelta(minutes=5)


def ahead_of_clock(at: datetime, now: datetime) -> timedelta | None:
    """How far ``at`` is ahead of ``now`` when that is more than MAX_CLOCK_SKEW, else None."""
    ahead = at - now
    return ahead if ahead > MAX_CLOCK_SKEW else None


# RFC 9111 1.2.2: a delta-seconds value greater than the greatest integer a cache can represent
# is taken as 2^31, so the arithmetic after it cannot overflow.
DELTA_SECONDS_MAX = 2**31


def delta_seconds(value: str) -> int | None:
    """A number of seconds (or, for RSS's ``<ttl>``, minutes) as RFC 9111 1.2.2 writes it,
    ``1*DIGIT`` of ASCII digits, around whitespace: at most DELTA_SECONDS_MAX; None for
    anything else (``str.isdigit`` takes "²" and "٣", which are no such digits)."""
    return ascii_number(value, DELTA_SECONDS_MAX)


def ascii_number(value: str, most: int) -> int | None:
    """``1*DIGIT`` of ASCII digits around whitespace (a delta-seconds, a Content-Length), at
    most ``most``: None for anything else; thousands of digits are read without ``int()``,
    which refuses more than 4,300."""
    digits = value.strip()
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    digits = digits.lstrip("0") or "0"
    if len(digits) > len(str(most)):
        return most
    return min(int(digits), most)
