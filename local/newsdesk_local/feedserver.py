"""A feed server on 127.0.0.1 for the demo and the tests: files, error statuses, and servers
that hang or trickle, with a count of the requests each path received; and a loopback port
that never answers a connection (``unreachable_port``)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

CHUNK_BYTES = 64 * 1024  # a chunked route's chunks


@dataclass(frozen=True)
class Route:
    """What one path answers, after ``delay`` seconds. ``mode``: "body" (status, headers, body),
    "hang" (accepts, never answers), "trickle" (headers, then one byte every ``interval``
    seconds, then the connection is closed, however many bytes it promised). A Content-Length
    in ``headers`` replaces the true one (a server may lie). ``before`` runs, in the request's
    thread, before anything is answered: the tests' hook to fault something at that moment."""

    body: bytes = b""
    status: int = 200
    content_type: str | None = "application/rss+xml; charset=utf-8"  # None: not sent
    mode: str = "body"
    interval: float = 1.0
    headers: tuple[tuple[str, str], ...] = ()
    etag: str | None = None  # sent, and a matching If-None-Match is answered with 304
    before: Callable[[], None] | None = None
    delay: float = 0.0
    chunked: bool = False  # the body in HTTP/1.1 chunks, no Content-Length but one in headers


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    feeds: FeedServer
    # socketserver's default backlog of 5 drops the SYNs of a round's concurrent workers, and
    # each dropped one costs its client a second's retransmission: a real outlet has no such
    # limit.
    request_queue_size = 128

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that gave up mid-answer is what several routes are for


class FeedServer:
    def __init__(self, port: int = 0) -> None:
        """On 127.0.0.1, at ``port`` (by default a free one)."""
        self.routes: dict[str, Route] = {}
        self.requests: Counter[str] = Counter()
        self.request_headers: dict[str, list[dict[str, str]]] = {}
        self.bytes_sent: Counter[str] = Counter()  # body bytes, per path
        # (time.monotonic() when the request arrived, its Host header, path), in arrival
        # order: pacing tests
        self.request_log: list[tuple[float, str, str]] = []
        self.uploads: list[tuple[str, bytes]] = []  # PUT bodies, as a custom resource sends
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _QuietServer(("127.0.0.1", port), _Handler)
        self._httpd.feeds = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def add(self, path: str, route: Route) -> str:
        self.routes[path] = route
        return self.url(path)

    def __enter__(self) -> FeedServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: _QuietServer
    disable_nagle_algorithm = True  # headers and body leave as they are written
    protocol_version = "HTTP/1.1"

    @property
    def feeds(self) -> FeedServer:
        return self.server.feeds

    def do_GET(self) -> None:
        route = self._record()
        if route is not None and route.before is not None:
            route.before()
        if route is not None and route.delay and self.feeds._stopping.wait(route.delay):
            return
        if route is None:
            self._send(Route(b"not found", 404, "text/plain"))
        elif route.etag and self.headers["If-None-Match"] == route.etag:
            self._send(Route(b"", 304, route.content_type, headers=route.headers, etag=route.etag))
        elif route.mode == "hang":
            self.feeds._stopping.wait()
        elif route.mode == "trickle":
            self._trickle(route)
        else:
            self._send(route)

    def do_PUT(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        with self.feeds._lock:
            self.feeds.uploads.append((self.path, self.rfile.read(length)))
        self._send(Route(b"", 200, "text/plain"))

    def _record(self) -> Route | None:
        """Count the request, keep its headers; the path's route."""
        with self.feeds._lock:
            self.feeds.request_log.append((time.monotonic(), self.headers["Host"], self.path))
            self.feeds.requests[self.path] += 1
            self.feeds.request_headers.setdefault(self.path, []).append(dict(self.headers))
        return self.feeds.routes.get(self.path)

    def _head(self, route: Route) -> None:
        self.send_response(route.status)
        if route.content_type is not None:
            self.send_header("Content-Type", route.content_type)
        if route.chunked:
            self.send_header("Transfer-Encoding", "chunked")
        elif not any(name.lower() == "content-length" for name, _ in route.headers):
            self.send_header("Content-Length", str(len(route.body)))
        for name, value in route.headers:
            self.send_header(name, value)
        if route.etag:
            self.send_header("ETag", route.etag)
        self.end_headers()

    def _send(self, route: Route) -> None:
        self._head(route)
        if not route.chunked:
            self.wfile.write(route.body)
            self._sent(len(route.body))
            return
        for start in range(0, len(route.body), CHUNK_BYTES):
            chunk = route.body[start : start + CHUNK_BYTES]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self._sent(len(chunk))
        self.wfile.write(b"0\r\n\r\n")

    def _trickle(self, route: Route) -> None:
        self.close_connection = True
        self._head(route)
        for index in range(len(route.body)):
            if self.feeds._stopping.wait(route.interval):
                return
            try:
                self.wfile.write(route.body[index : index + 1])
                self.wfile.flush()
            except OSError:
                return
            self._sent(1)

    def _sent(self, count: int) -> None:
        with self.feeds._lock:
            self.feeds.bytes_sent[self.path] += count

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def unreachable_port() -> Iterator[int]:
    """A port on 127.0.0.1 that never completes a handshake: its listener's queue is full, so a
    connection to it waits until the client's own timeout (a network that drops packets)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(("127.0.0.1", port))
        fillers.append(filler)
    try:
        yield port
    finally:
        for sock in (*fillers, listener):
            sock.close()
