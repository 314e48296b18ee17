"""Dead letters, sent back: the outlet queue's (messages the worker failed three times) to the
outlet queue, the article queue's (messages the extractor failed three times: a database,
DynamoDB or S3 fault) to the article queue, the schedules' (events EventBridge Scheduler could
not deliver) to the function each names.

The article queue is FIFO: each message goes back in its host's message group with a fresh
deduplication id (SQS would drop a repeat of the old one within five minutes); the extractor
then works on it if its outbox row still waits, and finds it `repeated` if not.

In AWS the outlet queue's move is SQS's own message-move task; the emulator has none, so
locally the same move is done message by message. A redriven outlet message older than
MESSAGE_MAX_AGE_SECONDS is dropped by the worker as stale (counted): the rounds since have
covered its feeds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from newsdesk_local.output import plural

# The attribute EventBridge Scheduler names a dead-lettered event's target with.
TARGET_ATTRIBUTE = "TARGET_ARN"


@dataclass(frozen=True)
class Redrive:
    queue: str
    moved: int  # sent back, or (a move task) to be moved
    kept: int = 0  # left in the queue: no target named
    task: str | None = None  # the message-move task's handle, in AWS

    def line(self) -> str:
        if self.task is not None:
            return (
                f"{self.queue}: moving {plural(self.moved, 'message')} back (SQS message-move task "
                f"{self.task})"
            )
        why = (
            "not an article message"
            if self.queue.startswith("Article")
            else f"no {TARGET_ATTRIBUTE}"
        )
        kept = f", {self.kept} kept ({why})" if self.kept else ""
        return f"{self.queue}: {plural(self.moved, 'message')} sent back{kept}"


# Long enough for a whole redrive: a message is not received twice while it runs.
RECEIVED_FOR_SECONDS = 900


def messages(sqs: Any, queue_url: str) -> list[dict[str, Any]]:
    """Every visible message of the queue, all received before any is acted on (each stays
    hidden for RECEIVED_FOR_SECONDS unless deleted)."""
    found: list[dict[str, Any]] = []
    while True:
        received = sqs.receive_message(
            QueueUrl=queue_url,
            MaxNumberOfMessages=10,
            VisibilityTimeout=RECEIVED_FOR_SECONDS,
            MessageAttributeNames=["All"],
            AttributeNames=["ApproximateReceiveCount"],
        ).get("Messages", [])
        if not received:
            return found
        found += received


def move_by_hand(sqs: Any, source_url: str, destination_url: str) -> int:
    """What a message-move task does: each message sent to the destination, then deleted."""
    moved = 0
    for message in messages(sqs, source_url):
        sqs.send_message(
            QueueUrl=destination_url,
            MessageBody=message["Body"],
            **message_attributes(message.get("MessageAttributes")),
        )
        sqs.delete_message(QueueUrl=source_url, ReceiptHandle=message["ReceiptHandle"])
        moved += 1
    return moved


def move_articles_back(sqs: Any, source_url: str, destination_url: str, at: float) -> Redrive:
    """Each dead-lettered article message sent back to the article queue in its host's group,
    then deleted; one that is not an article message stays."""
    from newsdesk.core.errors import MessageError
    from newsdesk.core.messages import ArticleMessage

    moved = 0
    kept: list[str] = []
    for message in messages(sqs, source_url):
        try:
            article = ArticleMessage.from_json(message["Body"])
        except MessageError:
            kept.append(message["ReceiptHandle"])
            continue
        sqs.send_message(
            QueueUrl=destination_url,
            MessageBody=message["Body"],
            MessageGroupId=article.host,
            MessageDeduplicationId=f"{article.deduplication_id}-redriven-{int(at)}",
        )
        sqs.delete_message(QueueUrl=source_url, ReceiptHandle=message["ReceiptHandle"])
        moved += 1
    for handle in kept:
        sqs.change_message_visibility(
            QueueUrl=source_url, ReceiptHandle=handle, VisibilityTimeout=0
        )
    return Redrive("ArticleDeadLetterQueue", moved, len(kept))


def start_move_task(sqs: Any, dead_letter_url: str, queue: str) -> Redrive:
    """SQS's message-move task, back to the queue whose redrive policy names this one."""
    attributes = sqs.get_queue_attributes(
        QueueUrl=dead_letter_url, AttributeNames=["QueueArn", "ApproximateNumberOfMessages"]
    )["Attributes"]
    waiting = int(attributes["ApproximateNumberOfMessages"])
    if not waiting:
        return Redrive(queue, 0)
    task = sqs.start_message_move_task(SourceArn=attributes["QueueArn"])["TaskHandle"]
    return Redrive(queue, waiting, task=task)


def redeliver_schedule_events(
    sqs: Any, queue_url: str, invoke: Callable[[str, dict[str, Any]], None], queue: str
) -> Redrive:
    """Each dead-lettered schedule event given to its target (``invoke(target_arn, event)``),
    then deleted; one naming no target stays."""
    moved = 0
    kept: list[str] = []
    for message in messages(sqs, queue_url):
        target = message.get("MessageAttributes", {}).get(TARGET_ATTRIBUTE, {}).get("StringValue")
        if not target:
            kept.append(message["ReceiptHandle"])
            continue
        invoke(target, json.loads(message["Body"]))
        sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
        moved += 1
    for handle in kept:  # visible again at once, once every message has been seen
        sqs.change_message_visibility(QueueUrl=queue_url, ReceiptHandle=handle, VisibilityTimeout=0)
    return Redrive(queue, moved, len(kept))


def message_attributes(attributes: dict[str, Any] | None) -> dict[str, Any]:
    """send_message's keyword for a message's attributes (SQS refuses an empty map)."""
    return {"MessageAttributes": attributes} if attributes else {}
