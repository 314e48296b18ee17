"""newsdesk.extract.page: judging a fetched article page (issue 14, point 3).

The pages are tests/pages/*.html, Korean news pages written for these tests (fictional outlets
and stories) in the shapes Korean outlets use; the benchmark pages are the article-extraction
benchmark's (docs/extraction.md). Nothing here touches the network.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from newsdesk.extract.page import (
    BOT_CHALLENGE,
    CONSENT_WALL,
    DEFAULT_MIN_CHARS,
    EXTRACT_EMPTY,
    EXTRACT_OK,
    FILTERED_THIN,
    FOREIGN_HOST,
    JS_RENDERED,
    LINK_LIST,
    LIST_PAGE,
    META_REFRESH,
    NO_TEXT,
    NOT_HTTP,
    OG_WEBSITE,
    PAYWALL,
    SECTION_PAGE,
    SITE_ROOT,
    Verdict,
    is_html,
    judge_page,
    registrable_domain,
    sane_canonical,
    text_chars,
)
from newsdesk.extract.text import Extracted, decode_html, extract_text

PAGES = Path(__file__).resolve().parent / "pages"
BENCHMARK_CANDIDATES = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "article-extraction",
    Path("/work/shared/data/article-extraction"),
)
EVERYTHING_EXAMINED = 10**9  # a min_chars under which every page is thin: every detector runs

HANBIT = "https://www.hanbitnews.co.kr"
ARTICLE_URL = f"{HANBIT}/view/HBN20260312000215"


def page(name: str) -> str:
    return decode_html((PAGES / name).read_bytes())


def judge(html: str, url: str = ARTICLE_URL, min_chars: int = DEFAULT_MIN_CHARS) -> Verdict:
    return judge_page(html, extract_text(html, url=url), url, min_chars)


# ---- each outcome on its page ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "status", "reason"),
    [
        ("article_utf8.html", EXTRACT_OK, None),
        ("article_euckr_meta.html", EXTRACT_OK, None),
        ("article_cp949_undeclared.html", EXTRACT_OK, None),
        ("article_footer_mentions.html", EXTRACT_OK, None),
        ("brief_subway.html", EXTRACT_OK, None),
        ("brief_beach.html", EXTRACT_OK, None),
        ("js_only.html", EXTRACT_EMPTY, JS_RENDERED),
        ("consent_wall.html", EXTRACT_EMPTY, CONSENT_WALL),
        ("paywall.html", EXTRACT_EMPTY, PAYWALL),
        ("bot_challenge.html", EXTRACT_EMPTY, BOT_CHALLENGE),
        ("meta_refresh.html", EXTRACT_EMPTY, META_REFRESH),
        ("photo_caption.html", FILTERED_THIN, None),
        ("photo_caption_rally.html", FILTERED_THIN, None),
        ("photo_caption_market.html", FILTERED_THIN, None),
    ],
)
def test_each_page_gets_its_verdict(name, status, reason):
    verdict = judge(page(name))
    assert (verdict.status, verdict.reason) == (status, reason)
    assert verdict.chars >= 0


def test_the_legacy_encodings_are_read_before_judging():
    assert "반도체 수출이 넉 달 연속 늘면서" in page("article_euckr_meta.html")  # meta charset only
    cp949 = page("article_cp949_undeclared.html")  # no declaration at all, a CP949-only 똠
    assert "똠얌꿍" in cp949
    assert "\ufffd" not in cp949
    assert judge(cp949).chars >= 500


def test_a_consent_wall_is_empty_though_its_own_text_is_long():
    html = page("consent_wall.html")
    extracted = extract_text(html)
    assert text_chars(extracted.text) >= DEFAULT_MIN_CHARS  # the extractor kept the dialog
    assert judge_page(html, extracted, ARTICLE_URL, DEFAULT_MIN_CHARS).reason == CONSENT_WALL


def test_a_js_shell_is_empty_though_its_noscript_text_was_kept():
    # an extractor that keeps <noscript> (trafilatura did, before newsdesk's text rule) gives
    # the shell's request for JavaScript as the text: still an empty page
    html = page("js_only.html")
    kept = Extracted(
        text="이 페이지를 보려면 브라우저에서 자바스크립트(JavaScript)를 사용하도록 설정해 주세요."
        " You need to enable JavaScript to run this app."
    )
    assert judge_page(html, kept, ARTICLE_URL, DEFAULT_MIN_CHARS).reason == JS_RENDERED
    assert judge(html).reason == JS_RENDERED


def test_a_paywall_keeps_its_one_sentence_teaser_counted():
    verdict = judge(page("paywall.html"))
    assert verdict.reason == PAYWALL
    assert 0 < verdict.chars < DEFAULT_MIN_CHARS


def test_a_page_with_nothing_is_no_text():
    body = re.compile(r'<div class="article-body".*?(?=<div class="keyword">)', re.S)
    html = body.sub("", page("article_utf8.html"))
    assert judge(html) == Verdict(EXTRACT_EMPTY, NO_TEXT, 0)
    assert judge_page("", Extracted(text=""), ARTICLE_URL, DEFAULT_MIN_CHARS).reason == NO_TEXT


def test_a_photo_caption_is_thin_and_an_outlet_can_lower_the_threshold_for_its_briefs():
    caption = judge(page("photo_caption.html"))
    assert caption.status == FILTERED_THIN
    weather = judge(page("brief_weather.html"))  # two short sentences: under the default
    assert weather.status == FILTERED_THIN
    assert caption.chars < weather.chars < DEFAULT_MIN_CHARS
    assert judge(page("brief_weather.html"), min_chars=weather.chars).status == EXTRACT_OK


# ---- evidence, not words: mentions in the chrome are not walls ---------------------------------


@pytest.mark.parametrize(
    "name", ["article_footer_mentions.html", "photo_caption.html", "photo_caption_rally.html"]
)
def test_footer_and_comment_words_are_no_evidence_even_when_every_detector_runs(name):
    # footers with 구독 and 유료회원, a cookie bar and a OneTrust banner with 동의,
    # "댓글은 로그인 후 이용", a reCAPTCHA in the comment form, ad scripts: none is a wall
    html = page(name)
    assert "구독" in html
    verdict = judge(html, min_chars=EVERYTHING_EXAMINED)
    assert verdict == Verdict(FILTERED_THIN, None, verdict.chars)


def test_cloudflares_script_on_an_ordinary_page_is_not_a_challenge():
    script = (
        "<script>(function(){var a=document.createElement('script');"
        "a.src='/cdn-cgi/challenge-platform/scripts/jsd/main.js';document.head.appendChild(a)})()"
        "</script></body>"
    )
    html = page("photo_caption.html").replace("</body>", script)
    assert judge(html).status == FILTERED_THIN


def test_a_refresh_inside_noscript_is_the_script_shell_it_belongs_to():
    html = page("js_only.html").replace(
        "<noscript>", '<noscript><meta http-equiv="refresh" content="0; url=/nojs">'
    )
    assert judge(html).reason == JS_RENDERED


# ---- list pages --------------------------------------------------------------------------------


def test_a_section_index_is_a_list_page_by_its_address_or_by_its_links():
    html = page("section_politics.html")
    assert judge(html, f"{HANBIT}/politics").reason == SECTION_PAGE
    assert judge(html, f"{HANBIT}/news/articleList.html?sc_section_code=S1N1").reason == (
        SECTION_PAGE
    )
    # served where an article was expected: 29 headlines with a line each
    verdict = judge(html, f"{HANBIT}/view/HBN20260312000101")
    assert (verdict.status, verdict.reason) == (LIST_PAGE, LINK_LIST)
    assert verdict.chars >= DEFAULT_MIN_CHARS  # the leads are text, yet it is no article


def test_a_deleted_article_sent_to_the_home_page_is_a_list_page():
    html = page("article_utf8.html")
    for root in (f"{HANBIT}/", HANBIT, f"{HANBIT}/index.html"):
        assert judge(html, root) == Verdict(LIST_PAGE, SITE_ROOT, judge(html).chars)
    assert judge(html, f"{HANBIT}/?idxno=12345").status == EXTRACT_OK  # an article by query


def test_a_website_of_headlines_without_text_is_a_list_page():
    bare = re.sub(
        r'<p class="lead">.*?</p>|<span class="date">.*?</span>', "", page("section_politics.html")
    )
    nothing = Extracted(text="")
    assert judge_page(bare, nothing, f"{HANBIT}/hub/assembly", DEFAULT_MIN_CHARS).reason == (
        OG_WEBSITE
    )
    # the same page at an article's address, or calling itself an article, is not one
    at_article = judge_page(bare, nothing, ARTICLE_URL, DEFAULT_MIN_CHARS)
    assert at_article.reason == NO_TEXT
    as_article = bare.replace('content="website"', 'content="article"')
    assert judge_page(as_article, nothing, f"{HANBIT}/hub/assembly", 120).reason == NO_TEXT


def test_an_extractors_recall_of_related_lists_on_a_photo_page_is_not_a_list():
    # recall mode's text of a photo page (as trafilatura gave it before newsdesk's text rule):
    # the caption, then the related headlines as lines of text
    html = page("photo_caption_rally.html")
    caption = extract_text(html).text
    padded = Extracted(
        text=caption + '\n관련 뉴스\n산지 쌀값 석 달째 하락…정부 "추가 매입 검토"\n'
        '농민단체 "양곡관리법 개정 서둘러야"\n올해 쌀 생산량 작년보다 2% 감소 전망',
        mode="recall",
    )
    assert judge_page(html, padded, ARTICLE_URL, DEFAULT_MIN_CHARS).status == FILTERED_THIN
    assert judge(html).status == FILTERED_THIN


# ---- text_chars --------------------------------------------------------------------------------


def test_text_chars_counts_sentence_lines_without_whitespace():
    assert text_chars("서울시가 노선을 고친다.") == len("서울시가노선을고친다.")
    assert text_chars("It rained. It stopped!\n  Did it?  ") == len("Itrained.Itstopped!Didit?")
    assert text_chars("정치\n경제\n로그인\n2026-03-12 15:20\n많이 본 뉴스") == 0
    assert text_chars("코스피 2.5% 급등…외국인 순매수") == 0  # a headline: a number, no full stop
    assert text_chars("“모두 동의한다.”") == len("“모두동의한다.”")
    assert text_chars("会议结束。") == len("会议结束。")
    assert text_chars("") == 0


# ---- is_html -----------------------------------------------------------------------------------

HTML_PAGE = b"<!DOCTYPE html><html><head><title>t</title></head><body><p>x</p></body></html>"


@pytest.mark.parametrize(
    ("content_type", "content", "expected"),
    [
        ("text/html; charset=utf-8", HTML_PAGE, True),
        ("TEXT/HTML", b"", True),
        ("application/xhtml+xml", b'<?xml version="1.0"?><html xmlns="x"></html>', True),
        (None, HTML_PAGE, True),
        ("", b"\xef\xbb\xbf  \n<html lang='ko'><body>x</body></html>", True),
        ("text/plain", b"<!-- generated --><html><body></body></html>", True),
        ("application/octet-stream", b"<div class='article'>x</div>", True),
        ("application/xml", b'<?xml version="1.0"?>\n<!DOCTYPE html><html></html>', True),
        (None, "<html><body>UTF-16</body></html>".encode("utf-16"), True),
        ("application/pdf", b"%PDF-1.7\n", False),
        ("image/jpeg", b"\xff\xd8\xff\xe0", False),
        ("application/json", b'{"html": "<html>"}', False),
        ("application/rss+xml", b'<?xml version="1.0"?><rss version="2.0"></rss>', False),
        ("text/xml", b'<?xml version="1.0"?><rss version="2.0"><channel/></rss>', False),
        (None, b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"/>', False),
        ("application/octet-stream", b"%PDF-1.4", False),
        (None, b"\x89PNG\r\n\x1a\n", False),
        (None, b"", False),
        (None, b"<htmlx>", False),
        ("text/plain", b"plain words, <b>bold</b>", False),
    ],
)
def test_is_html(content_type, content, expected):
    assert is_html(content_type, content) is expected


# ---- sane_canonical ----------------------------------------------------------------------------

PAGE_URL = "https://m.hanbitnews.co.kr/view/HBN20260312000215"


@pytest.mark.parametrize(
    ("canonical", "expected"),
    [
        # kept: another host of the same outlet (www. and m.), resolved when relative
        (ARTICLE_URL, ARTICLE_URL),
        ("/view/HBN20260312000215", "https://m.hanbitnews.co.kr/view/HBN20260312000215"),
        ("//www.hanbitnews.co.kr/view/HBN20260312000215", ARTICLE_URL),
        ("  https://hanbitnews.co.kr/view/HBN20260312000215 ", "https://hanbitnews.co.kr/view/HBN20260312000215"),
        ("http://WWW.HANBITNEWS.CO.KR/view/HBN20260312000215", "http://WWW.HANBITNEWS.CO.KR/view/HBN20260312000215"),
        ("https://www.hanbitnews.co.kr/2026/03/12/empty-house-plan-funded", "https://www.hanbitnews.co.kr/2026/03/12/empty-house-plan-funded"),
    ],
)  # fmt: skip
def test_sane_canonical_keeps(canonical, expected):
    assert sane_canonical(canonical, PAGE_URL) == (expected, None)


@pytest.mark.parametrize(
    ("canonical", "reason"),
    [
        ("javascript:void(0)", NOT_HTTP),
        ("ftp://www.hanbitnews.co.kr/view/HBN20260312000215", NOT_HTTP),
        ("mailto:desk@hanbitnews.co.kr", NOT_HTTP),
        ("about:blank", NOT_HTTP),
        ("data:text/html,<p>x</p>", NOT_HTTP),
        ("https://www.hanbitnews.co.kr/", SITE_ROOT),
        ("https://www.hanbitnews.co.kr", SITE_ROOT),
        ("/", SITE_ROOT),
        ("https://hanbitnews.co.kr/index.html", SITE_ROOT),
        ("https://www.hanbitnews.co.kr/politics", SECTION_PAGE),
        ("/society/", SECTION_PAGE),
        ("https://www.hanbitnews.co.kr/news/politics", SECTION_PAGE),
        ("https://www.hanbitnews.co.kr/news/articleList.html?sc_section_code=S1N2", SECTION_PAGE),
        ("https://www.hanbitnews.co.kr/정치", SECTION_PAGE),
        ("https://www.hanbitnews.co.kr/view", SECTION_PAGE),  # the article's id dropped
        ("https://www.hanbitnews.co.kr/news/articleView.html", SECTION_PAGE),
        ("https://www.saebyeok.co.kr/view/HBN20260312000215", FOREIGN_HOST),
        ("https://co.kr/view/HBN20260312000215", FOREIGN_HOST),
        ("https://hanbitnews.com/view/HBN20260312000215", FOREIGN_HOST),
        ("https://www.yna.co.kr/view/AKR20260312000100001", FOREIGN_HOST),
    ],
)
def test_sane_canonical_ignores(canonical, reason):
    assert sane_canonical(canonical, PAGE_URL) == (None, reason)


def test_sane_canonical_without_a_canonical():
    assert sane_canonical(None, PAGE_URL) == (None, None)
    assert sane_canonical("   ", PAGE_URL) == (None, None)


def test_an_article_id_in_the_query_is_an_article():
    page_url = "https://www.bareunbiz.co.kr/news/articleView.html?idxno=8576"
    kept = "https://www.bareunbiz.co.kr/news/articleView.html?idxno=8576"
    assert sane_canonical(kept, page_url) == (kept, None)
    dropped = "https://www.bareunbiz.co.kr/news/articleView.html"
    assert sane_canonical(dropped, page_url) == (None, SECTION_PAGE)


@pytest.mark.parametrize(
    ("host", "domain"),
    [
        ("www.hanbitnews.co.kr", "hanbitnews.co.kr"),
        ("m.hanbitnews.co.kr", "hanbitnews.co.kr"),
        ("hanbitnews.co.kr", "hanbitnews.co.kr"),
        ("news.seoul.go.kr", "seoul.go.kr"),
        ("www.gangnam.seoul.kr", "gangnam.seoul.kr"),
        ("www.hanbit.kr", "hanbit.kr"),
        ("news.bbc.co.uk", "bbc.co.uk"),
        ("www.abc.net.au", "abc.net.au"),
        ("www.nytimes.com", "nytimes.com"),
        ("WWW.Example.COM.", "example.com"),
        ("127.0.0.1", "127.0.0.1"),
        ("localhost", "localhost"),
        ("한빛.kr", "xn--xx3br43b.kr"),
    ],
)
def test_registrable_domain_offline(host, domain):
    assert registrable_domain(host) == domain


# ---- the benchmark's 90 pages ------------------------------------------------------------------


@pytest.fixture(scope="module")
def benchmark() -> list[tuple[str, str, Extracted]]:
    data = next((p for p in BENCHMARK_CANDIDATES if (p / "ground-truth.json").is_file()), None)
    if data is None:
        pytest.skip(f"the article-extraction benchmark is not at {BENCHMARK_CANDIDATES[0]}")
    truth = json.loads((data / "ground-truth.json").read_text(encoding="utf-8"))
    pages = []
    for key, item in sorted(truth.items()):
        html = decode_html(gzip.decompress((data / "html" / f"{key}.html.gz").read_bytes()))
        pages.append((item["url"], html, extract_text(html, url=item["url"])))
    assert len(pages) == 90
    return pages


def test_no_benchmark_article_is_a_list_or_a_wall(benchmark):
    verdicts = {url: judge_page(html, ex, url, DEFAULT_MIN_CHARS) for url, html, ex in benchmark}
    assert [u for u, v in verdicts.items() if v.status == LIST_PAGE] == []
    walls = {BOT_CHALLENGE, CONSENT_WALL, PAYWALL, JS_RENDERED, META_REFRESH}
    assert [u for u, v in verdicts.items() if v.reason in walls] == []
    assert sum(v.status == EXTRACT_OK for v in verdicts.values()) == 90


def test_benchmark_pages_examined_as_if_thin_show_only_their_declared_paywalls(benchmark):
    # every detector runs on every page: the only walls found are the pages that declare
    # themselves not free (schema.org isAccessibleForFree false; metered, full text present)
    declared = re.compile(r"isAccessibleForFree\W+(content=\W)?\"?false", re.IGNORECASE)
    for url, html, extracted in benchmark:
        verdict = judge_page(html, extracted, url, EVERYTHING_EXAMINED)
        expected = (EXTRACT_EMPTY, PAYWALL) if declared.search(html) else (FILTERED_THIN, None)
        assert (verdict.status, verdict.reason) == expected, url
