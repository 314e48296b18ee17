"""One outlet's share of a round: its due feeds in order, fetched (conditionally), parsed,
filtered, de-duplicated and stored, with the outlet's breaker (``core.breaker``: the feeds
failed in this message trip it, its cool-down skips the outlet) and each feed's schedule.
Feed failures are recorded and counted; store and state failures raise so that the SQS record
fails and is retried."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from aws_lambda_powertools import Logger

from newsdesk.aws.raw import RawStore
from newsdesk.aws.state_table import StateTable
from newsdesk.collect.fetch import FetchPolicy, exception_chain, fetch, loggable_url
from newsdesk.collect.parse import ParsedFeed, fits_a_key, parse_feed
from newsdesk.collect.photo import PhotoFilter
from newsdesk.collect.response import (
    body_hash,
    is_modified,
    max_age_seconds,
    retry_after_seconds,
    ttl_seconds,
    validators,
)
from newsdesk.collect.urls import canonical_url
from newsdesk.core.breaker import BREAKER_HALF_OPEN, BREAKER_OPEN, BreakerPolicy
from newsdesk.core.entry import Entry
from newsdesk.core.errors import (
    FeedError,
    FeedReadError,
    HTTPStatusError,
    MessageRefusedError,
    NewsdeskError,
)
from newsdesk.core.fetched import FetchResult
from newsdesk.core.messages import REFUSED_AHEAD, OutletMessage
from newsdesk.core.report import (
    FEED_FAILED,
    FEED_NOT_DUE,
    FEED_NOT_MODIFIED,
    FEED_OK,
    FeedReport,
    OutletReport,
)
from newsdesk.core.schedule import FeedState, OutletState, SchedulePolicy
from newsdesk.core.settings import Settings
from newsdesk.core.sources import Feed
from newsdesk.core.times import MAX_CLOCK_SKEW, ahead_of_clock, format_time, utc_now
from newsdesk.storage.articles import Article, ArticleStore, Outbox

logger = Logger(child=True)
REPLACEMENT_CHARACTER = "\ufffd"


@dataclass(frozen=True)
class EntryFilter:
    """What of a feed is not stored: photo news, and entries published longer ago than
    ``max_age`` (a newly added feed, or one republishing its archive, must not flood today's
    issues)."""

    photo: PhotoFilter
    max_age: timedelta
    extract: bool = False  # queue new and revised articles for extraction (EXTRACT_ENABLED)

    @classmethod
    def from_settings(cls, settings: Settings) -> EntryFilter:
        return cls(
            PhotoFilter(settings.photo_title_patterns),
            timedelta(hours=settings.entry_max_age_hours),
            extract=settings.extraction_queue is not None,
        )

    def outbox(self, feed: Feed) -> Outbox | None:
        """Where the feed's articles go for extraction, unless it is off (for all, or for the
        outlet: ``extract: false``)."""
        return Outbox(feed.extract_min_chars) if self.extract and feed.extract else None


@dataclass(frozen=True)
class CollectPolicy:
    fetch: FetchPolicy
    interval_seconds: float
    max_failures: int
    entries: EntryFilter
    schedule: SchedulePolicy
    breaker: BreakerPolicy
    max_message_age: timedelta

    @classmethod
    def from_settings(cls, settings: Settings) -> CollectPolicy:
        period = timedelta(seconds=settings.collect_period_seconds)
        return cls(
            fetch=FetchPolicy.from_settings(settings),
            interval_seconds=settings.fetch_interval_seconds,
            max_failures=settings.outlet_max_failures,
            entries=EntryFilter.from_settings(settings),
            schedule=SchedulePolicy(period=period),
            breaker=BreakerPolicy(cooldown=period),
            max_message_age=timedelta(seconds=settings.message_max_age_seconds),
        )


def failure_class(error: FeedError) -> str:
    if isinstance(error, HTTPStatusError):
        return "http_4xx" if error.status < 500 else "http_5xx"
    return {
        "timeout": "timeout",
        "too_large": "too_large",
        "not_a_feed": "not_a_feed",
        "blocked_address": "blocked",
        "parse_error": "parse_error",
    }.get(error.reason, "connection")


@contextlib.contextmanager
def reading_feed(feed: Feed) -> Iterator[None]:
    """Around code that only reads one feed (fetch, decode, parse): what raises there, but for
    newsdesk's own errors, becomes that feed's FeedReadError — a feedparser crash on one
    poison entry must not fail the outlet's record on every delivery."""
    try:
        yield
    except NewsdeskError:
        raise
    except Exception as e:
        logger.exception("feed failed unexpectedly", extra=_keys(feed))
        raise FeedReadError(
            f"could not be read: {type(e).__name__} (a bug: the log has the traceback)",
            detail=exception_chain(e),
        ) from e


