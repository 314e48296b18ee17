"""Per-feed and per-outlet state in DynamoDB. Each record keeps its own transitions (as
miniflux's feed model does): the worker calls methods and saves the record.

Keys: ``pk = "outlet#<source>"``; ``sk = "feed#<url>"`` for a feed, ``sk = "outlet"`` for the
outlet's breaker, so one Query reads everything about an outlet.

Times are those of the schedule (the message's ``scheduled_at``), so that a feed checked every
run is due on the next run however long the fetch took.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Self

from botocore.exceptions import BotoCoreError, ClientError

from newsdesk.errors import StateError
from newsdesk.messages import format_time, parse_time

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

STATUS_OK = "ok"
STATUS_NOT_MODIFIED = "not_modified"
STATUS_FAILED = "failed"

OUTLET_SK = "outlet"
BREAKER_CLOSED = "closed"
BREAKER_OPEN = "open"
BREAKER_HALF_OPEN = "half_open"


def outlet_key(source: str) -> str:
    return f"outlet#{source}"


def feed_key(url: str) -> str:
    return f"feed#{url}"


@dataclass(frozen=True)
class SchedulePolicy:
    """How often feeds are checked: every ``period`` while they publish, doubling toward
    ``max_interval`` while they do not; failures back off the same way (never disabled)."""

    period: timedelta = timedelta(minutes=30)
    max_interval: timedelta = timedelta(hours=6)

    def interval(self, streak: int, floor_seconds: float = 0.0) -> timedelta:
        doubled = self.period * int(2 ** min(streak, 16))
        return max(min(doubled, self.max_interval), timedelta(seconds=floor_seconds))


@dataclass(frozen=True)
class BreakerPolicy:
    """The outlet's cool-down after its in-message breaker trips: doubling from ``cooldown``
    on each consecutive trip, up to ``max_cooldown``."""

    cooldown: timedelta = timedelta(minutes=30)
    max_cooldown: timedelta = timedelta(hours=6)

    def cooldown_after(self, trips: int) -> timedelta:
        return min(self.cooldown * int(2 ** min(trips - 1, 16)), self.max_cooldown)


class _Record:
    """Conversion to and from DynamoDB attribute values for the dataclasses below."""

    def _keys(self) -> dict[str, Any]:
        raise NotImplementedError

    def to_item(self) -> dict[str, Any]:
        item = self._keys()
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is None:
                continue
            if isinstance(value, bool):
                item[f.name] = {"BOOL": value}
            elif isinstance(value, int):
                item[f.name] = {"N": str(value)}
            elif isinstance(value, datetime):
                item[f.name] = {"S": format_time(value)}
            else:
                item[f.name] = {"S": str(value)}
        return item

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> Self:
        values: dict[str, Any] = {}
        for f in fields(cls):  # type: ignore[arg-type]
            attribute = item.get(f.name)
            if attribute is None:
                continue
            if "N" in attribute:
                values[f.name] = int(attribute["N"])
            elif "BOOL" in attribute:
                values[f.name] = attribute["BOOL"]
            elif "datetime" in str(f.type):
                values[f.name] = parse_time(attribute["S"])
            else:
                values[f.name] = attribute["S"]
        return cls(**values)


@dataclass
class FeedState(_Record):
    source: str
    url: str
    category: str = ""
    last_attempt_at: datetime | None = None
    last_success_at: datetime | None = None
    last_changed_at: datetime | None = None
    next_check_at: datetime | None = None
    last_status: str | None = None
    last_error: str | None = None
    consecutive_failures: int = 0
    unchanged_checks: int = 0
    entries_seen: int = 0
    etag: str | None = None
    last_modified: str | None = None
    body_hash: str | None = None

    def _keys(self) -> dict[str, Any]:
        return {"pk": {"S": outlet_key(self.source)}, "sk": {"S": feed_key(self.url)}}

    def is_due(self, at: datetime) -> bool:
        return self.next_check_at is None or self.next_check_at <= at

    def attempted(self, at: datetime, category: str) -> None:
        self.last_attempt_at = at
        self.category = category

    def succeeded(
        self,
        at: datetime,
        policy: SchedulePolicy,
        *,
        published: bool,
        entries_seen: int,
        floor_seconds: float = 0.0,
        etag: str | None = None,
        last_modified: str | None = None,
        body_hash: str | None = None,
    ) -> None:
        """A fetch that worked. ``published``: it brought new articles."""
        self.last_success_at = at
        self.last_status = STATUS_OK
        self.last_error = None
        self.consecutive_failures = 0
        self.entries_seen = entries_seen
        self.etag, self.last_modified, self.body_hash = etag, last_modified, body_hash
        if published:
            self.last_changed_at = at
            self.unchanged_checks = 0
        else:
            self.unchanged_checks += 1
        self.next_check_at = at + policy.interval(self.unchanged_checks, floor_seconds)

    def not_modified(
        self, at: datetime, policy: SchedulePolicy, floor_seconds: float = 0.0
    ) -> None:
        """A 304, or the same body again: not a failure, and it ends a failure streak."""
        self.last_success_at = at
        self.last_status = STATUS_NOT_MODIFIED
        self.last_error = None
        self.consecutive_failures = 0
        self.unchanged_checks += 1
        self.next_check_at = at + policy.interval(self.unchanged_checks, floor_seconds)

    def failed(
        self, at: datetime, error: str, policy: SchedulePolicy, floor_seconds: float = 0.0
    ) -> None:
        self.last_status = STATUS_FAILED
        self.last_error = error[:1000]
        self.consecutive_failures += 1
        self.next_check_at = at + policy.interval(self.consecutive_failures - 1, floor_seconds)


@dataclass
class OutletState(_Record):
    source: str
    breaker: str = BREAKER_CLOSED
    trips: int = 0
    opened_at: datetime | None = None
    open_until: datetime | None = None

    def _keys(self) -> dict[str, Any]:
        return {"pk": {"S": outlet_key(self.source)}, "sk": {"S": OUTLET_SK}}

    def breaker_at(self, at: datetime) -> str:
        """closed, open (skip the outlet) or half_open (try one feed)."""
        if self.breaker != BREAKER_OPEN:
            return BREAKER_CLOSED
        if self.open_until is not None and at < self.open_until:
            return BREAKER_OPEN
        return BREAKER_HALF_OPEN

    def tripped(self, at: datetime, policy: BreakerPolicy) -> None:
        self.trips += 1
        self.breaker = BREAKER_OPEN
        self.opened_at = at
        self.open_until = at + policy.cooldown_after(self.trips)

    def closed(self) -> None:
        self.breaker = BREAKER_CLOSED
        self.trips = 0
        self.opened_at = self.open_until = None


class StateTable:
    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def outlet(self, source: str) -> tuple[OutletState, dict[str, FeedState]]:
        """The outlet's breaker and its feeds' records by URL (every page of the query)."""
        outlet = OutletState(source)
        feeds: dict[str, FeedState] = {}
        try:
            pages = self._client.get_paginator("query").paginate(
                TableName=self._table,
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues={":pk": {"S": outlet_key(source)}},
                ConsistentRead=True,
            )
            for page in pages:
                for item in page.get("Items", []):
                    if item["sk"]["S"] == OUTLET_SK:
                        outlet = OutletState.from_item(item)
                    else:
                        state = FeedState.from_item(item)
                        feeds[state.url] = state
        except (BotoCoreError, ClientError) as e:
            raise StateError(f"cannot read state of {source}: {e}") from e
        return outlet, feeds

    def outlets(self, sources: list[str]) -> dict[str, OutletState]:
        """The breakers of ``sources`` (those with one), 100 to a BatchGetItem."""
        found: dict[str, OutletState] = {}
        try:
            for start in range(0, len(sources), 100):
                keys = [
                    {"pk": {"S": outlet_key(s)}, "sk": {"S": OUTLET_SK}}
                    for s in sources[start : start + 100]
                ]
                request: dict[str, Any] = {self._table: {"Keys": keys, "ConsistentRead": True}}
                while request:
                    response = self._client.batch_get_item(RequestItems=request)
                    for item in response["Responses"].get(self._table, []):
                        outlet = OutletState.from_item(item)
                        found[outlet.source] = outlet
                    request = response.get("UnprocessedKeys") or {}
        except (BotoCoreError, ClientError) as e:
            raise StateError(f"cannot read the outlets' breakers: {e}") from e
        return found

    def save(self, record: FeedState | OutletState) -> None:
        try:
            self._client.put_item(TableName=self._table, Item=record.to_item())
        except (BotoCoreError, ClientError) as e:
            raise StateError(f"cannot save state of {record.source}: {e}") from e
