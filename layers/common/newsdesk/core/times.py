"""Times as newsdesk writes them everywhere (messages, state items, raw metadata, JSON): ISO
8601 in UTC with a ``Z``, to the second. A bare time read back is taken as UTC."""

from __future__ import annotations

from datetime import UTC, datetime


def parse_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def format_time(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def utc_now() -> datetime:
    return datetime.now(UTC)
