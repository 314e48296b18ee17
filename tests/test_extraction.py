"""The extraction stage end to end: the worker stores articles and queues them through the
outbox, the extractor (in-process, with the template's environment) fetches their pages from
the loopback server, and every outcome lands in PostgreSQL with its reason."""

from __future__ import annotations

import gzip
import itertools
import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from xml.sax.saxutils import escape

import pytest

from newsdesk.aws.article_queue import ArticleQueue
from newsdesk.aws.state_table import StateTable
from newsdesk.cluster.job import ClusterPolicy, run_clustering
from newsdesk.collect.urls import canonical_url
from newsdesk.core.entry import Entry
from newsdesk.core.messages import ArticleMessage
from newsdesk.core.times import parse_time, utc_now
from newsdesk.outbox.articles import relay
from newsdesk.storage.articles import Article, ArticleStore
from newsdesk.storage.extractions import (
    RESEND_AFTER,
    Copies,
    Extraction,
    ExtractionStore,
    OutboxRow,
)
from newsdesk.storage.issue_lists import list_issues
from newsdesk_local.feedserver import Route
from newsdesk_local.rounds import drain_extractor
from tests.conftest import (
    BODY,
    CONTACT,
    EXTRACT_ON,
    OTHER_BODIES,
    USER_AGENT,
    article_page,
    container,
    extract_all,
    invoke,
    worker_event,
)

ARTICLE_QUEUE = "ArticleQueue"


def rss(items: list[tuple[str, str]], published: datetime | None = None) -> bytes:
    """A feed of ``(title, link)`` items, published an hour ago."""
    at = format_datetime(published or utc_now() - timedelta(hours=1))
    entries = "".join(
        f"<item><title>{escape(t)}</title><link>{escape(u)}</link><guid>{escape(u)}</guid>"
        f"<pubDate>{at}</pubDate></item>"
        for t, u in items
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>t</title>'
        f"<link>http://127.0.0.1/</link><description>d</description>{entries}</channel></rss>"
    ).encode()


@pytest.fixture
def extractor(aws_env: Any) -> Callable[..., list[dict[str, Any]]]:
    """extractor(**env) drains the article queue and returns every article's report."""
    return lambda **env: extract_all(aws_env, **env)


def collect(
    serve: Callable[..., str], items: list[tuple[str, str]], path: str = "/f.xml", **env: str
) -> dict[str, Any]:
    """One worker invocation for a feed of ``items`` (on demand: fetched every time)."""
    event = worker_event([(serve(path, body=rss(items)), "정치")], ignore_schedule=True)
    return invoke("worker", event, **{**EXTRACT_ON, **env})


def extraction(database: Any, article_id: int) -> dict[str, Any]:
    with database.transaction() as cursor:
        cursor.execute(
            "SELECT status, reason, chars, copy_of, copy_reason, raw_key, text IS NOT NULL"
            " FROM article_extraction WHERE article_id = %s",
            (article_id,),
        )
        row = cursor.fetchone()
    keys = ("status", "reason", "chars", "copy_of", "copy_reason", "raw_key", "has_text")
    return dict(zip(keys, row, strict=True)) if row else {}


def outbox(database: Any) -> list[tuple[Any, ...]]:
    with database.transaction() as cursor:
        cursor.execute(
            "SELECT article_id, revision, attempts, sent_at IS NOT NULL FROM extraction_outbox"
            " ORDER BY article_id, revision"
        )
        return list(cursor.fetchall())


def article_ids(database: Any) -> dict[str, int]:
    with database.transaction() as cursor:
        cursor.execute("SELECT origin_url, id FROM raw_article")
        return dict(cursor.fetchall())


# --- the outbox ------------------------------------------------------------------------------


def test_new_articles_are_queued_in_the_insert_transaction_and_relayed(aws_env, database, serve):
    # GIVEN a feed of two articles on the loopback host
    urls = [
        serve(f"/view/{i}", body=article_page(f"기사 {i}"), content_type="text/html")
        for i in (1, 2)
    ]
    # WHEN the worker collects it
    response = collect(serve, [("국회 예산안 통과", urls[0]), ("여야 협상 결렬", urls[1])])
    # THEN both are stored, each with an outbox row, relayed (sent) to the article queue,
    # one message per article in the host's message group
    assert response["relayed"] == 2
    assert [(r[1], r[2], r[3]) for r in outbox(database)] == [(0, 0, True), (0, 0, True)]
    messages = aws_env.client("sqs").receive_message(
        QueueUrl=aws_env.queue_url(ARTICLE_QUEUE),
        MaxNumberOfMessages=10,
        AttributeNames=["MessageGroupId"],
    )["Messages"]
    assert {m["Attributes"]["MessageGroupId"] for m in messages} == {"127.0.0.1"}


def test_a_crash_between_the_commit_and_the_send_loses_no_article(
    aws_env, database, serve, extractor
):
    # GIVEN a worker whose article queue does not exist (the send fails after the commit)
    url = serve("/view/1", body=article_page("기사"), content_type="text/html")
    missing = aws_env.queue_url(ARTICLE_QUEUE).replace("articles.fifo", "gone.fifo")
    first = collect(serve, [("국회 예산안 통과", url)], ARTICLE_QUEUE_URL=missing)
    # THEN the article is stored and its row waits unsent
    assert (first["outlets"][0]["new"], first["relayed"]) == (1, 0)
    assert [r[3] for r in outbox(database)] == [False]
    # WHEN the message is delivered again (the worker's record counts it duplicate)
    again = collect(serve, [("국회 예산안 통과", url)])
    # THEN the redelivery's relay sends the waiting row, and the page is extracted
    assert (again["outlets"][0]["new"], again["relayed"]) == (0, 1)
    (report,) = extractor()
    assert report["status"] == "extract_ok"


