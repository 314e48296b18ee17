"""HTTP for feeds and pages: one deadline from the first DNS query to the last byte, across
redirects; a size cap; and a private-network guard.

``requests`` only bounds each socket operation, so a server that trickles one byte a second
never times out, and it gives every connection attempt the whole timeout (five unreachable
addresses took five times it). Here each step of a fetch is given what is left of the one
deadline: the name's resolution (in a thread the fetch stops waiting for), each address's
connection attempt in turn, each redirect's request; and every socket a fetch opens is watched
by a timer that shuts it down at the deadline, whatever phase (TLS, headers, body) it is in.
A fetch that runs out of time says which steps it took with how much time left
(``FetchError.steps``).

The guard judges every address a name resolves to (``newsdesk.collect.addresses``) before any
connection is attempted, and connects only to the addresses it judged: a refused address is
never sent a SYN (so no answer tells an open port from a closed one), and DNS rebinding finds
nothing to rebind. Each redirect is a request of its own, through the same guard; a redirect's
body is never read (``requests`` would read and decompress it whole, however large).

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
import re
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
import urllib3.exceptions
from requests.adapters import HTTPAdapter
from requests.cookies import extract_cookies_to_jar
from requests.utils import requote_uri
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from newsdesk.collect.addresses import describe_blocked, is_blocked_address
from newsdesk.core.errors import (
    BlockedAddressError,
    FetchError,
    FetchTimeoutError,
    HTTPStatusError,
    ResponseTooLargeError,
)
from newsdesk.core.fetched import FetchResult
from newsdesk.core.settings import Settings
from newsdesk.core.times import ascii_number

__all__ = [
    "FetchPolicy",
    "describe_blocked",
    "exception_chain",
    "fetch",
    "is_blocked_address",
    "loggable_url",
]

CHUNK_BYTES = 16 * 1024
MAX_REDIRECTS = 5
DETAIL_CHARS = 4000
_QUERY = re.compile(r"\?[^\s'\"()<>]+")
LOGGED_PATH_CHARS = 300  # of a URL's path, in a log line
_UNREACHABLE = (errno.ENETUNREACH, errno.EHOSTUNREACH)  # an OSError's errno: no route


@dataclass(frozen=True)
class FetchPolicy:
    timeout_seconds: float
    max_bytes: int
    user_agent: str
    allow_private_networks: bool = False
    # the From header (OPERATOR_CONTACT, when an e-mail address): sent with every request,
    # a feed's own User-Agent's too, so that one names the operator as well
    from_address: str | None = None
    # a body over max_bytes is cut there, its Content-Length not consulted, and the rest left
    # unread (robots.txt, of which Google reads 500 KiB), rather than refused
    cut_at_cap: bool = False

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


Address = tuple[int, tuple[Any, ...]]  # (family, sockaddr), as getaddrinfo gives them


class _Watch:
    """The per-fetch deadline and guard, seen by every step and connection the fetch takes."""

    def __init__(self, policy: FetchPolicy) -> None:
        self.policy = policy
        self.deadline = time.monotonic() + policy.timeout_seconds
        self.expired = False
        self.steps: list[tuple[str, float]] = []  # (what, seconds left when it began)
        self._timers: list[threading.Timer] = []

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def budget(self, step: str) -> float:
        """The time left for ``step``, recorded; the fetch's timeout when none is left."""
        left = self.remaining()
        self.steps.append((step, round(max(left, 0.0), 3)))
        if left <= 0:
            raise self.timeout()
        return left

    def timeout(self, detail: str = "") -> FetchTimeoutError:
        self.expired = True
        taken = "; ".join(f"{step} ({left:.3f} s left)" for step, left in self.steps)
        detail = f"{detail} <- steps: {taken}" if detail else f"steps: {taken}"
        return FetchTimeoutError(
            _timeout_message(self.policy), detail=detail, steps=tuple(self.steps)
        )

    def resolve(self, host: str, port: int) -> list[Address]:
        """The addresses ``host`` resolves to, within the deadline. The system resolver cannot
        be interrupted: it runs in a thread of its own, which the fetch stops waiting for."""
        numeric = _numeric(host, port)
        if numeric is not None:
            return numeric
        budget = self.budget(f"resolve {host}")
        found: list[Address] = []
        failed: list[BaseException] = []
        done = threading.Event()

        def lookup() -> None:
            try:
                answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
                found.extend((family, address) for family, _, _, _, address in answers)
            except OSError as e:
                failed.append(e)
            finally:
                done.set()

        threading.Thread(target=lookup, name="newsdesk-resolve", daemon=True).start()
        if not done.wait(budget):
            raise self.timeout(f"no answer for {host} within the deadline")
        if failed:
            raise failed[0]
        return found

    def guard(self, addresses: list[Address]) -> None:
        """Refuse the fetch if any address is not public, before any is connected to."""
        if self.policy.allow_private_networks:
            return
        for _, sockaddr in addresses:
            if is_blocked_address(sockaddr[0]):
                raise BlockedAddressError(describe_blocked(sockaddr[0]))

    def connect(self, addresses: list[Address], options: Any) -> socket.socket:
        """A socket connected to the first of ``addresses`` that answers, each attempt given
        what is left of the deadline; it is cut at the deadline from then on."""
        failure: OSError | None = None
        for family, sockaddr in addresses:
            budget = self.budget(f"connect {_endpoint(sockaddr)}")
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                for option in options or ():
                    sock.setsockopt(*option)
                sock.settimeout(budget)
                sock.connect(sockaddr)
            except OSError as e:
                sock.close()
                failure = e
                continue
            timer = threading.Timer(max(self.remaining(), 0.001), self._cut, (sock,))
            timer.daemon = True
            timer.start()
            self._timers.append(timer)
            return sock
        if failure is None:
            raise OSError(errno.EADDRNOTAVAIL, "the name resolved to no address")
        if isinstance(failure, TimeoutError) and self.remaining() <= 0:
            raise self.timeout(f"{type(failure).__name__}: {failure}")
        raise failure

    def _cut(self, sock: socket.socket) -> None:
        self.expired = True
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)

    def stop(self) -> None:
        for timer in self._timers:
            timer.cancel()


