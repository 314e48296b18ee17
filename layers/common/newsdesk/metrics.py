"""EMF metrics for the collection funnel, named once here so the dashboard and the code agree."""

from __future__ import annotations

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.metrics import MetricUnit

from newsdesk.report import OutletReport

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
