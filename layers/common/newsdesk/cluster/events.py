"""The relay from the issue event outbox to the stack's event bus: after each clustering run
(and so, after a crash, in the next one) every event not yet published is published, oldest
first. An event the bus refuses stays in the outbox with its error for the next run, and
those behind it go on; a bus that fails leaves the rest there too; nothing is lost."""

from __future__ import annotations

from datetime import datetime

from aws_lambda_powertools import Logger

from newsdesk.aws.issue_bus import IssueBus
from newsdesk.storage.issue_events import IssueEventStore, Relayed

logger = Logger(child=True)

RELAY_LIMIT = 100  # events a transaction


def relay_events(store: IssueEventStore, bus: IssueBus, at: datetime) -> tuple[int, int]:
    """(published, failed): failed counts the events the bus refused (each row keeps its
    error, and is tried again by the next run). An event refused is passed over, so the
    events behind it go on; a call the bus fails ends the relay, the rest left for the next
    run."""
    published = failed = 0
    relayed: Relayed | None = None
    while True:
        relayed = store.relay(bus.publish, at, RELAY_LIMIT, after=relayed)
        published += relayed.published
        failed += relayed.failed
        if relayed.offered < RELAY_LIMIT or relayed.stopped:
            break
    if failed:
        logger.warning(
            "issue events not published; the next run publishes them",
            extra={"failed": failed, "published": published},
        )
    return published, failed
