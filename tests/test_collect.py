"""The outlet's share of a round against the loopback feed server, PostgreSQL and moto, on a
fake clock: rounds are messages scheduled 30 minutes apart."""

from datetime import UTC, datetime, timedelta

import pytest

from newsdesk.aws.clients import dynamodb_client
from newsdesk.aws.state_table import StateTable
from newsdesk.collect.collector import CollectPolicy, OutletCollector
from newsdesk.core.breaker import BREAKER_CLOSED, BREAKER_OPEN
from newsdesk.core.errors import StoreError
from newsdesk.core.messages import OutletMessage
from newsdesk.core.report import (
    FEED_FAILED,
    FEED_NOT_DUE,
    FEED_NOT_MODIFIED,
    FEED_OK,
    FEED_SKIPPED,
    FEED_SKIPPED_OPEN,
)
from newsdesk.core.schedule import (
    STATUS_FAILED,
    STATUS_NOT_MODIFIED,
    STATUS_OK,
)
from newsdesk.core.settings import Settings
from newsdesk.core.sources import Feed, Outlet
from newsdesk.storage.articles import ArticleStore
from newsdesk.storage.database import Database
from newsdesk.urls import canonical_url
from newsdesk_local.feedserver import Route
from tests.conftest import rows, served_bytes

START = datetime(2026, 12, 1, tzinfo=UTC)
ROUND = timedelta(minutes=30)


def round_at(n: int) -> datetime:
    return START + n * ROUND


@pytest.fixture
def collector(database, aws_env):
    def make(database=database, clock=None, **settings):
        policy = CollectPolicy.from_settings(
            Settings(
                fetch_allow_private_networks=True,
                fetch_timeout_seconds=2,
                fetch_interval_seconds=0,
                **settings,
            )
        )
        states = StateTable(dynamodb_client(), "newsdesk-state")
        return OutletCollector(
            policy,
            ArticleStore(database),
            states,
            clock=clock or (lambda: START + timedelta(minutes=5)),
        )

    return make


def message(source, *feeds, at=START, ignore_schedule=False):
    outlet = Outlet(source, tuple(Feed(source, url, category) for url, category in feeds))
    return OutletMessage(outlet, at, ignore_schedule)


def run(collector, msg):
    """Collect ``msg`` five minutes after it was scheduled."""
    return collector(clock=lambda: msg.scheduled_at + timedelta(minutes=5)).collect(msg)


def state_of(source):
    return StateTable(dynamodb_client(), "newsdesk-state").outlet(source)


def articles(database):
    with database.transaction() as cursor:
        cursor.execute("SELECT origin_url, canonical_url FROM raw_article ORDER BY id")
        return cursor.fetchall()


def test_a_good_feed_is_stored_with_photos_filtered(collector, serve):
    url = serve("/good.xml", "good.xml")
    report = collector().collect(message("테스트통신", (url, "정치")))
    (feed,) = report.feeds
    assert (feed.status, feed.new, feed.duplicate, feed.photo_filtered) == (FEED_OK, 3, 0, 2)
    assert feed.entries_seen == 5
    assert feed.seed_line() == "Source: 테스트통신 | New: 3 | Skip: 0 | Total: 3"
    assert feed.log_line() == f"Source: 테스트통신 | New: 3 | Skip: 0 | Total: 3 | 정치 {url}"
    _, feeds = state_of("테스트통신")
    state = feeds[url]
    assert (state.last_status, state.entries_seen, state.consecutive_failures) == (STATUS_OK, 5, 0)
    assert state.last_success_at == state.last_attempt_at == START
    assert state.next_check_at == START + ROUND  # it published: due next round
    assert state.category == "정치"


def test_a_feeds_own_user_agent_is_sent_for_that_feed_only(collector, serve, feed_server):
    browser = "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0"
    plain, insistent = serve("/a.xml", "good.xml"), serve("/b.xml", "atom.xml")
    outlet = Outlet("A", (Feed("A", plain, "정치"), Feed("A", insistent, "경제", browser)))
    report = collector().collect(OutletMessage(outlet, START))
    assert [f.status for f in report.feeds] == [FEED_OK, FEED_OK]
    sent = {path: h[0]["User-Agent"] for path, h in feed_server.request_headers.items()}
    assert sent == {"/a.xml": Settings().user_agent, "/b.xml": browser}


