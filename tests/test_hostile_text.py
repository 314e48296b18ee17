"""Hostile text in feeds (issue 22, points 2, 4 and 5): an entity used many times, character
references XML refuses, and markup built to make a scan quadratic. Each feed goes the whole
path of one feed (the loopback server, parse, store in PostgreSQL) where it can fail a feed;
the summary handling is fed megabytes directly. benchmarks/hostile_text.py measures the costs."""

from __future__ import annotations

import codecs
import json

import pytest

from newsdesk.collect.markup import html_text, well_formed_references
from newsdesk.collect.parse import (
    ENTITY_EXPANSION_BUDGET,
    MAX_PLAIN_ENTITIES,
    parse_feed,
    without_unsafe_entities,
)
from newsdesk.core.report import FEED_OK
from tests.conftest import LogLines, invoke, worker_event
from tests.test_hostile_feeds import MB, item, peak_of, rss, stored

# A bound that turns a quadratic regression into a failure rather than a stalled run: about 20
# times what each takes here (under 0.5 s; a backtracking scan of 2 MB would take hours). The
# regex engine checks for signals while it backtracks, so pytest-timeout's signal interrupts it.
LINEAR = pytest.mark.timeout(10)


# --- a large entity used many times (point 2) --------------------------------------------------


def entity_feed(value: str, uses: int) -> bytes:
    return rss(
        item("&big;" * uses) + item("이웃 기사", "https://news.example/a/2"),
        prolog=f'<!DOCTYPE rss [<!ENTITY big "{value}">]>',
    )


def test_a_large_entity_used_many_times_is_not_expanded(serve, collect_feed, database):
    # GIVEN a 1.2 MB feed whose one entity (400,000 Hangul characters) its title uses 30 times:
    # expanded, a 12,000,000-character title (issue 22; the worker grew by hundreds of MB)
    body = entity_feed("가" * 400_000, 30)
    assert 1.1 * MB < len(body) < 1.3 * MB
    parse_feed(rss(item()))  # imports and compiles first: the attack's own cost is next
    # WHEN it is parsed THEN the declaration is dropped: what Python allocates stays a few
    # times the body (before: 86 MB), and the title keeps its references as text
    assert peak_of(lambda: parse_feed(body)) < 8 * MB
    report = collect_feed(serve("/entity.xml", body=body))
    assert (report.status, report.new) == (FEED_OK, 2)
    titles = [row["title"] for row in stored(database)]
    assert titles == ["&big;" * 30, "이웃 기사"]


