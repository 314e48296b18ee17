"""The state table in DynamoDB: the schedule records (``newsdesk.core.schedule``) as items.

Keys: ``pk = "outlet#<source>"``; ``sk = "feed#<url>"`` for a feed, ``sk = "outlet"`` for the
outlet's breaker, so one Query reads everything about an outlet; ``pk = "host#<host>"``
and ``sk = "host"`` for a host the extractor fetches pages from (``newsdesk.core.hosts``).
Attributes are the records' fields by name: numbers as ``N``, flags as ``BOOL``, times and
text as ``S`` (times as ``newsdesk.core.times`` writes them); a field that is ``None`` is left
out. A record's breaker (``newsdesk.core.breaker``) is its fields among the record's, named as
the items had them before it was one value (``BREAKER_ATTRIBUTES``). Items written by any
earlier release decode (tests/test_compatibility.py holds some).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import fields
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar, get_type_hints

from botocore.exceptions import BotoCoreError, ClientError

from newsdesk.core.breaker import BREAKER_CLOSED, Breaker
from newsdesk.core.errors import StateError
from newsdesk.core.hosts import HostState
from newsdesk.core.schedule import FeedState, OutletState
from newsdesk.core.times import format_time, parse_time

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

OUTLET_SK = "outlet"
HOST_SK = "host"
R = TypeVar("R", FeedState, OutletState, HostState)
# An outlet's breaker and its feeds' records by URL.
OutletRecords = tuple[OutletState, dict[str, FeedState]]
# A breaker's fields and the attributes that hold them: an outlet's failures are counted within
# one message and not stored; a host's are its pages failed in a row.
_BREAKER = {
    "state": "breaker",
    "trips": "trips",
    "opened_at": "opened_at",
    "open_until": "open_until",
}
BREAKER_ATTRIBUTES: dict[type[Any], dict[str, str]] = {
    OutletState: _BREAKER,
    HostState: {**_BREAKER, "failures": "consecutive_failures"},
}

# The fields' types, for decoding (a time is stored as text).
_TYPES = {kind: get_type_hints(kind) for kind in (FeedState, OutletState, HostState, Breaker)}


def outlet_key(source: str) -> str:
    return f"outlet#{source}"


def feed_key(url: str) -> str:
    return f"feed#{url}"


def host_key(host: str) -> str:
    return f"host#{host}"


def keys_of(record: FeedState | OutletState | HostState) -> dict[str, Any]:
    if isinstance(record, HostState):
        return {"pk": {"S": host_key(record.host)}, "sk": {"S": HOST_SK}}
    sort_key = feed_key(record.url) if isinstance(record, FeedState) else OUTLET_SK
    return {"pk": {"S": outlet_key(record.source)}, "sk": {"S": sort_key}}


def to_item(record: FeedState | OutletState | HostState) -> dict[str, Any]:
    item = keys_of(record)
    for name, value in _attributes(record):
        if value is None:
            continue
        if isinstance(value, bool):
            item[name] = {"BOOL": value}
        elif isinstance(value, int):
            item[name] = {"N": str(value)}
        elif isinstance(value, datetime):
            item[name] = {"S": format_time(value)}
        else:
            item[name] = {"S": str(value)}
    return item


def from_item(kind: type[R], item: dict[str, Any]) -> R:
    values = _values(kind, item, {f.name: f.name for f in fields(kind)})
    if kind in BREAKER_ATTRIBUTES:
        values["breaker"] = Breaker(**_values(Breaker, item, BREAKER_ATTRIBUTES[kind]))
    return kind(**values)


def _attributes(record: FeedState | OutletState | HostState) -> Iterator[tuple[str, Any]]:
    """The record's attributes by name, its breaker's among them."""
    for f in fields(record):
        value = getattr(record, f.name)
        if isinstance(value, Breaker):
            for name, attribute in BREAKER_ATTRIBUTES[type(record)].items():
                yield attribute, getattr(value, name)
        else:
            yield f.name, value


def _values(kind: type[Any], item: dict[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """``kind``'s fields (by ``names``: field to attribute) that ``item`` has, decoded."""
    types = _TYPES[kind]
    values: dict[str, Any] = {}
    for name, attribute_name in names.items():
        attribute = item.get(attribute_name)
        if attribute is None or types[name] is Breaker:
            continue
        if "N" in attribute:
            values[name] = int(attribute["N"])
        elif "BOOL" in attribute:
            values[name] = attribute["BOOL"]
        elif "datetime" in str(types[name]):
            values[name] = parse_time(attribute["S"])
        else:
            values[name] = attribute["S"]
    return values


