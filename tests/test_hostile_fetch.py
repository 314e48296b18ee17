"""The fetcher against hostile networks (issue 22), on 127.0.0.1 only: one deadline from the
first DNS query to the last byte across redirects, the guard before any TCP handshake, IPv4
inside IPv6 judged by our own table, decompression bombs, and URLs kept out of logs.

Slow DNS is played by a stand-in for the system resolver (``socket.getaddrinfo``, what the
fetcher asks), an unreachable address by a loopback listener whose queue is full (its SYNs go
unanswered). Nothing asserts on the clock: the fetcher reports the time each step was given
(``FetchError.steps``), which is what these tests read."""

from __future__ import annotations

import gzip
import json
import re
import socket
import sys
import threading
import tomllib
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from datetime import timedelta
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from newsdesk.aws.state_table import StateTable
from newsdesk.collect import fetch as fetching
from newsdesk.collect.fetch import (
    FetchPolicy,
    describe_blocked,
    fetch,
    is_blocked_address,
    loggable_url,
)
from newsdesk.core.errors import BlockedAddressError, FetchTimeoutError, ResponseTooLargeError
from newsdesk.core.hosts import ROBOTS_MISSING, HostState
from newsdesk.core.settings import LOCAL_CONTACT, user_agent_for
from newsdesk.core.times import parse_time, utc_now
from newsdesk_local.feedserver import Route
from tests.conftest import EXTRACT_ON, LogLines, article_page, extract_all, invoke, worker_event
from tests.test_extraction import rss

# its tests start servers or processes of their own (tests/conftest.py)
pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]
MB = 1024 * 1024


def policy(timeout: float, strict: bool = False) -> FetchPolicy:
    return FetchPolicy(
        timeout_seconds=timeout,
        max_bytes=100_000,
        user_agent=user_agent_for(LOCAL_CONTACT),
        allow_private_networks=not strict,
    )


@pytest.fixture
def resolver(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """names[name] = [addresses] (each on 127.0.0.1) or a threading.Event the lookup waits
    for: the system resolver for those names, as slow as the test makes it."""
    real = socket.getaddrinfo
    names: dict[str, Any] = {}
    released: list[threading.Event] = []

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        answer = names.get(host)
        if answer is None:
            return real(host, port, *args, **kwargs)
        if isinstance(answer, threading.Event):
            released.append(answer)
            answer.wait(5)  # a bound for code that waits for it; released at the end
            answer = names[f"{host} after"]
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port))) for address in answer
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield names
    for event in released:
        event.set()


def connects(error: FetchTimeoutError) -> list[float]:
    return [left for step, left in error.steps if step.startswith("connect ")]


# --- one deadline ----------------------------------------------------------------------------


def test_five_unreachable_addresses_share_one_deadline(resolver, unreachable):
    # GIVEN a name with five A records, none of which answers
    resolver["five.test"] = ["127.0.0.1"] * 5
    # WHEN it is fetched with 0.3 s
    with pytest.raises(FetchTimeoutError) as caught:
        fetch(f"http://five.test:{unreachable}/feed.xml", policy(0.3))
    # THEN the error says the deadline, and the first attempt had all that was left; the
    # next found none left and was not made (each used to have the whole timeout: 5 × 0.3 s)
    assert str(caught.value) == "timed out after 0.3 s"
    first, second = connects(caught.value)
    assert 0 < first <= 0.3
    assert second == 0
    assert [step for step, _ in caught.value.steps][:2] == [
        f"request five.test:{unreachable}",
        "resolve five.test",
    ]
    assert "steps: request five.test" in caught.value.detail


def test_a_slow_answer_then_a_redirect_gets_only_what_is_left(feed_server, unreachable):
    # GIVEN a server that answers after 0.2 s with a redirect to an address that never answers
    moved = feed_server.add(
        "/slow",
        Route(status=302, delay=0.2, headers=(("Location", f"http://127.0.0.1:{unreachable}/"),)),
    )
    # WHEN it is fetched with 0.5 s
    with pytest.raises(FetchTimeoutError) as caught:
        fetch(moved, policy(0.5))
    # THEN the redirect's request and connection had at most the 0.3 s left, not 0.5 s again
    steps = dict(caught.value.steps)
    redirect = steps[f"redirect to 127.0.0.1:{unreachable}"]
    assert redirect <= 0.5 - 0.2
    assert connects(caught.value)[-1] <= redirect
    lefts = [left for _, left in caught.value.steps]
    assert lefts == sorted(lefts, reverse=True)  # no step had more than the one before