def test_the_same_article_message_twice_records_it_once(aws_env, database, serve, extractor):
    url = serve("/view/1", body=article_page("기사"), content_type="text/html")
    collect(serve, [("국회 예산안 통과", url)])
    sqs = aws_env.client("sqs")
    body = sqs.receive_message(QueueUrl=aws_env.queue_url(ARTICLE_QUEUE))["Messages"][0]["Body"]
    sqs.purge_queue(QueueUrl=aws_env.queue_url(ARTICLE_QUEUE))
    event = {"Records": [_record(body, "1"), _record(body, "2")]}
    handler = container("extract", **EXTRACT_ON)
    first = handler(event)
    # THEN the first delivery extracted it, the second found it done, and the page was
    # fetched once
    assert [a["status"] for a in first["articles"]] == ["extract_ok", "repeated"]
    assert handler(event)["articles"][0]["status"] == "repeated"
    assert outbox(database) == []


def _record(body: str, message_id: str) -> dict[str, Any]:
    return {
        "messageId": message_id,
        "receiptHandle": message_id,
        "body": body,
        "attributes": {"MessageGroupId": "127.0.0.1", "ApproximateReceiveCount": "1"},
        "messageAttributes": {},
        "md5OfBody": "",
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:ap-northeast-2:123456789012:newsdesk-articles.fifo",
        "awsRegion": "ap-northeast-2",
    }


def test_extraction_off_queues_nothing(aws_env, database, serve):
    url = serve("/view/1", body=article_page("기사"), content_type="text/html")
    response = collect(serve, [("국회 예산안 통과", url)], EXTRACT_ENABLED="false")
    assert response["outlets"][0]["new"] == 1
    assert outbox(database) == []


# --- outcomes -----------------------------------------------------------------------------


def test_an_article_page_is_extracted_and_kept_in_the_raw_layer(
    aws_env, database, serve, extractor
):
    url = serve("/view/1", body=article_page("국회 예산안 통과"), content_type="text/html")
    collect(serve, [("국회 예산안 통과", url)])
    (report,) = extractor()
    stored = extraction(database, report["article_id"])
    assert stored["status"] == "extract_ok"
    assert stored["has_text"]
    assert stored["chars"] > 200
    assert stored["copy_of"] is None
    raw = aws_env.client("s3").get_object(
        Bucket=aws_env.function_env("ExtractorFunction")["RAW_BUCKET"], Key=stored["raw_key"]
    )
    assert gzip.decompress(raw["Body"].read()) == article_page("국회 예산안 통과")


@pytest.mark.parametrize(
    ("route", "status", "reason"),
    [
        (Route(b"%PDF-1.7 ...", content_type="application/pdf"), "extract_error", "not_html"),
        (Route(b"gone", 404, "text/html"), "extract_error", "http_404"),
        (Route(b"x" * 3_000_000, content_type="text/html"), "extract_error", "too_large"),
        (
            Route(
                article_page("짧은 기사", ("1일 오전 서울 여의도 국회에서 본회의가 열리고 있다.",)),
                content_type="text/html",
            ),
            "filtered_thin",
            None,
        ),
    ],
    ids=["not-html", "http-404", "too-large", "thin"],
)
def test_each_page_that_gives_no_article_has_its_outcome(
    aws_env, database, feed_server, serve, extractor, route, status, reason
):
    url = feed_server.add("/view/1", route)
    collect(serve, [("국회 예산안 통과", url)])
    (report,) = extractor()
    assert (report["status"], report["reason"]) == (status, reason)
    assert extraction(database, report["article_id"])["status"] == status
    assert outbox(database) == []  # a final outcome: not tried again


PAGES = Path(__file__).parent / "pages"


@pytest.mark.parametrize(
    ("name", "status", "reason"),
    [
        ("article_utf8.html", "extract_ok", None),
        ("article_euckr_meta.html", "extract_ok", None),
        ("js_only.html", "extract_empty", "js_rendered"),
        ("consent_wall.html", "extract_empty", "consent_wall"),
        ("paywall.html", "extract_empty", "paywall"),
        ("bot_challenge.html", "extract_empty", "bot_challenge"),
        ("photo_caption.html", "filtered_thin", None),
        ("section_politics.html", "list_page", "link_list"),
    ],
)
def test_each_kind_of_page_is_judged_through_the_extractor(
    aws_env, database, serve, extractor, name, status, reason
):
    url = serve("/view/20261201000001", body=(PAGES / name).read_bytes(), content_type="text/html")
    collect(serve, [("국회 예산안 통과", url)])
    (report,) = extractor()
    assert (report["status"], report["reason"]) == (status, reason)
    assert extraction(database, report["article_id"])["status"] == status


def test_an_article_that_redirects_to_the_home_page_is_a_list_page(
    aws_env, database, serve, extractor
):
    home = serve("/", body=(PAGES / "section_politics.html").read_bytes(), content_type="text/html")
    url = serve("/view/1", status=302, body=b"", headers=(("Location", home),))
    collect(serve, [("삭제된 기사", url)])
    (report,) = extractor()
    assert (report["status"], report["reason"]) == ("list_page", "site_root")


def test_an_outlet_that_turns_extraction_off_queues_nothing(aws_env, database, serve):
    url = serve("/view/1", body=article_page("기사"), content_type="text/html")
    body = worker_event([(serve("/f.xml", body=rss([("기사", url)])), "정치")])
    message = json.loads(body["Records"][0]["body"])
    message["feeds"][0]["extract"] = False
    body["Records"][0]["body"] = json.dumps(message, ensure_ascii=False)
    assert invoke("worker", body, **EXTRACT_ON)["outlets"][0]["new"] == 1
    assert outbox(database) == []


def test_robots_disallow_is_honoured_and_the_page_never_requested(
    aws_env, database, feed_server, serve, extractor
):
    serve("/robots.txt", body=b"User-agent: *\nDisallow: /view/\n", content_type="text/plain")
    url = serve("/view/1", body=article_page("기사"), content_type="text/html")
    allowed = serve(
        "/story/20261201000002", body=article_page("다른 기사"), content_type="text/html"
    )
    collect(serve, [("국회 예산안 통과", url), ("여야 협상 결렬", allowed)])
    reports = {r["url"]: r for r in extractor()}
    assert (reports[url]["status"], reports[url]["reason"]) == (
        "extract_error",
        "robots_disallowed",
    )
    assert reports[allowed]["status"] == "extract_ok"
    assert feed_server.requests["/view/1"] == 0
    assert feed_server.requests["/robots.txt"] == 1  # cached for the host