class OutletCollector:
    def __init__(
        self,
        policy: CollectPolicy,
        articles: ArticleStore,
        states: StateTable,
        clock: Callable[[], datetime] = utc_now,
        sleep: Callable[[float], None] = time.sleep,
        raw: RawStore | None = None,
    ) -> None:
        self._policy = policy
        self._articles = articles
        self._states = states
        self._raw = raw
        self._clock = clock
        self._sleep = sleep

    def collect(self, message: OutletMessage) -> OutletReport:
        """The outlet's due feeds in order. Raises InfrastructureError (the record fails), or
        MessageRefusedError for a message dated ahead of the clock: read, it would schedule its
        feeds, and open its outlet's breaker, until then (nothing of it is read or written)."""
        ahead = ahead_of_clock(message.scheduled_at, self._clock())
        if ahead is not None:
            raise MessageRefusedError(
                f"scheduled {format_time(message.scheduled_at)}, ahead of the clock by more "
                f"than {int(MAX_CLOCK_SKEW.total_seconds())} s",
                REFUSED_AHEAD,
                scheduled_at=format_time(message.scheduled_at),
                ahead_seconds=int(ahead.total_seconds()),
            )
        report = OutletReport(message.outlet.name)
        if self._is_stale(message):
            report.stale = True
            return report
        outlet, feed_states = self._states.outlet(message.outlet.name)
        mode = outlet.breaker.state_at(message.scheduled_at)
        if mode == BREAKER_OPEN:
            self._skip_cooling(message, outlet, report)
            return report
        run = _Run(message, outlet, probing=mode == BREAKER_HALF_OPEN)
        for feed in message.outlet.feeds:
            feed_report = FeedReport(feed.source, feed.category, feed.url)
            report.feeds.append(feed_report)
            self._visit(feed, feed_states.get(feed.url), feed_report, run, report)
        return report

    def _is_stale(self, message: OutletMessage) -> bool:
        age = self._clock() - message.scheduled_at
        if age <= self._policy.max_message_age:
            return False
        # The next scheduled round covers what this one would have fetched.
        logger.warning(
            "stale message dropped",
            extra={"outlet": message.outlet.name, "age_seconds": int(age.total_seconds())},
        )
        return True

    def _skip_cooling(
        self, message: OutletMessage, outlet: OutletState, report: OutletReport
    ) -> None:
        logger.info(
            "outlet skipped: breaker open",
            extra={
                "outlet": outlet.source,
                "breaker": BREAKER_OPEN,
                "open_until": format_time(outlet.breaker.open_until or message.scheduled_at),
            },
        )
        report.cooling_down(
            [(f.category, f.url) for f in message.outlet.feeds],
            format_time(outlet.breaker.open_until or message.scheduled_at),
            outlet.breaker.trips,
        )

    def _visit(
        self,
        feed: Feed,
        state: FeedState | None,
        feed_report: FeedReport,
        run: _Run,
        report: OutletReport,
    ) -> None:
        """One feed of the message: skipped, not due, or collected and its state saved."""
        at = run.message.scheduled_at
        if run.outlet.breaker.state_at(at) == BREAKER_OPEN:  # it tripped in this message
            logger.info("feed skipped: outlet breaker open", extra=_keys(feed))
            return
        state = state or FeedState(feed.source, feed.url)
        if not (run.message.ignore_schedule or state.is_due(at)):
            feed_report.status = FEED_NOT_DUE
            feed_report.next_check_at = format_time(state.next_check_at or at)
            return
        if run.requested:
            self._sleep(self._policy.interval_seconds)  # be gentle with one outlet's server
        run.requested = True
        ok = self._collect_feed(feed, state, feed_report, run)
        self._states.save(state)
        self._after_feed(ok, run, report)

    def _after_feed(self, ok: bool, run: _Run, report: OutletReport) -> None:
        """A feed that worked closes a half-open breaker (and otherwise leaves the count: the
        message's failures are counted cumulatively); one that failed counts, and may trip it."""
        outlet, probing = run.outlet, run.probing
        run.probing = False
        if ok and probing:
            outlet.breaker.succeeded()
            logger.info(
                "outlet breaker closed after a half-open probe", extra={"outlet": outlet.source}
            )
            self._states.save(outlet)
        elif not ok:
            breaker, at = outlet.breaker, run.message.scheduled_at
            if breaker.failed(at, self._policy.max_failures, self._policy.breaker):
                self._trip(run, report, probing)

    def _trip(self, run: _Run, report: OutletReport, probing: bool) -> None:
        at, outlet, breaker = run.message.scheduled_at, run.outlet, run.outlet.breaker
        report.breaker_tripped = True
        report.open_until, report.trips = format_time(breaker.open_until or at), breaker.trips
        logger.warning(
            "half-open probe failed; outlet breaker re-opened"
            if probing
            else "outlet breaker open: skipping the outlet's remaining feeds",
            extra={
                "outlet": outlet.source,
                "breaker": BREAKER_OPEN,  # every line of an open breaker has it (a rule counts)
                # a failed probe counts as the whole allowance
                "failures": max(breaker.failures, self._policy.max_failures),
                "open_until": format_time(breaker.open_until or at),
                "trips": breaker.trips,
            },
        )
        self._states.save(outlet)

    def _collect_feed(self, feed: Feed, state: FeedState, report: FeedReport, run: _Run) -> bool:
        """Fetch, parse and store one feed; False when it failed (recorded in ``state``)."""
        at = run.message.scheduled_at
        state.attempted(at, feed.category)
        started = time.monotonic()
        try:
            with reading_feed(feed):
                policy = self._policy.fetch.with_user_agent(feed.user_agent)
                fetched = fetch(feed.url, policy, state.etag, state.last_modified)
            report.bytes_received = fetched.wire_bytes
            content_hash = None if fetched.not_modified else body_hash(fetched.content)
            if not is_modified(fetched.status, content_hash, state.body_hash):
                state.not_modified(at, self._policy.schedule, _cache_floor(fetched))
                report.status = FEED_NOT_MODIFIED
                logger.info(
                    "feed not modified",
                    extra={
                        **_keys(feed),
                        "status": fetched.status,
                        "seconds": round(fetched.elapsed_seconds, 3),
                    },
                )
                return True
            if self._raw is not None:  # kept before parsing: a body that is no feed explains
                # and, outside reading_feed, a raw-layer fault fails the record
                _, report.raw_stored = self._raw.put(feed, fetched, self._clock())
            with reading_feed(feed):
                parsed = parse_feed(
                    fetched.content, fetched.content_type, fetched.url, headers=fetched.headers
                )
        except FeedError as e:
            self._feed_failed(feed, state, report, at, e, time.monotonic() - started)
            return False
        store_entries(
            parsed, feed, report, run.seen, self._articles, self._policy.entries, self._clock()
        )
        self._feed_stored(feed, state, report, at, fetched, parsed, content_hash)
        return True

    def _feed_failed(
        self,
        feed: Feed,
        state: FeedState,
        report: FeedReport,
        at: datetime,
        error: FeedError,
        seconds: float,
    ) -> None:
        floor = 0.0
        if isinstance(error, HTTPStatusError) and error.status in (429, 503):
            # relative to the schedule's time, as every interval here is
            floor = retry_after_seconds(error.retry_after, at) or 0.0
        report.status, report.error, report.reason = FEED_FAILED, str(error), error.reason
        report.failure_class = failure_class(error)
        state.failed(at, str(error), self._policy.schedule, floor, report.failure_class)
        logger.warning(
            "feed failed",
            extra={
                **_keys(feed),
                "reason": error.reason,
                "failure_class": report.failure_class,
                "kind": error.kind,
                "error": str(error),
                # the whole story: the exception chain the short error leaves out
                "detail": error.detail or exception_chain(error),
                "seconds": round(seconds, 3),  # until it failed: a timeout's is the deadline
            },
        )

    def _feed_stored(
        self,
        feed: Feed,
        state: FeedState,
        report: FeedReport,
        at: datetime,
        fetched: FetchResult,
        parsed: ParsedFeed,
        content_hash: str | None,
    ) -> None:
        etag, last_modified = validators(fetched.headers)
        state.succeeded(
            at,
            self._policy.schedule,
            published=report.new > 0,
            entries_seen=report.entries_seen,
            floor_seconds=max(_cache_floor(fetched), ttl_seconds(parsed.ttl) or 0.0),
            etag=etag,
            last_modified=last_modified,
            body_hash=content_hash,
        )
        report.status = FEED_OK
        logger.info(
            report.seed_line(),
            extra={
                **_keys(feed),
                **{name: getattr(report, name) for name in _LOGGED_COUNTS},
                "bytes": fetched.wire_bytes,
                "seconds": round(fetched.elapsed_seconds, 3),
            },
        )