def test_a_resolver_that_does_not_answer_is_left_at_the_deadline(resolver, feed_server):
    # GIVEN a name whose answer comes only long after the deadline (released at the end)
    resolver["slow.test"] = threading.Event()
    resolver["slow.test after"] = ["127.0.0.1"]
    url = feed_server.add("/feed.xml", Route(body=b"x"))
    # WHEN it is fetched with 0.2 s
    with pytest.raises(FetchTimeoutError) as caught:
        fetch(url.replace("127.0.0.1", "slow.test"), policy(0.2))
    # THEN the fetch stops waiting at the deadline, says so, and nothing was asked of the server
    assert str(caught.value) == "timed out after 0.2 s"
    assert caught.value.steps[-1][0] == "resolve slow.test"
    assert "no answer for slow.test within the deadline" in caught.value.detail
    assert feed_server.requests == {}


# --- the guard, before any handshake ---------------------------------------------------------


def test_an_internal_address_is_refused_before_any_handshake():
    # GIVEN a listener on loopback that accepts nothing (the kernel would complete handshakes)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        # WHEN strict mode fetches it
        with pytest.raises(BlockedAddressError, match=r"refused 127\.0\.0\.1: a loopback"):
            fetch(f"http://127.0.0.1:{port}/", policy(2, strict=True))
        # THEN no connection was ever made to it
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()


def test_a_closed_port_and_an_open_one_are_refused_alike(unused_port):
    # the error does not tell an open port from a closed one: neither is connected to
    with pytest.raises(BlockedAddressError) as closed:
        fetch(f"http://127.0.0.1:{unused_port}/", policy(2, strict=True))
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        with pytest.raises(BlockedAddressError) as open_:
            fetch(f"http://127.0.0.1:{listener.getsockname()[1]}/", policy(2, strict=True))
    assert str(closed.value) == str(open_.value)


def test_a_name_is_refused_by_any_internal_address_it_resolves_to(resolver, feed_server):
    resolver["inside.test"] = ["127.0.0.1"]
    url = feed_server.add("/feed.xml", Route(body=b"x"))
    with pytest.raises(BlockedAddressError):
        fetch(url.replace("127.0.0.1", "inside.test"), policy(2, strict=True))
    assert feed_server.requests == {}


@pytest.mark.parametrize(
    ("address", "words"),
    [
        ("64:ff9b::7f00:1", "a loopback address (127.0.0.1, by NAT64)"),
        ("64:ff9b::a00:1", "a private address (10.0.0.1, by NAT64)"),
        (
            "64:ff9b::a9fe:a9fe",
            "a link-local address (169.254.169.254, by NAT64) (the instance metadata service)",
        ),
        ("64:ff9b:1::a00:1", "a reserved address (local-use NAT64)"),
        ("::7f00:1", "a reserved address (IPv4-compatible, deprecated)"),
        ("::a00:1", "a reserved address (IPv4-compatible, deprecated)"),
        ("::ffff:10.0.0.1", "a private address"),
        ("::ffff:169.254.169.254", "a link-local address (the instance metadata service)"),
        ("2002:7f00:1::1", "a loopback address (127.0.0.1, by 6to4)"),
        ("2002:c0a8:101::", "a private address (192.168.1.1, by 6to4)"),
        ("2001::1", "a reserved address (Teredo)"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "a reserved address (Teredo)"),
        ("fec0::1", "a private address (site-local, deprecated)"),
        ("2001:db8::1", "a reserved address"),
        ("100::1", "a reserved address"),
        ("5f00::1", "a reserved address"),
        ("::", "an unspecified address"),
        ("255.255.255.255", "a reserved address"),
        ("198.18.0.1", "a reserved address"),
    ],
)
def test_ipv4_inside_ipv6_is_judged_by_our_table(address, words):
    # classification only: nothing connects to these; the same on every interpreter
    assert describe_blocked(address) == (
        f"refused {address}: {words} (set FETCH_ALLOW_PRIVATE_NETWORKS=true for local feeds)"
    )


@pytest.mark.parametrize(
    "address",
    ["8.8.8.8", "64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8", "2001:4860:4860::8888"],
)
def test_public_addresses_stay_public_in_every_form(address):
    assert not is_blocked_address(address)


def test_the_table_does_not_read_the_interpreters_flags():
    source = (ROOT / "layers/common/newsdesk/collect/addresses.py").read_text(encoding="utf-8")
    assert "from newsdesk.collect.addresses import" in Path(fetching.__file__).read_text("utf-8")
    assert not re.search(r"\.is_(global|private|reserved|loopback|link_local)", source)


# --- decompression bombs ---------------------------------------------------------------------

URLLIB3_FLOOR = (2, 7)  # 2.6.0: the chain and streaming bombs; 2.6.3, 2.7.0: the rest