def other_host(url: str) -> str:
    """``url`` under another host name for the same loopback server: 127.1 is 127.0.0.1 in
    inet_aton's short form (no name is looked up), a host of its own for robots.txt, pacing
    and the breaker."""
    return url.replace("://127.0.0.1:", "://127.1:", 1)


def hosts_asked(feed_server: Any, path: str) -> list[str]:
    """The Host header of every request for ``path``, in order."""
    return [host for _, host, asked in feed_server.request_log if asked == path]


def test_robots_txt_is_read_and_obeyed_for_the_host_a_redirect_leads_to(
    aws_env, database, feed_server, serve, extractor
):
    # GIVEN robots.txt disallowing /moved/, and an allowed page that redirects there on
    # another host, and one that redirects to an allowed page there
    serve("/robots.txt", body=b"User-agent: *\nDisallow: /moved/\n", content_type="text/plain")
    moved = other_host(serve("/moved/1", body=article_page("기사"), content_type="text/html"))
    story = other_host(serve("/story/2", body=article_page("다른 기사"), content_type="text/html"))
    to_moved = serve("/view/1", status=301, headers=(("Location", moved),))
    to_story = serve("/view/2", status=302, headers=(("Location", story),))
    collect(serve, [("국회 예산안 통과", to_moved), ("여야 협상 결렬", to_story)])
    # WHEN their pages are extracted
    reports = {r["url"]: r for r in extractor()}
    # THEN the disallowed page on the host the redirect leads to was never asked for
    assert (reports[to_moved]["status"], reports[to_moved]["reason"]) == (
        "extract_error",
        "robots_disallowed",
    )
    assert feed_server.requests["/moved/1"] == 0
    # and the allowed one was had, its own host's robots.txt read once
    assert reports[to_story]["status"] == "extract_ok"
    port = urlsplit(to_story).port
    assert hosts_asked(feed_server, "/robots.txt") == [f"127.0.0.1:{port}", f"127.1:{port}"]
    with database.transaction() as cursor:
        cursor.execute("SELECT final_url FROM article_extraction WHERE status = 'extract_ok'")
        assert cursor.fetchone()[0] == story
    # and each host's record counts its own requests
    states = StateTable(aws_env.client("dynamodb"), "newsdesk-state")
    assert (states.host("127.1").robots_status, states.host("127.1").pages_fetched) == ("ok", 2)


def test_every_request_of_the_extractor_names_newsdesk_and_its_operator(
    aws_env, database, feed_server, serve, extractor
):
    # GIVEN an article whose link redirects to another host, each host with its robots.txt
    serve("/robots.txt", body=b"User-agent: *\nAllow: /\n", content_type="text/plain")
    story = other_host(serve("/story/1", body=article_page("기사"), content_type="text/html"))
    link = serve("/view/1", status=302, headers=(("Location", story),))
    collect(serve, [("국회 예산안 통과", link)])
    # WHEN its page is extracted
    (report,) = extractor()
    assert report["status"] == "extract_ok"
    # THEN every request, the feed's, both robots.txt, the redirect and the page, carried the
    # User-Agent and the From header that name the operator (issue 23, point 6)
    sent = {
        path: [(headers.get("User-Agent"), headers.get("From")) for headers in requests]
        for path, requests in feed_server.request_headers.items()
    }
    assert sent == {
        "/f.xml": [(USER_AGENT, CONTACT)],
        "/robots.txt": [(USER_AGENT, CONTACT)] * 2,
        "/view/1": [(USER_AGENT, CONTACT)],
        "/story/1": [(USER_AGENT, CONTACT)],
    }
    assert hosts_asked(feed_server, "/robots.txt")[1].startswith("127.1:")


def test_a_redirect_within_one_host_reads_its_robots_txt_once(
    aws_env, database, feed_server, serve, extractor
):
    story = serve("/story/1", body=article_page("기사"), content_type="text/html")
    link = serve("/view/1", status=301, headers=(("Location", "/story/1"),))
    collect(serve, [("국회 예산안 통과", link)])
    (report,) = extractor()
    assert report["status"] == "extract_ok"
    assert feed_server.requests["/robots.txt"] == 1
    assert (feed_server.requests["/view/1"], feed_server.requests["/story/1"]) == (1, 1)
    assert story.endswith("/story/1")


def test_a_page_redirecting_without_end_stops_after_five_hops(
    aws_env, database, feed_server, serve, extractor
):
    link = serve("/view/1", status=302, headers=(("Location", "/view/1"),))
    collect(serve, [("국회 예산안 통과", link)])
    (report,) = extractor()
    assert (report["status"], report["reason"]) == ("extract_error", "too_many_redirects")
    assert feed_server.requests["/view/1"] == 6  # the page and five redirects


# (where the redirect of page N leads, the reason it is recorded with)
PAGE_FAULTS = {
    "a redirect loop": ("/view/{n}", "too_many_redirects"),
    "a javascript: Location": ("javascript:alert({n})", "redirect_not_http"),
    "an ftp: Location": ("ftp://127.0.0.1/{n}", "redirect_not_http"),
    "a Location that is no URL": ("http://[oops/{n}", "redirect_not_http"),
}