def _numeric(host: str, port: int) -> list[Address] | None:
    """An address literal as getaddrinfo would give it, without asking a resolver."""
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
        answers = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST
        )
    except (ValueError, OSError):
        return None
    return [(family, address) for family, _, _, _, address in answers]


def _endpoint(sockaddr: tuple[Any, ...]) -> str:
    host = str(sockaddr[0])
    return f"[{host}]:{sockaddr[1]}" if ":" in host else f"{host}:{sockaddr[1]}"


_active: ContextVar[_Watch | None] = ContextVar("newsdesk_fetch_watch", default=None)


class _WatchedHTTPConnection(HTTPConnection):
    def _new_conn(self) -> socket.socket:
        watch = _active.get()
        if watch is None:
            return super()._new_conn()
        try:
            addresses = watch.resolve(self._dns_host, self.port)
        except socket.gaierror as e:
            raise urllib3.exceptions.NameResolutionError(self.host, self, e) from e
        watch.guard(addresses)
        try:
            return watch.connect(addresses, self.socket_options)
        except TimeoutError as e:
            raise urllib3.exceptions.ConnectTimeoutError(
                self, f"Connection to {self.host} timed out"
            ) from e
        except OSError as e:
            raise urllib3.exceptions.NewConnectionError(
                self, f"Failed to establish a new connection: {e}"
            ) from e


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
    headers = _request_headers(policy, etag, last_modified)
    watch = _Watch(policy)
    token = _active.set(watch)
    started = time.monotonic()
    try:
        with _session() as session:
            response = _follow(session, url, headers, watch, follow_redirects)
            with response:
                return _result(response, policy, watch, follow_redirects, started)
    except requests.Timeout as e:
        raise watch.timeout(exception_chain(e)) from e
    except requests.RequestException as e:
        # past the deadline, whatever noticed first: the timer's cut, or a read's own timeout
        # (which requests raises as a ConnectionError when it ends a body's read)
        if watch.expired or watch.remaining() <= 0:
            raise watch.timeout(exception_chain(e)) from e
        kind, message = in_words(e, url)
        raise FetchError(message, kind=kind, detail=exception_chain(e)) from e
    finally:
        watch.stop()
        _active.reset(token)


