"""`newsdesk feeds` and `feeds reset`, cooling-down outlets in `collect`, the exit codes, closed
pipes, times in NEWSDESK_TIMEZONE, and read-only commands that create nothing: against the
local runtime (moto, PostgreSQL, feeds on 127.0.0.1), the saved state file, and a table read as
a deployed one."""

import functools
import json
import operator
import os
import re
import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg2
import psycopg2.extensions
import pytest

from newsdesk.aws.state_table import StateTable, from_item, to_item
from newsdesk.core.breaker import Breaker
from newsdesk.core.report import CONTRACT_KEYS
from newsdesk.core.schedule import FeedState, OutletState
from newsdesk.core.sources import load_sources
from newsdesk.core.times import local_time, utc_now
from newsdesk.storage.database import Database
from newsdesk.storage.migrate import migrate
from newsdesk_local.cli import main
from newsdesk_local.feeds import SavedStore, TableStore
from newsdesk_local.saved_state import load_tables, store_tables
from tests.test_cli import environ as cli_environ
from tests.test_cli import write_sources

# its tests start servers or processes of their own (tests/conftest.py)
pytestmark = pytest.mark.integration

NEWSDESK = Path(sys.executable).with_name("newsdesk")  # the console script
AT = datetime(2026, 12, 1, 5, 0, tzinfo=UTC)  # 14:00 in Seoul, 00:00 in New York
FAR = datetime(2099, 1, 1, 5, 30, tzinfo=UTC)  # a breaker open until then is open in any test
FEED_KEYS = [
    "url",
    "category",
    "last_status",
    "last_error",
    "last_error_at",
    "consecutive_failures",
    "last_success_at",
    "next_check_at",
]
UTC_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def records():
    """Three outlets: one cooling down (a failing feed, a good one), one half-open, one fine."""
    url = "http://127.0.0.1:9/"
    return [
        OutletState("프레시안", Breaker("open", trips=2, opened_at=AT, open_until=FAR)),
        FeedState(
            "프레시안",
            url + "a.xml",
            "정치",
            last_attempt_at=AT,
            last_status="failed",
            last_error="HTTP 503",
            last_error_class="http_5xx",
            consecutive_failures=3,
            last_success_at=AT - timedelta(days=1),
            next_check_at=FAR,
        ),
        FeedState(
            "프레시안",
            url + "b.xml",
            "사회",
            last_attempt_at=AT,
            last_status="ok",
            last_success_at=AT,
            next_check_at=AT + timedelta(minutes=30),
            etag='"b"',
        ),
        OutletState("뉴시스", Breaker("open", trips=1, opened_at=AT, open_until=AT)),
        FeedState(
            "뉴시스",
            url + "n.xml",
            "IT",
            last_attempt_at=AT,
            last_success_at=AT,
            next_check_at=AT,
            last_status="ok",
        ),
        FeedState(
            "연합뉴스",
            url + "y.xml",
            "경제",
            last_attempt_at=AT,
            last_status="not_modified",
            last_success_at=AT,
            next_check_at=AT + timedelta(hours=1),
        ),
    ]


def saved(data_dir, state=None):
    """NEWSDESK_DATA_DIR with the local runtime's saved state file holding ``state``, and the
    sources file of its feeds beside it (``environ`` names it: `feeds` lists that file's)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    state = state or records()
    store_tables(data_dir, {"StateTable": [to_item(r) for r in state]})
    feeds = [(r.source, r.url, r.category) for r in state if isinstance(r, FeedState)]
    write_sources(data_dir / "sources.yaml", feeds)
    return data_dir


def environ(data_dir, **extra):
    """The command line's environment for ``data_dir``, its sources file if it has one."""
    if (data_dir / "sources.yaml").exists():
        extra.setdefault("SOURCES_PATH", str(data_dir / "sources.yaml"))
    return cli_environ(data_dir, **extra)


def run(*args, env, stdout=subprocess.PIPE):
    """The console script in a process of its own, as a person runs it."""
    return subprocess.run(
        [str(NEWSDESK), *args],
        env=env,
        stdout=stdout,
        stderr=subprocess.PIPE,
        timeout=120,
        check=False,
    )


# --- feeds, from the saved state --------------------------------------------------------------


