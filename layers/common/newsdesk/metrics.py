"""EMF metrics for the collection funnel, named once here so the dashboard and the code agree."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.metrics import MetricUnit

from newsdesk.report import FAILURE_CLASSES, OutletReport

if TYPE_CHECKING:  # the collect functions import this module and must not load scikit-learn
    from newsdesk.cluster_job import ClusterRun
    from newsdesk.fanout import FanOutResult

# One metric per funnel stage (seed 001), named once here so the dashboard and code agree.
FUNNEL = {
    "MessagesStale": "messages_stale",
    "FeedsDue": "feeds_due",
    "FeedsNotDue": "feeds_not_due",
    "FeedsSkippedOpenBreaker": "feeds_skipped_open_breaker",
    "FeedsAttempted": "feeds_attempted",
    "FeedsOk": "feeds_ok",
    "FeedsNotModified": "feeds_not_modified",
    "FeedsFailed": "feeds_failed",
    "FeedsSkippedByBreaker": "feeds_skipped",
    "EntriesSeen": "entries_seen",
    "ArticlesPhotoFiltered": "photo_filtered",
    "DuplicatesInMessage": "duplicate_in_message",
    "DuplicatesByUrl": "duplicate_url",
    "DuplicatesByGuid": "duplicate_guid",
    "ArticlesDuplicate": "duplicate",
    "ArticlesNew": "new",
    "BytesReceived": "bytes_received",
    "RawBodiesStored": "raw_bodies_stored",
    **{
        "FetchFailed" + "".join(p.capitalize() for p in name.split("_")): f"failed_{name}"
        for name in FAILURE_CLASSES
    },
}


def add_outlet_metrics(metrics: Metrics, report: OutletReport) -> None:
    counts = report.counts()
    for name, key in FUNNEL.items():
        unit = MetricUnit.Bytes if key == "bytes_received" else MetricUnit.Count
        metrics.add_metric(name=name, unit=unit, value=counts[key])
    metrics.add_metric(
        name="EntriesWithoutLink",
        unit=MetricUnit.Count,
        value=sum(f.without_link for f in report.feeds),
    )
    metrics.add_metric(
        name="OutletBreakerTrips", unit=MetricUnit.Count, value=int(report.breaker_tripped)
    )


def add_fanout_metrics(metrics: Metrics, result: FanOutResult) -> None:
    metrics.add_metric(name="OutletsScheduled", unit=MetricUnit.Count, value=result.outlets)
    metrics.add_metric(name="FeedsScheduled", unit=MetricUnit.Count, value=result.feeds)
    metrics.add_metric(name="MessagesSent", unit=MetricUnit.Count, value=result.messages_sent)
    metrics.add_metric(
        name="OutletsSkippedOpenBreaker",
        unit=MetricUnit.Count,
        value=result.outlets_skipped_open,
    )


def add_cluster_metrics(metrics: Metrics, run: ClusterRun) -> None:
    metrics.add_metric(name="IssuesCreated", unit=MetricUnit.Count, value=len(run.issues))
    metrics.add_metric(
        name="ArticlesClustered", unit=MetricUnit.Count, value=run.articles_clustered
    )
    metrics.add_metric(
        name="ArticlesLeftSingle", unit=MetricUnit.Count, value=run.articles_left_single
    )
    metrics.add_metric(
        name="ClusterRunsLockedOut", unit=MetricUnit.Count, value=int(run.locked_out)
    )
