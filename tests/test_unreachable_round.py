"""A round that reaches nothing is the machine's fault, not the outlets' (issue 41, point 2).

When every outlet tried fails at once by DNS, connection or timeout, the next fan-out (which
reads every outlet's records) forgives that round: no breaker stays tripped, no feed backed off,
counted as RoundsUnreachable; `newsdesk collect` forgives its own round at once and says the
machine looks offline. A partial outage is the outlets': those unreachable trip as before.

Nothing but 127.0.0.1 is contacted: an offline machine is played by a stand-in for the system
resolver that answers as a resolver without a network does (EAI_AGAIN) for the outlets' names,
or by a port on 127.0.0.1 that refuses every connection; timeouts by a loopback listener whose
queue is full (tests/test_hostile_fetch.py's fixtures)."""

from __future__ import annotations

import io
import json
import socket
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from newsdesk.aws.state_table import StateTable
from newsdesk.collect.unreached import MIN_OUTLETS, judge
from newsdesk.core.breaker import Breaker, BreakerPolicy
from newsdesk.core.schedule import FeedState, OutletState, SchedulePolicy
from newsdesk.core.times import format_time
from newsdesk_local.cli import main
from newsdesk_local.commands import collect
from newsdesk_local.feedserver import FeedServer, Route
from newsdesk_local.invocations import IDLE_SECONDS, drain
from tests.conftest import INFRASTRUCTURE, InProcess, container, load_event, served_bytes
from tests.test_cli import environ

T = datetime(2026, 12, 1, tzinfo=UTC)
MINUTE = timedelta(minutes=1)
OUTLETS = ("A", "B", "C", "D")


# --- the rule, on the records alone ----------------------------------------------------------


def records(*outlets: tuple[str, list[tuple[str, str | None]]]) -> dict[str, Any]:
    """Each outlet's records after a round at T: its feeds' (status, failure class)."""
    found: dict[str, Any] = {}
    for name, feeds in outlets:
        states = {}
        for n, (status, error_class) in enumerate(feeds):
            state = FeedState(name, f"https://{name}.test/{n}.xml", "정치")
            state.attempted(T, "정치")
            if status == "failed":
                state.failed(T, "x", SchedulePolicy(), error_class=error_class)
            else:
                state.succeeded(T, SchedulePolicy(), published=False, entries_seen=1)
            states[state.url] = state
        found[name] = (OutletState(name), states)
    return found


DNS: tuple[str, str | None] = ("failed", "connection")
TIMEOUT: tuple[str, str | None] = ("failed", "timeout")


@pytest.mark.parametrize(
    ("outlets", "unreached"),
    [
        pytest.param([[DNS, DNS]] * 3, True, id="three outlets, nothing reached"),
        pytest.param([[DNS], [TIMEOUT], [DNS, TIMEOUT]], True, id="DNS and timeouts alike"),
        pytest.param([[DNS]] * 2, False, id="two outlets cannot tell the machine from them"),
        pytest.param([[DNS], [DNS], [DNS], [("ok", None)]], False, id="one answered: ours works"),
        pytest.param([[DNS], [DNS], [DNS], [("failed", "http_5xx")]], False, id="an HTTP error"),
        pytest.param(
            [[DNS], [DNS], [DNS], [("failed", "blocked")]], True, id="a guard refusal is neutral"
        ),
        pytest.param([[DNS], [DNS], [("failed", "blocked")]], False, id="but no outlet"),
    ],
)
def test_a_round_reached_nothing_when_no_outlet_tried_answered(outlets, unreached):
    found = judge(records(*((f"O{n}", feeds) for n, feeds in enumerate(outlets))))
    assert (found is not None) is unreached
    assert MIN_OUTLETS == 3


def test_only_the_latest_round_is_judged():
    # GIVEN three outlets that failed by DNS at T, and one whose feed answered a round earlier
    found = records(*((name, [DNS]) for name in "XYZ"))
    earlier = FeedState("W", "https://w.test/0.xml", "정치")
    earlier.attempted(T - 30 * MINUTE, "정치")
    earlier.succeeded(T - 30 * MINUTE, SchedulePolicy(), published=True, entries_seen=1)
    found["W"] = (OutletState("W"), {earlier.url: earlier})
    # THEN the round at T reached nothing, of the three outlets tried in it
    unreached = judge(found)
    assert unreached is not None
    assert (unreached.at, unreached.outlets) == (T, ("X", "Y", "Z"))


