"""Cluster function (container image): one clustering pass over the recent articles, then the
issue events it (or an earlier run) wrote published to the stack's event bus."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.utilities.typing import LambdaContext

from newsdesk.aws.clients import events_client
from newsdesk.aws.issue_bus import IssueBus
from newsdesk.aws.metrics import add_counts
from newsdesk.cluster.events import relay_events
from newsdesk.cluster.job import ClusterPolicy, ClusterRun, run_clustering
from newsdesk.core.errors import MessageError
from newsdesk.core.settings import Settings
from newsdesk.core.times import replay_time as checked_replay_time
from newsdesk.core.times import utc_now
from newsdesk.storage.database import Database, database_from
from newsdesk.storage.issue_events import SOURCE, IssueEventStore

logger = Logger()
metrics = Metrics()


@dataclass(frozen=True)
class Cluster:
    """What the cluster function works with; ``bus`` None (no EVENT_BUS_NAME): events stay in
    the outbox (`newsdesk events` shows them)."""

    database: Database
    policy: ClusterPolicy
    bus: IssueBus | None

    @classmethod
    def from_settings(cls, settings: Settings) -> Cluster:
        bus = settings.event_bus_name
        return cls(
            database_from(settings),
            ClusterPolicy.from_settings(settings),
            IssueBus(events_client(), bus, SOURCE) if bus else None,
        )


def replay_time(event: dict[str, Any]) -> datetime | None:
    """The event's ``at`` (`newsdesk cluster --at`): cluster as if it were then, over the
    articles collected up to then; None (a schedule's event): now. A time that cannot be
    one (core.times.replay_time: unreadable, before 1970, in the future) is a MessageError."""
    at = event.get("at")
    if at is None:
        return None
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
    at = replay_time(event)

    def publish(run: ClusterRun) -> None:
        if deps.bus is not None:
            store = IssueEventStore(deps.database)
            run.events_published, run.events_failed = relay_events(store, deps.bus, utc_now())

    run = run_clustering(
        deps.database, deps.policy, clock=(lambda: at) if at else utc_now, publish=publish
    )
    add_counts(metrics, run.metric_counts())
    return run.as_dict()