@pytest.mark.parametrize("name", PAGE_FAULTS)
def test_a_redirect_that_is_the_pages_fault_is_recorded_at_once_not_held_against_its_host(
    name, aws_env, database, feed_server, serve, extractor
):
    # GIVEN three pages of a host whose redirects are the page's fault, as many as open the
    # host's breaker when they are the host's (EXTRACT_HOST_MAX_FAILURES), then a good page
    location, reason = PAGE_FAULTS[name]
    faulty = [
        serve(f"/view/{n}", status=302, headers=(("Location", location.format(n=n)),))
        for n in range(3)
    ]
    fine = serve("/story/9", body=article_page("기사"), content_type="text/html")
    collect(serve, [*((f"기사 {n}", url) for n, url in enumerate(faulty)), ("좋은 기사", fine)])
    # WHEN the pages are extracted
    reports = {r["url"]: r for r in extractor()}
    # THEN each faulty one is recorded with its own reason, at once: not tried again (before:
    # "connection", a passing failure, retried after 30 minutes; a bad URL raised ValueError)
    assert [(reports[u]["reason"], reports[u].get("retry_at")) for u in faulty] == [
        (reason, None)
    ] * 3
    assert outbox(database) == []  # every row closed
    # AND its host is not held to them: no failure counted, the breaker closed, the good page had
    assert reports[fine]["status"] == "extract_ok"
    host = StateTable(aws_env.client("dynamodb"), "newsdesk-state").host("127.0.0.1")
    assert (host.breaker.failures, host.breaker.state, host.breaker.trips) == (0, "closed", 0)


def test_the_hops_of_a_redirect_share_one_deadline(
    aws_env, database, feed_server, serve, extractor
):
    # GIVEN two hops of 0.3 s each and a deadline of 0.5 s for the page
    serve("/story/1", body=article_page("기사"), content_type="text/html", delay=0.3)
    link = serve("/view/1", status=301, headers=(("Location", "/story/1"),), delay=0.3)
    collect(serve, [("국회 예산안 통과", link)])
    # THEN the second hop has what the first left of it, and times out
    (report,) = extractor(FETCH_TIMEOUT_SECONDS="0.5")
    assert (report["status"], report["reason"]) == ("extract_error", "timeout")


@pytest.mark.parametrize("status", [429, 503])
def test_a_pages_retry_after_holds_its_host_and_the_article_waits_for_it(
    aws_env, database, feed_server, serve, extractor, status
):
    # GIVEN a host whose first page answers 429 (or 503) with Retry-After: two hours
    busy = serve(
        "/view/1", status=status, headers=(("Retry-After", "7200"),), content_type="text/html"
    )
    fine = serve("/view/2", body=article_page("기사"), content_type="text/html")
    collect(serve, [("국회 예산안 통과", busy), ("여야 협상 결렬", fine)])
    before = utc_now().replace(microsecond=0)  # times are kept to the second
    reports = {r["url"]: r for r in extractor()}
    # THEN the page is tried again no sooner than the host asked (not the 30-minute backoff)
    assert reports[busy]["reason"] == f"http_{status}"
    assert parse_time(reports[busy]["retry_at"]) >= before + timedelta(seconds=7200)
    # and the host's next page waits for it, unasked, its attempt not spent
    assert (reports[fine]["status"], reports[fine]["reason"]) == ("deferred", "host_retry_after")
    assert feed_server.requests["/view/2"] == 0
    host = StateTable(aws_env.client("dynamodb"), "newsdesk-state").host("127.0.0.1")
    assert host.retry_after_until is not None
    assert host.retry_after_until >= before + timedelta(seconds=7200)


def test_robots_txts_retry_after_holds_the_host(aws_env, database, feed_server, serve, extractor):
    serve("/robots.txt", status=503, headers=(("Retry-After", "3600"),), content_type="text/plain")
    first = serve("/view/1", body=article_page("기사"), content_type="text/html")
    second = serve("/view/2", body=article_page("다른 기사"), content_type="text/html")
    collect(serve, [("국회 예산안 통과", first), ("여야 협상 결렬", second)])
    before = utc_now().replace(microsecond=0)  # times are kept to the second
    reports = {r["url"]: r for r in extractor()}
    assert reports[first]["reason"] == "robots_unreachable"
    assert parse_time(reports[first]["retry_at"]) >= before + timedelta(seconds=3600)
    assert (reports[second]["status"], reports[second]["reason"]) == (
        "deferred",
        "host_retry_after",
    )
    assert feed_server.requests["/robots.txt"] == 1
    assert feed_server.requests["/view/1"] == feed_server.requests["/view/2"] == 0


def test_robots_groups_are_matched_against_the_product_name_not_the_contact(
    aws_env, database, feed_server, serve, extractor
):
    # GIVEN robots.txt whose only group shuts out "example", a word of the tests' contact
    # address (CONTACT, in the User-Agent): matched against the whole User-Agent it applies
    assert "example" in CONTACT
    serve("/robots.txt", body=b"User-agent: example\nDisallow: /\n", content_type="text/plain")
    story = serve("/story/1", body=article_page("기사"), content_type="text/html")
    collect(serve, [("국회 예산안 통과", story)])
    (report,) = extractor()
    # THEN no group names newsdesk, so the page may be fetched
    assert report["status"] == "extract_ok"
    assert feed_server.requests["/story/1"] == 1


def test_robots_groups_for_newsdesk_apply(aws_env, database, feed_server, serve, extractor):
    serve(
        "/robots.txt",
        body=b"User-agent: other\nDisallow: /\n\nUser-agent: newsdesk\nDisallow: /view/\n",
        content_type="text/plain",
    )
    story = serve("/story/1", body=article_page("기사"), content_type="text/html")
    view = serve("/view/2", body=article_page("다른 기사"), content_type="text/html")
    collect(serve, [("국회 예산안 통과", story), ("여야 협상 결렬", view)])
    reports = {r["url"]: r for r in extractor()}
    assert reports[story]["status"] == "extract_ok"
    assert reports[view]["reason"] == "robots_disallowed"
    assert feed_server.requests["/view/2"] == 0


def test_a_failing_host_opens_its_breaker_and_its_pages_wait(
    aws_env, database, feed_server, serve, extractor
):
    # GIVEN a host whose pages answer 503, three failures opening its breaker
    urls = [
        serve(f"/view/{i}", status=503, body=b"busy", content_type="text/html") for i in range(5)
    ]
    collect(serve, [(f"기사 {i}", u) for i, u in enumerate(urls)])
    reports = extractor(EXTRACT_HOST_MAX_FAILURES="3")
    # THEN three pages were tried (and wait for a retry), the rest wait for the host, unfetched
    statuses = [(r["status"], r["reason"]) for r in sorted(reports, key=lambda r: r["article_id"])]
    assert statuses == [("extract_error", "http_503")] * 3 + [("deferred", "host_cooling")] * 2
    assert sum(feed_server.requests[f"/view/{i}"] for i in range(5)) == 3
    host = StateTable(aws_env.client("dynamodb"), "newsdesk-state").host("127.0.0.1")
    assert (host.breaker.state, host.breaker.failures) == ("open", 3)
    # and every article's row is still in the outbox, unsent, for later
    assert [r[3] for r in outbox(database)] == [False] * 5


