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
                "feeds": [_feed_json(f) for f in self.outlet.feeds],
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
            feeds = tuple(_feed(source, f) for f in data["feeds"])
            scheduled_at = parse_time(data["scheduled_at"])
            ignore_schedule = bool(data.get("ignore_schedule", False))
        except (ValueError, KeyError, TypeError) as e:
            raise MessageError(f"not an outlet message: {type(e).__name__}: {e}") from e
        if not isinstance(source, str) or not source:
            raise MessageError("not an outlet message: 'source' is not a name")
        return cls(Outlet(source, feeds), scheduled_at, ignore_schedule)


def _feed_json(feed: Feed) -> dict[str, str]:
    # "user_agent" only when set: such a message is the earlier release's, byte for byte
    document = {"url": feed.url, "category": feed.category}
    if feed.user_agent:
        document["user_agent"] = feed.user_agent
    return document


def _feed(source: str, document: dict[str, Any]) -> Feed:
    user_agent = document.get("user_agent")  # absent from messages before it existed
    if user_agent is not None and (not isinstance(user_agent, str) or not user_agent):
        raise ValueError(f"'user_agent' is not a name: {user_agent!r}")
    return Feed(source, str(document["url"]), str(document["category"]), user_agent)
