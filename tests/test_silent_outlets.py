"""Outlets that have had no successful feed for OUTLET_SILENT_HOURS (issue 13, point 6): the
rule on the records alone, table-driven, then the fan-out counting them (metric SilentOutlets)
and naming each in a log line of its own."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from newsdesk.aws.state_table import StateTable
from newsdesk.core.breaker import Breaker, BreakerPolicy
from newsdesk.core.schedule import (
    STATUS_FAILED,
    STATUS_NOT_MODIFIED,
    STATUS_OK,
    FeedState,
    OutletState,
    SchedulePolicy,
    SilencePolicy,
    silence,
)
from newsdesk.core.times import parse_time
from tests.conftest import fanout, invoke, load_event

T = datetime(2026, 12, 1, tzinfo=UTC)
H = timedelta(hours=1)
POLICY = SilencePolicy(window=6 * H, period=H / 2)
URLS = ("https://a.test/1.xml", "https://a.test/2.xml")


def feed(
    url: str = URLS[0],
    *,
    first: timedelta | None = None,
    success: timedelta | None = None,
    status: str | None = STATUS_FAILED,
    next_check: timedelta = H,
    error: str | None = "HTTP 503",
) -> FeedState:
    """A record as the collector leaves it, its times relative to T."""
    return FeedState(
        "A",
        url,
        "정치",
        first_attempt_at=None if first is None else T + first,
        last_attempt_at=T - H / 2,
        last_success_at=None if success is None else T + success,
        next_check_at=T + next_check,
        last_status=status,
        last_error=error if status == STATUS_FAILED else None,
    )


OPEN = OutletState("A", Breaker("open", trips=3, opened_at=T - H, open_until=T + H))


@pytest.mark.parametrize(
    ("feeds", "outlet", "silent"),
    [
        pytest.param([], None, False, id="never collected: new, not silent"),
        pytest.param([feed(first=-2 * H)], None, False, id="new, tried for 2 h: not yet"),
        pytest.param([feed(first=-7 * H)], None, True, id="new, tried for 7 h, never a success"),
        pytest.param([feed(first=-9 * H, success=-7 * H)], None, True, id="last success 7 h ago"),
        pytest.param(
            [feed(first=-9 * H, success=-6 * H)], None, True, id="exactly the window: silent"
        ),
        pytest.param(
            [feed(first=-9 * H, success=-5.9 * H)], None, False, id="last success 5.9 h ago"
        ),
        pytest.param(
            [feed(first=-9 * H, success=-7 * H), feed(URLS[1], first=-9 * H, success=-H)],
            None,
            False,
            id="one feed of the outlet succeeds",
        ),
        pytest.param(
            [feed(first=-48 * H, success=-24 * H, status=STATUS_OK, next_check=4 * H)],
            None,
            False,
            id="waiting on a long ttl: not due, last attempt fine",
        ),
        pytest.param(
            [feed(first=-48 * H, success=-24 * H, status=STATUS_NOT_MODIFIED, next_check=-2 * H)],
            None,
            True,
            id="overdue by more than a round: no attempt recorded",
        ),
        pytest.param(
            [feed(first=-48 * H, success=-7 * H, status=STATUS_OK, next_check=-H / 4)],
            None,
            False,
            id="due this round: not yet overdue",
        ),
        pytest.param(
            [feed(first=-48 * H, success=-7 * H, status=STATUS_OK, next_check=2 * H)],
            OPEN,
            True,
            id="breaker open",
        ),
        pytest.param(
            [feed(first=None, success=None)],
            None,
            False,
            id="an earlier release's record, never a success: counted from its next attempt",
        ),
        pytest.param(
            [feed("https://a.test/removed.xml", first=-90 * H, success=-80 * H)],
            None,
            False,
            id="a feed no longer in sources.yaml is not the outlet's",
        ),
    ],
)
def test_an_outlet_is_silent_when_no_feed_succeeded_for_the_window(feeds, outlet, silent):
    found = silence(outlet or OutletState("A"), {f.url: f for f in feeds}, URLS, T, POLICY)
    assert (found is not None) is silent


def test_a_silence_says_since_when_and_why():
    feeds = [
        feed(first=-30 * H, success=-8 * H, error="DNS lookup failed for a.test"),
        feed(URLS[1], first=-30 * H, success=-9 * H, status=STATUS_OK, next_check=-H),
    ]
    found = silence(OutletState("A"), {f.url: f for f in feeds}, URLS, T, POLICY)
    assert found is not None
    assert (found.source, found.since, found.hours) == ("A", T - 8 * H, 8.0)
    assert (found.feeds, found.feeds_failing, found.ever_succeeded) == (2, 1, True)
    assert found.last_error == "DNS lookup failed for a.test"


def test_the_first_attempt_is_kept_from_then_on():
    state = FeedState("A", URLS[0])
    state.attempted(T, "정치")
    state.failed(T, "HTTP 503", SchedulePolicy())
    state.attempted(T + H, "정치")
    assert (state.first_attempt_at, state.last_attempt_at) == (T, T + H)


# --- the fan-out counts them and names them --------------------------------------------------


@pytest.fixture
def fanout_log(capsys: pytest.CaptureFixture[str]) -> Iterator[Any]:
    handler = fanout.logger.registered_handler
    original = handler.stream

    def read() -> list[dict[str, Any]]:
        out = capsys.readouterr().out
        return [json.loads(line) for line in out.splitlines() if line.startswith("{")]

    def start() -> None:
        handler.stream = sys.stdout
        capsys.readouterr()

    read.start = start  # type: ignore[attr-defined]
    yield read
    handler.stream = original


def test_the_fan_out_counts_silent_outlets_and_names_each(aws_env, tmp_path, fanout_log):
    # GIVEN four outlets: silent for 7 h, healthy, never collected, and cooling down
    at = parse_time(load_event("fanout")["time"])
    table = StateTable(aws_env.client("dynamodb"), "newsdesk-state")
    lines = []
    for outlet in ("Silent", "Healthy", "New", "Cooling"):
        lines.append(f'- {{source: {outlet}, url: "https://{outlet}.test/a.xml", category: 정치}}')
    (tmp_path / "sources.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for outlet, success in (("Silent", at - 7 * H), ("Healthy", at - H / 2)):
        state = FeedState(outlet, f"https://{outlet}.test/a.xml", "정치")
        state.attempted(at - 30 * H, "정치")
        state.succeeded(success, SchedulePolicy(), published=True, entries_seen=3)
        if outlet == "Silent":
            state.attempted(at - H / 2, "정치")
            state.failed(at - H / 2, "connection refused by Silent.test", SchedulePolicy())
        table.save(state)
    cooling = OutletState("Cooling")
    cooling.breaker.tripped(at - H / 4, BreakerPolicy())
    table.save(cooling)
    fanout_log.start()
    # WHEN a round is fanned out
    result = invoke("fanout", load_event("fanout"), SOURCES_PATH=str(tmp_path / "sources.yaml"))
    # THEN one outlet is silent, counted and named with its last error
    assert (result["outlets_silent"], result["outlets_skipped_open"]) == (1, 1)
    logged = fanout_log()
    (emf,) = [line for line in logged if "_aws" in line]
    assert emf["SilentOutlets"] == [1.0]
    (silent,) = [line for line in logged if line.get("message") == "outlet silent"]
    assert silent["outlet"] == "Silent"
    assert (silent["silent_hours"], silent["feeds_failing"]) == (7.0, 1)
    assert silent["silent_since"] == "2026-11-30T17:00:00Z"
    assert silent["last_error"] == "connection refused by Silent.test"
    # AND the outlet cooling down is named too, as the worker names it when it skips one
    (skipped,) = [line for line in logged if line.get("message") == "outlet skipped: breaker open"]
    assert skipped["outlet"] == "Cooling"


def test_the_window_is_a_setting(aws_env, tmp_path, fanout_log):
    at = parse_time(load_event("fanout")["time"])
    (tmp_path / "sources.yaml").write_text(
        '- {source: A, url: "https://a.test/a.xml", category: 정치}\n', encoding="utf-8"
    )
    state = FeedState("A", "https://a.test/a.xml", "정치")
    state.attempted(at - 3 * H, "정치")
    state.failed(at - 3 * H, "HTTP 500", SchedulePolicy())
    StateTable(aws_env.client("dynamodb"), "newsdesk-state").save(state)
    sources = str(tmp_path / "sources.yaml")
    assert invoke("fanout", load_event("fanout"), SOURCES_PATH=sources)["outlets_silent"] == 0
    result = invoke("fanout", load_event("fanout"), SOURCES_PATH=sources, OUTLET_SILENT_HOURS="2")
    assert result["outlets_silent"] == 1
