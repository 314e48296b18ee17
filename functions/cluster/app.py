"""Cluster function (container image): one clustering pass over the recent articles, then the
issue events it (or an earlier run) wrote published to the stack's event bus.

Issue 24: with ``CLUSTER_QUEUE_URL`` set, a schedule's event (or a replay's ``{"at": …}``) only
sends one message per category to the cluster queue, all with the run's time, and each
message's invocation clusters its category (an SQS batch, one record a category); unset, the
invocation clusters every category in turn. Both leave the same issues, versions and events."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from newsdesk.aws.clients import events_client, s3_client, sqs_client
from newsdesk.aws.cluster_queue import ClusterQueue
from newsdesk.aws.dossiers import DossierBucket
from newsdesk.aws.issue_bus import IssueBus
from newsdesk.aws.metrics import add_counts
from newsdesk.cluster.events import relay_events
from newsdesk.cluster.job import ClusterPolicy, ClusterRun, run_clustering
from newsdesk.core.errors import ConfigError, MessageError, NewsdeskError
from newsdesk.core.messages import ClusterMessage
from newsdesk.core.settings import Settings
from newsdesk.core.times import format_time, utc_now
from newsdesk.core.times import replay_time as checked_replay_time
from newsdesk.storage.database import Database, database_from
from newsdesk.storage.issue_events import SOURCE, IssueEventStore
from newsdesk.storage.issues import categories

logger = Logger()
metrics = Metrics()
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


@dataclass(frozen=True)
class Cluster:
    """What the cluster function works with; ``bus`` None (no EVENT_BUS_NAME): events stay in
    the outbox (`newsdesk events` shows them); else ``dossiers``, where their dossiers go."""

    database: Database
    policy: ClusterPolicy
    bus: IssueBus | None
    queue: ClusterQueue | None = None  # None: every category in one invocation
    dossiers: DossierBucket | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> Cluster:
        bus, queue, bucket = (
            settings.event_bus_name,
            settings.cluster_queue_url,
            settings.dossier_bucket,
        )
        if bus and not bucket:
            raise ConfigError(
                "EVENT_BUS_NAME is set and DOSSIER_BUCKET is not: an issue event is never "
                "published without its dossier"
            )
        return cls(
            database_from(settings),
            ClusterPolicy.from_settings(settings),
            IssueBus(events_client(), bus, SOURCE) if bus else None,
            ClusterQueue(sqs_client(), queue) if queue else None,
            DossierBucket(s3_client(), bucket) if bucket else None,
        )


def replay_time(event: dict[str, Any]) -> datetime | None:
    """The event's ``at`` (`newsdesk cluster --at`): cluster as if it were then, over the
    articles collected up to then; None (a schedule's event): now. A time that cannot be
    one (core.times.replay_time: unreadable, before 1970, in the future) is a MessageError."""
    at = event.get("at")
    return None if at is None else _checked(at)


def _checked(at: object) -> datetime:
    """``at`` as core.times.replay_time checks it, or a MessageError in words."""
    try:
        return checked_replay_time(at, utc_now())
    except ValueError as e:
        raise MessageError(f"'at' {e}: {at!r}") from None


@functools.cache
def container() -> Cluster:
    """Built on the first invocation and kept for the container's life (its connection too)."""
    return Cluster.from_settings(Settings.from_env())


def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    response: dict[str, Any] = handle(event, context, container())
    return response


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handle(event: dict[str, Any], context: LambdaContext, deps: Cluster) -> dict[str, Any]:
    if "Records" in event:
        return _categories(event, context, deps)
    at = replay_time(event)
    if deps.queue is not None:
        return _fan_out(deps, at or utc_now())
    run = _run(deps, at, None)
    add_counts(metrics, run.metric_counts())
    return run.as_dict()


def _fan_out(deps: Cluster, at: datetime) -> dict[str, Any]:
    """One message per category, every one with the run's time."""
    assert deps.queue is not None
    messages = [
        ClusterMessage(category_id, name, format_time(at))
        for category_id, name in categories(deps.database)
    ]
    deps.queue.send(messages)
    logger.info("categories sent", extra={"categories": len(messages), "at": format_time(at)})
    metrics.add_metric("ClusterCategoriesSent", "Count", len(messages))
    return {"at": format_time(at), "categories_sent": [m.category for m in messages]}


def _categories(event: dict[str, Any], context: LambdaContext, deps: Cluster) -> dict[str, Any]:
    """An SQS batch of the cluster queue: each record's category clustered at its time."""

    def record_handler(record: SQSRecord) -> dict[str, Any]:
        try:
            message = ClusterMessage.from_json(record.body)
            logger.append_keys(category=message.category)
            run = _run(deps, _checked(message.at), [message.category_id])
        except (NewsdeskError, ValueError):
            logger.exception(
                "record failed; SQS will deliver it again", extra={"message_id": record.message_id}
            )
            raise
        add_counts(metrics, run.metric_counts())
        return run.as_dict()

    with processor(records=event["Records"], handler=record_handler, lambda_context=context):
        outcomes = processor.process()
    runs = [result for status, result, _ in outcomes if status == "success"]
    return {**processor.response(), "runs": runs}


def _run(deps: Cluster, at: datetime | None, category_ids: list[int] | None) -> ClusterRun:
    def publish(run: ClusterRun) -> None:
        if deps.bus is not None and deps.dossiers is not None:
            store = IssueEventStore(deps.database)
            run.events_published, run.events_failed = relay_events(
                store, deps.bus, deps.dossiers, utc_now()
            )

    return run_clustering(
        deps.database,
        deps.policy,
        clock=(lambda: at) if at else utc_now,
        publish=publish,
        category_ids=category_ids,
    )
