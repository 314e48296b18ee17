"""EMF metrics for the collection funnel, named once here so the dashboard and the code agree."""

from __future__ import annotations

from collections.abc import Mapping

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.metrics import MetricUnit

from newsdesk.core.report import FAILURE_CLASSES, OutletReport

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
    "ArticlesTooOld": "too_old",
    "EntriesUndated": "undated",
    "EntriesWithReplacementChar": "with_replacement_char",
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


def add_counts(metrics: Metrics, counts: Mapping[str, int]) -> None:
    """Counts by metric name, as the jobs' results give them (``metric_counts()``)."""
    for name, value in counts.items():
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)
