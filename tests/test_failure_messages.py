"""A failed feed in words (issue 13, point 4): one row per failure class and, for connection
failures, per kind, each produced by a real situation on 127.0.0.1 and collected by the worker.
The short message is what the report, the CLI and the state record carry; the exception chain
goes to the ``feed failed`` log line's ``detail``.

Nothing but 127.0.0.1 is contacted: the name that does not resolve (RFC 6761's ``.invalid``) is
answered by a stand-in for the system resolver, as the resolver answers it, so that no query
leaves the machine."""

from __future__ import annotations

import gzip
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from newsdesk.aws.clients import dynamodb_client
from newsdesk.aws.state_table import StateTable
from newsdesk.collect.fetch import describe_blocked
from newsdesk.core.report import FAILURE_CLASSES
from tests.conftest import invoke, worker_event

# its tests start servers or processes of their own (tests/conftest.py)
pytestmark = pytest.mark.integration


# A feed that crashes feedparser: an emoji written as a UTF-16 surrogate pair.
POISON = (
    b'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"'
    b' xmlns:cc="http://backend.userland.com/creativeCommonsRssModule"><channel><title>t</title>'
    b"<item><title>\xea\xb8\xb0\xec\x82\xac</title><link>https://example.test/poison</link></item>"
    # a broken tag, then a licence outside any item: feedparser's loose parser raises KeyError
    # (an emoji as a surrogate pair, the poison before issue 22, is now read)
    b"<i<title>tem><cc:license>x</cc:license></channel></rss>"
)
HTML = b"<!doctype html><html><head><title>Moved</title></head><body>gone</body></html>"
LONGEST = 160  # what a terminal line can spare for the error


@dataclass(frozen=True)
class Case:
    failure_class: str
    kind: str
    message: str  # {host}: the loopback server's host:port, {port} its port
    detail: str  # a fragment of the log line's detail: the exception chain's root
    env: tuple[tuple[str, str], ...] = ()


CASES = {
    "dns": Case("connection", "dns", "DNS lookup failed for nonexistent.invalid", "gaierror"),
    "refused": Case(
        "connection", "refused", "connection refused by 127.0.0.1:{port}", "ConnectionRefusedError"
    ),
    "reset": Case(
        "connection", "reset", "connection reset by 127.0.0.1:{port}", "ConnectionResetError"
    ),
    "closed": Case(
        "connection",
        "closed",
        "127.0.0.1:{port} closed the connection without an answer",
        "RemoteDisconnected",
    ),
    "tls": Case(
        "connection",
        "tls",
        "TLS handshake with 127.0.0.1:{port} failed: wrong version number",
        "WRONG_VERSION_NUMBER",
    ),
    "redirects": Case("connection", "redirects", "more than 5 redirects", "TooManyRedirects"),
    "timeout": Case(
        "timeout", "timeout", "timed out after 0.3 s", "", (("FETCH_TIMEOUT_SECONDS", "0.3"),)
    ),
    "http_4xx": Case("http_4xx", "http_status", "HTTP 404", ""),
    "http_5xx": Case("http_5xx", "http_status", "HTTP 503 (retry after 120 s)", ""),
    "http_5xx_date": Case(
        "http_5xx", "http_status", "HTTP 503 (retry after Wed, 21 Oct 2099 07:28:00 GMT)", ""
    ),
    "too_large_declared": Case(
        "too_large",
        "too_large",
        "Content-Length 5000 is over FETCH_MAX_BYTES (1000 bytes)",
        "",
        (("FETCH_MAX_BYTES", "1000"),),
    ),
    "too_large_body": Case(
        "too_large",
        "too_large",
        "body is over FETCH_MAX_BYTES (1000 bytes)",
        "",
        (("FETCH_MAX_BYTES", "1000"),),
    ),
    "blocked": Case(
        "blocked",
        "blocked_address",
        "refused 127.0.0.1: a loopback address "
        "(set FETCH_ALLOW_PRIVATE_NETWORKS=true for local feeds)",
        "",
        (("FETCH_ALLOW_PRIVATE_NETWORKS", "false"),),
    ),
    "not_a_feed": Case(
        "not_a_feed",
        "not_a_feed",
        "not an RSS or Atom feed: an HTML page",
        "text/html",
    ),
    "parse_error": Case(
        "parse_error",
        "parse_error",
        "could not be read: KeyError (a bug: the log has the traceback)",
        "KeyError",
    ),
}


def test_every_failure_class_has_a_row():
    assert {case.failure_class for case in CASES.values()} == set(FAILURE_CLASSES)


@pytest.fixture
def resolver(monkeypatch: pytest.MonkeyPatch) -> None:
    """The system resolver, but ``*.invalid`` fails as a resolver fails it (RFC 6761), here."""
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host.rstrip(".").endswith(".invalid"):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture
def raw_server() -> Iterator[Callable[[Callable[[socket.socket], None]], int]]:
    """raw_server(answer) -> a port on 127.0.0.1 whose first connection ``answer`` handles."""
    listeners: list[socket.socket] = []
    threads: list[threading.Thread] = []

    def start(answer: Callable[[socket.socket], None]) -> int:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listeners.append(listener)

        def serve() -> None:
            connection, _ = listener.accept()
            connection.recv(65536)  # the request, whole: it is one small write
            answer(connection)

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        threads.append(thread)
        return int(listener.getsockname()[1])

    yield start
    for thread in threads:
        thread.join(timeout=5)
    for listener in listeners:
        listener.close()


