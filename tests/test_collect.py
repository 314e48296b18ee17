"""The outlet's share of a round against the loopback feed server, PostgreSQL and moto."""

from datetime import UTC, datetime

import pytest

from newsdesk.aws import dynamodb_client
from newsdesk.collect import CollectPolicy, OutletCollector
from newsdesk.errors import StoreError
from newsdesk.messages import OutletMessage
from newsdesk.report import FEED_FAILED, FEED_OK, FEED_SKIPPED
from newsdesk.settings import Settings
from newsdesk.sources import Feed, Outlet
from newsdesk.state import STATUS_FAILED, STATUS_OK, StateTable
from newsdesk.store import ArticleStore, Database

SCHEDULED = datetime(2026, 12, 1, tzinfo=UTC)
CLOCK = datetime(2026, 12, 1, 0, 5, tzinfo=UTC)


@pytest.fixture
def collector(database, aws_env):
    def make(database=database, **settings):
        policy = CollectPolicy.from_settings(
            Settings(
                fetch_allow_private_networks=True,
                fetch_timeout_seconds=2,
                fetch_interval_seconds=0,
                **settings,
            )
        )
        states = StateTable(dynamodb_client(), aws_env.env["STATE_TABLE_NAME"])
        return OutletCollector(policy, ArticleStore(database), states, clock=lambda: CLOCK)

    return make


def message(source, *feeds):
    return OutletMessage(
        Outlet(source, tuple(Feed(source, url, category) for url, category in feeds)), SCHEDULED
    )


def states_of(source):
    return StateTable(dynamodb_client(), "newsdesk-state").feeds_of(source)


def test_a_good_feed_is_stored_with_photos_filtered(collector, serve, database):
    url = serve("/good.xml", "good.xml")
    report = collector().collect(message("테스트통신", (url, "정치")))
    (feed,) = report.feeds
    assert (feed.status, feed.new, feed.duplicate, feed.photo_filtered) == (FEED_OK, 3, 0, 2)
    assert feed.log_line() == "Source: 테스트통신 | New: 3 | Skip: 0 | Total: 3"
    state = states_of("테스트통신")[url]
    assert (state.last_status, state.entries_seen, state.consecutive_failures) == (STATUS_OK, 5, 0)
    assert state.last_success_at == state.last_attempt_at == "2026-12-01T00:05:00Z"
    assert state.category == "정치"


def test_the_same_message_twice_writes_nothing_twice(collector, serve, database):
    url = serve("/good.xml", "good.xml")
    first = collector().collect(message("A", (url, "정치")))
    second = collector().collect(message("A", (url, "정치")))
    assert first.counts()["new"] == 3
    assert (second.counts()["new"], second.counts()["duplicate"]) == (0, 3)
    with database.transaction() as cursor:
        cursor.execute("SELECT count(*) FROM raw_article")
        assert cursor.fetchone()[0] == 3


def test_the_breaker_makes_exactly_two_requests_to_a_dead_outlet(collector, serve, feed_server):
    # GIVEN an outlet of six feeds whose server never answers
    urls = [serve(f"/dead/{n}.xml", mode="hang") for n in range(6)]
    # WHEN its message is collected
    report = collector().collect(message("프레시안", *[(u, "정치") for u in urls]))
    # THEN two feeds were tried, the other four skipped, and nothing raised
    assert [f.status for f in report.feeds] == [FEED_FAILED] * 2 + [FEED_SKIPPED] * 4
    assert [f.reason for f in report.feeds[:2]] == ["timeout", "timeout"]
    assert sum(feed_server.requests.values()) == 2
    assert report.counts() == {
        "feeds_attempted": 2,
        "feeds_failed": 2,
        "feeds_skipped": 4,
        "new": 0,
        "duplicate": 0,
        "photo_filtered": 0,
        "total": 0,
    }
    states = states_of("프레시안")
    assert set(states) == set(urls[:2])  # skipped feeds were not attempted
    assert all(
        s.last_status == STATUS_FAILED and s.consecutive_failures == 1 for s in states.values()
    )


def test_failures_count_cumulatively_not_consecutively(collector, serve):
    bad = serve("/bad.xml", status=500, body=b"")
    good = serve("/good.xml", "good.xml")
    html = serve("/html", "not-a-feed.html", content_type="text/html")
    last = serve("/last.xml", "atom.xml")
    report = collector().collect(
        message("A", (bad, "정치"), (good, "경제"), (html, "사회"), (last, "국제"))
    )
    assert [f.status for f in report.feeds] == [FEED_FAILED, FEED_OK, FEED_FAILED, FEED_SKIPPED]
    assert [f.reason for f in report.feeds[:3]] == ["http_status", None, "not_a_feed"]


@pytest.mark.parametrize(
    ("route", "reason"),
    [
        ({"status": 404, "body": b"missing"}, "http_status"),
        ({"file": "not-a-feed.html", "content_type": "text/html"}, "not_a_feed"),
        ({"body": b""}, "not_a_feed"),
        ({"body": b"x" * 2_000_000}, "too_large"),
        ({"file": "good.xml", "mode": "trickle", "interval": 0.5}, "timeout"),
    ],
)
def test_each_failure_is_recorded_with_its_reason(collector, serve, route, reason):
    url = serve("/feed", **route)
    report = collector(fetch_max_bytes=1_000_000).collect(message("A", (url, "정치")))
    assert (report.feeds[0].status, report.feeds[0].reason) == (FEED_FAILED, reason)
    state = states_of("A")[url]
    assert state.last_status == STATUS_FAILED
    assert state.last_error


def test_consecutive_failures_grow_and_reset(collector, serve, feed_server):
    url = serve("/flaky.xml", status=503, body=b"")
    collector().collect(message("A", (url, "정치")))
    collector().collect(message("A", (url, "정치")))
    assert states_of("A")[url].consecutive_failures == 2
    serve("/flaky.xml", "good.xml")
    collector().collect(message("A", (url, "정치")))
    state = states_of("A")[url]
    assert (state.consecutive_failures, state.last_error, state.last_status) == (0, None, "ok")


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