def test_the_same_message_twice_writes_nothing_twice(collector, serve, feed_server, database):
    # GIVEN an on-demand message (every feed due) collected once
    url = serve("/good.xml", "good.xml")
    first = collector().collect(message("A", (url, "정치"), ignore_schedule=True))
    stored = rows(database)
    # WHEN it is delivered again, its body a byte longer so that it is parsed and stored again
    feed_server.add("/good.xml", Route(served_bytes("good.xml") + b"\n"))
    second = collector().collect(message("A", (url, "정치"), ignore_schedule=True))
    # THEN the second pass reached the store, and the store wrote nothing twice
    assert (first.counts()["new"], second.counts()["new"]) == (3, 0)
    assert second.counts()["duplicate_url"] == 3
    assert rows(database) == stored


# --- conditional GET ----------------------------------------------------------------------


def test_second_round_sends_validators_and_a_304_is_not_modified(
    collector, serve, feed_server, database
):
    url = serve(
        "/etag.xml",
        "good.xml",
        etag='"v1"',
        headers=(("Last-Modified", "Tue, 01 Dec 2026 00:00:00 GMT"),),
    )
    run(collector, message("A", (url, "정치")))
    # WHEN the next round fetches the feed again
    report = run(collector, message("A", (url, "정치"), at=round_at(1)))
    # THEN it asked conditionally, got a 304, parsed and stored nothing
    sent = feed_server.request_headers["/etag.xml"][-1]
    assert sent["If-None-Match"] == '"v1"'
    assert sent["If-Modified-Since"] == "Tue, 01 Dec 2026 00:00:00 GMT"
    assert report.feeds[0].status == FEED_NOT_MODIFIED
    assert report.counts()["feeds_not_modified"] == 1
    assert (report.counts()["new"], report.counts()["entries_seen"]) == (0, 0)
    _, feeds = state_of("A")
    assert feeds[url].last_status == STATUS_NOT_MODIFIED
    assert len(articles(database)) == 3


def test_a_304_resets_the_failure_count(collector, serve):
    url = serve("/x.xml", "good.xml", etag='"v1"')
    run(collector, message("A", (url, "정치")))
    serve("/x.xml", status=500, body=b"")
    run(collector, message("A", (url, "정치"), at=round_at(1)))
    assert state_of("A")[1][url].consecutive_failures == 1
    serve("/x.xml", "good.xml", etag='"v1"')
    report = run(collector, message("A", (url, "정치"), at=round_at(2)))
    assert report.feeds[0].status == FEED_NOT_MODIFIED
    assert state_of("A")[1][url].consecutive_failures == 0


def test_the_same_body_again_is_not_modified_and_not_parsed(collector, serve, feed_server):
    url = serve("/same.xml", "good.xml")  # no validators at all
    run(collector, message("A", (url, "정치")))
    report = run(collector, message("A", (url, "정치"), at=round_at(1)))
    assert report.feeds[0].status == FEED_NOT_MODIFIED
    assert report.counts()["entries_seen"] == 0
    assert "If-None-Match" not in feed_server.request_headers["/same.xml"][-1]


# --- the per-feed schedule ----------------------------------------------------------------


def test_an_unchanged_feed_is_checked_less_and_less_often(collector, serve, feed_server):
    url = serve("/quiet.xml", "good.xml", etag='"q"')
    checked = []
    for n in range(40):
        report = run(collector, message("A", (url, "정치"), at=round_at(n)))
        if report.feeds[0].status != FEED_NOT_DUE:
            checked.append(n)
    # every run while it publishes, then 1 h, 2 h, 4 h, and 6 h (the cap) apart
    assert checked == [0, 1, 3, 7, 15, 27, 39]
    assert feed_server.requests["/quiet.xml"] == len(checked)


