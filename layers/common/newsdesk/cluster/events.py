"""The relay from the issue event outbox to the stack's event bus (``newsdesk.outbox.relay``):
after each clustering run (and so, after a crash, in the next one) every event not yet
published is published, oldest first, each under its ``event_id``. Before a call publishes its
events, their dossiers are written to the dossier bucket (issue 40), the bytes the outbox
kept, and each detail names the bucket: an event is never published without its dossier. A
bucket that does not take one fails the call (no event of it is refused: the next run tries
again). An event the bus refuses
stays in the outbox with its error for the next run, and those behind it go on, until it has
been refused ``MAX_REFUSALS`` times for what it carries: then it is given up, logged and
counted (``storage.issue_events``); a bus that fails leaves the rest there too."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from aws_lambda_powertools import Logger

from newsdesk.aws.dossiers import DossierBucket
from newsdesk.aws.issue_bus import IssueBus
from newsdesk.core.errors import DossierStoreError, EventBusError
from newsdesk.outbox import relay as outbox
from newsdesk.storage.issue_events import EventBatch, IssueEvent, IssueEventStore, as_published
from newsdesk.storage.outbox import Sent

logger = Logger(child=True)

RELAY_LIMIT = 100  # events a transaction
NOT_PUBLISHED = "not published"  # an event the bus's answer does not name


def relay_events(
    store: IssueEventStore, bus: IssueBus, dossiers: DossierBucket, at: datetime
) -> tuple[int, int]:
    """(published, failed): failed counts the events the bus refused (each row keeps its
    error, and is tried again by the next run). An event refused is passed over, so the
    events behind it go on; a call the bus or the bucket fails ends the relay, the rest left
    for the next run."""

    def publish(events: list[IssueEvent]) -> Sent:
        try:
            events = [_with_dossier(event, dossiers) for event in events]
        except DossierStoreError as e:  # nothing of this call is published
            logger.warning("dossier not written; its events wait", extra={"error": str(e)})
            return Sent([str(e)] * len(events), stopped=True)
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


def _with_dossier(event: IssueEvent, dossiers: DossierBucket) -> IssueEvent:
    """The event with its dossier written (the bytes the outbox kept: the same object every
    time) and its detail naming the bucket."""
    if event.dossier is not None:
        dossiers.put(str(event.detail["dossier"]["key"]), event.dossier.encode())
    return replace(event, detail=as_published(event.detail, dossiers.name))
