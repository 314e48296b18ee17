"""A clustering run as AWS makes it (issue 24): the cluster function's invocation, which sends
one message per category to its queue, then that queue drained (``invocations``); the
categories' runs summed into one answer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from newsdesk_local.invocations import CLUSTER, drain, pool_of
from newsdesk_local.pool import LambdaPool
from newsdesk_local.services import LocalServices


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
