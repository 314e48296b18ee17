"""The extraction stage (seed 001's third layer): one article queue message in, the page
fetched politely, its text extracted and judged, its copy key looked up, the outcome stored.

Politeness, per host (``newsdesk.core.hosts``), for every host a page's request reaches: the
redirects are followed here, one hop at a time, not by ``requests``, so each hop's host is
asked only as it allows. The article queue's message groups are hosts, so one extractor at a
time works on a page's first host; each request waits until ``EXTRACT_HOST_INTERVAL_SECONDS``
(or the host's robots.txt ``Crawl-delay``, up to 30 s) have passed since the host's previous
answer, whichever container had it; robots.txt is read once a day per host and its rules
(for the product name ``newsdesk``) honoured; a 429 or 503's ``Retry-After`` holds the host
(its articles wait in the outbox until then, as a feed's next check waits for it); failures of
the host's own (no answer, 5xx, 429) in a row open its breaker, and while it is open the
host's articles wait in the outbox.

Every page has an outcome with a reason (``newsdesk.extract.page``): a page that could not be
had is ``extract_error``, recorded, and tried again later (up to ``EXTRACT_MAX_ATTEMPTS``) when
the failure may pass. Only our own services' faults (PostgreSQL, DynamoDB, S3, SQS) raise, so
that the SQS record fails and is delivered again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from aws_lambda_powertools import Logger
from protego import Protego

from newsdesk.aws.raw import RawStore
from newsdesk.aws.state_table import StateTable
from newsdesk.collect.collector import failure_class
from newsdesk.collect.fetch import (
    MAX_REDIRECTS,
    FetchPolicy,
    exception_chain,
    fetch,
    loggable_url,
)
from newsdesk.collect.response import retry_after_seconds
from newsdesk.collect.urls import canonical_url
from newsdesk.core import similar
from newsdesk.core.bounds import fits_a_key
from newsdesk.core.breaker import BREAKER_OPEN, BreakerPolicy
from newsdesk.core.errors import (
    FeedError,
    FetchError,
    FetchTimeoutError,
    HTTPStatusError,
    StoreDataError,
)
from newsdesk.core.fetched import FetchResult
from newsdesk.core.hosts import ROBOTS_MISSING, ROBOTS_OK, ROBOTS_UNREACHABLE, HostState
from newsdesk.core.messages import ArticleMessage, page_host
from newsdesk.core.schedule import MAX_FLOOR
from newsdesk.core.settings import PRODUCT, Settings
from newsdesk.core.times import format_time, local_time, utc_now
from newsdesk.extract import page as judge
from newsdesk.extract.text import Extracted, decode_html, extract_text
from newsdesk.storage.extractions import (
    BY_CANONICAL_URL,
    BY_CONTENT_HASH,
    BY_NEAR_DUPLICATE,
    Copies,
    Extraction,
    ExtractionStore,
    PendingArticle,
    Retry,
)

logger = Logger(child=True)

EXTRACT_ERROR = "extract_error"
DEFERRED = "deferred"  # not fetched now: its host's breaker is open
REPEATED = "repeated"  # a message delivered again, or superseded by a newer revision
UNSTORABLE = "unstorable"  # an extract_error: PostgreSQL refused what the page gave
CANONICAL_TOO_LONG = "too_long"  # a canonical ignored: over a key's bound (core.bounds)
# what is read of a robots.txt, the rest ignored, as Google reads it (issue 39: a larger one was
# refused whole, and its host's pages waited on robots_unreachable for good)
ROBOTS_MAX_BYTES = 500 * 1024
# what the host's item keeps of its rules (DynamoDB's items hold 400 KB)
ROBOTS_KEPT_BYTES = 256 * 1024
# a robots.txt Crawl-delay is honoured up to this: a batch of the template's BatchSize (5)
# at it, each page at the 10 s fetch bound, fits the extractor's 300 s
MAX_CRAWL_DELAY = 30.0
# Failures that may pass: tried again later, and the host's own (its breaker counts them).
PASSING = ("timeout", "connection", "http_5xx", "http_429")
# Failures that are the page's own, by the fetch's kind: a chain of redirects past
# MAX_REDIRECTS (a loop, most often), a Location that is no http(s) URL. The host answered, so
# neither is tried again nor counted by its breaker (failure_class calls them "connection").
TOO_MANY_REDIRECTS = "too_many_redirects"
REDIRECT_NOT_HTTP = "redirect_not_http"
PAGE_FAULTS = {"redirects": TOO_MANY_REDIRECTS, REDIRECT_NOT_HTTP: REDIRECT_NOT_HTTP}


@dataclass(frozen=True)
class ExtractPolicy:
    fetch: FetchPolicy
    min_chars: int
    host_interval_seconds: float
    host_max_failures: int
    max_attempts: int
    retry_after: timedelta  # the first retry's delay, doubling per attempt
    breaker: BreakerPolicy
    retention: timedelta

    @classmethod
    def from_settings(cls, settings: Settings) -> ExtractPolicy:
        period = timedelta(seconds=settings.collect_period_seconds)
        fetch_policy = replace(
            FetchPolicy.from_settings(settings), max_bytes=settings.extract_max_bytes
        )
        return cls(
            fetch=fetch_policy,
            min_chars=settings.extract_min_chars or judge.DEFAULT_MIN_CHARS,
            host_interval_seconds=settings.extract_host_interval_seconds,
            host_max_failures=settings.extract_host_max_failures,
            max_attempts=settings.extract_max_attempts,
            retry_after=period,
            breaker=BreakerPolicy(cooldown=period),
            retention=timedelta(days=settings.article_text_retention_days),
        )


def status_words(status: str) -> str:
    """An outcome as a person reads it: ``extract_ok`` ``ok``, ``filtered_thin`` ``thin``,
    ``list_page`` ``list page``."""
    return status.removeprefix("extract_").removeprefix("filtered_").replace("_", " ")


@dataclass
class ArticleReport:
    """One message's outcome, as the handler returns it and the command line prints it."""

    article_id: int
    revision: int
    url: str
    host: str
    status: str  # an outcome of newsdesk.extract.page, extract_error, deferred or repeated
    reason: str | None = None
    chars: int = 0
    copy_of: int | None = None
    copy_reason: str | None = None  # why it is a copy, or why ``original_of`` are its copies
    original_of: list[int] = field(default_factory=list)  # stored before it, published after
    canonical_ignored: str | None = None
    source: str = ""
    title: str = ""
    retry_at: str | None = None
    host_breaker_tripped: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def log_fields(self) -> dict[str, Any]:
        """The fields that are set, for the log line: the URL by host and path only."""
        fields = {k: v for k, v in self.as_dict().items() if v not in (None, "", False)}
        fields.update(url=loggable_url(self.url))
        return fields

    def outcome(self, zone: tzinfo = UTC) -> str:
        """The outcome in words: ``ok 812 chars, copy of #3 (duplicate_by_content_hash)``."""
        status = status_words(self.status)
        if self.status == DEFERRED:
            until = local_time(self.retry_at, zone) if self.retry_at else "later"
            return f"waiting until {until} ({self.reason})"
        words = status
        if self.chars and self.status in ("extract_ok", "filtered_thin"):
            words += f" {self.chars} char{'' if self.chars == 1 else 's'}"
        if self.reason:
            words += f" ({self.reason})"
        if self.retry_at:
            words += f", tried again after {local_time(self.retry_at, zone)}"
        if self.copy_of is not None:
            words += f", copy of #{self.copy_of} ({self.copy_reason})"
        if self.original_of:
            ids = ", ".join(f"#{i}" for i in self.original_of)
            words += f", original of {ids} ({self.copy_reason}: published first)"
        return words

    def line(self, zone: tzinfo = UTC) -> str:
        return f"Article: {self.source} | #{self.article_id} {self.outcome(zone)} | {self.title}"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArticleReport:
        return cls(**data)


