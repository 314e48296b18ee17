"""Hostile and broken article pages, served on 127.0.0.1, fetched as the extractor fetches them
(``fetch`` with a page's 2 MB cap) and read by ``extract_text``: each ends as a clear
``FetchError`` or as an ``Extracted``, within a bounded time (the fetch's deadline, by
construction: no page here is given longer than it) and bounded memory (tracemalloc's peak,
which counts every allocation Python makes, so the bounds hold on any machine)."""

from __future__ import annotations

import contextlib
import gc
import gzip
import random
import socket
import threading
import tracemalloc
import zlib
from collections.abc import Callable
from dataclasses import replace
from types import TracebackType
from typing import Any, TypeVar
from xml.sax.saxutils import escape

import pytest

from newsdesk.collect.fetch import MAX_REDIRECTS, FetchPolicy, fetch
from newsdesk.core.errors import FetchError, FetchTimeoutError, ResponseTooLargeError
from newsdesk.core.fetched import FetchResult
from newsdesk.extract.text import TEXT_DEPTH_BUDGET, decode_html, extract_text
from newsdesk_local.feedserver import FeedServer
from tests.conftest import EXTRACT_ON, article_page, extract_all, invoke, worker_event
from tests.hostile_shapes import ARTICLE as PARAGRAPHS
from tests.hostile_shapes import SENTENCE

# its tests start servers or processes of their own (tests/conftest.py)
pytestmark = pytest.mark.integration


T = TypeVar("T")
MB = 1024 * 1024
PAGE_MAX_BYTES = 2_000_000  # the extractor's cap for a page (issue 14)
ROBOTS_READ = 500 * 1024  # what Google reads of a robots.txt, and ignores the rest
HTML = "text/html; charset=utf-8"
POLICY = FetchPolicy(
    timeout_seconds=10,
    max_bytes=PAGE_MAX_BYTES,
    user_agent="newsdesk-test",
    allow_private_networks=True,
)


def page(body: str, head: str = '<meta charset="utf-8">') -> str:
    return (
        f'<!DOCTYPE html><html lang="ko"><head>{head}<title>시내버스 노선 개편</title></head>'
        f"<body><header><nav><a href='/'>한빛일보</a></nav></header>{body}"
        "<footer>한빛일보 · 무단 전재 및 재배포 금지</footer></body></html>"
    )


def article(paragraphs: list[str] = PARAGRAPHS) -> str:
    return "<article>" + "".join(f"<p>{p}</p>" for p in paragraphs) + "</article>"


def peak_of(action: Callable[[], T]) -> tuple[T, int, int]:
    """(what ``action`` returned, peak, retained): the most bytes Python held while it ran
    above what it held before, and what it still holds after it (its answer included, so
    actions return something small), both as tracemalloc counts them."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        value = action()
        gc.collect()
        current, peak = tracemalloc.get_traced_memory()
        return value, peak - before, current - before
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module", autouse=True)
def warm() -> None:
    """The first extractions import and compile trafilatura's parts, the first with a URL
    loads the public suffix list (1 MB) and the first thin page justext's stop lists (24 MB),
    once a process: the bounds are the pages' own."""
    extract_text(page(article()).encode(), "http://127.0.0.1:9/warm.html")
    extract_text(page("<p>짧은 글</p>").encode())


def fetched(url: str, policy: FetchPolicy = POLICY) -> FetchResult:
    return fetch(url, policy)


def too_large(url: str) -> str:
    """The message of the ResponseTooLargeError that fetching ``url`` raises."""
    with pytest.raises(ResponseTooLargeError) as refused:
        fetched(url)
    assert refused.value.reason == "too_large"
    return str(refused.value)


# --- too large -------------------------------------------------------------------------------


def test_a_page_over_the_cap_by_its_content_length_is_refused_before_its_body(serve):
    body = page(article() * 4000).encode()  # about 4.5 MB, its true length declared
    assert len(body) > PAGE_MAX_BYTES
    url = serve("/huge.html", body=body, content_type=HTML)
    message, peak, _ = peak_of(lambda: too_large(url))
    assert message == f"Content-Length {len(body)} is over FETCH_MAX_BYTES ({PAGE_MAX_BYTES} bytes)"
    assert peak < 1 * MB  # the body is never read


