"""fetch() against a real HTTP server on 127.0.0.1. No other address is ever contacted: the
guard is checked by resolving names and by refusing the loopback server in strict mode."""

import gzip
import time

import pytest

from newsdesk import __version__
from newsdesk.collect import fetch as fetch_module
from newsdesk.collect.fetch import FetchPolicy, fetch, is_blocked_address
from newsdesk.core.errors import (
    BlockedAddressError,
    FetchError,
    FetchTimeoutError,
    HTTPStatusError,
    ResponseTooLargeError,
)
from newsdesk.core.settings import Settings
from tests.conftest import CONTACT, USER_AGENT

LOOPBACK = FetchPolicy(
    timeout_seconds=2,
    max_bytes=100_000,
    user_agent=USER_AGENT,
    allow_private_networks=True,
    from_address=CONTACT,
)
STRICT = FetchPolicy(timeout_seconds=2, max_bytes=100_000, user_agent=USER_AGENT)


def test_good_feed_is_downloaded_with_an_honest_user_agent(serve, feed_server):
    url = serve("/good.xml", "good.xml")
    result = fetch(url, LOOPBACK)
    assert result.status == 200
    assert result.content.startswith(b"<?xml")
    assert result.content_type == "application/rss+xml; charset=utf-8"
    assert feed_server.requests["/good.xml"] == 1
    # the header a web firewall reads names newsdesk, whom to ask and what it fetches, and
    # not the library's "python-requests", which firewalls commonly block
    (headers,) = feed_server.request_headers["/good.xml"]
    assert headers["User-Agent"] == USER_AGENT
    assert (
        f"newsdesk/{__version__} ({CONTACT}; collects news feeds and the article pages they "
        "link to)"
    ) == USER_AGENT
    assert "python-requests" not in USER_AGENT.lower()
    assert headers["From"] == CONTACT  # RFC 9110 10.1.2: a robot SHOULD send one


def test_headers_are_read_by_name_in_any_case(serve):
    # GIVEN a server that names its headers in lower case (field names are case-insensitive)
    headers = (("content-type", "application/rss+xml; charset=euc-kr"), ("etag", '"v1"'))
    url = serve("/lower.xml", "good.xml", content_type=None, headers=headers)
    # WHEN it is fetched THEN its media type and charset, and its validator, are read
    result = fetch(url, LOOPBACK)
    assert result.content_type == "application/rss+xml; charset=euc-kr"
    assert result.header("ETag") == '"v1"'
    assert dict(result.headers)["content-type"] == "application/rss+xml; charset=euc-kr"


def test_the_policy_user_agent_is_the_one_sent_and_from_names_the_operator_with_it(
    serve, feed_server
):
    url = serve("/good.xml", "good.xml")
    fetch(url, LOOPBACK.with_user_agent("Mozilla/5.0 (X11; Linux x86_64)"))
    fetch(url, LOOPBACK.with_user_agent(None))  # no override: the policy's own
    sent = [(h["User-Agent"], h["From"]) for h in feed_server.request_headers["/good.xml"]]
    # a feed's own User-Agent is sent as written; the operator's address goes with it
    assert sent == [("Mozilla/5.0 (X11; Linux x86_64)", CONTACT), (USER_AGENT, CONTACT)]


def test_a_url_contact_is_named_by_the_user_agent_and_sends_no_from(serve, feed_server):
    # From holds a mailbox only (RFC 9110 10.1.2): a URL contact is the User-Agent's alone
    settings = Settings(
        operator_contact="https://ops.example.org/newsdesk", fetch_allow_private_networks=True
    )
    url = serve("/good.xml", "good.xml")
    fetch(url, FetchPolicy.from_settings(settings).with_user_agent(None))
    (headers,) = feed_server.request_headers["/good.xml"]
    assert "+https://ops.example.org/newsdesk;" in headers["User-Agent"]
    assert "From" not in headers


@pytest.mark.parametrize("status", [404, 500, 503])
def test_error_status_fails(serve, status):
    url = serve("/x.xml", body=b"nope", status=status, content_type="text/plain")
    with pytest.raises(HTTPStatusError) as caught:
        fetch(url, LOOPBACK)
    assert caught.value.status == status


def test_a_server_that_never_answers_is_cut_at_the_deadline(serve):
    url = serve("/hang.xml", mode="hang")
    started = time.monotonic()
    with pytest.raises(FetchTimeoutError):
        fetch(url, LOOPBACK)
    # bounded by the 2 s policy plus scheduling slack, not by a per-read timeout loop
    assert time.monotonic() - started < 2 + 3