def reset(connection: socket.socket) -> None:
    # a zero linger: close() sends RST, not FIN
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()


def close(connection: socket.socket) -> None:
    connection.close()


def feed_url(
    name: str,
    serve: Callable[..., str],
    raw_server: Callable[[Callable[[socket.socket], None]], int],
    unused_port: int,
) -> str:
    """The situation of row ``name``, as a URL."""
    if name == "dns":
        return "http://nonexistent.invalid/feed.xml"
    if name == "refused":
        return f"http://127.0.0.1:{unused_port}/feed.xml"
    if name == "reset":
        return f"http://127.0.0.1:{raw_server(reset)}/feed.xml"
    if name == "closed":
        return f"http://127.0.0.1:{raw_server(close)}/feed.xml"
    if name == "tls":  # HTTPS against the plain-HTTP feed server
        return serve("/plain.xml", "good.xml").replace("http://", "https://")
    if name == "redirects":
        return serve("/loop", status=302, headers=(("Location", "/loop"),))
    if name == "timeout":
        return serve("/hang.xml", mode="hang")
    if name == "http_4xx":
        return serve("/gone.xml", status=404, body=b"not here", content_type="text/plain")
    if name == "http_5xx":
        return serve("/busy.xml", status=503, body=b"", headers=(("Retry-After", "120"),))
    if name == "http_5xx_date":
        date = (("Retry-After", "Wed, 21 Oct 2099 07:28:00 GMT"),)
        return serve("/busy.xml", status=503, body=b"", headers=date)
    if name == "too_large_declared":
        return serve("/big.xml", body=b"x" * 5000)
    if name == "too_large_body":  # small on the wire, too large once expanded
        body = gzip.compress(b"<rss>" + b" " * 5000 + b"</rss>")
        return serve("/bomb.xml", body=body, headers=(("Content-Encoding", "gzip"),))
    if name == "blocked":
        return serve("/good.xml", "good.xml")
    if name == "not_a_feed":
        return serve("/page", body=HTML, content_type="text/html; charset=utf-8")
    if name == "parse_error":
        return serve("/poison.xml", body=POISON)
    raise AssertionError(name)


@pytest.mark.parametrize("name", list(CASES))
def test_a_failed_feed_in_words(
    name, aws_env, database, serve, raw_server, unused_port, resolver, log_lines
):
    case = CASES[name]
    url = feed_url(name, serve, raw_server, unused_port)
    port = url.split("//", 1)[1].split("/", 1)[0].rpartition(":")[2]
    expected = case.message.format(port=port)
    log_lines.start()
    # WHEN the worker collects an outlet whose one feed fails so
    response = invoke("worker", worker_event([(url, "정치")]), **dict(case.env))
    # THEN the report (what the CLI prints) and the state record say it in words
    (outlet,) = response["outlets"]
    (feed,) = outlet["feeds"]
    assert (feed["status"], feed["failure_class"]) == ("failed", case.failure_class)
    assert feed["error"] == expected
    assert len(expected) <= LONGEST
    assert "\n" not in expected
    _, states = StateTable(dynamodb_client(), "newsdesk-state").outlet("연합뉴스")
    assert states[url].last_error == expected
    # AND the log line has the kind and the whole story
    (failed,) = [line for line in log_lines.read() if line.get("message") == "feed failed"]
    assert (failed["failure_class"], failed["kind"], failed["error"]) == (
        case.failure_class,
        case.kind,
        expected,
    )
    assert case.detail in failed["detail"]
    if case.failure_class == "connection" and name != "redirects":
        assert "_WatchedHTTP" not in feed["error"]  # the requests repr stays in the log


@pytest.mark.parametrize(
    ("address", "words"),
    [
        ("127.0.0.1", "a loopback address"),
        ("::1", "a loopback address"),
        ("10.1.2.3", "a private address"),
        ("192.168.0.10", "a private address"),
        ("169.254.169.254", "a link-local address (the instance metadata service)"),
        ("fd00:ec2::254", "a private address (the instance metadata service)"),
        ("100.64.0.1", "a shared (carrier-grade NAT) address"),
        ("0.0.0.0", "an unspecified address"),
        ("224.0.0.1", "a multicast address"),
        ("203.0.113.5", "a reserved address"),
        ("::ffff:127.0.0.1", "a loopback address"),
    ],
)
def test_a_refused_address_is_named_with_its_kind(address, words):
    # classification only: nothing connects to these
    assert describe_blocked(address) == (
        f"refused {address}: {words} (set FETCH_ALLOW_PRIVATE_NETWORKS=true for local feeds)"
    )
