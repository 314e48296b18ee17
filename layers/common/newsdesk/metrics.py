"""EMF metrics for the collection funnel, named once here so the dashboard and the code agree."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.metrics import MetricUnit

from newsdesk.report import OutletReport

if TYPE_CHECKING:  # the collect functions import this module and must not load scikit-learn
    from newsdesk.cluster_job import ClusterRun

FUNNEL = {
    "FeedsAttempted": "feeds_attempted",
    "FeedsFailed": "feeds_failed",
    "FeedsSkippedByBreaker": "feeds_skipped",
    "ArticlesNew": "new",
    "ArticlesDuplicate": "duplicate",
    "ArticlesPhotoFiltered": "photo_filtered",
}


def add_outlet_metrics(metrics: Metrics, report: OutletReport) -> None:
    counts = report.counts()
    for name, key in FUNNEL.items():
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=counts[key])
    metrics.add_metric(
        name="FeedsOk",
        unit=MetricUnit.Count,
        value=counts["feeds_attempted"] - counts["feeds_failed"],
    )
    metrics.add_metric(
        name="EntriesWithoutLink",
        unit=MetricUnit.Count,
        value=sum(f.without_link for f in report.feeds),
    )
    if report.breaker_tripped:
        metrics.add_metric(name="OutletBreakerTrips", unit=MetricUnit.Count, value=1)


def add_fanout_metrics(metrics: Metrics, outlets: int, feeds: int) -> None:
    metrics.add_metric(name="OutletsScheduled", unit=MetricUnit.Count, value=outlets)
    metrics.add_metric(name="FeedsScheduled", unit=MetricUnit.Count, value=feeds)


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