class EndlessServer:
    """One route on 127.0.0.1 that answers 200 with no Content-Length and a body that never
    ends (the connection's close or HTTP/1.1 chunks frame it), until the client hangs up."""

    def __init__(self, chunked: bool) -> None:
        self.chunked = chunked
        self.sent = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._listener.getsockname()[:2]
        return f"http://{host}:{port}/endless.html"

    def _serve(self) -> None:
        with contextlib.suppress(OSError):  # the client hung up, or the listener closed
            connection, _ = self._listener.accept()
            with connection:
                request = b""
                while b"\r\n\r\n" not in request:
                    received = connection.recv(4096)
                    if not received:
                        return
                    request += received
                framing = "Transfer-Encoding: chunked" if self.chunked else "Connection: close"
                connection.sendall(
                    f"HTTP/1.1 200 OK\r\nContent-Type: {HTML}\r\n{framing}\r\n\r\n".encode()
                )
                chunk = f"<p>{SENTENCE * 20}</p>".encode() * 16
                framed = b"%x\r\n%s\r\n" % (len(chunk), chunk) if self.chunked else chunk
                opening = b"<!DOCTYPE html><html><body>"
                connection.sendall(
                    b"%x\r\n%s\r\n" % (len(opening), opening) if self.chunked else opening
                )
                while not self._stopping.is_set():
                    connection.sendall(framed)
                    self.sent += len(chunk)

    def __enter__(self) -> EndlessServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stopping.set()
        self._listener.close()
        self._thread.join()


@pytest.mark.parametrize("chunked", [False, True], ids=["close-delimited", "chunked"])
def test_a_page_without_a_content_length_is_cut_at_the_cap_while_streaming(chunked):
    with EndlessServer(chunked) as server:
        # an endless body: only the cap can end this fetch before its 10 s deadline
        message, peak, _ = peak_of(lambda: too_large(server.url))
    assert message == f"body is over FETCH_MAX_BYTES ({PAGE_MAX_BYTES} bytes)"
    assert server.sent > PAGE_MAX_BYTES
    assert peak < 8 * MB


@pytest.mark.parametrize("chunked", [False, True], ids=["close-delimited", "chunked"])
def test_a_fetch_that_cuts_at_its_cap_stops_reading_an_endless_body(chunked):
    # robots.txt's fetch (cut_at_cap): an endless body gives its first bytes, not a failure
    policy = replace(POLICY, max_bytes=ROBOTS_READ, cut_at_cap=True)
    with EndlessServer(chunked) as server:
        size, peak, _ = peak_of(lambda: len(fetch(server.url, policy).content))
    assert size == ROBOTS_READ
    assert peak < 8 * MB


