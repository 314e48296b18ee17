"""The article outbox's relay: the due extraction_outbox rows to the article queue, each row an
article message whose deduplication id is ``<article_id>-r<revision>-s<send>``."""

from __future__ import annotations

from datetime import datetime

from aws_lambda_powertools import Logger

from newsdesk.aws.article_queue import ArticleQueue
from newsdesk.core.errors import NewsdeskError
from newsdesk.core.messages import ArticleMessage
from newsdesk.outbox import relay as outbox
from newsdesk.storage.extractions import ExtractionStore, OutboxRow

logger = Logger(child=True)

RELAY_LIMIT = 500  # rows a transaction


def relay(store: ExtractionStore, queue: ArticleQueue, at: datetime) -> int:
    """Send the outbox's due rows to the article queue (all of them, ``RELAY_LIMIT`` a
    transaction); return how many went. A send that fails leaves the rest for the next relay
    and raises nothing: what is stored is stored, and the outbox keeps what is not sent. A
    refused row ends the relay too (the next sends it again, under its next send's id)."""

    def send(rows: list[OutboxRow]) -> list[OutboxRow]:
        by_message = {ArticleMessage(r.article_id, r.revision, r.url, r.sends): r for r in rows}
        return [by_message[m] for m in queue.send(list(by_message))]

    relayed = outbox.relay(
        lambda after: store.relay(send, at, RELAY_LIMIT, after),
        RELAY_LIMIT,
        past_refused=False,
        ends_on=(NewsdeskError,),
    )
    if relayed.error is not None:
        logger.warning(
            "outbox relay stopped; the next relay sends the rest",
            extra={"error": relayed.error, "sent": relayed.sent},
        )
    return relayed.sent