def test_a_feed_that_publishes_again_is_due_every_run(collector, serve):
    url = serve("/busy.xml", "good.xml", etag='"1"')
    run(collector, message("A", (url, "정치")))
    run(collector, message("A", (url, "정치"), at=round_at(1)))  # 304
    assert state_of("A")[1][url].next_check_at == round_at(3)
    body = (
        b'<rss version="2.0"><channel><title>t</title><item><title>new</title>'
        b"<link>https://example.test/new</link></item></channel></rss>"
    )
    serve("/busy.xml", body=body, etag='"2"')
    report = run(collector, message("A", (url, "정치"), at=round_at(3)))
    assert report.counts()["new"] == 1
    assert state_of("A")[1][url].next_check_at == round_at(4)


@pytest.mark.parametrize(
    ("headers", "body_ttl", "expected_next"),
    [
        ((("Cache-Control", "max-age=7200"),), "", timedelta(hours=2)),
        ((), "<ttl>90</ttl>", timedelta(minutes=90)),
        ((("Cache-Control", "max-age=60"),), "", ROUND),  # a floor, not a hurry
    ],
)
def test_cache_lifetimes_set_a_floor(collector, serve, headers, body_ttl, expected_next):
    body = (
        f'<rss version="2.0"><channel><title>t</title>{body_ttl}<item><title>a</title>'
        "<link>https://example.test/a</link></item></channel></rss>"
    ).encode()
    url = serve("/c.xml", body=body, headers=headers)
    run(collector, message("A", (url, "정치")))
    assert state_of("A")[1][url].next_check_at == START + expected_next


@pytest.mark.parametrize(
    ("retry_after", "expected_next"),
    [("7200", timedelta(hours=2)), ("Tue, 01 Dec 2026 03:00:00 GMT", timedelta(hours=3))],
)
def test_retry_after_sets_a_floor_for_a_failing_feed(collector, serve, retry_after, expected_next):
    url = serve("/busy.xml", status=503, body=b"", headers=(("Retry-After", retry_after),))
    report = run(collector, message("A", (url, "정치")))
    assert report.feeds[0].failure_class == "http_5xx"
    assert state_of("A")[1][url].next_check_at == START + expected_next


def test_a_failing_feed_backs_off_but_is_never_disabled(collector, serve, feed_server):
    url = serve("/down.xml", status=500, body=b"")
    checked = [
        n
        for n in range(60)
        if run(collector, message("A", (url, "정치"), at=round_at(n))).feeds[0].status
        == FEED_FAILED
    ]
    assert checked == [0, 1, 3, 7, 15, 27, 39, 51]  # doubling to the 6 h cap, then every 6 h
    serve("/down.xml", "good.xml")
    report = run(collector, message("A", (url, "정치"), at=round_at(63)))
    assert report.feeds[0].status == FEED_OK
    assert state_of("A")[1][url].consecutive_failures == 0


# --- the outlet breaker, within a message and remembered ---------------------------------


def test_the_breaker_makes_exactly_two_requests_to_a_dead_outlet(collector, serve, feed_server):
    # GIVEN an outlet of six feeds whose server never answers
    urls = [serve(f"/dead/{n}.xml", mode="hang") for n in range(6)]
    # WHEN its message is collected
    report = collector().collect(message("프레시안", *[(u, "정치") for u in urls]))
    # THEN two feeds were tried, the other four skipped, and nothing raised
    assert [f.status for f in report.feeds] == [FEED_FAILED] * 2 + [FEED_SKIPPED] * 4
    assert [f.failure_class for f in report.feeds[:2]] == ["timeout", "timeout"]
    assert sum(feed_server.requests.values()) == 2
    counts = report.counts()
    assert (counts["feeds_attempted"], counts["feeds_failed"], counts["feeds_skipped"]) == (2, 2, 4)
    assert counts["failed_timeout"] == 2
    outlet, feeds = state_of("프레시안")
    assert set(feeds) == set(urls[:2])  # skipped feeds were not attempted
    assert all(s.last_status == STATUS_FAILED for s in feeds.values())
    breaker = outlet.breaker
    assert (breaker.state, breaker.trips, breaker.open_until) == (BREAKER_OPEN, 1, START + ROUND)