def test_feeds_lists_failing_outlets_first_in_the_editors_time(data_dir, capsys):
    env = environ(saved(data_dir))
    assert main(["feeds"], env) == 0
    assert capsys.readouterr().out.splitlines() == [
        "Outlet: 뉴시스 | Breaker: half-open since 2026-12-01 14:00 KST (trip 1): the next round "
        "tries one feed | 0 of 1 feed failing",
        "Feed: 뉴시스 | IT | OK | last success 2026-12-01 14:00 KST | next check 2026-12-01 "
        "14:00 KST | "
        "http://127.0.0.1:9/n.xml",
        "Outlet: 프레시안 | Breaker: open until 2099-01-01 14:30 KST (trip 2) | 1 of 2 feeds "
        "failing",
        "Feed: 프레시안 | 정치 | Failed (http_5xx) 2026-12-01 14:00 KST: HTTP 503 | 3 failures in "
        "a row | last success 2026-11-30 14:00 KST | next check 2099-01-01 14:30 KST | "
        "http://127.0.0.1:9/a.xml",
        # (due at 14:30 by its own schedule, but not asked while its outlet is open)
        "Feed: 프레시안 | 사회 | OK | last success 2026-12-01 14:00 KST | next check 2099-01-01 "
        "14:30 KST | http://127.0.0.1:9/b.xml",
        "Outlet: 연합뉴스 | Breaker: closed | 0 of 1 feed failing",
        "Feed: 연합뉴스 | 경제 | Not modified | last success 2026-12-01 14:00 KST | next check "
        "2026-12-01 15:00 KST | http://127.0.0.1:9/y.xml",
        "Outlets: 3 (1 cooling down, 1 half-open); feeds: 4 (1 failing); times in Asia/Seoul (KST)",
    ]
    # --failing: the failing outlets, and of them only the failing feeds
    assert main(["feeds", "--failing"], env) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" | ")[:2] for line in lines[:-1]] == [
        [
            "Outlet: 뉴시스",
            "Breaker: half-open since 2026-12-01 14:00 KST (trip 1): the next round tries one feed",
        ],
        ["Outlet: 프레시안", "Breaker: open until 2099-01-01 14:30 KST (trip 2)"],
        ["Feed: 프레시안", "정치"],
    ]


def test_feeds_json_is_utc_and_in_the_contracts_shape(data_dir, capsys):
    env = environ(saved(data_dir), NEWSDESK_TIMEZONE="America/New_York")
    assert main(["feeds", "--json", "--source", "프레시안"], env) == 0
    (outlet,) = json.loads(capsys.readouterr().out)["outlets"]
    assert list(outlet) == ["source", "breaker", "feeds"]
    assert outlet["breaker"] == {"state": "open", "open_until": "2099-01-01T05:30:00Z", "trips": 2}
    failing, fine = outlet["feeds"]
    assert list(failing)[: len(FEED_KEYS)] == FEED_KEYS
    assert {k: failing[k] for k in FEED_KEYS} == {
        "url": "http://127.0.0.1:9/a.xml",
        "category": "정치",
        "last_status": "failed",
        "last_error": "HTTP 503",
        "last_error_at": "2026-12-01T05:00:00Z",
        "consecutive_failures": 3,
        "last_success_at": "2026-11-30T05:00:00Z",
        "next_check_at": "2099-01-01T05:30:00Z",
    }
    assert failing["last_error_class"] == "http_5xx"
    assert (fine["last_status"], fine["last_error"], fine["last_error_at"]) == ("ok", None, None)
    # AND the terminal, in New York's time, says so
    assert main(["feeds", "--source", "프레시안"], env) == 0
    out = capsys.readouterr().out
    assert "Failed (http_5xx) 2026-12-01 00:00 EST: HTTP 503" in out
    assert out.endswith("times in America/New_York (EST)\n") or "(EDT)" in out


