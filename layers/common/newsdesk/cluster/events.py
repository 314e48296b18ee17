"""The relay from the issue event outbox to the stack's event bus (``newsdesk.outbox.relay``):
after each clustering run (and so, after a crash, in the next one) every event not yet
published is published, oldest first, each under its ``event_id``. An event the bus refuses
stays in the outbox with its error for the next run, and those behind it go on, until it has
been refused ``MAX_REFUSALS`` times for what it carries: then it is given up, logged and
counted (``storage.issue_events``); a bus that fails leaves the rest there too."""

from __future__ import annotations

from datetime import datetime

from aws_lambda_powertools import Logger

from newsdesk.aws.issue_bus import IssueBus
from newsdesk.core.errors import EventBusError
from newsdesk.outbox import relay as outbox
from newsdesk.storage.issue_events import EventBatch, IssueEvent, IssueEventStore
from newsdesk.storage.outbox import Sent

logger = Logger(child=True)

RELAY_LIMIT = 100  # events a transaction
NOT_PUBLISHED = "not published"  # an event the bus's answer does not name


def relay_events(store: IssueEventStore, bus: IssueBus, at: datetime) -> tuple[int, int]:
    """(published, failed): failed counts the events the bus refused (each row keeps its
    error, and is tried again by the next run). An event refused is passed over, so the
    events behind it go on; a call the bus fails ends the relay, the rest left for the next
    run."""

    def publish(events: list[IssueEvent]) -> Sent:
        try:
            errors, stopped = bus.publish(events), False
        except EventBusError as e:  # what went before the failed call is published
            errors = {event.id: e.published.get(event.id, str(e)) for event in events}
            stopped = True
        return Sent([errors.get(event.id, NOT_PUBLISHED) for event in events], stopped)

    given_up = 0

    def batch(after: IssueEvent | None) -> EventBatch:
        nonlocal given_up
        done = store.relay(publish, at, RELAY_LIMIT, after)
        given_up += done.given_up
        return done

    relayed = outbox.relay(batch, RELAY_LIMIT, past_refused=True)
    if relayed.refused:
        logger.warning(
            "issue events not published; the next run publishes them",
            extra={"failed": relayed.refused, "published": relayed.sent, "given_up": given_up},
        )
    return relayed.sent, relayed.refused