def test_requests_to_one_host_are_paced(aws_env, database, feed_server, serve, extractor):
    urls = [
        serve(f"/view/{i}", body=article_page(f"기사 {i}"), content_type="text/html")
        for i in range(3)
    ]
    collect(serve, [(f"기사 {i}", u) for i, u in enumerate(urls)])
    extractor(EXTRACT_HOST_INTERVAL_SECONDS="0.2")
    # THEN the server saw each page request at least the interval after the one before
    log = feed_server.request_log
    arrivals = [t for t, _, path in log if path.startswith(("/view/", "/robots"))]
    assert len(arrivals) == 4  # robots.txt, then the three pages
    assert all(b - a >= 0.2 for a, b in itertools.pairwise(arrivals))


# --- copies --------------------------------------------------------------------------------


def test_the_same_text_under_another_url_is_a_copy_by_content_hash(
    aws_env, database, serve, extractor
):
    first = serve("/view/1", body=article_page("국회 예산안 통과"), content_type="text/html")
    second = serve(
        "/other/7", body=article_page("[종합] 국회 예산안 통과"), content_type="text/html"
    )
    collect(serve, [("국회 예산안 통과", first)], path="/a.xml")
    extractor()
    collect(serve, [("예산안 국회 통과", second)], path="/b.xml")
    (report,) = extractor()
    ids = article_ids(database)
    assert (report["copy_of"], report["copy_reason"]) == (ids[first], "duplicate_by_content_hash")


def test_the_original_is_the_one_published_first_whichever_came_first(
    aws_env, database, serve, extractor
):
    # GIVEN a republished copy collected and extracted before the agency's own article
    now = utc_now()
    agency = serve("/view/1", body=article_page("국회 예산안 통과"), content_type="text/html")
    reprint = serve("/other/7", body=article_page("국회 예산안 통과"), content_type="text/html")
    body = rss([("국회 예산안 통과", reprint)], published=now - timedelta(minutes=20))
    invoke("worker", worker_event([(serve("/b.xml", body=body), "정치")]), **EXTRACT_ON)
    assert extractor()[0]["copy_of"] is None  # nothing to copy yet
    # WHEN the agency's article, published ten minutes before it, arrives
    body = rss([("국회 예산안 통과", agency)], published=now - timedelta(minutes=30))
    invoke("worker", worker_event([(serve("/a.xml", body=body), "정치")]), **EXTRACT_ON)
    (report,) = extractor()
    # THEN the agency's is the original and the reprint its copy
    ids = article_ids(database)
    assert report["copy_of"] is None
    assert extraction(database, ids[reprint])["copy_of"] == ids[agency]
    assert extraction(database, ids[reprint])["copy_reason"] == "duplicate_by_content_hash"


def test_an_agency_story_published_at_the_same_time_as_its_reprint_is_the_original(
    aws_env, database, serve, extractor, tmp_path
):
    # GIVEN sources.yaml naming 연합뉴스 a news agency (wire: true)
    sources = tmp_path / "sources.yaml"
    sources.write_text(
        "- {source: 연합뉴스, url: 'https://a.test/1', category: 정치, wire: true}\n"
        "- {source: 한국경제, url: 'https://b.test/1', category: 정치}\n",
        encoding="utf-8",
    )
    # and a reprint collected and extracted first, carrying the agency's published time
    at = utc_now() - timedelta(minutes=20)
    agency = serve("/view/1", body=article_page("국회 예산안 통과"), content_type="text/html")
    reprint = serve("/other/7", body=article_page("국회 예산안 통과"), content_type="text/html")
    event = worker_event([(serve("/b.xml", body=rss([("국회 예산안", reprint)], at)), "정치")])
    body = json.loads(event["Records"][0]["body"])
    event["Records"][0]["body"] = json.dumps({**body, "source": "한국경제"}, ensure_ascii=False)
    invoke("worker", event, **EXTRACT_ON)
    assert extractor(SOURCES_PATH=str(sources))[0]["copy_of"] is None
    # WHEN the agency's own article, stored after it, is extracted
    body = rss([("국회 예산안 통과", agency)], at)
    invoke("worker", worker_event([(serve("/a.xml", body=body), "정치")]), **EXTRACT_ON)
    (report,) = extractor(SOURCES_PATH=str(sources))
    # THEN the agency's is the original, though the reprint was stored first
    ids = article_ids(database)
    assert (report["copy_of"], report["original_of"]) == (None, [ids[reprint]])
    assert extraction(database, ids[reprint])["copy_of"] == ids[agency]


def test_a_page_whose_canonical_is_a_stored_article_is_a_copy_by_canonical_url(
    aws_env, database, serve, extractor
):
    first = serve("/view/1", body=article_page("국회 예산안 통과"), content_type="text/html")
    collect(serve, [("국회 예산안 통과", first)], path="/a.xml")
    extractor()
    other = ("다른 문단입니다. " * 40,)
    second = serve(
        "/m/view/1",
        body=article_page("국회 예산안 통과", other, canonical=first),
        content_type="text/html",
    )
    collect(serve, [("예산안 국회 통과", second)], path="/b.xml")
    (report,) = extractor()
    ids = article_ids(database)
    assert (report["copy_of"], report["copy_reason"]) == (ids[first], "duplicate_by_canonical_url")


