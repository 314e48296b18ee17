"""Hostile page shapes at the size cap end judged, in bounded work (issue 39, point 8).

Each shape of tests/hostile_shapes.py (a 2 MiB page, its article after the hostile part) is
judged as the extractor judges a fetched page: either its article is kept, or the page is not
read and says so (``extract_empty``, ``too_complex``). The work is counted, not timed:
trafilatura is never handed a tree of more than ``ELEMENT_BUDGET`` elements (as prepared for
it), and the parser never stops short of the page's end (libxml2 stops at 256 levels: a page
nested 100,000 deep lost its article). benchmarks/hostile_pages.py prints the CPU each shape
costs, at the cap and at the largest size still read.
"""

from __future__ import annotations

from typing import Any

import pytest
import trafilatura

from newsdesk.extract import nesting, text
from newsdesk.extract.page import (
    EXTRACT_EMPTY,
    EXTRACT_OK,
    LIST_PAGE,
    SECTION_PAGE,
    SITE_ROOT,
    Verdict,
    judge_page,
)
from newsdesk.extract.text import ELEMENT_BUDGET, Extracted, decode_html, extract_text
from newsdesk.extract.vocabulary import TOO_COMPLEX
from tests.hostile_shapes import ARTICLE, SHAPES, SIZE, URL, article, deep, shell


