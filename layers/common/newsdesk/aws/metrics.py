"""EMF metrics for the collection funnel, named once here so the dashboard and the code agree.
docs/operating.md's list of every function's metrics is written from these tables, the jobs'
``metric_counts()`` and the handlers' own counts (``make docs``; a test fails when it is not
current)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from aws_lambda_powertools.metrics import MetricUnit

from newsdesk.core.report import FAILURE_CLASSES, OutletReport


class Metrics(Protocol):
    """Where metrics go: Powertools' ``Metrics`` (or ``EphemeralMetrics``, which the docs'
    generator reads back)."""

    def add_metric(self, name: str, unit: MetricUnit | str, value: float) -> None: ...


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
    "EntriesTruncated": "truncated",
    "EntriesUnstorable": "unstorable",
    "ReferencesReplaced": "references_replaced",
    "ArticlesPhotoFiltered": "photo_filtered",
    "DuplicatesInMessage": "duplicate_in_message",
    "DuplicatesByUrl": "duplicate_url",
    "DuplicatesByGuid": "duplicate_guid",
    "ArticlesDuplicate": "duplicate",
    "ArticlesRevised": "revised",
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
        unit = MetricUnit.Milliseconds if name.endswith("Milliseconds") else MetricUnit.Count
        metrics.add_metric(name=name, unit=unit, value=value)


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


# The extraction funnel (issue 14): one metric per outcome, per named reason of an empty page
# and of the errors an operator acts on, per copy key; named once here for the dashboard.
EXTRACT_OUTCOMES = (
    "extract_ok",
    "extract_empty",
    "extract_error",
    "list_page",
    "filtered_thin",
    "deferred",
    "repeated",
)
EXTRACT_REASONS = (
    ("extract_empty", "js_rendered"),
    ("extract_empty", "consent_wall"),
    ("extract_empty", "paywall"),
    ("extract_empty", "bot_challenge"),
    ("extract_empty", "meta_refresh"),
    ("extract_empty", "no_text"),
    ("extract_empty", "too_complex"),
    ("extract_error", "robots_disallowed"),
    ("extract_error", "not_html"),
    ("extract_error", "too_large"),
    ("extract_error", "unstorable"),
    ("extract_error", "too_many_redirects"),
    ("extract_error", "redirect_not_http"),
)
COPY_REASONS = (
    "duplicate_by_canonical_url",
    "duplicate_by_content_hash",
    "duplicate_by_near_duplicate",
)
EXTRACT_METRICS = {
    **{
        "Pages" + _camel(outcome.removeprefix("extract_")).replace("Ok", "Extracted"): outcome
        for outcome in EXTRACT_OUTCOMES
    },
    **{
        "Pages" + _camel(outcome.removeprefix("extract_")) + _camel(reason): f"{outcome}:{reason}"
        for outcome, reason in EXTRACT_REASONS
    },
    **{"Copies" + _camel(reason.removeprefix("duplicate_")): reason for reason in COPY_REASONS},
    "CanonicalIgnored": "canonical_ignored",
    "HostBreakerTrips": "host_breaker_tripped",
}


def add_article_metrics(
    metrics: Metrics,
    status: str,
    reason: str | None,
    copy_reason: str | None,
    canonical_ignored: bool,
    host_tripped: bool,
) -> None:
    """One article's outcome, as a count (0 or 1) of each of EXTRACT_METRICS."""
    keys = {status, f"{status}:{reason}", copy_reason or ""}
    if canonical_ignored:
        keys.add("canonical_ignored")
    if host_tripped:
        keys.add("host_breaker_tripped")
    add_counts(metrics, {name: int(key in keys) for name, key in EXTRACT_METRICS.items()})


# What a metric counts, where its name does not say it all (docs/operating.md; a test fails on
# a note for a metric no function publishes).
DESCRIBED = {
    "OutletsSkippedOpenBreaker": "outlets not sent this round: their breaker is open",
    "SilentOutlets": "outlets none of whose feeds has succeeded for OUTLET_SILENT_HOURS "
    "(the fan-out's `outlet silent` lines name them)",
    "MessagesReceived": "outlet messages in the batch",
    "MessagesFailed": "outlet messages failed by a database or DynamoDB fault: SQS delivers "
    "them again",
    "MessagesStale": "outlet messages older than MESSAGE_MAX_AGE_SECONDS, dropped",
    "MessagesRefused": "outlet messages refused, not processed nor failed: of a version the "
    "contract does not name, or scheduled more than MAX_CLOCK_SKEW (5 min) ahead of the clock "
    "(each a `message refused` line with its `reason`)",
    "RoundsRefused": "rounds whose time was more than MAX_CLOCK_SKEW (5 min) ahead of the clock: "
    "nothing sent (a `round refused` line)",
    "RoundsUnreachable": "rounds before this one that reached no outlet at all (every feed "
    "tried failed by DNS, connection or timeout: the collector's own network), forgiven: the "
    "breakers they tripped and the feeds they backed off as before (a `round unreachable` line)",
    "ArticleMessagesRefused": "article messages of a version the contract does not name: "
    "refused, not processed nor failed (the outbox sends the row again)",
    "FeedsSkippedOpenBreaker": "feeds of an outlet whose breaker was open",
    "FeedsSkippedByBreaker": "feeds skipped after the outlet's breaker opened in this message",
    "OutletBreakerTrips": "outlets whose breaker opened in this message",
    "EntriesWithoutLink": "entries without a link (or one that can be stored): not stored",
    "EntriesWithReplacementChar": "entries whose title or summary has U+FFFD: an outlet that "
    "changed its encoding",
    "EntriesTruncated": "entries stored with a title or summary cut to its bound",
    "EntriesUnstorable": "entries the store refused (a link or canonical URL over its bound, "
    "data PostgreSQL refuses)",
    "ReferencesReplaced": "character references to a lone surrogate or past U+10FFFF, read as "
    "U+FFFD: the rest of the feed stored",
    "ArticlesRevised": "known articles with another title or a later time: queued again",
    "OutboxRelayed": "extraction outbox rows sent to the article queue after the batch",
    "ArticleMessagesPutBack": "article messages received while EXTRACT_ENABLED=false: their "
    "rows wait unsent",
    "ArticleMessagesFailed": "article messages failed by a database, DynamoDB or S3 fault: SQS "
    "delivers them again",
    "PagesDeferred": "pages not fetched now (the host's pacing, Retry-After or breaker), sent "
    "again later",
    "PagesRepeated": "messages whose outbox row is gone, not yet due or superseded: nothing "
    "written",
    "PagesEmptyTooComplex": "pages not read: more than 10,000 elements (ELEMENT_BUDGET), which "
    "trafilatura would take seconds of CPU over",
    "CanonicalIgnored": "pages whose canonical names the site's root, a section or another "
    "host: ignored",
    "HostBreakerTrips": "hosts whose breaker opened",
    "ClusterCategoriesSent": "categories sent to the cluster queue by a schedule's event",
    "ArticlesLeftSingle": "articles of the window in no issue after the run",
    "CopiesAttached": "copies put in their original's issue",
    "ArticlesEmbedded": "titles of the window the meaning method found without a stored vector "
    "and embedded (the others' were read)",
    "EmbeddingMilliseconds": "the time the run spent embedding them",
    "ArticlesAwaitingEmbedding": "titles past the run's EMBED_PER_RUN (5,000) left without a "
    "vector, not clustered until a later run embeds them",
    "ClusterRunsLockedOut": "categories left to another run, which held their lock",
    "IssueEventsFailed": "issue events the bus refused: they wait in the outbox",
}