class PageExtractor:
    def __init__(
        self,
        policy: ExtractPolicy,
        store: ExtractionStore,
        states: StateTable,
        raw: RawStore | None = None,
        clock: Callable[[], datetime] = utc_now,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._policy = policy
        self._store = store
        self._states = states
        self._raw = raw
        self._clock = clock
        self._sleep = sleep
        # parsed robots.txt rules, per host and the time they were read, for the container
        self._robots: dict[tuple[str, datetime | None], Protego] = {}

    def extract(self, message: ArticleMessage) -> ArticleReport:
        report = ArticleReport(message.article_id, message.revision, message.url, message.host, "")
        article = self._store.pending(message.article_id, message.revision, self._clock())
        if article is None:
            report.status = REPEATED
            return report
        report.source, report.title = article.source, article.title
        # the page is the one stored for the article: a message only names which (its URL
        # could be anyone's, and an earlier release's message may name an older link)
        url = report.url = article.url
        report.host = page_host(url)
        hosts: dict[str, HostState] = {}
        fetched = self._follow(article, report, url, hosts)
        if fetched is not None:
            self._page(article, report, fetched)
        for host in hosts.values():
            self._states.save(host)
        return report

    # --- politeness ----------------------------------------------------------------------

    def _follow(
        self, article: PendingArticle, report: ArticleReport, url: str, hosts: dict[str, HostState]
    ) -> FetchResult | None:
        """The page at ``url``, its redirects followed one hop at a time, each hop asked only
        as its host allows: its breaker closed, its Retry-After passed, its robots.txt read and
        obeyed, its pacing kept (``hosts``: the hosts' records, to save). All the hops share
        one FETCH_TIMEOUT_SECONDS. None when the page was not had: the outcome is recorded."""
        spent = 0.0
        for _ in range(MAX_REDIRECTS + 1):
            name = page_host(url)
            if name not in hosts:
                hosts[name] = self._states.host(name)
            host = hosts[name]
            if not self._may_ask(article, report, host, url):
                return None
            timeout = self._policy.fetch.timeout_seconds
            if spent >= timeout:  # the earlier hops took the whole deadline
                self._fetch_failed(
                    article, report, host, FetchTimeoutError(f"timed out after {timeout:g} s")
                )
                return None
            policy = replace(self._policy.fetch, timeout_seconds=timeout - spent)
            started = time.monotonic()
            try:
                fetched = fetch(url, policy, follow_redirects=False)
                location = fetched.location
                if location is not None:
                    url = _next_hop(url, location)
            except FeedError as e:
                self._fetch_failed(article, report, host, e)
                return None
            finally:
                host.requested(self._clock())
                spent += time.monotonic() - started
            host.succeeded()  # it answered
            if location is None:
                return fetched
        error = FetchError(f"more than {MAX_REDIRECTS} redirects", kind="redirects")
        self._fetch_failed(article, report, host, error)
        return None

    def _may_ask(
        self, article: PendingArticle, report: ArticleReport, host: HostState, url: str
    ) -> bool:
        """Whether ``url`` may be asked of ``host`` now (after waiting for its pacing); when
        not, the article's outcome is recorded or it is deferred."""
        at = self._clock()
        if host.breaker.state_at(at) == BREAKER_OPEN:
            self._defer(article, report, host.breaker.open_until or at, "host_cooling")
            return False
        held = host.held_until(at)
        if held is not None:
            self._defer(article, report, held, "host_retry_after")
            return False
        rules = self._rules(host, url)
        if rules is None:  # robots.txt unreachable: nothing may be fetched for now
            self._host_failed(host, report, "robots.txt could not be read")
            self._retry_or_fail(article, report, "robots_unreachable", host.held_until(at))
            return False
        if not rules.can_fetch(url, PRODUCT):
            report.status, report.reason = EXTRACT_ERROR, "robots_disallowed"
            self._record(article, report)
            return False
        self._pace(host, rules)
        return True

    def _rules(self, host: HostState, url: str) -> Protego | None:
        """The host's robots.txt rules (read again when the kept copy is a day old, or, when it
        could not be read, a retry period); None while it cannot be read."""
        if not host.robots_fresh(self._clock(), self._policy.retry_after):
            self._read_robots(host, url)
        if host.robots_status == ROBOTS_UNREACHABLE:
            return None
        key = (host.host, host.robots_fetched_at)
        if key not in self._robots:
            self._robots[key] = Protego.parse(host.robots_txt or "")
        return self._robots[key]

    def _read_robots(self, host: HostState, url: str) -> None:
        robots_url = _robots_url(url)
        self._pace(host, None)
        policy = replace(self._policy.fetch, max_bytes=ROBOTS_MAX_BYTES, cut_at_cap=True)
        try:
            fetched = fetch(robots_url, policy)
        except HTTPStatusError as e:
            passing = e.status >= 500 or e.status == 429
            host.robots_status = ROBOTS_UNREACHABLE if passing else ROBOTS_MISSING
            host.robots_txt = None
            self._retry_after(host, e)
        except FeedError as e:
            # unanswered, or refused by the private-network guard (the page would be too)
            blocked = e.reason == "blocked_address"
            host.robots_status = ROBOTS_MISSING if blocked else ROBOTS_UNREACHABLE
            host.robots_txt = None
        else:
            host.robots_status = ROBOTS_OK
            host.robots_txt = robots_rules(fetched.content)
        finally:
            host.requested(self._clock())
        host.robots_fetched_at = self._clock()
        logger.info(
            "robots.txt read",
            extra={
                "host": host.host,
                "robots": host.robots_status,
                "url": loggable_url(robots_url),
            },
        )

    def _pace(self, host: HostState, rules: Protego | None) -> None:
        interval = self._policy.host_interval_seconds
        if rules is not None:
            delay = rules.crawl_delay(PRODUCT)
            if delay:
                interval = max(interval, min(float(delay), MAX_CRAWL_DELAY))
        if host.last_request_at is None:
            return
        wait = (host.last_request_at - self._clock()).total_seconds() + interval
        if wait > 0:
            self._sleep(wait)

    def _host_failed(self, host: HostState, report: ArticleReport, error: str) -> None:
        at = self._clock()
        if host.failed(at, error, self._policy.host_max_failures, self._policy.breaker):
            report.host_breaker_tripped = True
            logger.warning(
                "host breaker open: its pages wait",
                extra={
                    "host": host.host,
                    "breaker": BREAKER_OPEN,
                    "open_until": format_time(host.breaker.open_until or at),
                    "trips": host.breaker.trips,
                    "error": error,
                },
            )

    # --- outcomes ------------------------------------------------------------------------

    def _fetch_failed(
        self, article: PendingArticle, report: ArticleReport, host: HostState, error: FeedError
    ) -> None:
        kind = PAGE_FAULTS.get(error.kind) or failure_class(error)
        held = None
        if isinstance(error, HTTPStatusError):
            reason = f"http_{error.status}"
            kind = "http_429" if error.status == 429 else kind
            held = self._retry_after(host, error)
        else:
            reason = {"blocked": "blocked_address"}.get(kind, kind)
        logger.warning(
            "page failed",
            extra={
                "article_id": article.id,
                "url": loggable_url(article.url),
                "reason": reason,
                "error": str(error),
                "detail": error.detail or exception_chain(error),
            },
        )
        if kind in PASSING:
            self._host_failed(host, report, str(error))
            self._retry_or_fail(article, report, reason, held)
        else:
            host.succeeded()  # the host answered
            report.status, report.reason = EXTRACT_ERROR, reason
            self._record(article, report)

    def _retry_after(self, host: HostState, error: HTTPStatusError) -> datetime | None:
        """A 429 or 503's Retry-After, honoured as the feeds' is: the host is not asked before
        it (at most MAX_FLOOR ahead, as a feed's: a value past it is read as that). Its end."""
        if error.status not in (429, 503):
            return None
        at = self._clock()
        seconds = retry_after_seconds(error.retry_after, at)
        if seconds is None:
            return None
        until = at + timedelta(seconds=min(seconds, MAX_FLOOR.total_seconds()))
        host.hold(until)
        return until

    def _retry_or_fail(
        self,
        article: PendingArticle,
        report: ArticleReport,
        reason: str,
        not_before: datetime | None = None,
    ) -> None:
        """Tried again after the attempt's backoff (or the host's Retry-After, if later), or
        recorded as failed once EXTRACT_MAX_ATTEMPTS are spent."""
        report.status, report.reason = EXTRACT_ERROR, reason
        attempts = article.attempts + 1
        if attempts >= self._policy.max_attempts:
            self._record(article, report)
            return
        backoff = self._clock() + self._policy.retry_after * (2 ** (attempts - 1))
        not_before = max(backoff, not_before) if not_before else backoff
        report.retry_at = format_time(not_before)
        self._record(article, report, retry=Retry(not_before, attempts))

    def _defer(
        self, article: PendingArticle, report: ArticleReport, until: datetime, reason: str
    ) -> None:
        """Send the article again at ``until`` (not an attempt: its host was not asked)."""
        report.status, report.reason, report.retry_at = DEFERRED, reason, format_time(until)
        self._store.defer(article.id, article.revision, until)

    def _page(self, article: PendingArticle, report: ArticleReport, fetched: FetchResult) -> None:
        at = self._clock()
        raw_key = None
        if self._raw is not None:
            raw_key = self._raw.put_page(article.id, article.revision, fetched, at)
        self.judge(
            article,
            report,
            fetched.content,
            fetched.content_type,
            fetched.url,
            fetched.status,
            raw_key,
        )

    def judge(
        self,
        article: PendingArticle,
        report: ArticleReport,
        content: bytes,
        content_type: str | None,
        final_url: str,
        http_status: int,
        raw_key: str | None,
    ) -> None:
        """Extract, judge, find the copy key, and record: from the page's bytes (fetched now,
        or read back from the raw layer by `newsdesk reextract`)."""
        base = Extraction(
            article.id,
            article.revision,
            "",
            None,
            0,
            self._clock(),
            http_status=http_status,
            final_url=final_url,
            raw_key=raw_key,
            min_chars=article.min_chars,
        )
        if not judge.is_html(content_type, content):
            self._unreadable(base, report, "not_html")
            return
        try:
            page = decode_html(content)
            extracted = extract_text(page, final_url)
        except Exception:  # a page no one expected must not fail the record forever
            logger.exception("extraction failed", extra={"article_id": article.id})
            self._unreadable(base, report, "extract_failed")
            return
        min_chars = article.min_chars if article.min_chars is not None else self._policy.min_chars
        verdict = judge.judge_page(page, extracted, final_url, min_chars)
        page_key, ignored = _page_key(extracted.canonical_url, final_url)
        self._keep(article, report, _judged(base, verdict, extracted, page_key, ignored))
        report.canonical_ignored = ignored

    def _unreadable(self, base: Extraction, report: ArticleReport, reason: str) -> None:
        """A page that gives no text to judge (not HTML, or one the extractor failed on)."""
        report.status, report.reason = EXTRACT_ERROR, reason
        self._save(replace(base, status=EXTRACT_ERROR, reason=reason))

    def _keep(self, article: PendingArticle, report: ArticleReport, extraction: Extraction) -> None:
        """Record a judged page, an article's text with its copy keys and the copies they find
        (or those it is the original of: published before the copies already stored)."""
        sketch: list[int] = []
        copies = None
        text = extraction.text
        if extraction.status == judge.EXTRACT_OK and text:
            extraction = replace(extraction, content_hash=similar.content_hash(text))
            sketch = similar.sketch(text)
            copies = self._copies(article, extraction, sketch)
        extraction, adopted = self._save(extraction, sketch, copies=copies)
        report.status, report.reason = extraction.status, extraction.reason
        report.chars = extraction.chars
        report.copy_of, report.copy_reason = extraction.copy_of, extraction.copy_reason
        if adopted and copies is not None:  # published before the copies already stored
            report.original_of, report.copy_reason = adopted, copies.reason

    def _copies(
        self, article: PendingArticle, extraction: Extraction, sketch: list[int]
    ) -> Copies | None:
        """The other articles the first key that finds any finds: the page's own canonical
        URL (or final URL) another article's, the same text, a near-copy of the text."""
        if extraction.page_key and extraction.page_key != article.canonical_url:
            found = self._store.by_key(article.id, extraction.page_key)
            if found:
                return Copies(found, BY_CANONICAL_URL)
        if extraction.content_hash:
            found = self._store.by_hash(article.id, extraction.content_hash)
            if found:
                return Copies(found, BY_CONTENT_HASH)
        candidates = self._store.near_candidates(article.id, sketch, similar.MIN_SHARED)
        near = {
            other
            for other, values in candidates.items()
            if similar.similarity(sketch, values) >= similar.NEAR_DUPLICATE_THRESHOLD
        }
        return Copies(near, BY_NEAR_DUPLICATE) if near else None

    def _record(
        self, article: PendingArticle, report: ArticleReport, retry: Retry | None = None
    ) -> None:
        """An outcome without a page (an error): recorded, or recorded and tried again."""
        extraction = Extraction(
            article.id, article.revision, report.status, report.reason, 0, self._clock()
        )
        stored, _ = self._save(extraction, retry=retry)
        report.status, report.reason = stored.status, stored.reason

    def _save(
        self,
        extraction: Extraction,
        sketch: Sequence[int] = (),
        retry: Retry | None = None,
        copies: Copies | None = None,
    ) -> tuple[Extraction, list[int]]:
        """Record ``extraction``; one PostgreSQL refuses for its data (a limit, a value it
        cannot hold: the same every time) is recorded as ``extract_error``, ``unstorable``,
        its outbox row closed, rather than failing the message forever."""
        try:
            return self._store.record(extraction, sketch, retry=retry, copies=copies)
        except StoreDataError as e:
            logger.warning(
                "page unstorable",
                extra={"article_id": extraction.article_id, "reason": UNSTORABLE, "error": str(e)},
            )
            refused = Extraction(
                extraction.article_id,
                extraction.revision,
                EXTRACT_ERROR,
                UNSTORABLE,
                0,
                extraction.extracted_at,
                http_status=extraction.http_status,
                raw_key=extraction.raw_key,
                min_chars=extraction.min_chars,
            )
            return self._store.record(refused)


def _page_key(canonical: str | None, final_url: str) -> tuple[str | None, str | None]:
    """The page's key — its sane canonical, else its final URL, as a canonical URL; None when
    that is over a key's bound too (core.bounds: the article's own key stands) — and why the
    canonical was ignored, if it was."""
    kept, ignored = judge.sane_canonical(canonical, final_url)
    page_key = canonical_url(kept or final_url)
    if kept and not fits_a_key(page_key):  # its index cannot hold it
        ignored, page_key = CANONICAL_TOO_LONG, canonical_url(final_url)
    return (page_key if fits_a_key(page_key) else None), ignored


def keeps_text(status: str) -> bool:
    """Whether the extractor keeps the text of a page judged ``status``: an article's, or a
    short one's; of a wall or a list, nothing is worth keeping."""
    return status in (judge.EXTRACT_OK, judge.FILTERED_THIN)


def _judged(
    base: Extraction,
    verdict: judge.Verdict,
    extracted: Extracted,
    page_key: str | None,
    ignored: str | None,
) -> Extraction:
    """``base`` (what was fetched) with its verdict and what the page says of itself, and its
    text if the extractor keeps it (``keeps_text``)."""
    kept_text = keeps_text(verdict.status)
    return replace(
        base,
        status=verdict.status,
        reason=verdict.reason,
        chars=verdict.chars,
        text=(extracted.text or None) if kept_text else None,
        page_canonical=extracted.canonical_url,
        canonical_ignored=ignored,
        page_key=page_key,
        page_title=extracted.title,
        og_title=extracted.og_title,
        page_published=extracted.published,
        author=extracted.author,
        language=extracted.language,
    )


def _next_hop(url: str, location: str) -> str:
    """The URL a redirect's Location names, resolved against the hop that answered."""
    try:
        target = urljoin(url, location.strip())
        scheme = urlsplit(target).scheme
    except ValueError as e:  # "http://[oops": no URL at all
        raise FetchError("redirected to something that is not a URL", kind=REDIRECT_NOT_HTTP) from e
    if scheme not in ("http", "https"):
        raise FetchError("redirected to a URL that is not http or https", kind=REDIRECT_NOT_HTTP)
    return target


def robots_rules(content: bytes) -> str:
    """What the host's record keeps of a robots.txt: the lines protego reads, without the
    comments, blank lines and surrounding whitespace it skips, so that padding does not push
    rules past ROBOTS_KEPT_BYTES (then cut at a line's end: DynamoDB counts bytes). A body cut
    at ROBOTS_MAX_BYTES loses its last line, which the cut may have halved ("Disallow: /s" of
    "Disallow: /story/" would shut out more than the file does)."""
    if len(content) >= ROBOTS_MAX_BYTES:
        content = content[: max(content.rfind(b"\n"), content.rfind(b"\r")) + 1]
    lines = content.decode("utf-8", errors="replace").splitlines()
    rules = "\n".join(kept for line in lines if (kept := line.partition("#")[0].strip()))
    encoded = rules.encode()
    if len(encoded) <= ROBOTS_KEPT_BYTES:
        return rules
    return encoded[: max(encoded.rfind(b"\n", 0, ROBOTS_KEPT_BYTES + 1), 0)].decode()


def _robots_url(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/robots.txt", "", ""))