def _floor(requirement: str) -> tuple[int, ...]:
    match = re.match(r"urllib3>=([0-9.]+)", requirement.replace(" ", ""))
    assert match, requirement
    return tuple(int(part) for part in match.group(1).split("."))


def test_urllib3_is_declared_with_a_floor_that_holds_on_bombs():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (declared,) = [d for d in project["project"]["dependencies"] if d.startswith("urllib3")]
    layer = (ROOT / "layers/common/requirements.in").read_text(encoding="utf-8").splitlines()
    (ranged,) = [line for line in layer if line.startswith("urllib3")]
    assert declared.replace(" ", "") == ranged.replace(" ", "")
    assert _floor(declared) >= URLLIB3_FLOOR
    # what the layer's lock pins, and what this environment runs
    lock = (ROOT / "layers/common/requirements.txt").read_text(encoding="utf-8")
    (pinned,) = re.findall(r"^urllib3==([0-9.]+)", lock, re.M)
    for found in (pinned, version("urllib3")):
        assert tuple(int(p) for p in found.split(".")[:2]) >= URLLIB3_FLOOR


@pytest.fixture(scope="module")
def double_gzip_bomb() -> bytes:
    """gzip inside gzip: 64 MB of zeros in a few hundred bytes."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = b"\0" * MB
    inner = b"".join([compressor.compress(zeros) for _ in range(64)] + [compressor.flush()])
    return gzip.compress(inner, 9)


def peak_of(call: Callable[[], object]) -> tuple[object, int]:
    tracemalloc.start()
    try:
        try:
            outcome: object = call()
        except Exception as e:  # the test reads what it was
            outcome = e
        return outcome, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_gzip_gzip_answer_is_capped_without_expanding(serve, double_gzip_bomb):
    url = serve("/bomb.xml", body=double_gzip_bomb, headers=(("Content-Encoding", "gzip, gzip"),))
    outcome, peak = peak_of(lambda: fetch(url, policy(5)))
    assert isinstance(outcome, ResponseTooLargeError)
    assert peak < 16 * MB


def test_a_redirect_with_a_bomb_for_a_body_is_followed_unread(serve, double_gzip_bomb):
    # GIVEN a redirect whose body is a bomb (requests would read and decompress it whole)
    target = serve("/feed.xml", body=b"<rss/>")
    url = serve(
        "/moved",
        status=302,
        body=double_gzip_bomb,
        headers=(("Location", target), ("Content-Encoding", "gzip, gzip")),
    )
    # WHEN it is fetched THEN the target is what comes back, the bomb never expanded
    outcome, peak = peak_of(lambda: fetch(url, policy(5)))
    assert getattr(outcome, "content", None) == b"<rss/>"
    assert peak < 16 * MB


# --- URLs out of logs ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "logged"),
    [
        ("https://news.example/a/1?token=secret&id=2", "https://news.example/a/1?…"),
        ("https://user:pw@news.example:8443/rss", "https://news.example:8443/rss"),
        ("http://[::1]:80/x?y", "http://[::1]:80/x?…"),
        ("https://news.example/" + "a" * 400, "https://news.example/" + "a" * 299 + "…"),
        ("http://[broken/x?secret", "http://[broken/x?…"),
    ],
)
def test_a_url_is_logged_by_host_and_path(url, logged):
    assert fetching.loggable_url(url) == logged


SECRET = "token=s3cr3t-0f-the-reader"


def test_the_worker_and_extractor_log_no_query_strings(aws_env, database, serve, capsys):
    # GIVEN URLs whose query strings carry a secret: a feed of three pages (one had, one that
    # redirects to a page answering 503, one on a port nothing listens on, its host's robots.txt
    # already read) and a feed on that port: exception chains that name the URLs whole
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, not listening: refused
    port = closed.getsockname()[1]
    had = serve(f"/view/1?{SECRET}", body=article_page("기사"), content_type="text/html")
    busy = serve(f"/busy/2?{SECRET}", status=503, body=b"busy", content_type="text/html")
    moved = serve(f"/view/2?{SECRET}", status=302, headers=(("Location", busy),))
    refused = f"http://127.1:{port}/view/3?{SECRET}"  # 127.1: 127.0.0.1, a host of its own
    StateTable(aws_env.client("dynamodb"), "newsdesk-state").save(
        HostState("127.1", robots_status=ROBOTS_MISSING, robots_fetched_at=utc_now())
    )
    pages = [("국회 예산안 통과", had), ("여야 협상 결렬", moved), ("정부 발표", refused)]
    feed = serve(f"/f.xml?{SECRET}", body=rss(pages))
    gone = f"http://127.0.0.1:{port}/gone.xml?{SECRET}"
    log = LogLines(capsys)
    log.start()
    try:
        # WHEN a round collects both feeds and the extractor takes the pages
        event = worker_event([(feed, "정치"), (gone, "정치")], ignore_schedule=True)
        invoke("worker", event, **EXTRACT_ON)
        reports = {r["url"]: r for r in extract_all(aws_env)}
        lines = log.read()
    finally:
        log.stop()
        closed.close()
    assert [reports[url]["status"] for url in (had, moved, refused)] == ["extract_ok"] + [
        "extract_error"
    ] * 2
    # THEN the lines that name those URLs name them by host and path
    logged = {(line.get("message"), line.get("url") or line.get("feed")) for line in lines}
    assert {
        ("feed failed", loggable_url(gone)),
        ("page failed", loggable_url(moved)),
        ("page failed", loggable_url(refused)),
        ("article extracted", loggable_url(had)),
    } <= logged
    assert all("?…" in loggable_url(url) for url in (gone, moved, refused, had))
    # AND no line carries the secret, in any field (an exception chain names a URL whole)
    assert [line for line in lines if SECRET in json.dumps(line, ensure_ascii=False)] == []
    assert any("Max retries exceeded" in line.get("detail", "") for line in lines)


if sys.platform != "linux":  # the full listener queue drops SYNs as Linux does
    pytestmark = [pytest.mark.integration, pytest.mark.skip("Linux's listen queue behaviour")]


# --- numbers a server sends (issue 39, point 3) ------------------------------------------------

ROUND_SECONDS, DAY, WEEK = 1800, 24 * 3600, 7 * 24 * 3600


def next_check(aws_env: Any, event: dict[str, Any], url: str) -> timedelta:
    """How long after the message's ``scheduled_at`` the worker scheduled ``url`` again."""
    _, feeds = StateTable(aws_env.client("dynamodb"), "newsdesk-state").outlet("연합뉴스")
    at = parse_time(json.loads(event["Records"][0]["body"])["scheduled_at"])
    due = feeds[url].next_check_at
    assert due is not None
    return due - at