def test_a_trickling_server_cannot_hold_the_fetch(serve):
    # One byte every 0.2 s: each read succeeds, only the whole-download deadline stops it.
    url = serve("/trickle.xml", "good.xml", mode="trickle", interval=0.2)
    started = time.monotonic()
    with pytest.raises(FetchTimeoutError):
        fetch(url, LOOPBACK)
    assert time.monotonic() - started < 2 + 3


def test_a_body_stalled_past_the_deadline_is_a_timeout_whichever_side_notices_first(
    serve, monkeypatch: pytest.MonkeyPatch
):
    # GIVEN a server that sends its headers and a little of a body of no length, then holds the
    # connection; and the deadline's timer, which cuts the socket, not yet run when the read's
    # own timeout ends (a loaded machine: requests then raises a ConnectionError)
    monkeypatch.setattr(fetch_module._Watch, "_cut", lambda _watch, _sock: None)
    url = serve("/stall.xml", body=b"<rss>", headers=(("Content-Length", "\u00b2"),))

    # WHEN it is fetched THEN the fetch timed out: it is no connection failure
    with pytest.raises(FetchTimeoutError):
        fetch(url, LOOPBACK)


def test_declared_oversized_body_is_refused_before_reading(serve):
    url = serve("/big.xml", body=b"x" * 200_000)
    with pytest.raises(ResponseTooLargeError, match="Content-Length"):
        fetch(url, LOOPBACK)


def test_gzip_body_is_capped_on_its_expanded_size(serve):
    expanded = b"<rss>" + b" " * 500_000 + b"</rss>"
    url = serve("/bomb.xml", body=gzip.compress(expanded), headers=(("Content-Encoding", "gzip"),))
    with pytest.raises(ResponseTooLargeError, match="body is over"):
        fetch(url, LOOPBACK)


def test_redirects_are_followed(serve):
    target = serve("/good.xml", "good.xml")
    url = serve("/moved", status=301, headers=(("Location", target),))
    assert fetch(url, LOOPBACK).url == target


def test_a_redirect_loop_fails(serve):
    url = serve("/loop", status=302, headers=(("Location", "/loop"),))
    with pytest.raises(FetchError, match="redirects"):
        fetch(url, LOOPBACK)


def test_strict_mode_refuses_loopback_before_sending_a_request(serve, feed_server):
    url = serve("/good.xml", "good.xml")
    with pytest.raises(BlockedAddressError, match=r"127\.0\.0\.1"):
        fetch(url, STRICT)
    assert feed_server.requests["/good.xml"] == 0


def test_strict_mode_refuses_localhost_by_name(serve, feed_server):
    url = serve("/good.xml", "good.xml").replace("127.0.0.1", "localhost")
    with pytest.raises(BlockedAddressError):
        fetch(url, STRICT)
    assert feed_server.requests["/good.xml"] == 0


@pytest.mark.integration
def test_connection_refused_is_a_fetch_error():
    # a port nobody listens on, on loopback
    with pytest.raises(FetchError):
        fetch("http://127.0.0.1:9/feed.xml", LOOPBACK)


@pytest.mark.parametrize(
    ("address", "blocked"),
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("10.1.2.3", True),
        ("172.16.0.1", True),
        ("192.168.0.10", True),
        ("169.254.169.254", True),  # instance metadata
        ("fd00:ec2::254", True),  # instance metadata over IPv6
        ("100.64.0.1", True),
        ("0.0.0.0", True),
        ("224.0.0.1", True),
        ("::ffff:127.0.0.1", True),
        ("fe80::1%eth0", True),
        ("203.0.113.5", True),  # documentation range, not global
        ("8.8.8.8", False),
        ("2001:4860:4860::8888", False),
    ],
)
def test_blocked_addresses(address, blocked):  # classification only: nothing connects to these
    assert is_blocked_address(address) is blocked


def test_a_redirect_can_be_had_as_the_answer_rather_than_followed(serve, feed_server):
    # the extractor follows a page's redirects itself, one host at a time
    target = serve("/good.xml", "good.xml")
    moved = serve("/moved", status=301, headers=(("location", "/good.xml"),))
    hop = fetch(moved, LOOPBACK, follow_redirects=False)
    assert (hop.status, hop.location, hop.content) == (301, "/good.xml", b"")
    assert feed_server.requests["/good.xml"] == 0
    followed = fetch(moved, LOOPBACK)  # the feeds' way: requests follows them
    assert (followed.url, followed.status, followed.location) == (target, 200, None)