@pytest.fixture
def trees_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The element count of every tree trafilatura extracts from, as it is handed one."""
    counts: list[int] = []
    extraction = trafilatura.bare_extraction

    def counted(tree: Any, *args: Any, **kwargs: Any) -> Any:
        counts.append(sum(1 for _ in tree.getroottree().getroot().iter()))
        return extraction(tree, *args, **kwargs)

    monkeypatch.setattr(trafilatura, "bare_extraction", counted)
    return counts


def judged(html: str) -> tuple[Extracted, Verdict]:
    """What the extractor keeps of ``html`` served from URL, and its verdict."""
    page = decode_html(html.encode())
    extracted = extract_text(page, URL)
    return extracted, judge_page(page, extracted, URL)


@pytest.mark.parametrize("name", list(SHAPES))
def test_every_shape_at_the_cap_keeps_its_article_or_is_too_complex(name, trees_read):
    # GIVEN a page of the shape, as large as the extractor fetches, its article last
    html = SHAPES[name](SIZE)
    assert len(html.encode()) <= SIZE
    # WHEN it is extracted and judged
    extracted, verdict = judged(html)
    # THEN trafilatura reads no tree larger than the budget
    assert all(count <= ELEMENT_BUDGET for count in trees_read)
    if verdict.reason == TOO_COMPLEX:
        # … the page not read at all, and said so, with what its head gives
        assert (verdict.status, verdict.chars, trees_read) == (EXTRACT_EMPTY, 0, [])
        assert (extracted.text, extracted.unread) == ("", TOO_COMPLEX)
        assert extracted.title == "시내버스 노선 개편"
    else:
        # … or the page read to its end: its article is there
        assert verdict.status == EXTRACT_OK
        for paragraph in ARTICLE:
            assert paragraph in extracted.text


def test_the_text_after_a_page_nested_100000_deep_is_kept(trees_read):
    # GIVEN 100,000 <div> in one another, then the article (libxml2 stops at 256 levels)
    html = deep(levels=100_000)
    # WHEN it is extracted and judged
    extracted, verdict = judged(html)
    # THEN the article after the nesting is the text, the page an article
    assert extracted.text.split("\n") == ARTICLE
    assert verdict.status == EXTRACT_OK
    assert extracted.title == "시내버스 노선 개편"


def test_text_inside_a_page_nested_past_the_parser_is_kept():
    # GIVEN text at every one of 1,000 levels (the parser keeps 255)
    html = shell("".join(f"<div>{n}층." for n in range(1000)) + "</div>" * 1000, article())
    # WHEN it is read as the judge reads it
    tree = text._load(html)
    # THEN every level's text is in the tree, the article after it, and no deeper than MAX_DEPTH
    assert tree is not None
    words = tree.text_content()
    assert all(f"{n}층." in words for n in range(1000))
    assert ARTICLE[2] in words
    assert not tree.xpath("/*" + "/*" * (nesting.MAX_DEPTH + 3))


def test_a_page_over_the_budget_is_too_complex_and_one_under_it_is_read(trees_read):
    # GIVEN two pages of short paragraphs, one just over the budget, one under it
    paragraph = "<p>문단 하나.</p>"
    over = text._load(shell(paragraph * ELEMENT_BUDGET, article()))
    assert over is not None
    assert not text._prepared_within_budget(over)
    # WHEN each is extracted
    too_many = extract_text(shell(paragraph * ELEMENT_BUDGET, article()))
    under = extract_text(shell(paragraph * (ELEMENT_BUDGET - 100), article()))
    # THEN the first is not read, the second is, article and all
    assert (too_many.unread, too_many.text) == (TOO_COMPLEX, "")
    assert under.unread is None
    assert ARTICLE[0] in under.text
    assert trees_read
    assert max(trees_read) <= ELEMENT_BUDGET


def test_a_page_over_the_budget_once_prepared_is_too_complex(trees_read):
    # GIVEN 7,000 runs of text beside a <br>: under the budget as parsed, each run a paragraph
    # of its own once prepared (about 14,000 elements)
    html = shell("<div>" + "가나다.<br>" * 7000 + "</div>", article())
    tree = text._load(html)
    assert tree is not None
    assert text._within_budget(tree)
    # WHEN it is extracted, THEN trafilatura is not handed it
    assert extract_text(html).unread == TOO_COMPLEX
    assert trees_read == []


@pytest.mark.parametrize(
    ("url", "verdict"),
    [
        (URL, Verdict(EXTRACT_EMPTY, TOO_COMPLEX, 0)),
        ("https://news.example.kr/", Verdict(LIST_PAGE, SITE_ROOT, 0)),
        ("https://news.example.kr/politics", Verdict(LIST_PAGE, SECTION_PAGE, 0)),
    ],
)
def test_a_page_not_read_is_judged_by_its_address_alone(url, verdict):
    # GIVEN a page the extractor did not read (a home page of many elements, say)
    unread = Extracted(text="", title="한빛일보", unread=TOO_COMPLEX)
    # WHEN it is judged, THEN its address decides, else it is too complex
    assert judge_page("<html><body>" + "<p>x</p>" * 50 + "</body></html>", unread, url) == verdict


# --- shallower: the markup rewritten --------------------------------------------------------


def test_a_page_within_the_parsers_depth_is_not_rewritten():
    html = shell("<div>" * 190 + "<p>깊은 곳.</p>" + "</div>" * 190, article())
    assert not nesting.cut_short(text._load(html))
    assert nesting.shallower(html) == html


def test_unclosed_paragraphs_list_items_and_cells_do_not_count_as_nesting():
    # the parser closes each of these when the next opens: 1,000 of them are 1,000 siblings
    units = ["<p>문단.", "<li>항목.", "<tr><td>칸.<td>칸.", "<dt>말.<dd>뜻.", "<option>고름."]
    for unit in units:
        html = "<html><body><div>" + unit * 1000 + "</div><p>끝.</p></body></html>"
        assert nesting.shallower(html, max_depth=5) == html, unit


def test_deep_tags_are_dropped_and_their_text_breaks_and_scripts_kept():
    html = (
        "<html><body>" + "<div>" * 3 + "글<br>자<img src=a.png>"
        "<script>if (a < b) { x = '<div>' }</script><!-- 주석 --><b>굵게</b>"
        + "</div>" * 3
        + "<p>끝.</p></body></html>"
    )
    assert nesting.shallower(html, max_depth=3) == (
        "<html><body><div>글<br>자<img src=a.png><script>if (a < b) { x = '<div>' }</script>"
        "<!-- 주석 -->굵게<br></div><p>끝.</p></body></html>"
    )


def test_a_paragraph_unwrapped_ends_with_a_line_break():
    # GIVEN an article's paragraphs below the depth kept
    html = "<html><body><div><article>" + "".join(f"<p>{p}</p>" for p in ARTICLE) + "</article>"
    # WHEN the markup is made shallower, THEN each paragraph's text is a line of its own
    assert nesting.shallower(html, max_depth=3) == (
        "<html><body><div>" + "".join(f"{p}<br>" for p in ARTICLE)
    )
    assert extract_text(nesting.shallower(html, max_depth=3)).text.split("\n") == ARTICLE


def test_an_end_tag_that_closes_nothing_is_dropped_and_a_self_closed_tag_opens_nothing():
    html = "<html><body></span><div/><div/><div>글</div></body></html>"
    assert nesting.shallower(html, max_depth=3) == (
        "<html><body><div/><div/><div>글</div></body></html>"
    )