def test_a_forgiven_trip_leaves_the_breaker_as_before_it():
    # a first trip: closed again; a half-open probe's: open, its cool-down over at the round
    first = Breaker()
    first.tripped(T, BreakerPolicy())
    first.forgiven(T)
    assert first == Breaker()
    probe = Breaker("open", trips=2, opened_at=T - 2 * MINUTE, open_until=T - MINUTE)
    probe.tripped(T, BreakerPolicy())
    probe.forgiven(T)
    assert (probe.state_at(T), probe.trips) == ("half_open", 2)


# --- the deployed path: the worker and the fan-out as they ship --------------------------------


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch) -> dict[str, bool]:
    """The outlets' names (``a.test``…) resolve to 127.0.0.1, but while ``["offline"]`` is
    set, when every lookup fails as a resolver with no network fails it (EAI_AGAIN)."""
    real = socket.getaddrinfo
    state = {"offline": False}
    names = {f"{outlet.lower()}.test" for outlet in OUTLETS}

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in names:
            return real(host, port, *args, **kwargs)
        if state["offline"]:
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", int(port)))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return state


def write_outlets(path: Path, feeds: dict[str, list[str]]) -> Path:
    path.write_text(
        "".join(
            f'- {{source: "{outlet}", url: "{url}", category: "정치"}}\n'
            for outlet, urls in feeds.items()
            for url in urls
        ),
        encoding="utf-8",
    )
    return path