_LOGGED_COUNTS = (
    "new",
    "duplicate",
    "duplicate_in_message",
    "duplicate_url",
    "duplicate_guid",
    "revised",
    "photo_filtered",
    "without_link",
    "too_old",
    "undated",
    "with_replacement_char",
    "truncated",
    "unstorable",
    "references_replaced",
)


def store_entries(
    parsed: ParsedFeed,
    feed: Feed,
    report: FeedReport,
    seen: set[str],
    articles: ArticleStore,
    entry_filter: EntryFilter,
    seen_at: datetime,
    fetched_at: datetime | None = None,
    revise: bool = True,
) -> None:
    """Drop entries too old (at ``fetched_at``, by default ``seen_at``) and photo news, drop
    what ``seen`` (this pass) has already met, store the rest (revising what changed, unless
    ``revise`` is false: bodies parsed again are older than what is stored), and count all of
    it in ``report``."""
    report.entries_seen = len(parsed.entries) + parsed.entries_without_link
    report.without_link = parsed.entries_without_link  # or without one that can be stored
    report.references_replaced = parsed.references_replaced
    oldest = (fetched_at or seen_at) - entry_filter.max_age
    fresh = [
        article
        for entry in parsed.entries
        if (article := _to_store(entry, report, seen, entry_filter, oldest)) is not None
    ]
    stored = articles.insert_articles(
        feed.source, feed.category, fresh, seen_at, entry_filter.outbox(feed), revise
    )
    report.new, report.revised = stored.inserted, stored.revised
    report.truncated, report.unstorable = stored.truncated, stored.unstorable
    report.duplicate_url, report.duplicate_guid = stored.duplicate_url, stored.duplicate_guid


