"""The records' transitions, table-driven, on times alone (no network, no sleeps)."""

from datetime import UTC, datetime, timedelta

import pytest

from newsdesk.aws.state_table import from_item, to_item
from newsdesk.core.breaker import BREAKER_CLOSED, BREAKER_HALF_OPEN, BREAKER_OPEN, BreakerPolicy
from newsdesk.core.hosts import HostState
from newsdesk.core.schedule import FeedState, OutletState, SchedulePolicy

T0 = datetime(2026, 12, 1, tzinfo=UTC)
H = timedelta(hours=1)


@pytest.mark.parametrize(
    ("streak", "floor", "interval"),
    [
        (0, 0, H / 2),
        (1, 0, H),
        (2, 0, 2 * H),
        (3, 0, 4 * H),
        (4, 0, 6 * H),
        (40, 0, 6 * H),
        (0, 7200, 2 * H),
        (4, 36000, 10 * H),
    ],  # a floor may exceed the cap: the server says so
)
def test_interval_doubles_to_the_cap_with_a_floor(streak, floor, interval):
    assert SchedulePolicy().interval(streak, floor) == interval


@pytest.mark.parametrize(
    ("next_check", "at", "due"),
    [(None, T0, True), (T0, T0, True), (T0 + H, T0, False), (T0 - H, T0, True)],
)
def test_due(next_check, at, due):
    assert FeedState("A", "u", next_check_at=next_check).is_due(at) is due


def test_transitions_of_a_feed():
    policy, state = SchedulePolicy(), FeedState("A", "u")
    state.succeeded(T0, policy, published=True, entries_seen=5, etag='"1"')
    assert (state.next_check_at, state.etag, state.last_changed_at) == (T0 + H / 2, '"1"', T0)
    state.not_modified(T0 + H / 2, policy)
    assert (state.unchanged_checks, state.next_check_at) == (1, T0 + H / 2 + H)
    state.failed(T0 + 2 * H, "HTTP 500", policy)
    state.failed(T0 + 3 * H, "HTTP 500", policy)
    assert (state.consecutive_failures, state.next_check_at) == (2, T0 + 4 * H)
    assert state.etag == '"1"'  # validators survive failures
    state.not_modified(T0 + 4 * H, policy)
    assert (state.consecutive_failures, state.last_error) == (0, None)


def test_round_trip_through_dynamodb_attributes():
    state = FeedState(
        "연합뉴스",
        "https://n.test/rss",
        "정치",
        next_check_at=T0,
        consecutive_failures=2,
        etag='W/"x"',
    )
    assert from_item(FeedState, to_item(state)) == state
    outlet = OutletState("연합뉴스")
    outlet.breaker.tripped(T0, BreakerPolicy())
    assert from_item(OutletState, to_item(outlet)) == outlet


@pytest.mark.parametrize(
    ("trips_before", "at", "mode"),
    [
        (0, T0, BREAKER_CLOSED),
        (1, T0 + H / 4, BREAKER_OPEN),
        (1, T0 + H / 2, BREAKER_HALF_OPEN),
        (2, T0 + H / 2, BREAKER_OPEN),
        (2, T0 + H, BREAKER_HALF_OPEN),
    ],
)
def test_breaker_states(trips_before, at, mode):
    breaker = OutletState("A").breaker
    for _ in range(trips_before):
        breaker.tripped(T0, BreakerPolicy())
    assert breaker.state_at(at) == mode
    breaker.closed()
    assert (breaker.state_at(at), breaker.trips) == (BREAKER_CLOSED, 0)


def test_a_host_fails_until_a_page_comes_back_and_its_breaker_closes():
    at = datetime(2026, 12, 1, tzinfo=UTC)
    host = HostState("www.yna.co.kr")
    assert not host.failing(at)
    host.failed(at, "HTTP 503", max_failures=2, policy=BreakerPolicy())
    assert host.failing(at)  # one in a row, breaker still closed
    host.failed(at, "HTTP 503", max_failures=2, policy=BreakerPolicy())
    assert host.breaker.state == "open"
    host.succeeded()
    assert not host.failing(at)


def test_breakers_keep_the_items_attribute_names():
    # GIVEN a host and an outlet whose breakers have every field set
    host = HostState("www.yna.co.kr", last_request_ms=1, last_error="HTTP 503", last_error_at=T0)
    host.robots_status, host.robots_txt, host.robots_fetched_at = "ok", "", T0
    host.retry_after_until = T0
    for _ in range(3):
        host.failed(T0, "HTTP 503", max_failures=3, policy=BreakerPolicy())
    outlet = OutletState("연합뉴스")
    outlet.breaker.failed(T0, 1, BreakerPolicy())
    # THEN their items hold the attributes items held before the breaker was one value: a
    # host's failures in a row as consecutive_failures, an outlet's (one message's) not at all
    breaker = {"breaker", "trips", "opened_at", "open_until"}
    assert set(to_item(host)) == {
        *("pk", "sk", "host", "last_request_ms", "last_error", "last_error_at", "pages_fetched"),
        *("robots_status", "robots_txt", "robots_fetched_at", "retry_after_until"),
        "consecutive_failures",
        *breaker,
    }
    assert set(to_item(outlet)) == {"pk", "sk", "source", *breaker}
    assert to_item(host)["consecutive_failures"] == {"N": "3"}
    assert to_item(host)["breaker"] == to_item(outlet)["breaker"] == {"S": "open"}
    # AND decode to the same records (an outlet's failures are counted afresh each message)
    assert from_item(HostState, to_item(host)) == host
    assert from_item(OutletState, to_item(outlet)).breaker.failures == 0