def _request_headers(
    policy: FetchPolicy, etag: str | None, last_modified: str | None
) -> dict[str, str]:
    """Who asks (and how to reach them), what it accepts, and the validators it holds."""
    headers = {"User-Agent": policy.user_agent, "Accept-Encoding": "gzip, deflate"}
    if policy.from_address:
        headers["From"] = policy.from_address
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    return headers


def _result(
    response: requests.Response,
    policy: FetchPolicy,
    watch: _Watch,
    follow_redirects: bool,
    started: float,
) -> FetchResult:
    """The answer, its body read within the policy's cap; a status that is not a success, a
    304 or (when not following) a redirect raises an ``HTTPStatusError``."""
    status = response.status_code
    hop = not follow_redirects and response.is_redirect
    if status != 304 and not 200 <= status < 300 and not hop:
        raise HTTPStatusError(status, response.url, response.headers.get("Retry-After", ""))
    empty = status == 304 or hop
    content = b"" if empty else _read_body(response, policy, watch)
    return FetchResult(
        url=response.url,
        status=status,
        content=content,
        headers=dict(response.headers),
        elapsed_seconds=time.monotonic() - started,
        wire_bytes=response.raw.tell(),
    )


def _follow(
    session: requests.Session, url: str, headers: dict[str, str], watch: _Watch, follow: bool
) -> requests.Response:
    """The answer at the end of ``url``'s redirects (at most ``MAX_REDIRECTS``; with ``follow``
    false, the first answer, a redirect included), each hop a request of its own within what
    is left of the deadline; a redirect's body is left unread."""
    for hop in range(MAX_REDIRECTS + 1):
        left = watch.budget(f"request {_where(url)}" if hop == 0 else f"redirect to {_where(url)}")
        # the adapter's answer as it is: Session.send would read (and decompress) a redirect's
        # body to prepare the next request, however large
        request = session.prepare_request(requests.Request("GET", url, headers=headers))
        response = session.get_adapter(request.url or url).send(
            request, stream=True, timeout=(left, left), verify=True, proxies={}
        )
        # as Session.send keeps a redirect's cookies for the next hop
        extract_cookies_to_jar(session.cookies, request, response.raw)  # type: ignore[no-untyped-call]
        target = session.get_redirect_target(response)
        if target is None or not follow:
            return response
        response.close()  # unread: the connection is dropped, not drained
        if hop == MAX_REDIRECTS:  # said in words by in_words, as requests' own would be
            raise requests.TooManyRedirects(
                f"Exceeded {MAX_REDIRECTS} redirects.", response=response
            )
        try:
            url = urljoin(response.url, requote_uri(target))
        except ValueError as e:
            raise requests.exceptions.InvalidURL(f"redirected to {target!r}") from e
    raise AssertionError("unreachable")  # the loop returns or raises


def _read_body(response: requests.Response, policy: FetchPolicy, watch: _Watch) -> bytes:
    max_bytes = policy.max_bytes
    declared = response.headers.get("Content-Length", "")
    length = ascii_number(declared, 2**63)  # "²" or 5,000 digits: no int() raising
    if not policy.cut_at_cap and length is not None and length > max_bytes:
        raise ResponseTooLargeError(
            f"Content-Length {declared} is over FETCH_MAX_BYTES ({max_bytes} bytes)"
        )
    body = bytearray()
    # iter_content decodes gzip, so the cap holds for the expanded size too.
    for chunk in response.iter_content(chunk_size=CHUNK_BYTES):
        body += chunk
        if len(body) >= max_bytes and policy.cut_at_cap:
            del body[max_bytes:]
            break  # the rest unread: closing the response drops the connection
        if len(body) > max_bytes:
            raise ResponseTooLargeError(f"body is over FETCH_MAX_BYTES ({max_bytes} bytes)")
    if watch.expired:
        raise watch.timeout()
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
    return redact_queries(" <- ".join(parts))[:DETAIL_CHARS]


