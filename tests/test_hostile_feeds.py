"""Hostile and broken feeds through the whole path of one feed (fetch from the loopback server,
parse, filter, store in PostgreSQL, state in moto): each ends as stored articles or as a
counted failure, within bounded memory, and nothing outside the feed is read or requested."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tracemalloc
import zlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from newsdesk.aws.state_table import StateTable
from newsdesk.collect import fetch as fetch_module
from newsdesk.collect.fetch import FetchPolicy, fetch
from newsdesk.collect.parse import parse_feed, without_unsafe_entities
from newsdesk.core.errors import ResponseTooLargeError
from newsdesk.core.report import FEED_FAILED, FEED_OK
from newsdesk.core.times import parse_time
from newsdesk.storage.database import Database
from newsdesk_local.feedserver import FeedServer, Route
from tests.conftest import invoke, worker_event

# its tests start servers or processes of their own (tests/conftest.py)
pytestmark = pytest.mark.integration


MB = 1024 * 1024


def stored(database: Database) -> list[dict[str, Any]]:
    with database.transaction() as cursor:
        cursor.execute(
            "SELECT origin_url, title, summary, guid, published_at FROM raw_article ORDER BY id"
        )
        assert cursor.description is not None
        names = [column.name for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def rss(items: str, prolog: str = "") -> bytes:
    """A UTF-8 feed; a lone surrogate such as "\\udcff" becomes that one invalid byte."""
    return (
        f'<?xml version="1.0" encoding="utf-8"?>{prolog}<rss version="2.0"><channel>'
        f"<title>hostile</title><link>https://news.example/</link>{items}</channel></rss>"
    ).encode("utf-8", "surrogateescape")


def item(title: str = "제목", link: str = "https://news.example/a/1", extra: str = "") -> str:
    return f"<item><title>{title}</title><link>{link}</link>{extra}</item>"


def peak_of(action: Callable[[], object]) -> int:
    """Peak bytes Python allocated while ``action`` ran (tracemalloc counts allocations, so
    the bound holds on any machine)."""
    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# --- XML attacks -------------------------------------------------------------------------------

LAUGHS = "".join(
    f'<!ENTITY lol{n} "{f"&lol{n - 1};" * 10}">' for n in range(1, 10)
)  # lol9 would expand to 10^9 "lol"s


def test_billion_laughs_is_not_expanded(serve, collect_feed, database):
    body = rss(item("&lol9;"), prolog=f'<!DOCTYPE rss [<!ENTITY lol0 "lol">{LAUGHS}]>')
    parse_feed(rss(item()))  # first calls import and compile; the attack's own cost is next
    assert peak_of(lambda: parse_feed(body)) < MB
    report = collect_feed(serve("/laughs.xml", body=body))
    assert report.status == FEED_OK
    (article,) = stored(database)
    assert "lollol" not in article["title"]
    assert len(article["title"]) < 100


def test_external_entities_read_no_file_and_request_nothing(
    serve, feed_server: FeedServer, collect_feed, database, tmp_path: Path
):
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-MARKER-7f3a", encoding="utf-8")
    dtd = serve("/evil.dtd", body=b'<!ENTITY remote "REMOTE-MARKER">', content_type="text/xml")
    prolog = (
        f'<!DOCTYPE rss SYSTEM "{dtd}" [<!ENTITY file SYSTEM "file://{secret}">'
        f'<!ENTITY web SYSTEM "{dtd}"><!ENTITY % param SYSTEM "{dtd}"> %param;]>'
    )
    body = rss(item("a &file; b &web; &remote;", extra="<description>&file;</description>"), prolog)
    report = collect_feed(serve("/xxe.xml", body=body))
    assert report.status in (FEED_OK, FEED_FAILED)
    assert all("MARKER" not in str(row) for row in stored(database))
    assert feed_server.requests["/evil.dtd"] == 0


# A plain entity used 96 times (expat's amplification limit is 100): 113,246,208 characters.
BIG_ENTITY_FEED = (
    " <!-- a comment first: feedparser removes a DOCTYPE that begins a line -->"
    '<!DOCTYPE rss [<!ENTITY big "' + "A" * (1152 * 1024) + '">]>'
    '<rss version="2.0"><channel><title>t</title><item><title>' + "&big;" * 96 + "</title>"
    "<link>https://news.example/big</link></item></channel></rss>"
)
# Each encoding named by the header only: no byte order mark, no "<?xml" in it; UTF-7 writes
# every "<" as "+ADw-", so "<!ENTITY" is nowhere in ASCII.
BY_HEADER_ONLY = {
    "cp037": lambda text: text.encode("cp037"),
    "utf-16le": lambda text: text.encode("utf-16-le"),
    "utf-16be": lambda text: text.encode("utf-16-be"),
    "utf-7": lambda text: b"+ADw-".join(part.encode("utf-7") for part in text.split("<")),
    "utf-32le": lambda text: text.encode("utf-32-le"),
    "x-no-such-codec": lambda text: text.encode("utf-16-le"),  # an encoding Python does not know
}
PARSE_IN_A_CHILD = """
import json, resource, sys
from newsdesk.collect.parse import parse_feed
from newsdesk.core.errors import FeedParseError
body = open(sys.argv[1], "rb").read()
parse_feed(b'<rss version="2.0"><channel><item><link>https://a.example/</link></item></channel></rss>')
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    titles, failure = [e.title for e in parse_feed(body, sys.argv[2]).entries], None
except FeedParseError as e:
    titles, failure = [], str(e)
growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
longest = max(map(len, titles), default=0)
print(json.dumps({"growth": growth, "longest": longest, "failure": failure}))
"""


def parsed_in_a_child(body: bytes, content_type: str, tmp_path: Path) -> dict[str, Any]:
    """What parse_feed made of ``body`` in a fresh process, and how much that process grew
    (its peak resident memory, ru_maxrss, in bytes: what a Lambda's limit counts)."""
    (tmp_path / "body").write_bytes(body)
    child = subprocess.run(
        [sys.executable, "-c", PARSE_IN_A_CHILD, str(tmp_path / "body"), content_type],
        capture_output=True,
        check=True,
        text=True,
        timeout=300,
    )
    result: dict[str, Any] = json.loads(child.stdout)
    return result


@pytest.mark.parametrize("charset", BY_HEADER_ONLY)
def test_the_entity_budget_holds_whatever_the_declared_encoding(
    charset, serve, collect_feed, database, tmp_path
):
    """Attack (issue 39, 1): a 1.2 MB plain entity used 96 times, in a feed whose encoding only
    Content-Type names (EBCDIC, UTF-16, UTF-7 with "<" written "+ADw-", UTF-32, a charset Python
    does not know): the entity budget scanned the raw bytes, where "<!ENTITY" is not spelled in
    ASCII, so a title of 113 million characters grew a fresh process by over 400 MB."""
    body = BY_HEADER_ONLY[charset](BIG_ENTITY_FEED)
    assert len(body) <= 5 * MB  # within the worker's size cap
    content_type = f"application/rss+xml; charset={charset}"
    child = parsed_in_a_child(body, content_type, tmp_path)
    assert child["growth"] < 100 * MB
    assert child["longest"] < 1000
    report = collect_feed(serve("/big.xml", body=body, content_type=content_type))
    if report.status == FEED_FAILED:
        assert report.failure_class
        assert report.error
    else:
        assert report.status == FEED_OK
        assert all(len(article["title"]) < 1000 for article in stored(database))


@pytest.mark.parametrize("charset", [c for c in BY_HEADER_ONLY if c != "x-no-such-codec"])
def test_a_feed_in_an_encoding_its_header_names_is_still_read(charset):
    """The counterpart: the same encodings without the entity, read as feedparser reads them."""
    title = "Le café d'été" if charset == "cp037" else "국회, 예산안 통과 café"
    text = BIG_ENTITY_FEED.replace("&big;" * 96, title).replace("A" * (1152 * 1024), "x")
    feed = parse_feed(BY_HEADER_ONLY[charset](text), f"application/rss+xml; charset={charset}")
    assert [entry.title for entry in feed.entries] == [title]
    assert feed.encoding == charset


# --- transport attacks ---------------------------------------------------------------------


def test_a_gzip_bomb_is_stopped_by_the_byte_cap(serve, collect_feed):
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip stream
    zeros = b"\0" * MB
    bomb = b"".join(compressor.compress(zeros) for _ in range(256)) + compressor.flush()
    assert len(bomb) < MB // 2  # 256 MB expanded
    url = serve("/bomb.xml", body=bomb, headers=(("Content-Encoding", "gzip"),))
    policy = FetchPolicy(
        timeout_seconds=10, max_bytes=5 * MB, user_agent="t", allow_private_networks=True
    )

    def refused() -> None:
        with pytest.raises(ResponseTooLargeError):
            fetch(url, policy)

    assert peak_of(refused) < 16 * MB
    report = collect_feed(url, fetch_max_bytes=5 * MB)
    assert (report.status, report.failure_class) == (FEED_FAILED, "too_large")


def test_a_gigabyte_content_length_is_refused_before_reading(serve, collect_feed):
    url = serve("/lie.xml", body=rss(item()), headers=(("Content-Length", str(1024 * MB)),))
    report = collect_feed(url)
    assert (report.status, report.failure_class) == (FEED_FAILED, "too_large")
    assert "Content-Length 1073741824" in (report.error or "")


@pytest.mark.parametrize("declared", ["²", "9" * 5000])
def test_a_content_length_python_will_not_read_is_no_crash_but_a_feed_read_to_its_cap(
    serve, collect_feed, declared
):
    """The attack: a Content-Length of "²" (isdigit() takes it) or of 5,000 digits (int()
    refuses more than 4,300) raised ValueError in the fetch, a bug rather than the feed's
    answer; the header is read by its grammar: 5,000 digits are over the cap, and "²" none
    (the body then runs to the connection's end, which this server keeps open: a timeout)."""
    headers = (("Content-Length", declared),)
    report = collect_feed(serve("/odd.xml", body=rss(item()), headers=headers))
    expected = "too_large" if declared.isascii() else "timeout"
    assert (report.status, report.failure_class) == (FEED_FAILED, expected)


def test_a_short_content_length_truncates_to_a_counted_failure(serve, collect_feed):
    report = collect_feed(serve("/short.xml", body=rss(item()), headers=(("Content-Length", "9"),)))
    assert (report.status, report.failure_class) == (FEED_FAILED, "not_a_feed")


def test_a_redirect_loop_is_a_counted_failure(serve, feed_server, collect_feed):
    serve("/a", status=302, headers=(("Location", feed_server.url("/b")),))
    serve("/b", status=302, headers=(("Location", feed_server.url("/a")),))
    report = collect_feed(feed_server.url("/a"))
    assert (report.status, report.failure_class) == (FEED_FAILED, "connection")
    assert "redirects" in (report.error or "")
    assert sum(feed_server.requests.values()) == 6  # the first request and five redirects


def test_a_redirect_to_a_blocked_address_is_refused_before_sending(
    serve, collect_feed, monkeypatch: pytest.MonkeyPatch
):
    # GIVEN strict mode, where the feed's own server stands for a public one (its address is
    # let through once) and redirects to another loopback server, standing for a private one
    classify = fetch_module.is_blocked_address
    checked: list[str] = []

    def first_is_public(address: str) -> bool:
        checked.append(address)
        return len(checked) > 1 and classify(address)

    monkeypatch.setattr(fetch_module, "is_blocked_address", first_is_public)
    with FeedServer() as private:
        target = private.add("/internal", Route(body=rss(item())))
        url = serve("/go", status=302, headers=(("Location", target),))
        # WHEN the feed is collected THEN the redirect is refused and the target never asked
        report = collect_feed(url, fetch_allow_private_networks=False)
        assert (report.status, report.failure_class) == (FEED_FAILED, "blocked")
        assert private.requests == {}
    assert checked == ["127.0.0.1", "127.0.0.1"]


# --- content ---------------------------------------------------------------------------------


def test_invalid_utf8_loses_one_character_not_the_whole_feed(serve, collect_feed, database):
    body = rss(item("대통령 발표", "https://news.example/1") + item("나쁜 \udcff 바이트"))
    report = collect_feed(serve("/bad-utf8.xml", body=body))
    assert report.status == FEED_OK
    assert [row["title"] for row in stored(database)] == ["대통령 발표", "나쁜 \ufffd 바이트"]


def test_control_characters_are_dropped_so_postgres_takes_the_text(serve, collect_feed, database):
    body = rss(item("널&#0;문자\x01", extra="<description>요약&#0;\x00끝</description>"))
    assert collect_feed(serve("/nul.xml", body=body)).status == FEED_OK
    (article,) = stored(database)
    assert (article["title"], article["summary"]) == ("널문자", "요약끝")


def test_fifty_thousand_entries_are_stored_in_one_pass(serve, collect_feed, database):
    body = rss("".join(item(f"기사 {n}", f"https://news.example/a/{n}") for n in range(50_000)))
    report = collect_feed(serve("/huge.xml", body=body))
    assert (report.status, report.new, report.entries_seen) == (FEED_OK, 50_000, 50_000)
    with database.transaction() as cursor:
        cursor.execute("SELECT count(*), count(DISTINCT origin_url) FROM raw_article")
        assert cursor.fetchone() == (50_000, 50_000)


def test_entries_without_usable_links_are_counted_and_untitled_ones_kept(
    serve, collect_feed, database
):
    long_path = "가" * 700  # 2,100 bytes as UTF-8, 6,300 percent-encoded
    items = [
        "<item><title>링크 없음</title></item>",
        item("빈 링크", ""),
        item("자바스크립트", "javascript:alert(1)"),
        item("상대 링크", "/a/relative"),  # resolved against the feed's URL: stored
        item("너무 긴 링크", "https://news.example/" + "a" * 2100),
        item("인코딩하면 긴 링크", "https://news.example/" + long_path[:300]),
        "<item><link>https://news.example/untitled</link></item>",
        item("긴 guid", "https://news.example/long-guid", f"<guid>{'g' * 3000}</guid>"),
    ]
    report = collect_feed(serve("/links.xml", body=rss("".join(items))))
    assert (report.status, report.entries_seen, report.without_link) == (FEED_OK, 8, 5)
    assert [(row["title"], row["guid"]) for row in stored(database)] == [
        ("상대 링크", None),
        ("", None),
        ("긴 guid", None),
    ]


BROKEN_DATES = [
    "",
    "yesterday",
    "2024-13-45T99:99:99Z",
    "Mon, 32 Jan 2024 25:61:61 +0900",
    "0000-00-00T00:00:00Z",
    "Tue, 30 Feb 2024 10:00:00 GMT",
    "99999-01-01T00:00:00Z",
    "Sat, 01 Jan 10000 00:00:00 GMT",
    "Thu, 01 Jan 1970 00:00:00 +9999",
    "2024년 3월 1일 오후 3시",
    "9" * 400,
    "-1",
    "NaN",
    "2024-03-01T10:00:00+25:00",
    "Fri, 29 Nov 2024 09:00:00 KST",
]


def test_dates_in_every_broken_format_leave_the_article_stored(serve, collect_feed, database):
    items = "".join(
        item(f"날짜 {n}", f"https://news.example/d/{n}", f"<pubDate>{date}</pubDate>")
        for n, date in enumerate(BROKEN_DATES)
    )
    # (however old a date reads, the article is not dropped as too old here)
    report = collect_feed(serve("/dates.xml", body=rss(items)), entry_max_age_hours=1e6)
    assert (report.status, report.new) == (FEED_OK, len(BROKEN_DATES))
    published = dict(
        zip(BROKEN_DATES, (row["published_at"] for row in stored(database)), strict=True)
    )
    tomorrow = datetime.now(UTC) + timedelta(days=1)
    assert all(
        p is None or datetime(1990, 1, 1, tzinfo=UTC) <= p <= tomorrow for p in published.values()
    )
    assert published["9" * 400] is None
    assert published["99999-01-01T00:00:00Z"] is None
    assert published["Fri, 29 Nov 2024 09:00:00 KST"] == datetime(2024, 11, 29, tzinfo=UTC)


def test_gzip_body_decodes(serve, collect_feed):  # the honest counterpart of the bomb
    body = gzip.compress(rss(item()))
    report = collect_feed(serve("/gz.xml", body=body, headers=(("Content-Encoding", "gzip"),)))
    assert (report.status, report.new) == (FEED_OK, 1)


def test_entity_declarations_hidden_behind_a_comment_are_dropped_too():
    # a "<z" in a comment before the DOCTYPE once looked like the root element to the defence
    laughs = "".join(f'<!ENTITY l{n} "{f"&l{n - 1};" * 10}">' for n in range(1, 10))
    body = (
        f'<?xml version="1.0"?><!-- <z --><!DOCTYPE rss [<!ENTITY l0 "ha">{laughs}]>'
        "<rss version='2.0'><channel><item><title>&l9;</title>"
        "<link>https://news.example/l</link></item></channel></rss>"
    ).encode()
    # THEN no declaration of entities reaches a parser (expat's amplification limit would
    # stop the expansion only after megabytes), but the plain one
    defused = without_unsafe_entities(body)
    assert b'<!ENTITY l0 "ha">' in defused
    assert b"<!ENTITY l1" not in defused
    assert len("".join(e.title for e in parse_feed(body).entries)) < 1000


# --- a feed's <ttl> (issue 39, point 3) --------------------------------------------------------


@pytest.mark.parametrize(
    ("ttl", "wait"),
    [
        ("\xb2", timedelta(minutes=30)),  # "²": str.isdigit() takes it, int() refuses it
        ("1" * 20, timedelta(days=7)),  # minutes past what a timedelta holds: the cap
        ("9" * 400, timedelta(days=7)),  # float() reads it as infinity: the cap
        ("\u0663\u0660\u0660", timedelta(minutes=30)),  # Arabic-Indic "300": no RSS number
        (" 60 ", timedelta(hours=1)),  # honoured, minutes
        ("1440", timedelta(days=1)),
    ],
)
def test_a_ttl_of_any_digits_is_capped_or_ignored_never_the_outlets_failure(
    aws_env, database, serve, ttl, wait
):
    """The attack: a feed whose ``<ttl>`` is "²", 20 digits or 400 digits: the number is
    minutes of ASCII digits (RSS 2.0), the floor it sets is capped at the schedule's 7 days, a
    bad one is ignored, and none of them fails the outlet's record."""
    body = rss(f"<ttl>{ttl}</ttl>{item()}")
    url = serve("/ttl.xml", body=body)
    event = worker_event([(url, "정치")])
    response = invoke("worker", event)
    assert response["batchItemFailures"] == []
    assert response["outlets"][0]["feeds"][0]["status"] == FEED_OK
    _, feeds = StateTable(aws_env.client("dynamodb"), "newsdesk-state").outlet("연합뉴스")
    at = parse_time(json.loads(event["Records"][0]["body"])["scheduled_at"])
    assert feeds[url].next_check_at == at + wait