def test_failures_count_cumulatively_not_consecutively(collector, serve):
    bad = serve("/bad.xml", status=500, body=b"")
    good = serve("/good.xml", "good.xml")
    html = serve("/html", "not-a-feed.html", content_type="text/html")
    last = serve("/last.xml", "atom.xml")
    report = collector().collect(
        message("A", (bad, "정치"), (good, "경제"), (html, "사회"), (last, "국제"))
    )
    assert [f.status for f in report.feeds] == [FEED_FAILED, FEED_OK, FEED_FAILED, FEED_SKIPPED]
    assert [f.failure_class for f in report.feeds[:3]] == ["http_5xx", None, "not_a_feed"]


def test_a_tripped_outlet_cools_down_then_probes_one_feed(collector, serve, feed_server):
    urls = [serve(f"/o/{n}.xml", status=503, body=b"") for n in range(4)]
    feeds = [(u, "정치") for u in urls]
    run(collector, message("A", *feeds, ignore_schedule=True))  # trips: open 30 min
    # round 1: the cool-down is over, half-open: one feed is tried, fails, 1 h more
    report = run(collector, message("A", *feeds, at=round_at(1), ignore_schedule=True))
    assert [f.status for f in report.feeds] == [FEED_FAILED] + [FEED_SKIPPED] * 3
    breaker = state_of("A")[0].breaker
    assert (breaker.state, breaker.trips, breaker.open_until) == (BREAKER_OPEN, 2, round_at(3))
    # round 2: still open, nothing fetched
    before = sum(feed_server.requests.values())
    report = run(collector, message("A", *feeds, at=round_at(2), ignore_schedule=True))
    assert {f.status for f in report.feeds} == {FEED_SKIPPED_OPEN}
    assert report.counts()["feeds_skipped_open_breaker"] == 4
    assert sum(feed_server.requests.values()) == before
    # round 3: half-open again; the outlet has recovered: the probe closes it, the rest run
    for n in range(len(urls)):
        serve(f"/o/{n}.xml", "good.xml")
    report = run(collector, message("A", *feeds, at=round_at(3), ignore_schedule=True))
    assert [f.status for f in report.feeds] == [FEED_OK] * 4
    breaker = state_of("A")[0].breaker
    assert (breaker.state, breaker.trips) == (BREAKER_CLOSED, 0)


@pytest.mark.parametrize(
    ("trips", "cooldown"),
    [(1, ROUND), (2, 2 * ROUND), (3, 4 * ROUND), (4, 8 * ROUND), (5, 12 * ROUND), (9, 12 * ROUND)],
)
def test_the_cool_down_doubles_to_six_hours(trips, cooldown):
    from newsdesk.core.breaker import BreakerPolicy

    assert BreakerPolicy().cooldown_after(trips) == cooldown


# --- stale messages, failures, de-duplication ----------------------------------------------


def test_a_stale_message_is_dropped(collector, serve, feed_server):
    url = serve("/good.xml", "good.xml")
    late = collector(clock=lambda: START + timedelta(minutes=31))
    report = late.collect(message("A", (url, "정치")))
    assert report.stale
    assert report.counts()["messages_stale"] == 1
    assert feed_server.requests["/good.xml"] == 0


@pytest.mark.parametrize(
    ("route", "failure"),
    [
        ({"status": 404, "body": b"missing"}, "http_4xx"),
        ({"status": 429, "body": b""}, "http_4xx"),
        ({"file": "not-a-feed.html", "content_type": "text/html"}, "not_a_feed"),
        ({"body": b""}, "not_a_feed"),
        ({"body": b"x" * 2_000_000}, "too_large"),
        ({"file": "good.xml", "mode": "trickle", "interval": 0.5}, "timeout"),
    ],
)
def test_each_failure_is_recorded_with_its_class(collector, serve, route, failure):
    url = serve("/feed", **route)
    report = collector(fetch_max_bytes=1_000_000).collect(message("A", (url, "정치")))
    assert (report.feeds[0].status, report.feeds[0].failure_class) == (FEED_FAILED, failure)
    assert report.counts()[f"failed_{failure}"] == 1
    state = state_of("A")[1][url]
    assert state.last_status == STATUS_FAILED
    assert state.last_error


