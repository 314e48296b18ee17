"""The SQS message the fan-out sends for one outlet and the worker reads."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from newsdesk.errors import MessageError
from newsdesk.sources import Feed, Outlet

VERSION = 1


@dataclass(frozen=True)
class OutletMessage:
    outlet: Outlet
    scheduled_at: datetime
    ignore_schedule: bool = False  # a round on demand: every feed is due

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": VERSION,
                "source": self.outlet.name,
                "feeds": [{"url": f.url, "category": f.category} for f in self.outlet.feeds],
                "scheduled_at": format_time(self.scheduled_at),
                "ignore_schedule": self.ignore_schedule,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, body: str) -> OutletMessage:
        try:
            data: Any = json.loads(body)
            source = data["source"]
            feeds = tuple(
                Feed(source=source, url=str(f["url"]), category=str(f["category"]))
                for f in data["feeds"]
            )
            scheduled_at = parse_time(data["scheduled_at"])
            ignore_schedule = bool(data.get("ignore_schedule", False))
        except (ValueError, KeyError, TypeError) as e:
            raise MessageError(f"not an outlet message: {type(e).__name__}: {e}") from e
        if not isinstance(source, str) or not source:
            raise MessageError("not an outlet message: 'source' is not a name")
        return cls(Outlet(source, feeds), scheduled_at, ignore_schedule)


def parse_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def format_time(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
