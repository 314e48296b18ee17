"""HTTP for feeds: one deadline for the whole download, a size cap, and a private-network guard.

``requests`` only bounds each socket operation, so a server that trickles one byte a second
never times out. Here every socket a fetch opens is watched by a timer that shuts it down at the
fetch's deadline, whatever phase (TLS, headers, body) it is in.

The guard checks the address a connection actually reached, after connecting and before any
byte is sent. That covers redirects and DNS rebinding alike; the cost is one TCP handshake with
a refused address.

A failure is said in words (``DNS lookup failed for www.yna.co.kr``, ``timed out after 10 s``):
the ``FetchError``'s message is what a terminal line and the feed's state carry, its ``kind``
names the failure, and its ``detail`` keeps requests' and urllib3's exception chain for the log.
"""

from __future__ import annotations

import contextlib
import errno
import http.client
import ipaddress
import os
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

import requests
import urllib3.exceptions
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from newsdesk.core.errors import (
    BlockedAddressError,
    FetchError,
    FetchTimeoutError,
    HTTPStatusError,
    ResponseTooLargeError,
)
from newsdesk.core.fetched import FetchResult
from newsdesk.core.settings import Settings

CHUNK_BYTES = 16 * 1024
MAX_REDIRECTS = 5
DETAIL_CHARS = 4000
# The instance metadata service, by its IPv4 and IPv6 addresses.
METADATA_ADDRESSES = {ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254")}
RFC1918_AND_ULA = tuple(
    ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
)


@dataclass(frozen=True)
class FetchPolicy:
    timeout_seconds: float
    max_bytes: int
    user_agent: str
    allow_private_networks: bool = False
    # the From header (OPERATOR_CONTACT, when an e-mail address): sent with every request,
    # a feed's own User-Agent's too, so that one names the operator as well
    from_address: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> FetchPolicy:
        return cls(
            timeout_seconds=settings.fetch_timeout_seconds,
            max_bytes=settings.fetch_max_bytes,
            user_agent=settings.user_agent,
            allow_private_networks=settings.fetch_allow_private_networks,
            from_address=settings.from_address,
        )

    def with_user_agent(self, user_agent: str | None) -> FetchPolicy:
        """This policy with a feed's own User-Agent, when it has one (From stays)."""
        return replace(self, user_agent=user_agent) if user_agent else self


def _address(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def is_blocked_address(address: str) -> bool:
    """True for anything but a public unicast address: loopback, private, link-local (the
    instance metadata service), shared, reserved, multicast, unspecified."""
    ip = _address(address)
    return not ip.is_global or ip.is_multicast


def describe_blocked(address: str) -> str:
    """Why ``address`` is refused, in words, and the setting that allows it."""
    ip = _address(address)
    if ip.is_loopback:
        kind = "a loopback address"
    elif ip.is_unspecified:
        kind = "an unspecified address"
    elif ip.is_multicast:
        kind = "a multicast address"
    elif ip.is_link_local:
        kind = "a link-local address"
    elif any(ip in network for network in RFC1918_AND_ULA):
        kind = "a private address"
    elif ip in ipaddress.ip_network("100.64.0.0/10"):
        kind = "a shared (carrier-grade NAT) address"
    else:
        kind = "a reserved address"
    if ip in METADATA_ADDRESSES:
        kind += " (the instance metadata service)"
    return f"refused {address}: {kind} (set FETCH_ALLOW_PRIVATE_NETWORKS=true for local feeds)"


class _Watch:
    """The per-fetch deadline and guard, seen by every connection the fetch opens."""

    def __init__(self, policy: FetchPolicy) -> None:
        self.policy = policy
        self.deadline = time.monotonic() + policy.timeout_seconds
        self.expired = False
        self._timers: list[threading.Timer] = []

    def remaining(self) -> float:
        return max(0.001, self.deadline - time.monotonic())

    def connected(self, sock: socket.socket) -> None:
        if not self.policy.allow_private_networks:
            peer = sock.getpeername()[0]
            if is_blocked_address(peer):
                sock.close()
                raise BlockedAddressError(describe_blocked(peer))
        timer = threading.Timer(self.remaining(), self._cut, (sock,))
        timer.daemon = True
        timer.start()
        self._timers.append(timer)

    def _cut(self, sock: socket.socket) -> None:
        self.expired = True
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)

    def stop(self) -> None:
        for timer in self._timers:
            timer.cancel()


_active: ContextVar[_Watch | None] = ContextVar("newsdesk_fetch_watch", default=None)


class _WatchedHTTPConnection(HTTPConnection):
    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        watch = _active.get()
        if watch is not None:
            watch.connected(sock)
        return sock


class _WatchedHTTPSConnection(_WatchedHTTPConnection, HTTPSConnection):
    pass


class _WatchedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


class _WatchedAdapter(HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {
            "http": _WatchedHTTPPool,
            "https": _WatchedHTTPSPool,
        }


@contextlib.contextmanager
def _session() -> Iterator[requests.Session]:
    # A session per fetch: a pooled connection from an earlier fetch would escape this one's
    # deadline watch.
    session = requests.Session()
    session.max_redirects = MAX_REDIRECTS
    session.trust_env = False
    adapter = _WatchedAdapter(max_retries=0)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    try:
        yield session
    finally:
        session.close()


def fetch(
    url: str,
    policy: FetchPolicy,
    etag: str | None = None,
    last_modified: str | None = None,
    follow_redirects: bool = True,
) -> FetchResult:
    """Download ``url`` within ``policy``, conditionally when validators are given (a 304
    comes back as a result with no content); any failure raises a ``FetchError``. With
    ``follow_redirects`` false a redirect is an answer: its status and Location, no body
    (the extractor follows a page's hops itself, each host's robots.txt first)."""
    headers = {"User-Agent": policy.user_agent, "Accept-Encoding": "gzip, deflate"}
    if policy.from_address:
        headers["From"] = policy.from_address
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    watch = _Watch(policy)
    token = _active.set(watch)
    started = time.monotonic()
    try:
        with _session() as session:
            response = session.get(
                url,
                headers=headers,
                timeout=(watch.remaining(), watch.remaining()),
                stream=True,
                allow_redirects=follow_redirects,
            )
            with response:
                status = response.status_code
                hop = not follow_redirects and response.is_redirect
                if status != 304 and not 200 <= status < 300 and not hop:
                    raise HTTPStatusError(
                        status, response.url, response.headers.get("Retry-After", "")
                    )
                empty = status == 304 or hop
                content = b"" if empty else _read_body(response, policy.max_bytes, watch)
                return FetchResult(
                    url=response.url,
                    status=status,
                    content=content,
                    headers=dict(response.headers),
                    elapsed_seconds=time.monotonic() - started,
                    wire_bytes=response.raw.tell(),
                )
    except requests.Timeout as e:
        raise FetchTimeoutError(_timeout_message(policy), detail=exception_chain(e)) from e
    except requests.RequestException as e:
        if watch.expired:
            raise FetchTimeoutError(_timeout_message(policy), detail=exception_chain(e)) from e
        kind, message = in_words(e, url)
        raise FetchError(message, kind=kind, detail=exception_chain(e)) from e
    finally:
        watch.stop()
        _active.reset(token)


def _read_body(response: requests.Response, max_bytes: int, watch: _Watch) -> bytes:
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise ResponseTooLargeError(
            f"Content-Length {declared} is over FETCH_MAX_BYTES ({max_bytes} bytes)"
        )
    body = bytearray()
    # iter_content decodes gzip, so the cap holds for the expanded size too.
    for chunk in response.iter_content(chunk_size=CHUNK_BYTES):
        body += chunk
        if len(body) > max_bytes:
            raise ResponseTooLargeError(f"body is over FETCH_MAX_BYTES ({max_bytes} bytes)")
    if watch.expired:
        raise FetchTimeoutError(_timeout_message(watch.policy))
    return bytes(body)


def _timeout_message(policy: FetchPolicy) -> str:
    return f"timed out after {policy.timeout_seconds:g} s"


def _chain(error: BaseException) -> list[BaseException]:
    """``error``, its causes and contexts, and the exceptions urllib3 keeps in its arguments
    (``ProtocolError("Connection aborted.", ConnectionResetError(…))``), outermost first."""
    seen: list[BaseException] = []
    pending: list[BaseException] = [error]
    while pending:
        current = pending.pop(0)
        if any(current is e for e in seen):
            continue
        seen.append(current)
        nested = [a for a in current.args if isinstance(a, BaseException)]
        reason = getattr(current, "reason", None)  # MaxRetryError's
        if isinstance(reason, BaseException):
            nested.append(reason)
        for e in (*nested, current.__cause__, current.__context__):
            if e is not None:
                pending.append(e)
    return seen


def exception_chain(error: BaseException) -> str:
    """The whole chain, one exception after another, for the log."""
    parts = [f"{type(e).__module__}.{type(e).__qualname__}: {e}" for e in _chain(error)]
    return " <- ".join(parts)[:DETAIL_CHARS]


def _where(url: str) -> str:
    """The host (and port, when the URL names one) of ``url``, without credentials."""
    parts = urlsplit(url)
    host = parts.hostname or url
    host = f"[{host}]" if ":" in host else host
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{host}:{port}" if port else host


def in_words(error: requests.RequestException, url: str) -> tuple[str, str]:
    """(kind, message) for a request that failed other than by the deadline: DNS, refused,
    reset, closed, TLS, unreachable, redirects, a broken or undecodable answer."""
    request = getattr(error, "request", None)
    failed_url = getattr(request, "url", None) or url  # the hop that failed, after redirects
    where, host = _where(failed_url), urlsplit(failed_url).hostname or failed_url
    chain = _chain(error)

    def has(*kinds: type[BaseException]) -> BaseException | None:
        return next((e for e in chain if isinstance(e, kinds)), None)

    if isinstance(error, requests.TooManyRedirects):
        return "redirects", f"more than {MAX_REDIRECTS} redirects"
    if isinstance(error, requests.exceptions.InvalidURL | requests.exceptions.MissingSchema):
        return "invalid_url", "not a URL that can be fetched"
    if isinstance(error, requests.exceptions.InvalidSchema):
        return "invalid_url", "not an http or https URL"
    if has(socket.gaierror, urllib3.exceptions.NameResolutionError):
        return "dns", f"DNS lookup failed for {host}"
    if (certificate := has(ssl.SSLCertVerificationError)) is not None:
        why = getattr(certificate, "verify_message", "") or "not verified"
        return "tls", f"TLS certificate of {where} not accepted: {why}"
    if (tls := has(ssl.SSLError)) is not None:
        why = str(getattr(tls, "reason", "") or "").replace("_", " ").lower() or "no reason given"
        return "tls", f"TLS handshake with {where} failed: {why}"
    if has(ConnectionRefusedError):
        return "refused", f"connection refused by {where}"
    if has(http.client.RemoteDisconnected):  # a ConnectionResetError too: before it
        return "closed", f"{where} closed the connection without an answer"
    if has(ConnectionResetError):
        return "reset", f"connection reset by {where}"
    unreachable = next(
        (
            e
            for e in chain
            if isinstance(e, OSError) and e.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH)
        ),
        None,
    )
    if isinstance(unreachable, OSError) and unreachable.errno is not None:
        return "unreachable", f"{where} unreachable: {os.strerror(unreachable.errno).lower()}"
    if isinstance(error, requests.exceptions.ContentDecodingError):
        return "decoding", f"the compressed answer of {where} could not be decoded"
    if isinstance(error, requests.exceptions.ChunkedEncodingError) or has(
        http.client.IncompleteRead, urllib3.exceptions.ProtocolError
    ):
        return "broken", f"{where} broke off the answer"
    root = chain[-1]
    return "other", f"connection to {where} failed ({type(root).__name__})"