def _to_store(
    entry: Entry, report: FeedReport, seen: set[str], entry_filter: EntryFilter, oldest: datetime
) -> Article | None:
    """``entry`` as an article to store, or None when it is left out (and counted in
    ``report``): published before ``oldest``, photo news, a link too long to index, or a link
    this pass has met (``seen``, which it joins)."""
    if REPLACEMENT_CHARACTER in entry.title or REPLACEMENT_CHARACTER in entry.summary:
        report.with_replacement_char += 1
    if entry.published_at is None:
        report.undated += 1
    elif entry.published_at < oldest:
        report.too_old += 1
        return None
    if entry_filter.photo.is_photo(entry.title):
        report.photo_filtered += 1
        return None
    canonical = canonical_url(entry.link)
    if not fits_a_key(canonical):  # percent-encoding made it too long to index
        report.without_link += 1
        return None
    if canonical in seen:  # in another feed of this outlet, or twice in this one
        report.duplicate_in_message += 1
        return None
    seen.add(canonical)
    return Article(entry, canonical)


@dataclass
class _Run:
    """What one message's pass keeps between feeds."""

    message: OutletMessage
    outlet: OutletState  # its breaker counts the message's failed feeds
    probing: bool  # the first feed asked is a half-open breaker's probe
    requested: bool = False

    def __post_init__(self) -> None:
        self.seen: set[str] = set()


def _cache_floor(fetched: FetchResult) -> float:
    return max_age_seconds(fetched.headers.get("Cache-Control", "")) or 0.0


def _keys(feed: Feed) -> dict[str, str]:
    return {"outlet": feed.source, "feed": loggable_url(feed.url), "category": feed.category}
