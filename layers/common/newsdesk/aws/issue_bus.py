"""The stack's EventBridge bus for issue events (source ``newsdesk.issue``). PutEvents takes at
most 10 entries and 256 KB a call and has no idempotency: an event published twice (the relay's
transaction failed after the call) reaches consumers twice, with the same ``event_id``.

A call PutEvents refuses for what it carries (a ``ValidationException``: the request over its
size, an entry it cannot take) is sent again an entry a call, so that the entry it refuses is
that event's error and the others are published; any other failure (throttling, the network)
ends the publishing there, what was published before it said so.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from botocore.exceptions import BotoCoreError, ClientError

from newsdesk.core.errors import EventBusError

if TYPE_CHECKING:
    from mypy_boto3_events import EventBridgeClient
    from mypy_boto3_events.type_defs import PutEventsRequestEntryTypeDef

BATCH = 10  # PutEvents' limit of entries
BATCH_BYTES = 200_000  # below PutEvents' 256 KB a call, entries counted as AWS counts them
REFUSED_FOR_CONTENT = ("ValidationException", "413", "RequestEntityTooLarge")


class Event(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def detail(self) -> dict[str, object]: ...


class IssueBus:
    def __init__(self, client: EventBridgeClient, bus_name: str, source: str) -> None:
        self._client = client
        self._bus = bus_name
        self._source = source

    def publish(self, events: Sequence[Event]) -> dict[str, str | None]:
        """Each event's error (None: published). A call that fails for another reason than
        what it carries raises EventBusError, whose ``published`` has what went before it."""
        errors: dict[str, str | None] = {}
        for batch in _batches(events, self._source):
            try:
                errors |= self._put(batch)
            except ClientError as e:
                if _code(e) not in REFUSED_FOR_CONTENT:
                    raise self._failed(e, errors) from e
                errors |= self._one_by_one(batch, e, errors)
            except BotoCoreError as e:
                raise self._failed(e, errors) from e
        return errors

    def _one_by_one(
        self, batch: list[tuple[Event, str]], refusal: ClientError, before: dict[str, str | None]
    ) -> dict[str, str | None]:
        """A call refused for what it carries, sent again an entry a call: the entry refused
        is that event's error, the others are published."""
        if len(batch) == 1:
            return {batch[0][0].id: f"{_code(refusal)}: {_message(refusal)}"}
        found: dict[str, str | None] = {}
        for single in batch:
            try:
                found |= self._put([single])
            except ClientError as e:
                if _code(e) not in REFUSED_FOR_CONTENT:
                    raise self._failed(e, before | found) from e
                found[single[0].id] = f"{_code(e)}: {_message(e)}"
            except BotoCoreError as e:
                raise self._failed(e, before | found) from e
        return found

    def _put(self, batch: list[tuple[Event, str]]) -> dict[str, str | None]:
        entries: list[PutEventsRequestEntryTypeDef] = [
            {
                "EventBusName": self._bus,
                "Source": self._source,
                "DetailType": event.type,
                "Detail": detail,
                "Resources": [],
            }
            for event, detail in batch
        ]
        response = self._client.put_events(Entries=entries)
        # Entries answer in the order sent; a failed one has an ErrorCode and no EventId.
        errors: dict[str, str | None] = {}
        for (event, _), entry in zip(batch, response["Entries"], strict=True):
            code = entry.get("ErrorCode")
            errors[event.id] = f"{code}: {entry.get('ErrorMessage', '')}" if code else None
        return errors

    def _failed(self, error: Exception, published: dict[str, str | None]) -> EventBusError:
        failed = EventBusError(f"cannot publish to the event bus {self._bus}: {error}")
        failed.published = dict(published)
        return failed


def _code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def _message(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Message", ""))


def entry_bytes(source: str, event_type: str, detail: str) -> int:
    """An entry's size as PutEvents counts it (its Source, DetailType and Detail in UTF-8)."""
    return len(source.encode()) + len(event_type.encode()) + len(detail.encode())


def _batches(events: Sequence[Event], source: str = "") -> list[list[tuple[Event, str]]]:
    """The events with their details as JSON (written once), in calls of at most ``BATCH``
    entries and ``BATCH_BYTES``."""
    batches: list[list[tuple[Event, str]]] = []
    size = 0
    for event in events:
        detail = json.dumps(event.detail, ensure_ascii=False)
        length = entry_bytes(source, event.type, detail)
        if not batches or len(batches[-1]) == BATCH or size + length > BATCH_BYTES:
            batches.append([])
            size = 0
        batches[-1].append((event, detail))
        size += length
    return batches