def test_a_gzip_bomb_is_refused_by_the_cap_on_its_expanded_size(serve):
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip stream
    filler = f"<p>{SENTENCE}</p>".encode() * (MB // 128)
    chunks = [compressor.compress(page("").encode())]
    chunks += [compressor.compress(filler) for _ in range(64)]
    bomb = b"".join(chunks) + compressor.flush()
    assert len(bomb) < 2 * MB // 10  # 64 MB expanded, under a tenth of the cap on the wire
    url = serve("/bomb.html", body=bomb, content_type=HTML, headers=(("Content-Encoding", "gzip"),))
    message, peak, _ = peak_of(lambda: too_large(url))
    assert message == f"body is over FETCH_MAX_BYTES ({PAGE_MAX_BYTES} bytes)"
    assert peak < 8 * MB


INNER = gzip.compress(page(article() * 20_000).encode())  # 22 MB of page once expanded


@pytest.mark.parametrize(
    ("body", "headers"),
    [(INNER, ()), (gzip.compress(INNER), (("Content-Encoding", "gzip"),))],
    ids=["gzip without Content-Encoding", "gzip inside gzip"],
)
def test_compressed_bytes_that_reach_the_extractor_are_not_expanded(serve, body, headers):
    result = fetched(serve("/compressed.html", body=body, content_type=HTML, headers=headers))
    assert result.content == INNER  # the page's own bytes are gzip
    text, peak, _ = peak_of(lambda: extract_text(result.content, result.url).text[:1000])
    assert PARAGRAPHS[0] not in text
    assert peak < 16 * MB  # about the compressed bytes, nothing like 22 MB of text


# --- deeply nested -----------------------------------------------------------------------


@pytest.mark.parametrize("levels", [100_000, 180_000])  # 1.1 MB, and all but at the cap
def test_a_page_of_nested_divs_is_bounded(serve, levels):
    body = "<div>" * levels + article() + "</div>" * levels
    url = serve("/nested.html", body=page(body).encode(), content_type=HTML)
    result = fetched(url)
    assert 1 * MB < len(result.content) < PAGE_MAX_BYTES
    extracted, peak, retained = peak_of(lambda: extract_text(result.content, url))
    # libxml2 stops a document at 255 levels: the page is read again with the levels past
    # 200 unwrapped (newsdesk.extract.nesting), and the article, deeper, is its text (it was
    # lost, issue 39)
    assert extracted.text.split("\n") == PARAGRAPHS
    assert extracted.title == "시내버스 노선 개편"
    assert peak < 16 * MB
    assert retained < 1 * MB


def nested_with_text(levels: int, size: int) -> bytes:
    """A page of ``size`` bytes: ``levels`` nested <div>, each with the same Korean text."""
    shell = len(page("").encode()) + levels * len(b"<div></div>")
    sentences = (size - shell) // levels // len(SENTENCE.encode())
    return page(("<div>" + SENTENCE * sentences) * levels + "</div>" * levels).encode()


@pytest.mark.parametrize("levels", [250, 60])
def test_a_two_megabyte_page_nested_with_text_at_every_level_is_bounded(serve, levels):
    # Each level's text is all the text below it, and trafilatura measures and caches each
    # element's: levels x size. Before the budget: 250 levels held 398 MB, 60 levels 102 MB,
    # and as much stayed in trafilatura's caches after the page.
    body = nested_with_text(levels, PAGE_MAX_BYTES - 2_000)
    result = fetched(serve(f"/nested-{levels}.html", body=body, content_type=HTML))
    assert len(result.content) == len(body)
    kept, peak, retained = peak_of(lambda: extract_text(result.content).text.count(SENTENCE))
    assert peak < 96 * MB  # 75 MB measured (16 million characters, counted twice, 2 bytes)
    assert retained < 1 * MB
    assert kept > 5_000  # of the page's 21,000 sentences (291 and 1,219 before the budget)


def test_a_deep_article_within_the_budget_is_read_as_it_is():
    depth = 200  # far deeper than any real page; its weight is 200 x 1,000 characters
    assert depth * len(page(article())) < TEXT_DEPTH_BUDGET
    extracted = extract_text(page("<div>" * depth + article() + "</div>" * depth))
    assert extracted.text.split("\n") == PARAGRAPHS


# --- malformed --------------------------------------------------------------------------


def junk(size: int, seed: int = 14) -> bytes:
    return random.Random(seed).randbytes(size)


MALFORMED = {
    "unclosed tags": page(
        "<div><section><article><p>" + "<p>".join(PARAGRAPHS) + "<div><span><b><i>끝"
    ).encode(),
    "stray closing tags": page(
        "</div></span></article>" + article().replace("</p>", "</p></div></td></span>")
    ).encode(),
    "NUL bytes": page(
        article().replace(" ", " \x00").replace("</p><p>", "</p>\x00\x00<p>")
    ).encode(),
    "control characters": page(article()).encode().replace(b"<p>", b"<p>\x01\x02\x1b\x7f"),
    "binary junk between paragraphs": page(article())
    .encode()
    .replace(b"</p>", b"</p>" + junk(20_000).replace(b"<", b"").replace(b">", b"")),
    "truncated mid-tag": page(article()).encode()[: len(page(article()).encode()) - 30]
    + b"<div cla",
    "a huge attribute": page(f'<div data-x="{"가" * 600_000}">' + article() + "</div>").encode(),
}
JUNK = {
    "only binary junk": junk(PAGE_MAX_BYTES - 1),
    "an unterminated comment": b"<html><body><!-- " + page(article()).encode(),
    "an unterminated script": b"<html><head><script>var a = '" + page(article()).encode(),
    "an image as a page": b"\x89PNG\r\n\x1a\n" + junk(500_000),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_markup_still_gives_the_article(name):
    extracted = extract_text(MALFORMED[name])
    for paragraph in PARAGRAPHS:
        assert paragraph in extracted.text
    assert "\x00" not in extracted.text
    assert "\x01" not in extracted.text


@pytest.mark.parametrize("name", list(JUNK))
def test_junk_is_an_empty_or_short_text_not_an_error(name):
    content = JUNK[name]
    assert len(content) <= PAGE_MAX_BYTES
    text, peak, retained = peak_of(lambda: extract_text(content).text[:10_000])
    assert PARAGRAPHS[1] not in text
    assert peak < 64 * MB
    assert retained < 1 * MB


# --- wrong or missing charset ---------------------------------------------------------------


def korean(head: str = "") -> bytes:
    return page(article(), head=head).encode("cp949")


def test_an_euc_kr_page_labelled_utf8_in_its_header_is_read_as_cp949(serve):
    # the header's label is not evidence the extractor reads: bytes that are not UTF-8 are
    # CP949 when wholly valid CP949, with or without a (wrong) declaration in the page
    for path, body in [
        ("/no-declaration.html", korean()),
        ("/lying-meta.html", korean('<meta charset="utf-8">')),
        (
            "/euc-kr-meta.html",
            korean('<meta http-equiv="Content-Type" content="text/html; charset=euc-kr">'),
        ),
    ]:
        result = fetched(serve(path, body=body, content_type=HTML))
        extracted = extract_text(result.content, result.url)
        for paragraph in PARAGRAPHS:
            assert paragraph in extracted.text, path
        assert "\ufffd" not in extracted.text


def test_a_utf8_page_labelled_euc_kr_everywhere_is_read_as_utf8(serve):
    body = page(article(), head='<meta charset="euc-kr">').encode("utf-8")
    url = serve("/utf8-as-euc-kr.html", body=body, content_type="text/html; charset=euc-kr")
    extracted = extract_text(fetched(url).content)
    assert PARAGRAPHS[2] in extracted.text


@pytest.mark.parametrize(
    "declared", ["utf-16", "utf-16be", "utf-32le", "utf-8-sig", "rot13", "base64", "zlib"]
)
def test_a_declaration_that_cannot_describe_the_page_is_ignored(declared):
    # UTF-16 and UTF-32 pages cannot declare themselves in ASCII; rot13, base64 and zlib are
    # codecs of Python's but no text encodings: a CP949 page is still read as CP949
    content = korean(f'<meta charset="{declared}">')
    assert PARAGRAPHS[0] in decode_html(content)
    assert PARAGRAPHS[0] in extract_text(content).text


@pytest.mark.parametrize("declared", ["idna", "punycode", "undefined", "x-no-such-charset"])
def test_a_declaration_whose_codec_fails_is_ignored(declared):
    assert PARAGRAPHS[1] in extract_text(korean(f'<meta charset="{declared}">')).text


# --- refreshes, redirects and slow servers -----------------------------------------------


def test_a_meta_refresh_loop_is_one_request_each(serve, feed_server: FeedServer):
    refresh = '<meta http-equiv="refresh" content="0; url={}">'
    serve(
        "/refresh-a.html",
        body=page(article(), head=refresh.format(feed_server.url("/refresh-b.html"))).encode(),
        content_type=HTML,
    )
    serve(
        "/refresh-b.html",
        body=page("", head=refresh.format(feed_server.url("/refresh-a.html"))).encode(),
        content_type=HTML,
    )
    texts = {}
    for path in ("/refresh-a.html", "/refresh-b.html"):
        result = fetched(feed_server.url(path))
        assert result.url == feed_server.url(path)  # we never follow a meta refresh
        texts[path] = extract_text(result.content, result.url).text
    assert dict(feed_server.requests) == {"/refresh-a.html": 1, "/refresh-b.html": 1}
    assert texts["/refresh-a.html"].split("\n") == PARAGRAPHS
    assert PARAGRAPHS[0] not in texts["/refresh-b.html"]


def test_an_http_redirect_loop_is_a_bounded_fetch_error(serve, feed_server: FeedServer):
    serve("/loop-a.html", status=302, headers=(("Location", "/loop-b.html"),))
    serve("/loop-b.html", status=301, headers=(("Location", feed_server.url("/loop-a.html")),))
    serve("/self.html", status=307, headers=(("Location", "/self.html"),))
    for path in ("/loop-a.html", "/self.html"):
        with pytest.raises(FetchError) as failed:
            fetched(feed_server.url(path))
        assert (failed.value.kind, str(failed.value)) == (
            "redirects",
            f"more than {MAX_REDIRECTS} redirects",
        )
    assert feed_server.requests["/loop-a.html"] + feed_server.requests["/loop-b.html"] == 6
    assert feed_server.requests["/self.html"] == 1 + MAX_REDIRECTS


def test_a_trickled_page_ends_at_the_fetch_deadline(serve, feed_server: FeedServer):
    body = page(article()).encode()
    # a byte every 50 ms: the page would take over a minute; the fetch's deadline is 0.5 s
    url = serve("/trickle.html", body=body, content_type=HTML, mode="trickle", interval=0.05)
    with pytest.raises(FetchTimeoutError) as late:
        fetched(url, FetchPolicy(0.5, PAGE_MAX_BYTES, "newsdesk-test", True))
    assert str(late.value) == "timed out after 0.5 s"
    assert feed_server.bytes_sent["/trickle.html"] < len(body)


def test_a_server_that_never_answers_ends_at_the_fetch_deadline(serve):
    url = serve("/hang.html", mode="hang")
    with pytest.raises(FetchTimeoutError):
        fetched(url, FetchPolicy(0.5, PAGE_MAX_BYTES, "newsdesk-test", True))


# --- robots.txt ----------------------------------------------------------------------------


def comment_lines(size: int) -> str:
    """``size`` bytes of robots.txt comments, a hundred to a line."""
    lines, rest = divmod(size, 100)
    return ("#" + "-" * 98 + "\n") * lines + ("#" * (rest - 1) + "\n" if rest else "")


def padded_robots() -> bytes:
    """A 1.1 MB robots.txt: /view/ disallowed behind 300 KB of comments, a rule that the
    500 KiB cut halves ("Disallow: /s|tory/"), and everything disallowed past it."""
    head = "User-agent: *\n" + comment_lines(300_000) + "Disallow: /view/\n"
    halved = "Disallow: /story/\n"
    text = head + comment_lines(ROBOTS_READ - 12 - len(head)) + halved
    text += comment_lines(1_100_000 - len(text)) + "Disallow: /\n"
    assert text.index(halved) + len("Disallow: /s") == ROBOTS_READ
    return text.encode()


def feed_of(links: list[tuple[str, str]]) -> bytes:
    items = "".join(
        f"<item><title>{escape(t)}</title><link>{escape(u)}</link></item>" for t, u in links
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>t</title>'
        f"<link>http://127.0.0.1/</link>{items}</channel></rss>"
    ).encode()


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_robots_txt_over_500_kib_is_read_to_500_kib_not_refused(
    aws_env: Any, database: Any, feed_server: FeedServer, serve: Any, chunked: bool
):
    """Attack (issue 39, 5): a 1.1 MB robots.txt (its Content-Length over the 512 KB cap, or
    chunked past it) was refused whole: robots_unreachable for every page of its host, counted
    by the host's breaker, never extracted. Google reads the first 500 KiB and ignores the
    rest; the rules in it apply (one behind 300 KB of comments too), none past it, and a line
    the cut halves is no rule."""
    robots = padded_robots()
    serve("/robots.txt", body=robots, content_type="text/plain", chunked=chunked)
    story = serve("/story/1", body=article_page("국회 예산안 통과"), content_type="text/html")
    view = serve("/view/2", body=article_page("여야 협상 결렬"), content_type="text/html")
    feed = serve("/f.xml", body=feed_of([("국회 예산안 통과", story), ("여야 협상 결렬", view)]))
    invoke("worker", worker_event([(feed, "정치")], ignore_schedule=True), **EXTRACT_ON)
    reports = {report["url"]: report for report in extract_all(aws_env)}
    assert reports[story]["status"] == "extract_ok"
    assert (reports[view]["status"], reports[view]["reason"]) == (
        "extract_error",
        "robots_disallowed",
    )
    assert feed_server.requests["/view/2"] == 0
    assert feed_server.requests["/robots.txt"] == 1