def test_a_wire_copy_with_another_lead_is_a_near_duplicate(aws_env, database, serve, extractor):
    first = serve("/view/1", body=article_page("국회 예산안 통과"), content_type="text/html")
    # another lead sentence and dateline before the agency's text, its last paragraph dropped
    lead = "(서울=뉴스1) 김철수 기자 = 여야가 막판 협상 끝에 내년 나라 살림에 합의했다. "
    copied = (lead + BODY[0], BODY[1])
    second = serve(
        "/other/7", body=article_page("국회 예산안 통과", copied), content_type="text/html"
    )
    collect(serve, [("국회 예산안 통과", first)], path="/a.xml")
    extractor()
    collect(serve, [("예산안 국회 통과", second)], path="/b.xml")
    (report,) = extractor()
    ids = article_ids(database)
    assert (report["copy_of"], report["copy_reason"]) == (ids[first], "duplicate_by_near_duplicate")


# --- revisions and retention ---------------------------------------------------------------


def test_a_changed_title_is_a_revision_and_the_page_is_extracted_again(
    aws_env, database, feed_server, serve, extractor
):
    url = serve("/view/1", body=article_page("국회 예산안 통과"), content_type="text/html")
    collect(serve, [("[1보] 국회 예산안 통과", url)])
    extractor()
    feed_server.add(
        "/view/1", Route(article_page("[종합] 국회 예산안 통과"), content_type="text/html")
    )
    response = collect(serve, [("[종합] 국회 예산안 통과", url)])
    assert response["outlets"][0]["revised"] == 1
    (report,) = extractor()
    assert (report["revision"], report["status"]) == (1, "extract_ok")
    with database.transaction() as cursor:
        cursor.execute("SELECT title, revision, last_changed_at IS NOT NULL FROM raw_article")
        assert cursor.fetchall() == [("[종합] 국회 예산안 통과", 1, True)]
        cursor.execute("SELECT revision, title FROM article_revision")
        assert cursor.fetchall() == [(1, "[1보] 국회 예산안 통과")]
    assert feed_server.requests["/view/1"] == 2


def test_texts_past_their_retention_are_removed(aws_env, database, serve, extractor):
    url = serve("/view/1", body=article_page("국회 예산안 통과"), content_type="text/html")
    collect(serve, [("국회 예산안 통과", url)])
    (report,) = extractor()
    store = ExtractionStore(database)
    now = datetime.now(UTC)
    assert store.remove_text(now - timedelta(days=30), now) == 0
    assert store.remove_text(now + timedelta(seconds=1), now) == 1
    kept = extraction(database, report["article_id"])
    assert (kept["status"], kept["has_text"], kept["chars"] > 0) == ("extract_ok", False, True)


def test_one_host_at_a_time_across_extractor_containers(aws_env, database, feed_server, serve):
    # GIVEN three pages on each of two hosts (127.0.0.1 and localhost, one server)
    pages = []
    for n in range(3):
        pages.append(serve(f"/a/{n}", body=article_page(f"기사 {n}", (BODY, *OTHER_BODIES)[n])))
        url = serve(f"/b/{n}", body=article_page(f"기사 {n}", (BODY, *OTHER_BODIES)[n]))
        pages.append(url.replace("127.0.0.1", "localhost"))
    collect(serve, [(f"기사 {i}", url) for i, url in enumerate(pages)])
    # WHEN two extractor containers drain the article queue, a host's pages 0.3 s apart
    aws_env.env.update(EXTRACT_ON, EXTRACT_HOST_INTERVAL_SECONDS="0.3")
    reports, failed = drain_extractor(aws_env, concurrency=2)
    assert (len(reports), failed) == (6, [])
    # THEN each host saw its requests (robots.txt, then its pages) at least 0.3 s apart,
    # whichever container made them
    for host in ("127.0.0.1", "localhost"):
        log = feed_server.request_log
        arrivals = [t for t, h, path in log if h.split(":")[0] == host and path != "/f.xml"]
        assert len(arrivals) == 4, host
        assert all(b - a >= 0.3 for a, b in itertools.pairwise(arrivals)), host


# --- the outbox and the copy keys, against the review's cases ------------------------------


def test_a_message_read_before_the_relay_commits_is_extracted_not_dropped(aws_env, database, serve):
    # GIVEN an article queued (its row unsent), and a relay whose send delivers the message
    # to an extractor that reads it (and fetches the page) before the relay's transaction
    # commits: the extractor runs beside it, as in Lambda
    fetched = threading.Event()
    page = article_page("국회 예산안 통과")
    url = serve("/view/1", body=page, content_type="text/html", before=fetched.set)
    missing = aws_env.queue_url(ARTICLE_QUEUE).replace("articles.fifo", "gone.fifo")
    collect(serve, [("국회 예산안 통과", url)], ARTICLE_QUEUE_URL=missing)
    handler = container("extract", **EXTRACT_ON)
    reports: list[dict[str, Any]] = []
    extracting: list[threading.Thread] = []

    def send(rows: list[OutboxRow]) -> list[OutboxRow]:
        message = ArticleMessage(rows[0].article_id, rows[0].revision, rows[0].url, rows[0].sends)
        event = {"Records": [_record(message.to_json(), "early")]}
        thread = threading.Thread(target=lambda: reports.extend(handler(event)["articles"]))
        thread.start()
        extracting.append(thread)
        assert fetched.wait(timeout=30)  # it took the message as its own: the page is asked
        return rows

    ExtractionStore(database).relay(send, utc_now(), 10)
    extracting[0].join(timeout=60)
    # THEN it was extracted once the relay committed, and nothing waits in the outbox
    assert [r["status"] for r in reports] == ["extract_ok"]
    assert outbox(database) == []


def test_a_row_whose_message_was_lost_is_sent_again_under_a_new_id(aws_env, database, serve):
    url = serve("/view/1", body=article_page("국회 예산안 통과"), content_type="text/html")
    collect(serve, [("국회 예산안 통과", url)])
    sqs, queue = aws_env.client("sqs"), aws_env.queue_url(ARTICLE_QUEUE)
    sqs.purge_queue(QueueUrl=queue)  # the message is lost (or dead-lettered)
    store = ExtractionStore(database)
    queued = ArticleQueue(sqs, queue)
    assert relay(store, queued, utc_now()) == 0  # sent, and not yet overdue
    assert relay(store, queued, utc_now() + RESEND_AFTER + timedelta(minutes=1)) == 1
    (message,) = sqs.receive_message(QueueUrl=queue, AttributeNames=["All"])["Messages"]
    assert message["Attributes"]["MessageDeduplicationId"].endswith("-r0-s2")


