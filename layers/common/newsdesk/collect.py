"""One outlet's share of a round: its feeds in order, fetched, parsed, filtered, stored, with
the in-message breaker and the per-feed state. Feed failures are recorded and counted; store
and state failures raise so that the SQS record fails and is retried."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from aws_lambda_powertools import Logger

from newsdesk.breaker import OutletBreaker
from newsdesk.errors import FeedError
from newsdesk.fetch import FetchPolicy, fetch
from newsdesk.messages import OutletMessage
from newsdesk.parse import parse_feed
from newsdesk.photo import PhotoFilter
from newsdesk.report import FEED_FAILED, FEED_OK, FeedReport, OutletReport
from newsdesk.settings import Settings
from newsdesk.sources import Feed
from newsdesk.state import FeedState, StateTable
from newsdesk.store import ArticleStore

logger = Logger(child=True)


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class CollectPolicy:
    fetch: FetchPolicy
    interval_seconds: float
    max_failures: int
    photo_filter: PhotoFilter

    @classmethod
    def from_settings(cls, settings: Settings) -> CollectPolicy:
        return cls(
            fetch=FetchPolicy(
                timeout_seconds=settings.fetch_timeout_seconds,
                max_bytes=settings.fetch_max_bytes,
                user_agent=settings.user_agent,
                allow_private_networks=settings.fetch_allow_private_networks,
            ),
            interval_seconds=settings.fetch_interval_seconds,
            max_failures=settings.outlet_max_failures,
            photo_filter=PhotoFilter(settings.photo_title_patterns),
        )


class OutletCollector:
    def __init__(
        self,
        policy: CollectPolicy,
        articles: ArticleStore,
        states: StateTable,
        clock: Callable[[], datetime] = _utc_now,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._policy = policy
        self._articles = articles
        self._states = states
        self._clock = clock
        self._sleep = sleep

    def collect(self, message: OutletMessage) -> OutletReport:
        outlet = message.outlet
        states = self._states.feeds_of(outlet.name)
        breaker = OutletBreaker(self._policy.max_failures)
        report = OutletReport(outlet.name)
        requested = False
        for feed in outlet.feeds:
            feed_report = FeedReport(feed.source, feed.category, feed.url)
            report.feeds.append(feed_report)
            if breaker.is_open:
                logger.info("feed skipped: outlet breaker open", extra=_keys(feed))
                continue
            if requested:
                self._sleep(self._policy.interval_seconds)  # be gentle with one outlet's server
            requested = True
            state = states.get(feed.url) or FeedState(feed.source, feed.url)
            self._collect_feed(feed, state, feed_report, breaker)
            self._states.save(state)
        return report

    def _collect_feed(
        self, feed: Feed, state: FeedState, report: FeedReport, breaker: OutletBreaker
    ) -> None:
        now = self._clock()
        state.attempted(now, feed.category)
        try:
            fetched = fetch(feed.url, self._policy.fetch)
            parsed = parse_feed(fetched.content, fetched.content_type)
        except FeedError as e:
            state.failed(str(e))
            breaker.record_failure()
            report.status, report.error, report.reason = FEED_FAILED, str(e), e.reason
            logger.warning(
                "feed failed",
                extra={
                    **_keys(feed),
                    "reason": e.reason,
                    "error": str(e),
                    "outlet_failures": breaker.failures,
                },
            )
            if breaker.is_open:
                logger.warning(
                    "outlet breaker open: skipping the outlet's remaining feeds",
                    extra={"outlet": feed.source, "failures": breaker.failures},
                )
            return
        kept = [e for e in parsed.entries if not self._policy.photo_filter.is_photo(e.title)]
        stored = self._articles.insert_articles(feed.source, feed.category, kept, now)
        report.status = FEED_OK
        report.new, report.duplicate = stored.inserted, stored.skipped
        report.photo_filtered = len(parsed.entries) - len(kept)
        report.without_link = parsed.entries_without_link
        state.succeeded(now, len(parsed.entries) + parsed.entries_without_link)
        logger.info(
            report.log_line(),
            extra={
                **_keys(feed),
                "new": report.new,
                "duplicate": report.duplicate,
                "photo_filtered": report.photo_filtered,
                "without_link": report.without_link,
                "bytes": len(fetched.content),
                "seconds": round(fetched.elapsed_seconds, 3),
            },
        )


def _keys(feed: Feed) -> dict[str, str]:
    return {"outlet": feed.source, "feed": feed.url, "category": feed.category}