def test_a_bad_time_zone_is_one_line_naming_the_variable(data_dir, capsys):
    assert main(["feeds"], environ(saved(data_dir), NEWSDESK_TIMEZONE="Seoul")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("newsdesk: NEWSDESK_TIMEZONE: not a time zone: 'Seoul'")


def test_feeds_of_an_unknown_outlet_and_of_nothing(data_dir, capsys):
    env = environ(saved(data_dir))
    assert main(["feeds", "--source", "없는신문"], env) == 2
    assert capsys.readouterr().err == "newsdesk: no state recorded for outlet '없는신문'\n"
    empty = data_dir.parent / f"{data_dir.name}-empty"
    empty.mkdir()
    assert main(["feeds"], environ(empty)) == 0
    assert capsys.readouterr().out.startswith("No feed has been checked yet (the local state in ")


def test_feeds_reset_closes_breakers_and_makes_feeds_due_in_the_saved_state(data_dir, capsys):
    env = environ(saved(data_dir))
    before = utc_now().replace(microsecond=0)
    assert main(["feeds", "reset", "프레시안"], env) == 0
    assert capsys.readouterr().out == (
        "Reset: 프레시안 | Breaker: closed, trips 0; was open until 2099-01-01 14:30 KST (trip 2) "
        "| 2 feeds due now\n"
    )
    outlets = SavedStore(data_dir).read()
    reset = outlets["프레시안"]
    assert (reset.breaker.state, reset.breaker.trips, reset.breaker.open_until) == (
        "closed",
        0,
        None,
    )
    assert all(before <= (f.next_check_at or AT) <= utc_now() for f in reset.feeds)
    # AND nothing else of them changed, nor of the other outlets
    assert {f.url: f.etag for f in reset.feeds}["http://127.0.0.1:9/b.xml"] == '"b"'
    assert {f.url: f.consecutive_failures for f in reset.feeds}["http://127.0.0.1:9/a.xml"] == 3
    assert outlets["뉴시스"].breaker.trips == 1
    # AND --all, every outlet; naming none, or an unknown one, is refused before any write
    assert main(["feeds", "reset", "--all"], env) == 0
    assert [line.split(" | ")[0] for line in capsys.readouterr().out.splitlines()] == [
        "Reset: 뉴시스",
        "Reset: 연합뉴스",
        "Reset: 프레시안",
    ]
    kept = (data_dir / "aws-state.json").read_bytes()
    assert main(["feeds", "reset", "뉴시스", "없는신문"], env) == 2
    assert capsys.readouterr().err == "newsdesk: no state recorded for outlet '없는신문'\n"
    assert main(["feeds", "reset"], env) == 2
    assert "name the outlets to reset, or give --all" in capsys.readouterr().err
    assert (data_dir / "aws-state.json").read_bytes() == kept


# --- against a table, as against a deployed stack ---------------------------------------------


def test_feeds_and_reset_against_a_table_by_name(aws_env, tmp_path, capsys):
    # GIVEN the state table holding the records (the template's table, in moto)
    client = aws_env.client("dynamodb")
    table = StateTable(client, "newsdesk-state")
    for record in records():
        table.save(record)
    env = {**os.environ, "NEWSDESK_DATA_DIR": str(tmp_path / "none")}
    named = [(r.source, r.url, r.category) for r in records() if isinstance(r, FeedState)]
    sources = write_sources(tmp_path / "sources.yaml", named)
    # WHEN `feeds --table` reads it THEN the records, as from the saved state
    assert (
        main(["feeds", "--json", "--table", "newsdesk-state", "--sources", str(sources)], env) == 0
    )
    listed = json.loads(capsys.readouterr().out)["outlets"]
    assert [o["source"] for o in listed] == ["뉴시스", "프레시안", "연합뉴스"]
    # AND without --sources, the bundled file's feeds too (a deployed fan-out's), never tried
    assert main(["feeds", "--json", "--table", "newsdesk-state"], env) == 0
    bundled = json.loads(capsys.readouterr().out)["outlets"]
    untried = {f["url"] for o in bundled for f in o["feeds"] if f["skipped"] == "never_tried"}
    assert untried == {feed.url for feed in load_sources()}
    assert not (tmp_path / "none").exists()
    # WHEN an outlet is reset through the table
    assert main(["feeds", "reset", "프레시안", "연합뉴스", "--table", "newsdesk-state"], env) == 0
    assert capsys.readouterr().out.count("Reset: ") == 2
    # THEN the breaker is closed and the feeds due, the rest of each item as it was, and no
    # breaker item made for the outlet that had none
    outlet, feeds = table.outlet("프레시안")
    breaker = outlet.breaker
    assert (breaker.state, breaker.trips, breaker.open_until, breaker.opened_at) == (
        "closed",
        0,
        None,
        None,
    )
    assert all((f.next_check_at or FAR) <= utc_now() for f in feeds.values())
    assert feeds["http://127.0.0.1:9/b.xml"].etag == '"b"'
    assert table.outlets(["연합뉴스"]) == {}


def test_a_tables_reset_is_the_records_own_transitions(aws_env, tmp_path):
    client = aws_env.client("dynamodb")
    table = StateTable(client, "newsdesk-state")
    for record in records():
        table.save(record)
    tables = TableStore(table, "newsdesk-state")
    files = SavedStore(saved(tmp_path / "data"))
    for store in (tables, files):
        store.reset(store.read()["프레시안"], AT)

    def contents(store):
        return {
            source: (o.breaker, sorted(o.feeds, key=lambda f: f.url))
            for source, o in store.read().items()
        }

    assert contents(tables) == contents(files)
    expected = Breaker("open", trips=2, opened_at=AT, open_until=FAR)
    expected.closed()
    assert tables.read()["프레시안"].breaker == expected


# --- collect with an outlet cooling down, the exit codes ---------------------------------------


@pytest.mark.slow
def test_a_tripped_outlet_is_reported_cooling_down_until_reset(
    data_dir, tmp_path, serve, feed_server, database, postgres_url, capsys
):
    # GIVEN a good outlet and one whose two feeds answer 503
    good = serve("/yna/politics.xml", "good.xml")
    down = [serve(f"/pressian/{n}.xml", status=503) for n in range(2)]
    sources = write_sources(
        tmp_path / "sources.yaml",
        [("연합뉴스", good, "정치"), ("프레시안", down[0], "정치"), ("프레시안", down[1], "사회")],
    )
    # (SOURCES_PATH too: `feeds` lists the file in use, which --sources names for a round only)
    env = environ(data_dir, DATABASE_URL=postgres_url, SOURCES_PATH=str(sources))
    collect = ["collect", "--sources", str(sources)]

    # WHEN a round runs THEN the outlet trips, and each feed says how it went
    assert main([*collect, "--json"], env) == 0
    first = json.loads(capsys.readouterr().out)
    yna, pressian = first["outlets"]
    assert list(yna)[: 1 + len(CONTRACT_KEYS)] == ["source", *CONTRACT_KEYS]
    assert yna["feeds"] == [
        {
            "url": good,
            "category": "정치",
            "status": "ok",
            "error_class": None,
            "error": None,
            "new": 3,
            "duplicate": 0,
        }
    ]
    assert [(f["status"], f["error_class"]) for f in pressian["feeds"]] == [
        ("failed", "http_5xx"),
        ("failed", "http_5xx"),
    ]
    assert all(f["error"] for f in pressian["feeds"])
    assert (pressian["skipped"], pressian["trips"]) == (None, 1)  # tripped now, not skipped
    requests = dict(feed_server.requests)

    # WHEN the next round runs THEN the outlet is listed, cooling down, and not asked
    assert main(collect, env) == 0
    out = capsys.readouterr().out
    assert re.search(
        r"^Source: 프레시안 \| Skipped: cooling down until \d{4}-\d\d-\d\d \d\d:\d\d KST "
        r"\(trip 1\)$",
        out,
        re.M,
    )
    assert f"Source: 연합뉴스 | Not modified | 정치 {good}\n" in out
    assert "(2 outlets, 1 cooling down)" in out
    assert "2 skipped while their outlet cools down" in out
    assert all(feed_server.requests[p] == n for p, n in requests.items() if "pressian" in p)

    # AND `feeds --failing` names it, with its failing feeds
    assert main(["feeds", "--failing"], env) == 0
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(
        r"Outlet: 프레시안 \| Breaker: open until \S+ \S+ KST \(trip 1\) \| 2 of 2 feeds failing",
        lines[0],
    )
    assert [line.split(" | ")[:2] for line in lines[1:3]] == [
        ["Feed: 프레시안", "사회"],
        ["Feed: 프레시안", "정치"],
    ]
    assert all(
        re.match(r"Failed \(http_5xx\) \S+ \S+ KST: ", line.split(" | ")[2]) for line in lines[1:3]
    )
    assert all(" | 1 failure in a row | last success never | " in line for line in lines[1:3])
    assert len(lines) == 4
    assert lines[3].startswith("Outlets: 2 (1 cooling down, 0 half-open)")

    # WHEN it is reset THEN its breaker is closed, trips 0, and its feeds due
    assert main(["feeds", "reset", "프레시안"], env) == 0
    assert re.fullmatch(
        r"Reset: 프레시안 \| Breaker: closed, trips 0; was open until \S+ \S+ KST \(trip 1\) "
        r"\| 2 feeds due now\n",
        capsys.readouterr().out,
    )
    assert main(["feeds", "--json", "--source", "프레시안"], env) == 0
    (outlet,) = json.loads(capsys.readouterr().out)["outlets"]
    assert outlet["breaker"] == {"state": "closed", "open_until": None, "trips": 0}

    # AND a scheduled round asks its feeds again, the good outlet's not being due: feeds were
    # attempted and none succeeded, exit 3
    assert main([*collect, "--scheduled", "--json"], env) == 3
    third = json.loads(capsys.readouterr().out)
    assert third["totals"]["feeds_attempted"] == 2
    assert third["totals"]["feeds_not_due"] == 1
    assert all(feed_server.requests[p] == requests[p] + 1 for p in requests if "pressian" in p)
    # AND with the outlet cooling down again (trip 1: the reset forgot the trips) and the
    # other not due, a scheduled round attempts nothing: exit 0
    assert main([*collect, "--scheduled"], env) == 0
    out = capsys.readouterr().out
    assert re.search(r"^Source: 프레시안 \| Skipped: cooling down until .+ \(trip 1\)$", out, re.M)
    assert "Feeds: 0 attempted" in out


@pytest.mark.slow
def test_exit_1_when_a_message_fails(data_dir, tmp_path, serve, postgres_url, capsys):
    # GIVEN a database of its own whose article table refuses every insert
    admin = psycopg2.connect(postgres_url)
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute("DROP DATABASE IF EXISTS newsdesk_refusing")
        cursor.execute("CREATE DATABASE newsdesk_refusing")
    admin.close()
    url = psycopg2.extensions.make_dsn(postgres_url, dbname="newsdesk_refusing")
    refusing = Database(lambda: url)
    migrate(refusing)
    with refusing.transaction() as cursor:
        cursor.execute(
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'refused'; END $$"
        )
        cursor.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON raw_article "
            "FOR EACH STATEMENT EXECUTE FUNCTION refuse()"
        )
    refusing.close()
    sources = write_sources(tmp_path / "s.yaml", [("뉴시스", serve("/g.xml", "good.xml"), "정치")])
    # WHEN a round runs THEN the outlet's message failed (SQS would retry it): exit 1
    assert main(["collect", "--sources", str(sources)], environ(data_dir, DATABASE_URL=url)) == 1
    assert capsys.readouterr().err.startswith("newsdesk: outlet 뉴시스: record failed, see ")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_the_console_script_runs_a_round_in_its_containers(data_dir, database, postgres_url, serve):
    # GIVEN a feed on loopback and an empty database (an earlier test in this process may have
    # stored the feed's articles, which would be duplicates here) WHEN `newsdesk collect` runs
    # as a person runs it (a process of its own: its containers are forked as the console
    # script's, which each re-runs)
    feed = serve("/g.xml", "good.xml")
    sources = write_sources(data_dir.parent / "one.yaml", [("뉴시스", feed, "정치")])
    env = environ(data_dir, DATABASE_URL=postgres_url, FETCH_ALLOW_PRIVATE_NETWORKS="true")
    done = run("collect", "--sources", str(sources), "--json", "--concurrency", "1", env=env)
    # THEN the worker's container collected it and the extractor's ran over its articles
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    (outlet,) = json.loads(done.stdout)["outlets"]
    assert (outlet["source"], outlet["feeds_failed"], outlet["new"] > 0) == ("뉴시스", 0, True)


