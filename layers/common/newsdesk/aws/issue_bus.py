"""The stack's EventBridge bus for issue events (source ``newsdesk.issue``). PutEvents takes at
most 10 entries and 256 KB a call and has no idempotency: an event published twice (the relay's
transaction failed after the call) reaches consumers twice, with the same ``event_id``."""

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
BATCH_BYTES = 200_000  # below PutEvents' 256 KB a call


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
        """Each event's error (None: published). A failed call raises EventBusError, so the
        relay records nothing and the next one tries again."""
        errors: dict[str, str | None] = {}
        for batch in _batches(events):
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
            try:
                response = self._client.put_events(Entries=entries)
            except (BotoCoreError, ClientError) as e:
                raise EventBusError(f"cannot publish to the event bus {self._bus}: {e}") from e
            # Entries answer in the order sent; a failed one has an ErrorCode and no EventId.
            for (event, _), entry in zip(batch, response["Entries"], strict=True):
                code = entry.get("ErrorCode")
                errors[event.id] = f"{code}: {entry.get('ErrorMessage', '')}" if code else None
        return errors


def _batches(events: Sequence[Event]) -> list[list[tuple[Event, str]]]:
    """The events with their details as JSON (written once), in calls of at most ``BATCH``
    entries and ``BATCH_BYTES`` of detail."""
    batches: list[list[tuple[Event, str]]] = []
    size = 0
    for event in events:
        detail = json.dumps(event.detail, ensure_ascii=False)
        length = len(detail.encode())
        if not batches or len(batches[-1]) == BATCH or size + length > BATCH_BYTES:
            batches.append([])
            size = 0
        batches[-1].append((event, detail))
        size += length
    return batches