def test_a_plain_entity_within_the_budget_still_expands():
    body = entity_feed("연합뉴스", 3)
    assert parse_feed(body).entries[0].title == "연합뉴스" * 3
    over = entity_feed("가" * 1000, ENTITY_EXPANSION_BUDGET // 3000 + 1)  # 3 bytes a character
    assert b"<!ENTITY big" not in without_unsafe_entities(over)


def test_plain_entities_past_the_thousandth_are_dropped():
    declarations = "".join(f'<!ENTITY e{n} "{n}">' for n in range(MAX_PLAIN_ENTITIES + 1))
    defused = without_unsafe_entities(f"<!DOCTYPE rss [{declarations}]>".encode())
    assert f'<!ENTITY e{MAX_PLAIN_ENTITIES - 1} "'.encode() in defused
    assert f"<!ENTITY e{MAX_PLAIN_ENTITIES} ".encode() not in defused


@LINEAR
def test_a_declaration_never_closed_is_kept_as_it_is():
    # many "<!ENTITY" and no ">": matched once, to the end, and left to the parser to refuse
    # (a search that needed the ">" scanned to the end again from each: 200,000 of them took
    # 11 minutes, 20,000 of them 4.6 s; one pass takes 5 ms; benchmarks/hostile_text.py)
    body = b"<!DOCTYPE rss [" + b"<!ENTITY x " * 200_000
    assert without_unsafe_entities(body) == body


# --- character references XML refuses (point 4) ------------------------------------------------

EMOJI = "\U0001f600"
# How a feed in an encoding that is not ASCII-compatible begins: its byte order mark, or none
# (its declaration's "<?xml" says it, XML 1.0 appendix F), and what its declaration names.
WIDE = {
    "utf-16-le": (codecs.BOM_UTF16_LE, "utf-16"),
    "utf-16-be": (b"", "utf-16"),
    "utf-32-le": (codecs.BOM_UTF32_LE, "utf-32"),
    "utf-32-be": (b"", "utf-32"),
    "cp500": (b"", "cp500"),  # EBCDIC
}
# (in the title, what is stored, how many references were replaced, the feed's encoding)
REFERENCES: dict[str, tuple[str, str, int, str]] = {
    "a surrogate pair, hex": ("웃음 &#xD83D;&#xDE00;", f"웃음 {EMOJI}", 0, "utf-8"),
    "a surrogate pair, decimal": ("웃음 &#55357;&#56832;", f"웃음 {EMOJI}", 0, "utf-8"),
    "a surrogate pair, zero-padded": ("웃음 &#x0D83D;&#x00DE00;", f"웃음 {EMOJI}", 0, "utf-8"),
    "a lone high surrogate": ("웃음 &#xD83D; 끝", "웃음 \ufffd 끝", 1, "utf-8"),
    "a lone low surrogate": ("웃음 &#56832; 끝", "웃음 \ufffd 끝", 1, "utf-8"),
    "a pair the wrong way round": ("웃음 &#xDE00;&#xD83D;", "웃음 \ufffd\ufffd", 2, "utf-8"),
    "past U+10FFFF": ("웃음 &#x110000; 끝", "웃음 \ufffd 끝", 1, "utf-8"),
    "past any integer": ("웃음 &#99999999999999999999; 끝", "웃음 \ufffd 끝", 1, "utf-8"),
    # the bodies decode_feed read into UTF-8 before: UnicodeEncodeError, the whole feed failed
    "a pair, UTF-16 LE with its mark": ("웃음 &#xD83D;&#xDE00;", f"웃음 {EMOJI}", 0, "utf-16-le"),
    "a lone one, UTF-16 BE by its start": ("웃음 &#xD83D; 끝", "웃음 \ufffd 끝", 1, "utf-16-be"),
    "a pair, UTF-32 LE with its mark": ("웃음 &#55357;&#56832;", f"웃음 {EMOJI}", 0, "utf-32-le"),
    "a pair, UTF-32 BE by its start": ("웃음 &#xD83D;&#xDE00;", f"웃음 {EMOJI}", 0, "utf-32-be"),
    "a pair, EBCDIC (cp500)": ("웃음 &#xD83D;&#xDE00;", f"웃음 {EMOJI}", 0, "cp500"),
}


def encoded(body: bytes, codec: str) -> bytes:
    """A UTF-8 feed from rss() in ``codec``, its declaration saying so (what a codec cannot
    write, such as Hangul in EBCDIC, written as character references)."""
    if codec == "utf-8":
        return body
    mark, declared = WIDE[codec]
    text = body.decode("utf-8").replace('encoding="utf-8"', f'encoding="{declared}"', 1)
    return mark + text.encode(codec, errors="xmlcharrefreplace")


@pytest.mark.parametrize("name", REFERENCES)
def test_references_xml_refuses_lose_one_character_not_the_feed(
    name, serve, collect_feed, database
):
    # GIVEN a feed whose first title carries the reference, in its summary too (before: five
    # of the eight made feedparser raise and the whole feed failed, every round)
    title, expected, replaced, codec = REFERENCES[name]
    body = encoded(
        rss(
            item(title, extra=f"<description>{title}</description>")
            + item("이웃 기사", "https://news.example/a/2")
        ),
        codec,
    )
    # WHEN parsed THEN the pair is its character, the rest U+FFFD, counted
    parsed = parse_feed(body)
    assert parsed.references_replaced == 2 * replaced
    # AND the whole feed is stored
    content_type = (
        "application/rss+xml; charset=utf-8" if codec == "utf-8" else "application/rss+xml"
    )
    report = collect_feed(serve("/references.xml", body=body, content_type=content_type))
    assert (report.status, report.new) == (FEED_OK, 2)
    assert report.with_replacement_char == (1 if replaced else 0)
    assert report.references_replaced == 2 * replaced
    rows = stored(database)
    assert [(row["title"], row["summary"]) for row in rows] == [
        (expected, expected),
        ("이웃 기사", ""),
    ]


def test_a_lone_surrogate_is_counted_where_an_operator_reads_it(aws_env, database, serve, capsys):
    # GIVEN a feed whose first title names a lone surrogate (before: the count reached no
    # report, log or metric)
    body = rss(item("웃음 &#xD83D; 끝") + item("이웃 기사", "https://news.example/a/2"))
    url = serve("/lone.xml", body=body, content_type="application/rss+xml; charset=utf-8")
    # WHEN the worker reads it
    log = LogLines(capsys)
    log.start()
    try:
        response = invoke("worker", worker_event([(url, "정치")]))
        lines = log.read()
    finally:
        log.stop()
    # THEN both entries are stored, and the replaced reference is counted in the feed's
    # report, its outlet's sums, the feed's log line and the funnel's metric
    (outlet,) = response["outlets"]
    (feed,) = outlet["feeds"]
    assert (outlet["new"], feed["references_replaced"], outlet["references_replaced"]) == (2, 1, 1)
    assert [row["title"] for row in stored(database)] == ["웃음 \ufffd 끝", "이웃 기사"]
    (feed_log,) = [entry for entry in lines if entry.get("message", "").startswith("Source:")]
    assert feed_log["references_replaced"] == 1
    (emf,) = [entry for entry in lines if "_aws" in entry]
    assert emf["ReferencesReplaced"] == [1]


def test_references_xml_accepts_are_left_as_they_are():
    content = b"&#xD7FF; &#xE000; &#x10FFFF; &#1114111; &#55295; &#57344; &#x1F600;"
    assert well_formed_references(content) == (content, 0)


# --- linear summaries (point 5) ----------------------------------------------------------------

# (a unit, repeated to 2 MB; what is left of it)
HOSTILE = {
    "'<' runs": ("<", lambda text: text),
    "'<a' left open": ("<a", lambda text: " "),
    "'<!--' left open": ("<!--", lambda text: " "),
    "'</' runs": ("</", lambda text: " "),
    "'<a b=\"' left open": ('<a b="', lambda text: " "),
    "'<script>' never closed": ("<script>", lambda text: " "),
    "'&' runs": ("&", lambda text: text),
    "'< 5% >' runs": ("3% < 5% 그리고 7 > 2 ", lambda text: text),
    "tags": ("<b>굵게</b>", lambda text: " 굵게 " * (len(text) // len("<b>굵게</b>"))),
}


@LINEAR
@pytest.mark.parametrize("name", HOSTILE)
def test_summaries_of_megabytes_are_read_in_one_pass(name):
    # GIVEN 2 MB of text built to make a backtracking scan quadratic (before: 160 kB of "<"
    # took 7.6 s, 320 kB 37 s); THEN its text, in one pass (benchmarks/hostile_text.py: linear)
    unit, expected = HOSTILE[name]
    text = unit * (2 * MB // len(unit.encode()))
    assert html_text(text) == expected(text)


@LINEAR
def test_a_feed_with_a_megabyte_summary_of_lt_is_read_whole():
    summary = "수익률 3% < 5% " + "<" * MB
    body = rss(item(extra=f"<description><![CDATA[{summary}]]></description>"))
    (entry,) = parse_feed(body).entries
    assert entry.summary == summary.strip()


# --- text that rewrites an operator's terminal (issue 39, point 7) -----------------------------


def atom(title: str, link: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
        f'<title>hostile</title><entry><title>{title}</title><link href="{link}"/>'
        "<id>tag:news.example,2026:1</id><updated>2026-12-01T00:00:00Z</updated></entry></feed>"
    ).encode()


@pytest.mark.parametrize("kind", ["rss", "atom"])
def test_links_lose_tab_and_newlines_and_text_its_c0_and_c1_controls(
    kind, serve, collect_feed, database
):
    """The attack: a link whose character references put CR, LF and a tab in it, stored as
    ``origin_url`` (and sent in events) and printed raw by ``newsdesk articles``, where it
    forges a line; a title with U+009D and a summary with U+0090 (C1 controls, from references
    XML allows), which reached the stored text and a terminal that acts on them."""
    link = "https://news.example/a/1&#13;&#10;?forged=1&#9;x"
    title = "속보&#157; 국회 예산안 통과"
    if kind == "rss":
        extra = "<description>요약&#144; 끝</description>"
        body = rss(item(title, link, extra) + item("이웃 기사", "https://news.example/a/2"))
    else:
        body = atom(title, link)
    report = collect_feed(serve(f"/controls.{kind}", body=body))
    assert report.status == FEED_OK
    first = stored(database)[0]
    # URLs lose ASCII tab and newline, wherever they are (the URL standard's basic parser)
    assert first["origin_url"] == "https://news.example/a/1?forged=1x"
    # stored text loses C0 and C1 controls
    assert first["title"] == "속보 국회 예산안 통과"
    if kind == "rss":
        assert first["summary"] == "요약 끝"


def test_articles_prints_controls_and_bidi_overrides_escaped_on_one_line(
    serve, collect_feed, database, postgres_url, data_dir, capsys
):
    """The attack: a title with a right-to-left override (U+202E, text storage keeps) and a
    link stored before links lost their CR and LF, with an escape sequence: ``newsdesk
    articles`` printed them raw, the override reordering the line, the CR and LF forging the
    next, the escape clearing the screen."""
    from newsdesk_local.cli import main

    body = rss(item("정치 \u202e사기 기사", "https://news.example/a/1"))
    assert collect_feed(serve("/bidi.xml", body=body)).new == 1
    with database.transaction() as cursor:
        cursor.execute(
            "UPDATE raw_article SET origin_url = origin_url || %s",
            ("\r\n#99 연합뉴스 | 정치 | ok | no issue | forged\x1b[2J\x9b",),
        )
    env = {"NEWSDESK_DATA_DIR": str(data_dir), "DATABASE_URL": postgres_url}
    assert main(["articles", "--since", "2026-11-30"], env) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # one article, one line
    assert out.endswith(
        "| 정치 \\u202e사기 기사 | https://news.example/a/1"
        "\\r\\n#99 연합뉴스 | 정치 | ok | no issue | forged\\x1b[2J\\x9b\n"
    )
    # JSON escapes them as JSON does: the control characters, not the override
    assert main(["articles", "--since", "2026-11-30", "--json"], env) == 0
    (article,) = json.loads(capsys.readouterr().out)["articles"]
    assert article["title"] == "정치 \u202e사기 기사"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("국회 예산안 통과", "국회 예산안 통과"),
        ("a\r\nb\tc", "a\\r\\nb\\tc"),
        ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
        ("\x00\x7f\x85\x9d", "\\x00\\x7f\\x85\\x9d"),
        ("abc\u202edef\u202c", "abc\\u202edef\\u202c"),
        ("\u2066x\u2069 \u200e\u200f\u061c", "\\u2066x\\u2069 \\u200e\\u200f\\u061c"),
        ("line\u2028next\u2029", "line\\u2028next\\u2029"),
    ],
)
def test_printed_text_shows_controls_and_bidi_characters_escaped(text, shown):
    """The attack: whatever a stored value still holds that a terminal acts on rather than
    shows: one function escapes it for every command's text and for the error line."""
    from newsdesk_local.output import printable

    assert printable(text) == shown


def test_the_error_line_shows_what_it_names_escaped(capsys):
    """The attack: a name in an error (a sources.yaml field, a feed's failure) with an
    override and an escape sequence, on standard error."""
    from newsdesk_local.output import error

    error("entry 2: \u202efield\x1b[2J\r\nnext")
    assert capsys.readouterr().err == "newsdesk: entry 2: \\u202efield\\x1b[2J next\n"
