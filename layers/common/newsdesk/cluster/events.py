"""The relay from the issue event outbox to the stack's event bus: after each clustering run
(and so, after a crash, in the next one) every event not yet published is published, oldest
first. A bus that refuses leaves them in the outbox for the next run; nothing is lost."""

from __future__ import annotations

from datetime import datetime

from aws_lambda_powertools import Logger

from newsdesk.aws.issue_bus import IssueBus
from newsdesk.storage.issue_events import IssueEventStore

logger = Logger(child=True)

RELAY_LIMIT = 100  # events a transaction


def relay_events(store: IssueEventStore, bus: IssueBus, at: datetime) -> tuple[int, int]:
    """(published, failed): failed counts the events the bus refused, one by one or in a
    failed call (each row keeps its error); the relay stops at the first refusal."""
    published = failed = 0
    while True:
        done, refused = store.relay(bus.publish, at, RELAY_LIMIT)
        published += done
        failed += refused
        if done + refused < RELAY_LIMIT or refused:
            break
    if failed:
        logger.warning(
            "issue events not published; the next run publishes them",
            extra={"failed": failed, "published": published},
        )
    return published, failed
