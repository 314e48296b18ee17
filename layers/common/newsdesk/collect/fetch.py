"""HTTP for feeds: one deadline for the whole download, a size cap, and a private-network guard.

``requests`` only bounds each socket operation, so a server that trickles one byte a second
never times out. Here every socket a fetch opens is watched by a timer that shuts it down at the
fetch's deadline, whatever phase (TLS, headers, body) it is in.

The guard checks the address a connection actually reached, after connecting and before any
byte is sent. That covers redirects and DNS rebinding alike; the cost is one TCP handshake with
a refused address.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

import requests
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


@dataclass(frozen=True)
class FetchPolicy:
    timeout_seconds: float
    max_bytes: int
    user_agent: str
    allow_private_networks: bool = False

    @classmethod
    def from_settings(cls, settings: Settings) -> FetchPolicy:
        return cls(
            timeout_seconds=settings.fetch_timeout_seconds,
            max_bytes=settings.fetch_max_bytes,
            user_agent=settings.user_agent,
            allow_private_networks=settings.fetch_allow_private_networks,
        )

    def with_user_agent(self, user_agent: str | None) -> FetchPolicy:
        """This policy with a feed's own User-Agent, when it has one."""
        return replace(self, user_agent=user_agent) if user_agent else self


def is_blocked_address(address: str) -> bool:
    """True for anything but a public unicast address: loopback, private, link-local (the
    instance metadata service), shared, reserved, multicast, unspecified."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not ip.is_global or ip.is_multicast


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
                raise BlockedAddressError(f"refused to fetch from non-public address {peer}")
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
    url: str, policy: FetchPolicy, etag: str | None = None, last_modified: str | None = None
) -> FetchResult:
    """Download ``url`` within ``policy``, conditionally when validators are given (a 304
    comes back as a result with no content); any failure raises a ``FetchError``."""
    headers = {"User-Agent": policy.user_agent, "Accept-Encoding": "gzip, deflate"}
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
            )
            with response:
                status = response.status_code
                if status != 304 and not 200 <= status < 300:
                    raise HTTPStatusError(
                        status, response.url, response.headers.get("Retry-After", "")
                    )
                content = b"" if status == 304 else _read_body(response, policy.max_bytes, watch)
                return FetchResult(
                    url=response.url,
                    status=status,
                    content=content,
                    headers=dict(response.headers),
                    elapsed_seconds=time.monotonic() - started,
                    wire_bytes=response.raw.tell(),
                )
    except requests.Timeout as e:
        raise FetchTimeoutError(_timeout_message(policy)) from e
    except requests.TooManyRedirects as e:
        raise FetchError(f"more than {MAX_REDIRECTS} redirects") from e
    except requests.RequestException as e:
        if watch.expired:
            raise FetchTimeoutError(_timeout_message(policy)) from e
        raise FetchError(f"{type(e).__name__}: {e}") from e
    finally:
        watch.stop()
        _active.reset(token)


def _read_body(response: requests.Response, max_bytes: int, watch: _Watch) -> bytes:
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise ResponseTooLargeError(f"Content-Length {declared} is over {max_bytes} bytes")
    body = bytearray()
    # iter_content decodes gzip, so the cap holds for the expanded size too.
    for chunk in response.iter_content(chunk_size=CHUNK_BYTES):
        body += chunk
        if len(body) > max_bytes:
            raise ResponseTooLargeError(f"body is over {max_bytes} bytes")
    if watch.expired:
        raise FetchTimeoutError(_timeout_message(watch.policy))
    return bytes(body)


def _timeout_message(policy: FetchPolicy) -> str:
    return f"no complete answer within {policy.timeout_seconds:g} s"
