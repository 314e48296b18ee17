"""Page preparation in linear time (issue 22, point 5): the extractor's tree preparation reads
megabytes of hostile markup in one pass, and finds and removes exactly what the XPath it
replaces found and removed (benchmarks/page_preparation.py shows the cost as pages grow)."""

from __future__ import annotations

import lxml.etree
import lxml.html
import pytest
import trafilatura
from hypothesis import given, settings
from hypothesis import strategies as st

from newsdesk.extract import text

MB = 1024 * 1024


# About 12 times what it takes here (2.5 s on a loaded machine; the quadratic XPath took over
# a minute). By a thread: a signal waits until lxml's C code returns (an XPath of 20,000
# breaks, alarmed at 1 s, was interrupted at 19 s), the thread ends the process at the bound.
@pytest.mark.timeout(30, method="thread")
def test_megabytes_of_hostile_markup_are_prepared_whole():
    # GIVEN a page of 1.25 MB: a megabyte of empty elements each before a word, then text
    # beside line breaks in one element (the XPath took 0.21, 0.84 and 3.1 s on 39, 78 and
    # 156 kB of the second, and removing the first one by one 1.1 s on 156 kB: this page
    # took over a minute; one pass takes a fraction of a second)
    spans, breaks = MB // len("<span></span>word "), MB // 4 // len("text<br>")
    page = (
        "<html><body><div>" + "<span></span>word " * spans + "</div>"
        "<div>" + "text<br>" * breaks + "</div></body></html>"
    )
    # WHEN it is prepared
    tree = text._parse(page)
    # THEN the empty elements are gone with their text joined, every word is kept, and each
    # run of text beside the breaks is its own paragraph
    assert tree is not None
    first, second = tree.find("body").findall("div")
    assert first.find(".//span") is None
    assert first.text_content().split() == ["word"] * spans
    assert len(second.findall("p")) == breaks
    assert second.text_content().count("text") == breaks


# The XPath the preparation used (quadratic in an element's siblings), kept as the reference.
_REFERENCE = lxml.etree.XPath(
    "//text()[normalize-space()]/preceding-sibling::node()[1]"
    "[self::article or self::blockquote or self::div or self::li or self::main or self::p"
    " or self::section or self::span]"
    "[not(.//text()[normalize-space()]"
    "[not(ancestor::script or ancestor::style or ancestor::noscript or ancestor::template)])]"
)

TAGS = ("div", "span", "p", "li", "b", "br", "script", "style", "noscript", "template", "a")
WORDS = st.sampled_from(["", " ", "\n\t", "w", "\xa0", "어"])


@st.composite
def fragments(draw: st.DrawFn, depth: int = 0) -> str:
    parts = [draw(WORDS)]
    for _ in range(draw(st.integers(0, 4 if depth < 3 else 0))):
        choice = draw(st.sampled_from([*TAGS, "comment"]))
        if choice == "comment":
            parts.append(f"<!--{draw(WORDS)}-->")
        elif choice == "br":
            parts.append("<br>")
        else:
            parts.append(f"<{choice}>{draw(fragments(depth + 1))}</{choice}>")
        parts.append(draw(WORDS))
    return "".join(parts)


@settings(max_examples=100, deadline=None)
@given(fragments())
def test_the_walk_finds_and_removes_what_the_xpath_did(fragment):
    html = f"<html><body><div>{fragment}</div>w</body></html>"
    walked, reference = trafilatura.load_html(html), trafilatura.load_html(html)
    found = text._empty_before_text(walked)
    expected = _REFERENCE(reference)
    assert [lxml.etree.tostring(e) for e in found] == [lxml.etree.tostring(e) for e in expected]
    text._drop_keeping_tails(found)
    for element in expected:
        element.drop_tree()
    assert lxml.etree.tostring(walked) == lxml.etree.tostring(reference)