def test_a_revision_while_extraction_is_off_drops_what_was_queued_before(
    aws_env, database, serve, extractor
):
    # GIVEN an article queued (its message in the queue), then revised while extraction is off
    url = serve("/view/1", body=article_page("국회 예산안 통과"), content_type="text/html")
    collect(serve, [("[1보] 국회 예산안 통과", url)])
    revised = collect(serve, [("[종합] 국회 예산안 통과", url)], EXTRACT_ENABLED="false")
    assert revised["outlets"][0]["revised"] == 1
    # THEN the earlier revision's row is gone, and its message, delivered, writes nothing
    assert outbox(database) == []
    assert [r["status"] for r in extractor()] == ["repeated"]
    assert extraction(database, 1) == {}


def stored_articles(database: Any, minutes_ago: list[int]) -> list[int]:
    """Articles published ``minutes_ago`` (each), stored in that order; their ids."""
    now = utc_now()
    store = ArticleStore(database)
    for n, ago in enumerate(minutes_ago):
        link = f"https://example.test/view/{n}"
        entry = Entry(f"기사 {n}", link, "", None, now - timedelta(minutes=ago))
        store.insert_articles("연합뉴스", "정치", [Article(entry, link)], now)
    return sorted(article_ids(database).values())


def ok(article_id: int, copies: set[int] | None = None) -> Any:
    extraction = Extraction(article_id, 0, "extract_ok", None, 500, utc_now())
    return extraction, (Copies(copies, "duplicate_by_content_hash") if copies else None)


def copy_of(database: Any) -> dict[int, int | None]:
    with database.transaction() as cursor:
        cursor.execute("SELECT article_id, copy_of FROM article_extraction")
        return dict(cursor.fetchall())


def test_copies_keep_one_original_when_the_original_turns_out_a_copy(database):
    # GIVEN Y published first, A, then B, a copy of A
    y, a, b = stored_articles(database, [30, 20, 10])
    store = ExtractionStore(database)
    for article, copies in ((y, None), (a, None), (b, {a})):
        extraction, found = ok(article, copies)
        store.record(extraction, copies=found)
    assert copy_of(database) == {y: None, a: None, b: a}
    # WHEN A's text (a revision) turns out a copy of Y
    extraction, found = ok(a, {y})
    store.record(extraction, copies=found)
    # THEN A and B are both Y's copies: no chain
    assert copy_of(database) == {y: None, a: y, b: y}


def stored_from(database: Any, articles: list[tuple[str, datetime]]) -> list[int]:
    """One article per ``(source, published)``, stored in that order; their ids."""
    store = ArticleStore(database)
    for n, (source, published) in enumerate(articles):
        link = f"https://example.test/{n}/view"
        entry = Entry(f"기사 {n}", link, "", None, published)
        store.insert_articles(source, "정치", [Article(entry, link)], utc_now())
    return sorted(article_ids(database).values())


def extracted_in_order(store: ExtractionStore, order: list[tuple[int, set[int] | None]]) -> None:
    """Each article's page extracted in turn, with the copies its key found."""
    for article, found in order:
        extraction, copies = ok(article, found)
        store.record(extraction, copies=copies)


WIRE = {"연합뉴스", "뉴시스", "뉴스1"}


@pytest.mark.parametrize("agency_first", [False, True], ids=["copy-first", "agency-first"])
def test_a_wire_story_republished_at_its_own_time_is_the_agencys_whichever_comes_first(
    database, agency_first
):
    # GIVEN a republisher's copy stored before the agency's story, both carrying the agency's
    # published time (a wire story republished with its timestamp)
    at = utc_now() - timedelta(hours=1)
    copy, original = stored_from(database, [("한국경제", at), ("연합뉴스", at)])
    store = ExtractionStore(database, WIRE)
    # WHEN their pages are extracted, in either order, the second found a copy of the first
    if agency_first:
        extracted_in_order(store, [(original, None), (copy, {original})])
    else:
        extracted_in_order(store, [(copy, None), (original, {copy})])
    # THEN the agency's article is the original, the same both ways
    assert copy_of(database) == {original: None, copy: original}


# One story in four articles: the agency's, a republisher's copy of it with the agency's
# published time (stored first), and two other outlets' own.
TIED_STORY = [
    ("한국경제", "수도권 첫 폭설 출근길 교통 혼잡"),
    ("연합뉴스", "수도권 첫 폭설 출근길 교통 혼잡"),
    ("매일경제", "수도권 첫 폭설 출근길 교통 혼잡 이어져"),
    ("서울신문", "수도권 첫 폭설로 출근길 교통 혼잡"),
]


def clustered_after(database: Any, agency_first: bool) -> tuple[list[Any], list[Any]]:
    """From an empty database: the tied story stored, its pages extracted (the copy's and the
    agency's in the order given, the second found a copy of the first), the cluster stage run;
    its issues (each member by outlet, with the outlet of the article it copies) and the
    issue_event rows (type, version), without ids."""
    with database.transaction() as cursor:
        cursor.execute("TRUNCATE raw_article, issue, category RESTART IDENTITY CASCADE")
    at = utc_now() - timedelta(hours=1)
    store = ArticleStore(database)
    for n, (source, title) in enumerate(TIED_STORY):
        link = f"https://example.test/{n}/view"
        store.insert_articles(source, "사회", [Article(Entry(title, link, "", None, at), link)], at)
    copy, agency, *others = sorted(article_ids(database).values())
    pair = [(agency, None), (copy, {agency})] if agency_first else [(copy, None), (agency, {copy})]
    extracted_in_order(ExtractionStore(database, WIRE), [*((o, None) for o in others), *pair])
    policy = ClusterPolicy(threshold=0.6, min_size=3, window_hours=24)
    run_clustering(database, policy, clock=utc_now)
    with database.transaction() as cursor:
        cursor.execute("SELECT id, source FROM raw_article")
        outlet = dict(cursor.fetchall())
    issues = [
        sorted(
            (outlet[a["id"]], a["copy_of"] and outlet[a["copy_of"]["id"]])
            for a in issue["articles"]
        )
        for issue in list_issues(database)
    ]
    with database.transaction() as cursor:
        cursor.execute("SELECT type, version FROM issue_event ORDER BY issue_id, version")
        events = cursor.fetchall()
    return issues, events


