"""The SQS message the fan-out sends for one outlet and the worker reads."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from newsdesk.core.errors import MessageError
from newsdesk.core.sources import Feed, Outlet
from newsdesk.core.times import format_time, parse_time

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