def records(
    items: Iterable[dict[str, Any]],
) -> tuple[dict[str, OutletState], dict[str, list[FeedState]]]:
    """Items as records: the outlets' breakers by source, and each outlet's feeds (hosts'
    items are not an outlet's: ``StateTable.hosts`` reads them)."""
    outlets: dict[str, OutletState] = {}
    feeds: dict[str, list[FeedState]] = {}
    for item in items:
        if item["sk"]["S"] == HOST_SK:
            continue
        if item["sk"]["S"] == OUTLET_SK:
            outlet = from_item(OutletState, item)
            outlets[outlet.source] = outlet
        else:
            feed = from_item(FeedState, item)
            feeds.setdefault(feed.source, []).append(feed)
    return outlets, feeds


def _records_of(
    source: str, outlets: dict[str, OutletState], feeds: dict[str, list[FeedState]]
) -> OutletRecords:
    """One outlet's breaker (an empty one if it has none yet) and its feeds by URL."""
    return outlets.get(source, OutletState(source)), {f.url: f for f in feeds.get(source, [])}


class StateTable:
    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def outlet(self, source: str) -> tuple[OutletState, dict[str, FeedState]]:
        """The outlet's breaker and its feeds' records by URL (every page of the query)."""
        try:
            pages = self._client.get_paginator("query").paginate(
                TableName=self._table,
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues={":pk": {"S": outlet_key(source)}},
                ConsistentRead=True,
            )
            items = [item for page in pages for item in page.get("Items", [])]
        except (BotoCoreError, ClientError) as e:
            raise StateError(f"cannot read state of {source}: {e}") from e
        return _records_of(source, *records(items))

    def every_outlet(self, sources: Collection[str]) -> dict[str, OutletRecords]:
        """Every record of ``sources``, in one paginated Scan of the table (a few reads for a
        whole round's outlets, which a Query per outlet would take one request each for); an
        outlet without records gets an empty breaker and no feeds. Records of outlets no
        longer listed are read and left out."""
        wanted = {outlet_key(s) for s in sources}
        try:
            pages = self._client.get_paginator("scan").paginate(
                TableName=self._table, ConsistentRead=True
            )
            items = [
                item
                for page in pages
                for item in page.get("Items", [])
                if item["pk"]["S"] in wanted
            ]
        except (BotoCoreError, ClientError) as e:
            raise StateError(f"cannot read the outlets' state: {e}") from e
        outlets, feeds = records(items)
        return {s: _records_of(s, outlets, feeds) for s in sources}

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
                        outlet = from_item(OutletState, item)
                        found[outlet.source] = outlet
                    request = response.get("UnprocessedKeys") or {}
        except (BotoCoreError, ClientError) as e:
            raise StateError(f"cannot read the outlets' breakers: {e}") from e
        return found

    def scan(self) -> tuple[dict[str, OutletState], dict[str, list[FeedState]]]:
        """Every record in the table (every page of a Scan), as ``records`` gives them."""
        try:
            pages = self._client.get_paginator("scan").paginate(TableName=self._table)
            return records(item for page in pages for item in page.get("Items", []))
        except (BotoCoreError, ClientError) as e:
            raise StateError(f"cannot read the state table {self._table}: {e}") from e

    def close_breaker(self, source: str) -> None:
        """``Breaker.closed`` on the outlet's stored item, if there is one, and nothing else of it:
        an update, so that a worker's write at the same moment is not undone."""
        self._update(
            source,
            OUTLET_SK,
            "SET breaker = :closed, trips = :zero REMOVE opened_at, open_until",
            {":closed": {"S": BREAKER_CLOSED}, ":zero": {"N": "0"}},
        )

    def make_due(self, source: str, url: str, at: datetime) -> None:
        """``FeedState.made_due`` on the stored feed, if there is one (an update, as above)."""
        self._update(
            source,
            feed_key(url),
            "SET next_check_at = :at",
            {":at": {"S": format_time(at)}},
        )

    def forgive_feed(self, feed: FeedState, attempted_at: datetime, was_due: datetime) -> bool:
        """``FeedState.forgiven`` on the stored feed, if it is still as the judge read it (failed
        at ``attempted_at``, due at ``was_due``): an update of those fields only, so that a
        worker's write since is not undone. False when it was not."""
        return self._update(
            feed.source,
            feed_key(feed.url),
            "SET consecutive_failures = :failures, next_check_at = :due",
            {
                ":failures": {"N": str(feed.consecutive_failures)},
                ":due": {"S": format_time(feed.next_check_at or attempted_at)},
                ":at": {"S": format_time(attempted_at)},
                ":was": {"S": format_time(was_due)},
            },
            "last_attempt_at = :at AND next_check_at = :was",
        )

    def forgive_breaker(
        self, outlet: OutletState, opened_at: datetime, was_until: datetime
    ) -> bool:
        """``Breaker.forgiven`` on the stored outlet, if its breaker is still the one tripped at
        ``opened_at`` until ``was_until`` (an update, as above). False when it was not."""
        breaker = outlet.breaker
        values = {
            ":trips": {"N": str(breaker.trips)},
            ":at": {"S": format_time(opened_at)},
            ":was": {"S": format_time(was_until)},
        }
        if breaker.state == BREAKER_CLOSED:
            expression = "SET breaker = :closed, trips = :trips REMOVE opened_at, open_until"
            values[":closed"] = {"S": BREAKER_CLOSED}
        else:
            expression = "SET trips = :trips, open_until = :until"
            values[":until"] = {"S": format_time(breaker.open_until or opened_at)}
        condition = "opened_at = :at AND open_until = :was"
        return self._update(outlet.source, OUTLET_SK, expression, values, condition)

    def _update(
        self,
        source: str,
        sort_key: str,
        expression: str,
        values: dict[str, Any],
        condition: str = "attribute_exists(pk)",
    ) -> bool:
        """The update when the item meets ``condition`` (by default: it exists); False when it
        does not."""
        try:
            self._client.update_item(
                TableName=self._table,
                Key={"pk": {"S": outlet_key(source)}, "sk": {"S": sort_key}},
                UpdateExpression=expression,
                ExpressionAttributeValues=values,
                ConditionExpression=condition,
            )
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                return False  # no such item, or not as it was read: nothing to change
            raise StateError(f"cannot update state of {source}: {e}") from e
        except BotoCoreError as e:
            raise StateError(f"cannot update state of {source}: {e}") from e
        return True

    def save(self, record: FeedState | OutletState | HostState) -> None:
        name = record.host if isinstance(record, HostState) else record.source
        try:
            self._client.put_item(TableName=self._table, Item=to_item(record))
        except (BotoCoreError, ClientError) as e:
            raise StateError(f"cannot save state of {name}: {e}") from e

    def host(self, host: str) -> HostState:
        """The host's record (an empty one if it has none yet)."""
        try:
            item = self._client.get_item(
                TableName=self._table,
                Key={"pk": {"S": host_key(host)}, "sk": {"S": HOST_SK}},
                ConsistentRead=True,
            ).get("Item")
        except (BotoCoreError, ClientError) as e:
            raise StateError(f"cannot read state of host {host}: {e}") from e
        return from_item(HostState, item) if item else HostState(host)

    def hosts(self) -> list[HostState]:
        """Every host's record (a Scan for the hosts' items), by name."""
        try:
            pages = self._client.get_paginator("scan").paginate(
                TableName=self._table,
                FilterExpression="sk = :host",
                ExpressionAttributeValues={":host": {"S": HOST_SK}},
            )
            items = [item for page in pages for item in page.get("Items", [])]
        except (BotoCoreError, ClientError) as e:
            raise StateError(f"cannot read the hosts' state: {e}") from e
        return sorted((from_item(HostState, item) for item in items), key=lambda h: h.host)