@pytest.mark.slow
@pytest.mark.parametrize("endpoint", ["http://127.0.0.1:{port}", "not a url"])
def test_exit_2_for_an_unreachable_or_malformed_aws_endpoint(data_dir, postgres_url, endpoint):
    env = environ(
        data_dir, DATABASE_URL=postgres_url, AWS_ENDPOINT_URL=endpoint.format(port=free_port())
    )
    done = run("collect", env=env)
    assert done.returncode == 2
    assert done.stdout == b""
    (line,) = done.stderr.decode().splitlines()
    assert line.startswith(("newsdesk: AWS at http://127.0.0.1:", "newsdesk: AWS_ENDPOINT_URL: "))


# --- closed pipes, UTF-8 ------------------------------------------------------------------------


def test_a_closed_pipe_ends_quietly(data_dir):
    # GIVEN state enough for more than a pipe's buffer
    many = [
        FeedState("연합뉴스", f"http://127.0.0.1:9/{n}.xml", "정치", AT, AT, next_check_at=AT)
        for n in range(3000)
    ]
    env = environ(saved(data_dir, many))
    # WHEN the reader takes one line and goes, as `newsdesk feeds | head -1` does
    process = subprocess.Popen(
        [str(NEWSDESK), "feeds"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None
    assert process.stderr is not None
    assert process.stdout.readline().startswith("Outlet: 연합뉴스".encode())
    process.stdout.close()
    # THEN the command ends, quietly
    assert process.wait(timeout=60) == 0
    assert process.stderr.read() == b""
    process.stderr.close()
    # AND a pipe closed before anything is written, too
    read, write = os.pipe()
    os.close(read)
    try:
        done = run("feeds", "--json", env=env, stdout=write)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (0, b"")


def test_json_is_utf8_whatever_the_locale(data_dir):
    env = environ(saved(data_dir), PYTHONIOENCODING="latin-1")
    done = run("feeds", "--json", env=env)
    assert done.returncode == 0
    assert '"source": "프레시안"' in done.stdout.decode("utf-8")


# --- read-only commands ---------------------------------------------------------------------------

PROBE = """
import json, sys
from newsdesk_local.cli import main
code = main(sys.argv[1:])
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"sklearn", "numpy", "scipy", "moto"})
print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


def probe(*args, env):
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], env=env, capture_output=True, timeout=120, check=False
    )
    return json.loads(done.stderr.decode().splitlines()[-1]), done.stdout.decode()


def files_of(folder):
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in folder.rglob("*")
        if p.is_file()
    }


@pytest.mark.slow
def test_read_only_commands_create_nothing_and_import_no_scikit_learn(
    data_dir, tmp_path, serve, database, postgres_url, capsys
):
    # GIVEN a data folder a round has filled
    sources = write_sources(tmp_path / "s.yaml", [("뉴시스", serve("/g.xml", "good.xml"), "정치")])
    env = environ(data_dir, DATABASE_URL=postgres_url)
    assert main(["collect", "--sources", str(sources)], env) == 0
    capsys.readouterr()
    before = files_of(data_dir)
    # WHEN `issues` and `feeds` run THEN they touch no file and load no numeric stack or moto
    for args in (["issues"], ["issues", "--json"], ["feeds"], ["feeds", "--json"]):
        result, out = probe(*args, env=env)
        assert result == {"code": 0, "heavy": []}, args
        assert out
    assert files_of(data_dir) == before
    # AND with nothing collected and no DATABASE_URL, nothing is made at all (not even pgserver's)
    empty = tmp_path / "empty"
    empty.mkdir()
    result, out = probe("issues", env=environ(empty))
    assert (result, out) == ({"code": 0, "heavy": []}, "No issues yet.\n")
    result, out = probe("feeds", env=environ(empty))
    assert result["code"] == 0
    assert list(empty.iterdir()) == []


@pytest.mark.slow
def test_read_only_commands_create_no_aws_resource(aws_env, tmp_path):
    sqs, dynamodb = aws_env.client("sqs"), aws_env.client("dynamodb")
    StateTable(dynamodb, "newsdesk-state").save(records()[1])

    def resources():
        return (
            sorted(sqs.list_queues().get("QueueUrls", [])),
            sorted(dynamodb.list_tables()["TableNames"]),
            dynamodb.scan(TableName="newsdesk-state")["Items"],
        )

    before = resources()
    env = {**os.environ, "NEWSDESK_DATA_DIR": str(tmp_path / "none")}
    env.pop("STATE_TABLE_NAME", None)  # the emulator's own table, by the template's name
    for args in (["issues"], ["feeds"]):
        result, out = probe(*args, env=env)
        assert result == {"code": 0, "heavy": []}, args
    assert "Feed: 프레시안 | 정치 | Failed (http_5xx)" in out
    assert resources() == before
    assert not (tmp_path / "none").exists()


def test_an_old_items_error_class_is_unknown_not_a_crash(data_dir, capsys):
    # an item written before the error class was kept
    item = to_item(records()[1])
    del item["last_error_class"]
    assert from_item(FeedState, item).last_error_class is None
    data_dir.mkdir(parents=True)
    store_tables(data_dir, {"StateTable": [item]})
    assert load_tables(data_dir)["StateTable"] == [item]
    assert main(["feeds"], environ(data_dir)) == 0
    assert "| Failed (unknown) 2026-12-01 14:00 KST: HTTP 503 |" in capsys.readouterr().out


def test_feeds_lists_every_feed_of_the_sources_file_tried_or_not(
    database, aws_env, serve, tmp_path, capsys
):
    # GIVEN an outlet of six feeds collected by the worker's collector: all fine in one round,
    # then the first two answering 503 in the next, which trips its breaker before the other
    # four; and the sources file naming a seventh feed no round has had yet
    from newsdesk.collect.collector import CollectPolicy, OutletCollector
    from newsdesk.core.messages import OutletMessage
    from newsdesk.core.settings import Settings
    from newsdesk.core.sources import Feed, Outlet
    from newsdesk.storage.articles import ArticleStore

    paths = [f"/hani/{n}.xml" for n in range(6)]
    urls = [serve(path, "good.xml") for path in paths]
    added = serve("/hani/new.xml", "good.xml")
    settings = Settings(fetch_allow_private_networks=True, fetch_interval_seconds=0)
    states = StateTable(aws_env.client("dynamodb"), "newsdesk-state")
    outlet = Outlet("한겨레", tuple(Feed("한겨레", url, "사회") for url in urls))
    first = utc_now().replace(microsecond=0) - timedelta(minutes=40)  # open 20 minutes more
    for n, at in enumerate((first, first + timedelta(minutes=30))):
        if n == 1:
            for path in paths[:2]:
                serve(path, status=503, body=b"")
        collector = OutletCollector(
            CollectPolicy.from_settings(settings),
            ArticleStore(database),
            states,
            clock=functools.partial(operator.add, at, timedelta(minutes=1)),
        )
        collector.collect(OutletMessage(outlet, at, ignore_schedule=True))
    sources = write_sources(
        tmp_path / "sources.yaml", [("한겨레", url, "사회") for url in [*urls, added]]
    )
    env = {**os.environ, "NEWSDESK_DATA_DIR": str(tmp_path / "none")}
    command = ["feeds", "--table", "newsdesk-state", "--sources", str(sources)]
    # WHEN `feeds` lists it THEN every feed of the file, each skipped one saying why
    assert main([*command, "--json"], env) == 0
    (listed,) = json.loads(capsys.readouterr().out)["outlets"]
    skipped = {f["url"]: f["skipped"] for f in listed["feeds"]}
    assert skipped == {
        **dict.fromkeys(urls[:2]),
        **dict.fromkeys(urls[2:], "not_tried_this_round"),
        added: "never_tried",
    }
    assert main(command, env) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("| 2 of 7 feeds failing, 5 not tried")
    untried = "| Not tried this round (its outlet's breaker tripped first) |"
    assert sum(untried in line for line in lines) == 4
    assert sum("| Never tried |" in line for line in lines) == 1
    assert lines[-1].startswith(
        "Outlets: 1 (1 cooling down, 0 half-open); feeds: 7 (2 failing, 1 never tried, "
        "4 not tried this round)"
    )
    # AND the feeds its breaker keeps from being asked are next checked when the breaker lets
    # the outlet be tried, not "at the next round" while it cools down
    open_until = datetime.fromisoformat(listed["breaker"]["open_until"])
    assert open_until > utc_now()
    until = local_time(open_until, Settings.from_env(env).zone)
    waiting = [line for line in lines if "Not tried this round" in line or "Never tried" in line]
    assert len(waiting) == 5
    assert all(f"| next check {until} |" in line for line in waiting)
    assert not any("next check at the next round" in line for line in lines)
    # AND --failing keeps the outlet's counts of all its feeds
    assert main([*command, "--failing"], env) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith("| 2 of 7 feeds failing, 5 not tried")
