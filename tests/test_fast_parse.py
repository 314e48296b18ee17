"""The fast RSS reader (newsdesk.collect.rss) against feedparser: on every document it accepts —
feedparser's whole corpus, the test feeds, the demo's feeds, and feeds written here to probe it —
the entries are the same (title, link, guid, published time, summary text); what it refuses,
feedparser reads."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from newsdesk.collect.parse import ParsedFeed, parse_feed
from newsdesk.core.errors import FeedParseError
from tests.feedparser_corpus import CORPUS
from tests.test_feedparser_corpus import corpus_files

ROOT = Path(__file__).resolve().parent.parent
OWN_FEEDS = sorted(
    [
        *(ROOT / "tests" / "feeds").glob("*.xml"),
        *(ROOT / "local/newsdesk_local/demo_feeds").glob("*.xml"),
    ]
)


def both(content: bytes) -> tuple[ParsedFeed, ParsedFeed] | None:
    """(auto, feedparser only), or None when feedparser finds no feed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            slow = parse_feed(content, fast=False, base_url="https://base.test/feed")
        except FeedParseError:
            slow = None
        try:
            auto = parse_feed(content, base_url="https://base.test/feed")
        except FeedParseError:
            auto = None
    assert (auto is None) == (slow is None)
    return None if auto is None or slow is None else (auto, slow)


def assert_same(content: bytes, name: str) -> bool:
    """True when the fast reader took the document; its entries must be feedparser's."""
    pair = both(content)
    if pair is None:
        return False
    auto, slow = pair
    if auto.fast:
        assert auto.entries == slow.entries, name
        assert auto.entries_without_link == slow.entries_without_link, name
        assert auto.ttl == slow.ttl, name
    return auto.fast


def test_same_entries_as_feedparser_on_its_whole_corpus() -> None:
    files = corpus_files()
    fast = [path for path in files if assert_same(path.read_bytes(), str(path.relative_to(CORPUS)))]
    assert len(fast) > 100  # the reader is exercised, not refused everywhere


@pytest.mark.parametrize("path", OWN_FEEDS, ids=lambda p: p.name)
def test_same_entries_as_feedparser_on_newsdesks_own_feeds(path: Path) -> None:
    assert_same(path.read_bytes(), path.name)


def test_the_bundled_korean_feeds_take_the_fast_path() -> None:
    demo = [p for p in OWN_FEEDS if "demo_feeds" in str(p)]
    assert demo
    assert all(assert_same(p.read_bytes(), p.name) for p in demo)


def rss(items: str, namespaces: str = "") -> bytes:
    return (
        f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0" {namespaces}><channel>'
        f"<title>t</title><ttl>10</ttl>{items}</channel></rss>"
    ).encode()