def test_the_tie_rule_gives_the_same_issues_and_events_whichever_page_comes_first(database):
    # GIVEN the tied story WHEN its pages are extracted in each order, then clustered
    copy_first = clustered_after(database, agency_first=False)
    agency_first = clustered_after(database, agency_first=True)
    # THEN one issue, the agency's article the original in it, and the same events both ways
    assert copy_first == (
        [
            [
                ("매일경제", None),
                ("서울신문", None),
                ("연합뉴스", None),
                ("한국경제", "연합뉴스"),
            ]
        ],
        [("IssueCreated", 1)],
    )
    assert agency_first == copy_first


@pytest.mark.parametrize("later_first", [False, True])
def test_a_tie_between_republishers_goes_to_the_one_stored_first(database, later_first):
    at = utc_now() - timedelta(hours=1)
    first, second = stored_from(database, [("한국경제", at), ("매일경제", at)])
    store = ExtractionStore(database, WIRE)
    if later_first:
        extracted_in_order(store, [(second, None), (first, {second})])
    else:
        extracted_in_order(store, [(first, None), (second, {first})])
    assert copy_of(database) == {first: None, second: first}


def test_published_first_still_wins_over_a_later_agency_story(database):
    # the tie rule decides ties only: a republisher's text published earlier stays the original
    now = utc_now()
    early, late = stored_from(
        database, [("한국경제", now - timedelta(hours=2)), ("연합뉴스", now - timedelta(hours=1))]
    )
    extracted_in_order(ExtractionStore(database, WIRE), [(late, None), (early, {late})])
    assert copy_of(database) == {early: None, late: early}


def test_an_original_arriving_late_takes_its_copys_issue(database):
    # GIVEN a reprint B, extracted first and already in an issue
    a, b = stored_articles(database, [20, 10])  # A published first, stored first too
    store = ExtractionStore(database)
    extraction, _ = ok(b)
    store.record(extraction)
    with database.transaction() as cursor:
        cursor.execute("INSERT INTO category (name) VALUES ('x') ON CONFLICT DO NOTHING")
        cursor.execute(
            "INSERT INTO issue (category_id, title, size) SELECT id, 't', 3 FROM category"
            " LIMIT 1 RETURNING id"
        )
        issue = cursor.fetchone()[0]
        cursor.execute("UPDATE raw_article SET issue_id = %s WHERE id = %s", (issue, b))
    # WHEN A, published before it, is found to be its original
    extraction, found = ok(a, {b})
    _, adopted = store.record(extraction, copies=found)
    # THEN B is A's copy and A is in B's issue
    assert (adopted, copy_of(database)) == ([b], {a: None, b: a})
    with database.transaction() as cursor:
        cursor.execute("SELECT issue_id FROM raw_article WHERE id = %s", (a,))
        assert cursor.fetchone()[0] == issue


@pytest.mark.parametrize(
    ("canonical", "ignored"),
    [("https://other-outlet.example/view/1", "foreign_host"), ("/", "site_root")],
)
def test_a_canonical_that_cannot_be_the_articles_is_ignored_and_said_why(
    aws_env, database, serve, extractor, canonical, ignored
):
    body = article_page("국회 예산안 통과", canonical=canonical)
    url = serve("/view/20261201000001", body=body, content_type="text/html")
    collect(serve, [("국회 예산안 통과", url)])
    (report,) = extractor()
    assert (report["status"], report["canonical_ignored"]) == ("extract_ok", ignored)
    with database.transaction() as cursor:
        cursor.execute("SELECT canonical_ignored, page_key FROM article_extraction")
        assert cursor.fetchone() == (ignored, canonical_url(url))  # keyed by its own URL


def test_a_revisions_page_that_fails_leaves_the_earlier_text(
    aws_env, database, feed_server, serve, extractor
):
    url = serve("/view/1", body=article_page("국회 예산안 통과"), content_type="text/html")
    collect(serve, [("[1보] 국회 예산안 통과", url)])
    (first,) = extractor()
    feed_server.add("/view/1", Route(b"busy", 503, "text/html"))
    collect(serve, [("[종합] 국회 예산안 통과", url)])
    (again,) = extractor()
    assert (again["status"], again["reason"]) == ("extract_error", "http_503")
    kept = extraction(database, first["article_id"])
    assert (kept["status"], kept["has_text"]) == ("extract_ok", True)
    with database.transaction() as cursor:
        cursor.execute("SELECT count(*) FROM article_sketch")
        assert cursor.fetchone()[0] > 0  # and its sketch, for the copies to come


def test_extraction_switched_off_puts_the_messages_back_for_later(
    aws_env, database, feed_server, serve, extractor
):
    url = serve("/view/1", body=article_page("국회 예산안 통과"), content_type="text/html")
    collect(serve, [("국회 예산안 통과", url)])
    # WHEN the extractor gets the message while extraction is off THEN nothing is fetched and
    # the row waits unsent
    assert extractor(EXTRACT_ENABLED="false") == []
    assert feed_server.requests["/view/1"] == 0
    assert [r[3] for r in outbox(database)] == [False]
    # AND once it is on again, the next relay sends it and the page is extracted
    assert (
        relay(
            ExtractionStore(database),
            ArticleQueue(aws_env.client("sqs"), aws_env.queue_url(ARTICLE_QUEUE)),
            utc_now(),
        )
        == 1
    )
    assert [r["status"] for r in extractor()] == ["extract_ok"]