def loggable_url(url: str) -> str:
    """``url`` as a log line may carry it: scheme, host, port and path (at most
    ``LOGGED_PATH_CHARS`` of it), never credentials or the query string (``?…``)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return redact_queries(url)[:LOGGED_PATH_CHARS]
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    where = f"{host}:{port}" if port else host
    path = parts.path[:LOGGED_PATH_CHARS] + ("…" if len(parts.path) > LOGGED_PATH_CHARS else "")
    query = "?…" if parts.query else ""
    return f"{parts.scheme}://{where}{path}{query}" if parts.scheme else f"{path}{query}"


def redact_queries(text: str) -> str:
    """``text`` with every query string (a token, a session id) replaced by ``?…``: what the
    log may carry of a URL is its host and path."""
    return _QUERY.sub("?…", text) if "?" in text else text


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
    return (
        _request_in_words(error)
        or _connection_in_words(chain, where, host)
        or _answer_in_words(error, chain, where)
        or ("other", f"connection to {where} failed ({type(chain[-1]).__name__})")
    )


def _request_in_words(error: requests.RequestException) -> tuple[str, str] | None:
    """A request that could not be made, or went round too many redirects."""
    if isinstance(error, requests.TooManyRedirects):
        return "redirects", f"more than {MAX_REDIRECTS} redirects"
    if isinstance(error, requests.exceptions.InvalidURL | requests.exceptions.MissingSchema):
        return "invalid_url", "not a URL that can be fetched"
    if isinstance(error, requests.exceptions.InvalidSchema):
        return "invalid_url", "not an http or https URL"
    return None


def _connection_in_words(
    chain: list[BaseException], where: str, host: str
) -> tuple[str, str] | None:
    """A connection that was not made or not kept: DNS, TLS, refused, closed, reset,
    unreachable (by the first of these in the error's chain of causes)."""
    if _first_of(chain, socket.gaierror, urllib3.exceptions.NameResolutionError):
        return "dns", f"DNS lookup failed for {host}"
    if (certificate := _first_of(chain, ssl.SSLCertVerificationError)) is not None:
        why = getattr(certificate, "verify_message", "") or "not verified"
        return "tls", f"TLS certificate of {where} not accepted: {why}"
    if (tls := _first_of(chain, ssl.SSLError)) is not None:
        why = str(getattr(tls, "reason", "") or "").replace("_", " ").lower() or "no reason given"
        return "tls", f"TLS handshake with {where} failed: {why}"
    if _first_of(chain, ConnectionRefusedError):
        return "refused", f"connection refused by {where}"
    if _first_of(chain, http.client.RemoteDisconnected):  # a ConnectionResetError too: before it
        return "closed", f"{where} closed the connection without an answer"
    if _first_of(chain, ConnectionResetError):
        return "reset", f"connection reset by {where}"
    unreachable = next(
        (e for e in chain if isinstance(e, OSError) and e.errno in _UNREACHABLE),
        None,
    )
    if isinstance(unreachable, OSError) and unreachable.errno is not None:
        return "unreachable", f"{where} unreachable: {os.strerror(unreachable.errno).lower()}"
    return None


def _answer_in_words(
    error: requests.RequestException, chain: list[BaseException], where: str
) -> tuple[str, str] | None:
    """An answer that broke off, or whose compression could not be undone."""
    if isinstance(error, requests.exceptions.ContentDecodingError):
        return "decoding", f"the compressed answer of {where} could not be decoded"
    if isinstance(error, requests.exceptions.ChunkedEncodingError) or _first_of(
        chain, http.client.IncompleteRead, urllib3.exceptions.ProtocolError
    ):
        return "broken", f"{where} broke off the answer"
    return None


def _first_of(chain: list[BaseException], *kinds: type[BaseException]) -> BaseException | None:
    return next((e for e in chain if isinstance(e, kinds)), None)