def a_round(
    aws_env: Any, sources: Path, at: datetime, **env: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A scheduled round at ``at``, as AWS runs it: the fan-out with the schedule's event, then
    the outlet queue drained by a worker container (its event source mapping)."""
    fanned = container("fanout", SOURCES_PATH=str(sources))(
        load_event("fanout") | {"time": format_time(at)}
    )
    worker = InProcess(container("worker", **env))
    reports = [
        outlet
        for source in INFRASTRUCTURE.functions["WorkerFunction"].event_sources
        for delivery in drain(aws_env, source, worker)
        for outlet in delivery.response["outlets"]
    ]
    return fanned, reports


def test_the_next_fan_out_forgives_a_round_that_reached_nothing(
    aws_env, feed_server, network, tmp_path, log_lines
):
    # GIVEN four outlets of two feeds each, their names resolving to the loopback server
    port = feed_server.base_url.rsplit(":", 1)[1]
    feeds = {
        o: [
            feed_server.add(f"/{o}/{n}.xml", Route(body=served_bytes("good.xml"))).replace(
                "127.0.0.1", f"{o.lower()}.test"
            )
            for n in range(2)
        ]
        for o in OUTLETS
    }
    assert all(f"{o.lower()}.test:{port}" in feeds[o][0] for o in OUTLETS)
    sources = write_outlets(tmp_path / "sources.yaml", feeds)
    now = datetime.now(UTC)
    # WHEN a round runs with no network: every lookup fails
    network["offline"] = True
    _, offline = a_round(aws_env, sources, now - 2 * MINUTE)
    # THEN every outlet failed by DNS, and the worker, which sees one outlet, charged it
    assert {o["source"] for o in offline if o["breaker_tripped"]} == set(OUTLETS)
    assert {f["reason"] for o in offline for f in o["feeds"] if f["status"] == "failed"} == {
        "fetch"
    }
    log_lines.start()
    # WHEN the network is back and the next round runs
    network["offline"] = False
    fanned, online = a_round(aws_env, sources, now - MINUTE)
    # THEN its fan-out forgave the round before: every outlet sent, none cooling down
    assert fanned["unreachable_round"] == format_time(now - 2 * MINUTE)
    assert (fanned["messages_sent"], fanned["outlets_skipped_open"]) == (4, 0)
    assert fanned["outlets_forgiven"] == 4
    lines = log_lines.read()
    emf = [line for line in lines if "RoundsUnreachable" in line]
    assert [line["RoundsUnreachable"] for line in emf] == [[1]]
    (line,) = [entry for entry in lines if entry.get("message", "").startswith("round unreach")]
    assert (line["feeds_forgiven"], line["breakers_forgiven"]) == (8, 4)
    # AND every feed, due again though it failed a round ago, was attempted and collected
    assert sorted(f["status"] for o in online for f in o["feeds"]) == ["ok"] * 8
    assert all(feed_server.requests[f"/{o}/{n}.xml"] == 1 for o in OUTLETS for n in range(2))


def test_forgiving_twice_changes_nothing(aws_env, feed_server, network, tmp_path):
    # GIVEN a round that reached nothing, forgiven by the next fan-out
    feeds = {o: [f"http://{o.lower()}.test:9/{o}.xml"] for o in OUTLETS}
    sources = write_outlets(tmp_path / "sources.yaml", feeds)
    now = datetime.now(UTC)
    network["offline"] = True
    a_round(aws_env, sources, now - 3 * MINUTE)
    fanout = container("fanout", SOURCES_PATH=str(sources))
    first = fanout(load_event("fanout") | {"time": format_time(now - 2 * MINUTE)})
    table = StateTable(aws_env.client("dynamodb"), "newsdesk-state")
    after_first = table.scan()
    # WHEN the fan-out runs again (the schedule's retry) before any worker
    second = fanout(load_event("fanout") | {"time": format_time(now - MINUTE)})
    # THEN it forgives nothing more: each feed's streak and breaker as the first left them
    assert (first["unreachable_round"], second["unreachable_round"]) == (
        format_time(now - 3 * MINUTE),
        None,
    )
    assert table.scan() == after_first
    assert all(f.consecutive_failures == 0 for fs in after_first[1].values() for f in fs)
    assert all(o.breaker == Breaker() for o in after_first[0].values())


@pytest.mark.parametrize(
    ("down", "cooling"),
    [
        pytest.param(
            {"C": "refused", "D": "timeout", "E": "refused"},
            {"C", "D", "E"},
            id="three of five unreachable, two answer",
        ),
        pytest.param({"E": "refused"}, {"E"}, id="one really down, every other answers"),
    ],
)
def test_a_partial_outage_trips_only_the_unreachable_outlets(
    aws_env, feed_server, tmp_path, unused_port, unreachable, log_lines, down, cooling
):
    # GIVEN five outlets, some of which refuse connections or never answer (as many as make a
    # round that reached nothing, were they all)
    dead = {
        "refused": f"http://127.0.0.1:{unused_port}",
        "timeout": f"http://127.0.0.1:{unreachable}",
    }
    feeds = {
        o: [
            dead[down[o]] + f"/{o}/{n}.xml"
            if o in down
            else feed_server.add(f"/{o}/{n}.xml", Route(body=served_bytes("good.xml")))
            for n in range(2)
        ]
        for o in (*OUTLETS, "E")
    }
    sources = write_outlets(tmp_path / "sources.yaml", feeds)
    now = datetime.now(UTC)
    # WHEN a round runs, then the next one's fan-out
    _, first = a_round(aws_env, sources, now - 2 * MINUTE, FETCH_TIMEOUT_SECONDS="0.3")
    log_lines.start()
    fanned = container("fanout", SOURCES_PATH=str(sources))(
        load_event("fanout") | {"time": format_time(now - MINUTE)}
    )
    # THEN the unreachable outlets tripped and cool down; the round is not forgiven
    assert {o["source"] for o in first if o["breaker_tripped"]} == cooling
    assert {o["source"] for o in fanned["outlets_cooling"]} == cooling
    assert fanned["unreachable_round"] is None
    emf = [line for line in log_lines.read() if "RoundsUnreachable" in line]
    assert [line["RoundsUnreachable"] for line in emf] == [[0]]


# --- `newsdesk collect` -----------------------------------------------------------------------


@pytest.mark.slow
def test_an_offline_collect_trips_no_outlet_and_the_next_collects_every_feed(
    data_dir, tmp_path, postgres_url, capsys
):
    # GIVEN three outlets of two feeds each on a port of 127.0.0.1 that refuses every
    # connection, as a machine without a network refuses them all
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    port = holder.getsockname()[1]
    paths = {o: [f"/{o}/{n}.xml" for n in range(2)] for o in OUTLETS[:3]}
    feeds = {o: [f"http://127.0.0.1:{port}{p}" for p in ps] for o, ps in paths.items()}
    sources = write_outlets(tmp_path / "sources.yaml", feeds)
    env = environ(data_dir, DATABASE_URL=postgres_url, SOURCES_PATH=str(sources))
    # WHEN a round runs
    code = main(["collect"], env)
    out, err = capsys.readouterr()
    # THEN it says the machine looks offline, in one line, and exits 3 as before
    assert code == 3
    assert "not one of the 6 feeds attempted succeeded" in err
    offline = [line for line in out.splitlines() if "looks offline" in line]
    assert offline == [collect.offline_line(3)]
    # AND no outlet is tripped, no feed backed off
    assert main(["feeds", "--json"], env) == 0
    state = json.loads(capsys.readouterr().out)["outlets"]
    assert [o["breaker"]["state"] for o in state] == ["closed"] * 3
    assert all(f["consecutive_failures"] == 0 for o in state for f in o["feeds"])
    # WHEN the network is back and a scheduled round runs (only the feeds that are due)
    holder.close()
    with FeedServer(port) as server:
        for ps in paths.values():
            for path in ps:
                server.add(path, Route(body=served_bytes("good.xml")))
        code = main(["collect", "--scheduled", "--json"], env)
        done = json.loads(capsys.readouterr().out)
    # THEN every feed is attempted and collected
    assert code == 0
    assert done["unreachable"] is False
    assert [f["status"] for o in done["outlets"] for f in o["feeds"]] == ["ok"] * 6
    assert all(server.requests[p] == 1 for ps in paths.values() for p in ps)


# --- a terminal is told, while the network hangs -----------------------------------------------


class Terminal(io.StringIO):
    """A terminal's stdout that says when a line starting with ``marker`` has been written."""

    def __init__(self, marker: str) -> None:
        super().__init__()
        self.marker, self.seen = marker, threading.Event()

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self.marker in text:
            self.seen.set()
        return super().write(text)


def test_a_terminal_is_told_the_round_is_still_at_work_while_a_feed_hangs(
    data_dir, tmp_path, feed_server, postgres_url, monkeypatch
):
    # GIVEN an outlet whose feed answers only once the terminal has shown a line saying the
    # round is still at work (a line is due at once: no wait for the heartbeat in a test)
    monkeypatch.setattr(collect, "HEARTBEAT_SECONDS", 0.0)
    terminal = Terminal("… still collecting: 0 of 1 outlet done")

    def hang() -> None:  # until the terminal shows the line, 15 s at most
        terminal.seen.wait(15)

    url = feed_server.add("/slow.xml", Route(body=served_bytes("good.xml"), before=hang))
    sources = write_outlets(tmp_path / "sources.yaml", {"A": [url]})
    monkeypatch.setattr("sys.stdout", terminal)
    env = environ(data_dir, DATABASE_URL=postgres_url, FETCH_TIMEOUT_SECONDS="30")
    # WHEN a round runs on it
    code = main(["collect", "--sources", str(sources)], env)
    lines = terminal.getvalue().splitlines()
    # THEN the line came while the feed hung, before the outlet's own, which then succeeded
    assert code == 0
    still = lines.index("… still collecting: 0 of 1 outlet done")
    (outlet,) = [n for n, line in enumerate(lines) if line.startswith("Source: A | New: ")]
    assert still < outlet


def test_a_terminal_line_comes_at_least_every_five_seconds():
    # GIVEN a terminal's progress whose last line was printed at 0 s
    now = [0.0]
    out = io.StringIO()
    progress = collect.Progress([], UTC, out, clock=lambda: now[0])
    # WHEN the round, still at work, looks just before and at the heartbeat
    now[0] = collect.HEARTBEAT_SECONDS - 0.1
    progress.waiting()
    assert out.getvalue() == ""
    now[0] = collect.HEARTBEAT_SECONDS
    progress.waiting()
    # THEN one line, and the longest gap (a heartbeat plus the driver's look) is within 5 s
    assert out.getvalue() == "… still collecting: 0 of 0 outlets done\n"
    assert collect.HEARTBEAT_SECONDS + IDLE_SECONDS <= 5