NS = (
    'xmlns:dc="http://purl.org/dc/elements/1.1/" '
    'xmlns:content="http://purl.org/rss/1.0/modules/content/" '
    'xmlns:media="http://search.yahoo.com/mrss/"'
)
PROBES = {
    "plain": "<item><title>제목</title><link>https://n.test/1</link><guid>g</guid></item>",
    "guid as link": "<item><title>a</title><guid>https://n.test/2</guid></item>",
    "guid not a permalink": '<item><title>a</title><guid isPermaLink="false">x</guid></item>',
    "permalink spelt otherwise": '<item><guid ISPERMALINK="True">https://n.test/3</guid></item>',
    "relative link": "<item><title>a</title><link>/news/4</link></item>",
    "relative guids": (
        "<item><title>a</title><guid>g/4</guid></item>"
        '<item><link>/news/5</link><guid isPermaLink="false">g/5</guid></item>'
    ),
    "entities and CDATA": (
        "<item><title>AT&amp;T &lt;속보&gt;</title><link>https://n.test/5?a=1&amp;b=2</link>"
        "<description><![CDATA[<p>본문&nbsp;요약 &amp; <b>굵게</b></p>]]></description></item>"
    ),
    "script and style": (
        "<item><link>https://n.test/6</link><description>&lt;script&gt;alert(1)&lt;/script&gt;"
        "&lt;style&gt;p{}&lt;/style&gt;본문&lt;!-- 주석 --&gt;</description></item>"
    ),
    "C1 controls": "<item><title>\u0080\u0093x\u009d</title><link>https://n.test/7</link></item>",
    "dates": (
        "<item><link>https://n.test/8</link><pubDate>Tue, 01 Dec 2026 09:00:00 +0900</pubDate>"
        "</item><item><link>https://n.test/9</link><pubDate>Sun,29 Nov 2026 10:00:00 KST"
        "</pubDate></item><item><link>https://n.test/10</link><pubDate>2026년 11월 30일 오후 3시"
        "</pubDate></item><item><link>https://n.test/11</link><pubDate>bogus</pubDate></item>"
        "<item><link>https://n.test/16</link><pubDate>Mon, 02 Mar 2026 23:30:00 -0530</pubDate>"
        "</item><item><link>https://n.test/17</link><pubDate>Mon, 32 Jan 2024 25:61:61 +0900"
        "</pubDate></item><item><link>https://n.test/18</link><pubDate>Tue, 01 Dec 2026 "
        "09:00:00 GMT</pubDate></item>"
    ),
    "dc:date and content:encoded": (
        "<item><link>https://n.test/12</link><dc:date>2026-11-30T01:02:03Z</dc:date>"
        "<content:encoded>&lt;p&gt;본문&lt;/p&gt;</content:encoded><dc:creator>기자</dc:creator>"
        '<media:thumbnail url="https://n.test/t.jpg"/></item>'
        "<item><link>https://n.test/13</link><description>요약</description>"
        "<content:encoded>본문</content:encoded></item>"
    ),
    "whitespace": "<item><title>\n  a \n b </title><link>\n https://n.test/14 \n</link></item>",
    "empty elements": "<item><title/><link>https://n.test/15</link><description/></item>",
    "a javascript link": "<item><link>javascript:alert(1)</link></item>",
    "an empty link beside a permalink guid": "<item><link/><guid>https://n.test/19</guid></item>",
    "no items": "",
    "double-escaped title, bare < and > in a summary": (
        "<item><title>&amp;#39;미치고 환장&amp;#39; &amp;amp; &lt;속보&gt;</title>"
        "<link>https://n.test/20</link><description>수익률 3% &lt; 5% 그리고 7 &gt; 2 전망"
        "</description></item>"
    ),
    "references XML refuses": (
        "<item><title>웃음 &#xD83D;&#xDE00; &#xDE00; &#x110000;</title>"
        "<link>https://n.test/21</link></item>"
    ),
}


@pytest.mark.parametrize("name", PROBES)
def test_same_entries_as_feedparser_on_probes(name: str) -> None:
    assert assert_same(rss(PROBES[name], NS), name)


REFUSED = {
    "an unknown element": "<item><link>https://n.test/1</link><slash:comments>3</slash:comments></item>",
    "markup in a title": "<item><title>a <b>b</b></title><link>https://n.test/2</link></item>",
    "a title twice": "<item><title>a</title><title>b</title><link>https://n.test/3</link></item>",
    "an undefined entity": "<item><title>a&nbsp;b</title><link>https://n.test/4</link></item>",
    "xml:base": '<item xml:base="https://other.test/"><link>/5</link></item>',
    "an item inside another element": "<image><item><link>https://n.test/6</link></item></image>",
    "a link inside an ignored element": (
        "<item><category><link>https://n.test/7</link></category><title>t</title></item>"
    ),
}


def test_a_doctype_after_a_long_comment_is_left_to_feedparser() -> None:
    body = (
        b'<?xml version="1.0"?><!--' + b" " * 5000 + b'--><!DOCTYPE rss [<!ENTITY t "Ent">]>'
        b'<rss version="2.0"><channel><item><title>a &t; b</title>'
        b"<link>https://n.test/1</link></item></channel></rss>"
    )
    pair = both(body)
    assert pair is not None
    auto, slow = pair
    assert not auto.fast
    assert auto.entries == slow.entries


@pytest.mark.parametrize("name", REFUSED)
def test_what_it_does_not_model_is_left_to_feedparser(name: str) -> None:
    namespaces = NS + ' xmlns:slash="http://purl.org/rss/1.0/modules/slash/"'
    pair = both(rss(REFUSED[name], namespaces))
    assert pair is not None
    auto, slow = pair
    assert not auto.fast
    assert auto.entries == slow.entries


def test_summaries_never_carry_scripts_or_styles() -> None:
    for fast in (True, False):
        feed = parse_feed(rss(PROBES["script and style"], NS), fast=fast)
        assert [e.summary for e in feed.entries] == ["본문"]