def test_a_refused_connection_is_a_connection_failure(collector):
    report = collector().collect(message("A", ("http://127.0.0.1:9/feed.xml", "정치")))
    assert report.feeds[0].failure_class == "connection"


def test_one_article_under_many_urls_is_stored_once(collector, serve, database):
    # GIVEN the same article in two category feeds, under five tracking and scheme variants,
    # and the red list's look-alikes that are different articles
    variants = [
        "https://news.example.test/view/1",
        "http://news.example.test/view/1?utm_source=rss&utm_medium=feed",
        "https://NEWS.example.test/view/1/#top",
        "https://news.example.test:443/view/1?fbclid=x",
        "http://news.example.test/view/1?gclid=1&mc_cid=2",
    ]
    apart = [
        "https://news.example.test/articleView.html?idxno=1",
        "https://news.example.test/articleView.html?idxno=2",
        "https://news.example.test/View/1",
    ]

    def feed(links):
        items = "".join(
            f"<item><title>기사 {n}</title><link>{link.replace('&', '&amp;')}</link></item>"
            for n, link in enumerate(links)
        )
        return f'<rss version="2.0"><channel><title>t</title>{items}</channel></rss>'.encode()

    first = serve("/politics.xml", body=feed(variants[:3] + apart))
    second = serve("/economy.xml", body=feed(variants[3:]))
    report = collector().collect(message("A", (first, "정치"), (second, "경제")))
    counts = report.counts()
    assert counts["new"] == 4
    assert (counts["duplicate_in_message"], counts["duplicate_url"]) == (4, 0)
    stored = articles(database)
    assert [canonical for _, canonical in stored] == [
        "https://news.example.test/view/1",
        "https://news.example.test/articleView.html?idxno=1",
        "https://news.example.test/articleView.html?idxno=2",
        "https://news.example.test/View/1",
    ]
    assert stored[0][0] == variants[0]  # origin_url keeps the link as published
    # AND a later round that meets a variant counts it as stored by URL
    again = serve("/later.xml", body=feed([variants[1]]))
    later = run(collector, message("A", (again, "정치"), at=round_at(1)))
    assert later.counts()["duplicate_url"] == 1


def test_a_cp949_feed_is_stored_readable(collector, serve, database):
    url = serve(
        "/cp949.xml",
        "cp949-labelled-euc-kr.xml",
        content_type="application/rss+xml; charset=euc-kr",
    )
    collector().collect(message("매일경제", (url, "경제")))
    with database.transaction() as cursor:
        cursor.execute("SELECT title FROM raw_article ORDER BY id")
        assert cursor.fetchall()[0] == ("드라마 '똠방각하' 리메이크 확정",)


def test_an_unreachable_database_raises_instead_of_counting_a_failed_feed(collector, serve):
    url = serve("/good.xml", "good.xml")
    down = Database(lambda: "postgresql://newsdesk@127.0.0.1:9/none")
    with pytest.raises(StoreError):
        collector(database=down).collect(message("A", (url, "정치")))


def test_relative_links_are_stored_against_the_feeds_final_url(collector, serve, database):
    body = (
        b'<rss version="2.0"><channel><title>t</title>'
        b"<item><title>a</title><link>news/1</link></item></channel></rss>"
    )
    redirect_to = serve("/feeds/all.xml", body=body)
    url = serve("/old.xml", status=301, headers=(("Location", redirect_to),))
    report = collector().collect(message("A", (url, "정치")))
    assert (report.counts()["new"], report.feeds[0].without_link) == (1, 0)
    # against the URL redirected to, not the one in the sources file
    link = redirect_to.removesuffix("all.xml") + "news/1"
    assert articles(database) == [(link, canonical_url(link))]
