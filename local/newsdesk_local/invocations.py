"""Invocations as AWS makes them: a schedule's event for a scheduled function, and the SQS event
source mapping for a queue's consumer — messages received in batches of the mapping's
``BatchSize``, each batch one invocation, up to a concurrency; with ReportBatchItemFailures the
messages the function reports failed stay on the queue (moto redrives them to the dead-letter
queue after the queue's maxReceiveCount receives), without it a failed invocation keeps its
whole batch there. What runs on them: a collection round (``rounds``), a clustering run
(``cluster_runs``)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, Future, wait
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from botocore.exceptions import ClientError

from newsdesk.core.times import format_time
from newsdesk_local.infrastructure import ACCOUNT, REGION, EventSource
from newsdesk_local.pool import LambdaPool
from newsdesk_local.services import LocalServices
from newsdesk_local.signals import INTERRUPTIONS

# The template's logical ids of the functions the command line runs.
FANOUT, WORKER, CLUSTER = "FanOutFunction", "WorkerFunction", "ClusterFunction"


EXTRACTOR = "ExtractorFunction"


# How long ``drain`` waits for an invocation before telling ``idle`` (a terminal's heartbeat).
IDLE_SECONDS = 1.0


def scheduled_event(at: datetime) -> dict[str, Any]:
    """The event an EventBridge schedule delivers (the file events/fanout.json has one)."""
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": ACCOUNT,
        "time": format_time(at),
        "region": REGION,
        "resources": [],
        "detail": {},
    }


def sqs_event(messages: Sequence[dict[str, Any]], queue_arn: str) -> dict[str, Any]:
    """An SQS event as the event source mapping builds it from received messages."""
    return {
        "Records": [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": m.get("Attributes", {}),
                "messageAttributes": {},
                "md5OfBody": m["MD5OfBody"],
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": REGION,
            }
            for m in messages
        ]
    }


@dataclass(frozen=True)
class Delivery:
    """One invocation of a batch: what the function returned, or why the invocation failed."""

    messages: list[dict[str, Any]]
    response: Any = None
    error: str | None = None  # the invocation crashed (or could not be made)

    def kept(self, partial_failures: bool) -> list[dict[str, Any]]:
        """The messages that stay on the queue: all of a failed invocation's; of one that
        returned, those it reported failed if the mapping reads the report
        (ReportBatchItemFailures), else none."""
        if self.error is not None:
            return self.messages
        if not partial_failures or not isinstance(self.response, dict):
            return []
        reported = self.response.get("batchItemFailures") or []
        failed = {f.get("itemIdentifier") if isinstance(f, dict) else None for f in reported}
        if not failed <= {m["MessageId"] for m in self.messages}:
            return self.messages  # an unknown or missing identifier fails the whole batch
        return [m for m in self.messages if m["MessageId"] in failed]


class Pool(Protocol):
    """What ``drain`` invokes: a LambdaPool, or a test's containers in-process."""

    @property
    def concurrency(self) -> int: ...

    def invoke(self, event: dict[str, Any]) -> Future[Any]: ...