@pytest.mark.parametrize(
    ("retry_after", "wait"),
    [
        ("\xb2", ROUND_SECONDS),  # "²": str.isdigit() takes it, int() refuses it: ignored
        ("1" * 20, WEEK),  # past what a timedelta holds: the cap
        ("9" * 400, WEEK),  # float() reads it as infinity: the cap
        ("120", ROUND_SECONDS),  # honoured, under the back-off's first step
        ("86400", DAY),  # honoured
        ("Fri, 31 Dec 9999 23:59:59 GMT", WEEK),  # a date as far as one goes: the cap
    ],
)
def test_a_retry_after_of_any_digits_is_the_feeds_failure_never_the_outlets(
    aws_env, database, serve, retry_after, wait
):
    """The attack: a 503 whose ``Retry-After`` is "²" (byte 0xB2), 20 digits or 400 digits
    failed the worker's whole record, every delivery; it is read as RFC 9110 defines it (ASCII
    digits, or a date), capped at the schedule's 7 days, and a bad one is ignored."""
    url = serve("/busy.xml", status=503, body=b"", headers=(("Retry-After", retry_after),))
    event = worker_event([(url, "정치")])
    response = invoke("worker", event)
    assert response["batchItemFailures"] == []
    (feed,) = response["outlets"][0]["feeds"]
    assert (feed["status"], feed["failure_class"]) == ("failed", "http_5xx")
    assert len(feed["error"]) < 60
    assert next_check(aws_env, event, url) == timedelta(seconds=wait)


@pytest.mark.parametrize(
    ("cache_control", "wait"),
    [
        ("max-age=" + "9" * 400, WEEK),  # float() reads it as infinity: the cap
        ("max-age=" + "1" * 20, WEEK),
        ("max-age=\xb2", ROUND_SECONDS),  # not delta-seconds: ignored
        ("max-age=86400", DAY),  # honoured
    ],
)
def test_a_max_age_of_any_digits_is_capped_never_the_outlets_failure(
    aws_env, database, serve, cache_control, wait
):
    """The attack: a feed answering ``Cache-Control: max-age`` of 400 digits failed the
    worker's whole record, every delivery; max-age is delta-seconds (RFC 9111 1.2.2, ASCII
    digits), capped at the schedule's 7 days."""
    url = serve("/p.xml", "good.xml", headers=(("Cache-Control", cache_control),))
    event = worker_event([(url, "정치")])
    response = invoke("worker", event)
    assert response["batchItemFailures"] == []
    assert response["outlets"][0]["feeds"][0]["status"] == "ok"
    assert next_check(aws_env, event, url) == timedelta(seconds=wait)
