"""Invocations as AWS makes them: a schedule's event for a scheduled function, and the SQS event
source mapping for a queue's consumer — messages received in batches of the mapping's
``BatchSize``, each batch one invocation, up to a concurrency; with ReportBatchItemFailures the
messages the function reports failed stay on the queue (moto redrives them to the dead-letter
queue after the queue's maxReceiveCount receives), without it a failed invocation keeps its
whole batch there. A collection round is the fan-out's invocation, then its queue drained; a
round that reached no outlet at all is forgiven at its end (``newsdesk.collect.unreached``), as
the next fan-out would forgive it in AWS, where no function sees a round's end.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, Future, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from botocore.exceptions import ClientError

from newsdesk.aws.state_table import StateTable
from newsdesk.collect.unreached import Unreached, forgive_latest_round
from newsdesk.core.errors import MessageError
from newsdesk.core.messages import OutletMessage
from newsdesk.core.report import OutletReport
from newsdesk.core.sources import Outlet
from newsdesk.core.times import format_time
from newsdesk.extract.extractor import ArticleReport
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


def _waiting(services: LocalServices, queue: str) -> bool:
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


@dataclass
class FailedMessage:
    source: str
    error: str


@dataclass
class RoundResult:
    fanout: dict[str, Any]
    outlets: list[OutletReport]
    failed: list[FailedMessage]
    seconds: float
    articles: list[ArticleReport] = field(default_factory=list)  # the extraction stage's
    articles_failed: list[FailedMessage] = field(default_factory=list)
    # the round reached no outlet at all (the machine looks offline): forgiven
    unreachable: Unreached | None = None


class RoundProgress(Protocol):
    """What ``run_collect_round`` tells as it goes (a terminal's progress)."""

    def outlets_done(self, reports: list[OutletReport], failed: list[FailedMessage]) -> None:
        """Outlets done: their reports, and the outlets whose messages failed."""

    def extracting(self) -> None:
        """The outlets are done; the article pages they queued are next."""

    def waiting(self) -> None:
        """Nothing was done for a while (IDLE_SECONDS): still at work."""


def run_collect_round(
    services: LocalServices,
    concurrency: int,
    outlets: Sequence[Outlet] = (),
    ignore_schedule: bool = True,
    workers: LambdaPool | None = None,
    progress: RoundProgress | None = None,
) -> RoundResult:
    """The fan-out, then the worker's queue drained with ``concurrency`` containers (or
    ``workers``, already started), then the article queue the workers' outbox relay filled,
    by the extractor. Reports come in the order of ``outlets`` (the sources file's), any
    outlet not in it after those; an outlet the fan-out skipped, its breaker open, is
    reported cooling down (its feeds those ``outlets`` give it). ``progress`` is told of each
    outlet as it is done: those cooling down once the fan-out answered, the others as their
    messages' invocations return. On a round of every feed, the worker's containers start
    while the fan-out runs, one for each outlet up to ``concurrency`` (each will have its
    message), rather than one after another as its messages come."""
    started = time.monotonic()
    event = scheduled_event(datetime.now(UTC)) | {"ignore_schedule": ignore_schedule}
    with contextlib.ExitStack() as stack:
        ahead = 0
        if workers is None and ignore_schedule:
            workers = stack.enter_context(pool_of(services, WORKER, concurrency))
            ahead = min(concurrency, len(outlets))
        fanout = _fan_out(services, event, workers, ahead)
        cooling = _cooling(fanout, outlets)
        if progress is not None:
            progress.outlets_done(cooling, [])
        reports, failed = drain_worker(services, concurrency, workers, progress)
    unreachable = forgive_round(services, event["time"], [o.name for o in outlets], reports)
    reports += cooling
    rank = {outlet.name: i for i, outlet in enumerate(outlets)}
    reports.sort(key=lambda r: (rank.get(r.source, len(rank)), r.source))
    sources = services.infrastructure.functions[EXTRACTOR].event_sources
    if progress is not None and any(_waiting(services, source.queue) for source in sources):
        progress.extracting()
    articles, articles_failed = drain_extractor(services, concurrency, progress)
    return RoundResult(
        fanout,
        reports,
        failed,
        time.monotonic() - started,
        articles,
        articles_failed,
        unreachable,
    )


def _fan_out(
    services: LocalServices, event: dict[str, Any], workers: LambdaPool | None, ahead: int
) -> dict[str, Any]:
    """The fan-out's invocation in a fresh container; meanwhile ``ahead`` of ``workers``'
    containers start (in a thread: the fork server answers a fork at a time)."""
    with pool_of(services, FANOUT) as pool:
        answer = pool.invoke(event)  # its container first: it waits for no worker's
        starting = None
        if workers is not None and ahead:
            starting = threading.Thread(target=workers.start, args=(ahead,), daemon=True)
            starting.start()
        try:
            return answer.result()
        finally:
            if starting is not None:
                starting.join()


def forgive_round(
    services: LocalServices, at: str, outlets: list[str], reports: list[OutletReport]
) -> Unreached | None:
    """The round at ``at`` (…Z) forgiven, if it reached no outlet at all (the fan-out would
    forgive it at the next round): what was taken back, its outlets' reports no longer tripped."""
    names = list(dict.fromkeys([*outlets, *(r.source for r in reports)]))
    table = services.function_env(WORKER)["STATE_TABLE_NAME"]
    unreachable = forgive_latest_round(StateTable(services.client("dynamodb"), table), names)
    if unreachable is None or format_time(unreachable.at) != at:
        return None
    for report in reports:
        if report.source in unreachable.outlets:
            report.breaker_tripped, report.open_until, report.trips = False, None, None
    return unreachable


def drain_extractor(
    services: LocalServices, concurrency: int = 1, progress: RoundProgress | None = None
) -> tuple[list[ArticleReport], list[FailedMessage]]:
    """The article queue drained by the extractor's event source mapping: each article's
    report (in id order), and the messages that failed (``progress`` told while it waits)."""
    reports: list[ArticleReport] = []
    failed: list[FailedMessage] = []
    sources = services.infrastructure.functions[EXTRACTOR].event_sources
    if not any(_waiting(services, source.queue) for source in sources):
        return reports, failed  # no container started for nothing (trafilatura loads slowly)
    with pool_of(services, EXTRACTOR, concurrency) as pool:
        for source in sources:
            idle = progress.waiting if progress is not None else None
            for delivery in drain(services, source, pool, idle=idle):
                if isinstance(delivery.response, dict):
                    reports += [
                        ArticleReport.from_dict(a) for a in delivery.response.get("articles", [])
                    ]
                error = delivery.error or f"record failed, see {services.log_path}"
                failed += [
                    FailedMessage(m["Body"][:80], error)
                    for m in delivery.kept(source.partial_failures)
                ]
    reports.sort(key=lambda r: (r.article_id, r.revision))
    return reports, failed


def drain_worker(
    services: LocalServices,
    concurrency: int = 1,
    workers: LambdaPool | None = None,
    progress: RoundProgress | None = None,
) -> tuple[list[OutletReport], list[FailedMessage]]:
    """The worker's queues drained, as their event source mappings would: what the outlets
    reported, and the messages that failed (``progress`` told of each delivery's)."""
    with contextlib.ExitStack() as stack:
        pool = workers or stack.enter_context(pool_of(services, WORKER, concurrency))
        sources = services.infrastructure.functions[WORKER].event_sources
        deliveries: list[tuple[EventSource, Delivery]] = []
        for source in sources:

            def delivered(delivery: Delivery, source: EventSource = source) -> None:
                if progress is not None:
                    progress.outlets_done(*_outcomes([(source, delivery)], services))

            idle = progress.waiting if progress is not None else None
            deliveries += [(source, d) for d in drain(services, source, pool, delivered, idle)]
    return _outcomes(deliveries, services)


def _cooling(fanout: dict[str, Any], outlets: Sequence[Outlet]) -> list[OutletReport]:
    feeds = {outlet.name: [(f.category, f.url) for f in outlet.feeds] for outlet in outlets}
    reports = []
    for skipped in fanout.get("outlets_cooling", []):
        report = OutletReport(skipped["source"])
        report.cooling_down(
            feeds.get(skipped["source"], []), skipped["open_until"], skipped["trips"]
        )
        reports.append(report)
    return reports


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


def run_cluster(services: LocalServices, event: dict[str, Any]) -> dict[str, Any]:
    """A clustering run as AWS makes it (issue 24): the cluster function's invocation with
    ``event`` (a schedule's, or a replay's with ``at``), which sends one message per category
    to its queue, then that queue drained by its event source mapping; the categories' runs
    summed into one answer, as a run over every category gives. One container serves both,
    warm for the queue's records as Lambda's would be (the image's numeric stack is imported
    once, not twice)."""
    with pool_of(services, CLUSTER) as pool:
        first = pool.invoke(event).result()
        if "categories_sent" not in first:  # no queue: the invocation clustered every category
            return first
        return _drain_cluster(services, pool)


def _drain_cluster(services: LocalServices, pool: LambdaPool) -> dict[str, Any]:
    """The cluster queue drained by ``pool``: its categories' runs as one answer."""
    runs: list[dict[str, Any]] = []
    failed: list[str] = []
    sources = services.infrastructure.functions[CLUSTER].event_sources
    for source in sources:
        for delivery in drain(services, source, pool):
            if isinstance(delivery.response, dict):
                runs += delivery.response.get("runs", [])
            failed += [
                delivery.error or f"record failed, see {services.log_path}"
                for _ in delivery.kept(source.partial_failures)
            ]
    return merge_runs(runs) | {"categories_failed": failed}


SUMMED = (
    "issues_created",
    "issues_updated",
    "issues_closed",
    "articles_clustered",
    "articles_joined",
    "articles_left_single",
    "copies_attached",
    "events_published",
    "articles_embedded",
    "embedding_milliseconds",
    "articles_awaiting_embedding",
    "events_failed",
)
LISTED = ("issues", "updated", "closed", "categories_done", "categories_locked_out")


def merge_runs(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The categories' runs as one run's answer."""
    merged: dict[str, Any] = {key: sum(run.get(key, 0) for run in runs) for key in SUMMED}
    for key in LISTED:
        merged[key] = [item for run in runs for item in run.get(key, [])]
    merged["closed"] = sorted(merged["closed"])
    merged["locked_out"] = bool(merged["categories_locked_out"]) and not merged["categories_done"]
    return merged


def _outcomes(
    deliveries: list[tuple[EventSource, Delivery]], services: LocalServices
) -> tuple[list[OutletReport], list[FailedMessage]]:
    reports: list[OutletReport] = []
    failed: list[FailedMessage] = []
    for event_source, delivery in deliveries:
        if isinstance(delivery.response, dict):
            reports += [OutletReport.from_dict(o) for o in delivery.response.get("outlets", [])]
        for message in delivery.kept(event_source.partial_failures):
            try:
                outlet = OutletMessage.from_json(message["Body"]).outlet.name
            except MessageError:
                outlet = "(not an outlet message)"
            error = delivery.error or f"record failed, see {services.log_path}"
            failed.append(FailedMessage(outlet, error))
    return reports, failed
