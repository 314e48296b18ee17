"""A collection round as AWS runs it: the fan-out's invocation, then its queue drained by the
workers' event source mapping (``invocations``), and the article queue by the extractor's; a
round that reached no outlet at all is forgiven at its end (``newsdesk.collect.unreached``), as
the next fan-out would forgive it in AWS, where no function sees a round's end."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from newsdesk.aws.state_table import StateTable
from newsdesk.collect.unreached import Unreached, forgive_latest_round
from newsdesk.core.errors import MessageError
from newsdesk.core.messages import OutletMessage
from newsdesk.core.report import OutletReport
from newsdesk.core.sources import Outlet
from newsdesk.core.times import format_time
from newsdesk.extract.extractor import ArticleReport
from newsdesk_local.infrastructure import EventSource
from newsdesk_local.invocations import (
    EXTRACTOR,
    FANOUT,
    WORKER,
    Delivery,
    drain,
    pool_of,
    scheduled_event,
    waiting,
)
from newsdesk_local.pool import LambdaPool
from newsdesk_local.services import LocalServices


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
    if progress is not None and any(waiting(services, source.queue) for source in sources):
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
    if not any(waiting(services, source.queue) for source in sources):
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
