"""Times as newsdesk writes them everywhere (messages, state items, raw metadata, JSON): ISO
8601 in UTC with a ``Z``, to the second. A bare time read back is taken as UTC. Terminal
output, for a person, is in a zone of their choosing (``local_time``)."""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo


def parse_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def format_time(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def local_time(value: datetime | str, zone: tzinfo = UTC) -> str:
    """``2026-12-01 14:30 KST``: to the minute, in ``zone``, named by its abbreviation."""
    moment = parse_time(value) if isinstance(value, str) else value
    return moment.astimezone(zone).strftime("%Y-%m-%d %H:%M %Z")


def utc_now() -> datetime:
    return datetime.now(UTC)
