"""Per-feed state in DynamoDB. The record keeps its own transitions (as miniflux's feed model
does): the worker calls ``attempted`` / ``succeeded`` / ``failed`` and saves the record.

Keys: ``pk = "outlet#<source>"``, ``sk = "feed#<url>"``, so one Query reads an outlet's feeds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from newsdesk.errors import StateError
from newsdesk.messages import format_time

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

STATUS_OK = "ok"
STATUS_FAILED = "failed"


def outlet_key(source: str) -> str:
    return f"outlet#{source}"


def feed_key(url: str) -> str:
    return f"feed#{url}"


@dataclass
class FeedState:
    source: str
    url: str
    category: str = ""
    last_attempt_at: str | None = None
    last_success_at: str | None = None
    last_status: str | None = None
    last_error: str | None = None
    consecutive_failures: int = 0
    entries_seen: int = 0

    def attempted(self, now: datetime, category: str) -> None:
        self.last_attempt_at = format_time(now)
        self.category = category

    def succeeded(self, now: datetime, entries_seen: int) -> None:
        self.last_success_at = format_time(now)
        self.last_status = STATUS_OK
        self.last_error = None
        self.consecutive_failures = 0
        self.entries_seen = entries_seen

    def failed(self, error: str) -> None:
        self.last_status = STATUS_FAILED
        self.last_error = error[:1000]
        self.consecutive_failures += 1

    def to_item(self) -> dict[str, Any]:
        item: dict[str, Any] = {
            "pk": {"S": outlet_key(self.source)},
            "sk": {"S": feed_key(self.url)},
        }
        for name, value in asdict(self).items():
            if value is None:
                continue
            item[name] = {"N": str(value)} if isinstance(value, int) else {"S": value}
        return item

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> FeedState:
        values: dict[str, Any] = {}
        for f in fields(cls):
            attribute = item.get(f.name)
            if attribute is None:
                continue
            values[f.name] = int(attribute["N"]) if "N" in attribute else attribute["S"]
        return cls(**values)


class StateTable:
    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def feeds_of(self, source: str) -> dict[str, FeedState]:
        """The outlet's feed records by URL (every page of the query)."""
        states: dict[str, FeedState] = {}
        try:
            paginator = self._client.get_paginator("query")
            pages = paginator.paginate(
                TableName=self._table,
                KeyConditionExpression="pk = :pk AND begins_with(sk, :feed)",
                ExpressionAttributeValues={
                    ":pk": {"S": outlet_key(source)},
                    ":feed": {"S": "feed#"},
                },
                ConsistentRead=True,
            )
            for page in pages:
                for item in page.get("Items", []):
                    state = FeedState.from_item(item)
                    states[state.url] = state
        except (BotoCoreError, ClientError) as e:
            raise StateError(f"cannot read state of {source}: {e}") from e
        return states

    def save(self, state: FeedState) -> None:
        try:
            self._client.put_item(TableName=self._table, Item=state.to_item())
        except (BotoCoreError, ClientError) as e:
            raise StateError(f"cannot save state of {state.url}: {e}") from e