def drain(
    services: LocalServices,
    source: EventSource,
    pool: Pool,
    delivered: Callable[[Delivery], None] | None = None,
    idle: Callable[[], None] | None = None,
) -> list[Delivery]:
    """Feed ``source``'s queue to ``pool``'s function, as many batches at once as the pool has
    containers, until the queue is empty and every invocation has returned (so that messages
    a consumer sends on are consumed too): one ReceiveMessage for as many batches as there are
    containers free (up to ten messages), one DeleteMessageBatch for the messages done with at
    once, as the event source mapping's poller does. Should the pool break (a container
    killed), the batches in flight and those at hand count as failed, and no more are
    received. Should the command be stopped (Ctrl-C, SIGTERM), the messages in flight go back
    to the queue.
    ``delivered`` is told of each delivery as it is done (progress), before the next batch;
    ``idle``, at least every IDLE_SECONDS while invocations run (a terminal's heartbeat)."""
    sqs = services.client("sqs")
    queue = services.queues[source.queue]
    fifo = services.infrastructure.queue(source.queue).attributes.get("FifoQueue") == "true"
    running: dict[Future[Any], list[dict[str, Any]]] = {}
    deliveries: list[Delivery] = []
    kept_handles: list[str] = []
    broken = False
    try:
        while True:
            free = pool.concurrency - len(running)
            if not broken and free > 0:
                batches = _receive(sqs, queue.url, source.batch_size, free, fifo)
                failure = None  # the pool broke: this batch and those received with it fail
                for batch in batches:
                    try:
                        if failure is None:
                            running[pool.invoke(sqs_event(batch, queue.arn))] = batch
                            continue
                    except BrokenExecutor as e:
                        broken, failure = True, f"{type(e).__name__}: {e}"
                    deliveries.append(Delivery(batch, error=failure))
                    if delivered is not None:
                        delivered(deliveries[-1])
                if batches:
                    continue
            if not running:
                # What failed is visible again once the queue is drained, as after SQS's
                # visibility timeout: kept between runs, tried at the next, dead-lettered after
                # maxReceiveCount receives in all (the local runtime counts them across runs).
                _release(sqs, queue.url, kept_handles)
                return deliveries
            done, _ = wait(running, IDLE_SECONDS if idle else None, FIRST_COMPLETED)
            if idle is not None:
                idle()
            finished: list[str] = []
            for future in done:
                broken = broken or isinstance(future.exception(), BrokenExecutor)
                delivery = _delivered(running.pop(future), future)
                kept = {m["MessageId"] for m in delivery.kept(source.partial_failures)}
                for message in delivery.messages:
                    if message["MessageId"] in kept:
                        kept_handles.append(message["ReceiptHandle"])
                    else:
                        finished.append(message["ReceiptHandle"])
                deliveries.append(delivery)
                if delivered is not None:
                    delivered(delivery)
            _delete(sqs, queue.url, finished)
    except INTERRUPTIONS:
        # the command is stopping: what it had received is visible again, so that the state
        # it saves keeps it (its receive counted), as SQS would after the visibility timeout
        in_flight = [m["ReceiptHandle"] for batch in running.values() for m in batch]
        _release(sqs, queue.url, kept_handles + in_flight)
        raise


def waiting(services: LocalServices, queue: str) -> bool:
    attributes = services.client("sqs").get_queue_attributes(
        QueueUrl=services.queues[queue].url, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    return int(attributes.get("ApproximateNumberOfMessages", "0")) > 0


def _release(sqs: Any, url: str, handles: list[str]) -> None:
    for handle in handles:
        try:
            sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=0)
        except ClientError as e:  # received again since, or already redriven: nothing to do
            if e.response["Error"]["Code"] not in ("ReceiptHandleIsInvalid", "MessageNotInflight"):
                raise


def _receive(
    sqs: Any, url: str, batch_size: int, free: int, fifo: bool
) -> list[list[dict[str, Any]]]:
    """The next batches, as many as ``free`` containers take, from one ReceiveMessage of up to
    ten messages, as the event source mapping's poller receives them. A FIFO queue's are
    received a batch at a time: messages of one group are not spread over invocations."""
    wanted = batch_size if fifo else free * batch_size
    messages: list[dict[str, Any]] = sqs.receive_message(
        QueueUrl=url,
        MaxNumberOfMessages=min(wanted, 10),
        WaitTimeSeconds=0,
        AttributeNames=["All"],
    ).get("Messages", [])
    return [messages[i : i + batch_size] for i in range(0, len(messages), batch_size)]


def _delete(sqs: Any, url: str, handles: list[str]) -> None:
    """The messages done with, ten a call, as the event source mapping deletes them. One that
    cannot be deleted (its receipt no longer valid) stays on the queue, to be received again,
    as in SQS."""
    for start in range(0, len(handles), 10):
        entries = [
            {"Id": str(i), "ReceiptHandle": handle}
            for i, handle in enumerate(handles[start : start + 10])
        ]
        sqs.delete_message_batch(QueueUrl=url, Entries=entries)


def _delivered(messages: list[dict[str, Any]], future: Future[Any]) -> Delivery:
    try:
        return Delivery(messages, future.result())
    except Exception as e:  # the invocation itself crashed: its batch stays queued
        return Delivery(messages, error=f"{type(e).__name__}: {e}")


def pool_of(services: LocalServices, function: str, concurrency: int = 1) -> LambdaPool:
    """Containers of ``function`` (a logical id) with the environment it gets locally."""
    spec = services.infrastructure.functions[function]
    return LambdaPool(spec, services.function_env(function), str(services.log_path), concurrency)


def invoke_function(
    services: LocalServices, function: str, event: dict[str, Any]
) -> dict[str, Any]:
    """One invocation of ``function`` (a logical id) in a fresh container."""
    with pool_of(services, function) as pool:
        return pool.invoke(event).result()
