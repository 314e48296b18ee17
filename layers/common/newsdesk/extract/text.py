"""An article page's main text and the metadata that comes with it cheaply (issue 14).

The extractor is trafilatura, asked for precision and without comments, on a tree prepared
first for two shapes of page it otherwise cuts short: an element that holds nothing but a
script or a style (an ad slot) and is followed by text is removed and the text kept, where
precision mode would delete the text with it; and the text a container holds directly beside
<br> and block children (text separated by <br> inside an <article> or a <div>) is wrapped in
paragraphs, run by run, where trafilatura would drop the run before the first child. Both are
one pass over the tree, linear in the page however hostile its shape (benchmarks/
page_preparation.py).

Its precision mode sometimes drops the article itself and returns a fragment, so a short result
(under ``SHORT_TEXT`` characters) is checked against trafilatura's recall mode. The recall
result is taken when it is more than ``LONGER_BY`` times as long and adds ``ADDED_WORDS``
characters of words that are neither the precision text's nor the page's chrome (links,
buttons, navigation, header, footer, asides, the title): recall mode also reads the chrome, and
on a photo page the chrome is all it adds. Where recall is not taken and the precision text has
under ``ADDED_WORDS`` characters of such words, a page with figure captions is read once more
in precision mode with its figures as blocks and its captions as paragraphs (trafilatura drops
both), and that text is taken when it adds words: a photo article's text is its caption. The
rule reads only the page's markup and the results' words, never the page's address or site. On
the article-extraction benchmark (docs/extraction.md) this scores above stock trafilatura
(comments included, neither mode) at a similar CPU cost.

Bytes are decoded here, by the evidence (as the collect stage decodes feeds): a byte order
mark; a body that is valid UTF-8 is UTF-8; then the charset the page declares (``<meta
charset>`` or ``http-equiv``), the EUC-KR family read as CP949, its superset; an undeclared
body that is not UTF-8 is CP949 when it is wholly valid CP949, else UTF-8 with bad bytes
replaced. A declaration that cannot describe the page counts as none: UTF-8, UTF-16 or UTF-32
in any form (the body was not UTF-8, and a declaration readable as ASCII is not in UTF-16 or
UTF-32), or a codec that is no text encoding or fails (``rot13``, ``base64``, ``idna``).

Hostile pages are bounded (tests/test_hostile_pages.py, tests/test_hostile_shapes.py; the CPU
per shape: benchmarks/hostile_pages.py). A page nested past the 256 levels libxml2 builds is
read again with its levels past 200 unwrapped (``newsdesk.extract.nesting``): the text after
the nesting, and in it, was lost. A page of more than ``ELEMENT_BUDGET`` elements is not read
(``Extracted.unread``, ``too_complex``, with what its head says): trafilatura's cost grows
with the elements, more than linearly for some shapes (2 MB of short paragraphs took a
minute). trafilatura measures the text of elements all the way down and caches the strings
(``trim``, ``line_processing``: up to 1,024 strings of any length each), so a page costs it
about the sum of its elements' text lengths, every character counted once for each element
it is in: a 2 MB page nested 250 levels deep with text at every level held 398 MB. A page
whose sum is over ``TEXT_DEPTH_BUDGET`` has its deepest levels unwrapped into their ancestors
(the text kept, scripts and styles dropped) until it is under it. The article-extraction
benchmark's pages stay far below all three bounds, so none of them changes. The caches are
cleared after every page, so that no page's strings stay in a warm container.
"""

from __future__ import annotations

import codecs
import re
from collections import Counter
from copy import copy
from dataclasses import dataclass
from typing import Any

import lxml.etree
import lxml.html
import trafilatura
import trafilatura.utils

from newsdesk.extract import nesting
from newsdesk.extract.vocabulary import TOO_COMPLEX

SHORT_TEXT = 1000  # characters: a precision-mode result shorter than this is checked
LONGER_BY = 2.0  # the recall-mode result replaces it when this many times as long
# … and when it adds this many characters of words (\w+ runs, each counted as often as it
# occurs beyond the precision text's and the chrome's); under this many, a text has no article
ADDED_WORDS = 200
# The most text a page may weigh, in characters times the elements each is in (the
# article-extraction benchmark's heaviest page weighs 4.5 million; what is over is unwrapped).
TEXT_DEPTH_BUDGET = 16_000_000
# The most elements a page may have to be read (the article-extraction benchmark's largest has
# 1,584): trafilatura's passes cost up to about 0.15 ms of CPU an element, and more than
# linearly for some shapes (thousands of <p>), so a page with more is not read, and is judged
# TOO_COMPLEX; at it, every shape of benchmarks/hostile_pages.py costs 1.25 s at most.
ELEMENT_BUDGET = 10_000

_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE
)
_KOREAN_LEGACY = {"euc_kr", "cp949"}  # Python's names for ks_c_5601-1987, korean, uhc, …
_NOT_EVIDENCE = ("utf_8", "utf_16", "utf_32")  # and their -sig, -be and -le forms
_UNWRAPPED_DROPS = ("script", "style", "noscript", "template")
# trafilatura's lru_caches of strings of any length, cleared after each page
_STRING_CACHES = (trafilatura.utils.trim, trafilatura.utils.line_processing)


def _any_of(tags: tuple[str, ...]) -> str:
    return " or ".join(f"self::{tag}" for tag in tags)


# Elements trafilatura's precision mode deletes with their tails once they are empty (among its
# CUT_EMPTY_ELEMS), found where they hold no text but a script's, a style's or a template's and
# text follows them (``_empty_before_text``: one walk of the tree, not an XPath, whose
# preceding-sibling step made a long run of ``text<br>`` quadratic).
_EMPTIABLE = frozenset({"article", "blockquote", "div", "li", "main", "p", "section", "span"})
_UNSEEN = frozenset({"script", "style", "noscript", "template"})  # text a reader never sees
_XML_SPACE = " \t\r\n"  # what XPath's normalize-space() strips
# Containers whose own text (before, between and after their children) becomes paragraphs
# where they also have <br> or block children; a table cell is left to trafilatura's tables.
_CONTAINERS = ("article", "blockquote", "body", "center", "div", "main", "section")
_WITH_OWN_TEXT = lxml.etree.XPath(f"//text()[normalize-space()]/parent::*[{_any_of(_CONTAINERS)}]")
# The elements a paragraph carries inline; any other child ends a run of a container's text.
_INLINE = frozenset(
    {
        *("a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "data", "del", "dfn", "em"),
        *("font", "i", "img", "ins", "kbd", "label", "mark", "nobr", "q", "s", "samp", "small"),
        *("span", "strike", "strong", "sub", "sup", "time", "tt", "u", "var", "wbr"),
    }
)
# The page's chrome: links, buttons, navigation, header, footer, asides, menus, forms' labels and
# options, the title; by element and ARIA role, never by class.
_CHROME_TEXT = lxml.etree.XPath(
    "//*[self::a or self::button or self::nav or self::header or self::footer or self::aside"
    " or self::menu or self::select or self::label or self::title"
    " or @role='navigation' or @role='banner' or @role='contentinfo' or @role='complementary'"
    " or @role='menu' or @role='menubar']//text()[not(parent::script or parent::style)]"
)
_WORD = re.compile(r"\w+")
_OPTIONS: dict[str, Any] = {
    "include_comments": False,
    "with_metadata": True,
    # the date from the markup (meta tags, time elements, the URL), not a scan of all the text
    "date_extraction_params": {"original_date": True, "extensive_search": False},
}
_FALLBACK: dict[str, Any] = {**_OPTIONS, "with_metadata": False}


@dataclass(frozen=True, slots=True)
class Extracted:
    """The main text (paragraphs separated by newlines; "" when the page has none)."""

    text: str
    title: str | None = None
    canonical_url: str | None = None
    og_title: str | None = None
    published: str | None = None  # YYYY-MM-DD, as trafilatura (htmldate) finds it
    author: str | None = None
    language: str | None = None  # the page's own <html lang>, else trafilatura's
    mode: str = "precision"  # which extraction was kept: "precision", "recall" or "captions"
    unread: str | None = None  # why the page was not read (TOO_COMPLEX); None when it was


def decode_html(content: bytes) -> str:
    """Page bytes to text, by the evidence (the module's docstring gives the order)."""
    for bom, encoding in (
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ):
        if content.startswith(bom):
            return content[len(bom) :].decode(encoding, errors="replace")
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        pass
    declared = _declared_codec(content[:4096])
    if declared is not None and not declared.startswith(_NOT_EVIDENCE):
        if declared in _KOREAN_LEGACY:
            declared = "cp949"
        try:
            return content.decode(declared, errors="replace")
        except (LookupError, UnicodeError):  # no text encoding (rot13), or one that fails
            pass
    try:
        return content.decode("cp949")
    except UnicodeDecodeError:
        return content.decode("utf-8", errors="replace")


def _declared_codec(head: bytes) -> str | None:
    match = _META_CHARSET.search(head)
    if match is None:
        return None
    try:
        return codecs.lookup(match.group(1).decode("ascii")).name.replace("-", "_")
    except (LookupError, UnicodeDecodeError):
        return None


def extract_text(html: bytes | str, url: str | None = None) -> Extracted:
    """The article in ``html`` (a whole page), with its title, dates and so on where given."""
    try:
        return _extract(decode_html(html) if isinstance(html, bytes) else html, url)
    finally:
        for cache in _STRING_CACHES:
            cache.cache_clear()


def _extract(page: str, url: str | None) -> Extracted:
    tree = _load(page)
    if tree is None:
        return Extracted(text="")
    head = _head_facts(tree)
    if not _prepared_within_budget(tree):
        return Extracted(
            text="",
            title=head.get("title"),
            canonical_url=head.get("canonical"),
            og_title=head.get("og_title"),
            language=head.get("lang"),
            unread=TOO_COMPLEX,
        )
    document = trafilatura.bare_extraction(tree, url=url, favor_precision=True, **_OPTIONS)
    mode = "precision"
    text = _text(document)
    if len(text) < SHORT_TEXT:
        # the metadata is the same in every mode: read again only if the first pass found none
        better = _fallback(tree, url, text, _OPTIONS if document is None else _FALLBACK)
        if better is not None:
            text, mode, other = better
            document = other if document is None else document
    return Extracted(
        text=text,
        title=_attr(document, "title") or head.get("title"),
        canonical_url=head.get("canonical") or _attr(document, "url"),
        og_title=head.get("og_title"),
        published=_attr(document, "date"),
        author=_attr(document, "author"),
        language=head.get("lang") or _attr(document, "language"),
        mode=mode,
    )


def _fallback(
    tree: lxml.html.HtmlElement, url: str | None, text: str, options: dict[str, Any]
) -> tuple[str, str, Any] | None:
    """A better text than precision mode's short ``text``, with its mode and document, or None
    (the module's docstring gives the rule)."""
    recall = trafilatura.bare_extraction(tree, url=url, favor_recall=True, **options)
    chrome: Counter[str] | None = None
    if len(_text(recall)) > LONGER_BY * len(text):
        chrome = _chrome_words(tree)
        if _added_words(_text(recall), text, chrome) >= ADDED_WORDS:
            return _text(recall), "recall", recall
    if tree.find(".//figcaption") is None:
        return None
    chrome = _chrome_words(tree) if chrome is None else chrome
    if _added_words(text, "", chrome) >= ADDED_WORDS:
        return None  # the text has an article's words: the captions are not all of it
    opened = _captions_opened(copy(tree))
    captioned = trafilatura.bare_extraction(opened, url=url, favor_precision=True, **options)
    if _added_words(_text(captioned), text, chrome) > 0:
        return _text(captioned), "captions", captioned
    return None


def _parse(page: str) -> lxml.html.HtmlElement | None:
    """The page as a tree (trafilatura's own loader) prepared for it, None when there is
    nothing to parse: empty elements before text removed with their tails kept, a container's
    own text in paragraphs."""
    tree = _load(page)
    return None if tree is None else _prepare(tree)


def _load(page: str) -> lxml.html.HtmlElement | None:
    """The page as a tree (trafilatura's own loader), all of it however deep (``nesting``),
    None when there is nothing to parse."""
    if not page.strip():
        return None
    return nesting.whole(page, _html)


def _html(page: str) -> lxml.html.HtmlElement | None:
    tree = trafilatura.load_html(page)
    return tree if isinstance(tree, lxml.html.HtmlElement) else None


def _prepared_within_budget(tree: lxml.html.HtmlElement) -> bool:
    """Whether the page has ``ELEMENT_BUDGET`` elements at most, before it is prepared (which
    costs as its elements do) and after (which adds paragraphs): ``tree`` is prepared when it
    has before."""
    return _within_budget(tree) and _within_budget(_prepare(tree))


def _within_budget(tree: lxml.html.HtmlElement) -> bool:
    """Whether the page (the whole document ``tree`` is of) has ``ELEMENT_BUDGET`` elements
    at most, comments and the like counted."""
    return sum(1 for _ in tree.getroottree().getroot().iter()) <= ELEMENT_BUDGET


def _prepare(tree: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    """``tree`` prepared for trafilatura: its deepest levels unwrapped when its text weighs
    over ``TEXT_DEPTH_BUDGET``, empty elements before text removed with their tails kept, a
    container's own text in paragraphs."""
    depth = _unwrap_depth(tree)
    if depth is not None:
        for deepest in tree.xpath("/*" + "/*" * depth):  # the elements at that depth
            lxml.etree.strip_elements(deepest, *_UNWRAPPED_DROPS, with_tail=False)
            lxml.etree.strip_tags(deepest, "*")
    _drop_keeping_tails(_empty_before_text(tree))
    for container in _WITH_OWN_TEXT(tree):
        if not all(_is_inline(child) for child in container):
            _paragraphs(container)
    return tree


def _empty_before_text(tree: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """The emptiable elements with no text a reader sees and text right after them (their
    tail), in document order; in one pass over the tree, each node visited a bounded number of
    times whatever the page's shape."""
    # the whole document, as an XPath's // reads it (for a fragment, trafilatura's tree is the
    # fragment's element, below the <body> the parser added)
    nodes = list(tree.getroottree().getroot().iter())  # an element before its descendants
    unseen: dict[Any, bool] = {}  # in a script, style, noscript or template (or one itself)
    for node in nodes:
        parent = node.getparent()
        inside = parent is not None and unseen[parent]
        unseen[node] = inside or (isinstance(node.tag, str) and node.tag in _UNSEEN)
    # seen[element]: its own text, or a descendant's text or tail, is one a reader sees
    seen: dict[Any, bool] = dict.fromkeys(nodes, False)
    for node in reversed(nodes):  # every descendant before its ancestors
        parent = node.getparent()
        if not isinstance(node.tag, str):  # a comment or processing instruction: no text
            visible = False
        else:
            visible = seen[node] or (not unseen[node] and _has_words(node.text))
            seen[node] = visible
        if parent is not None and (visible or (not unseen[parent] and _has_words(node.tail))):
            seen[parent] = True
    return [
        node
        for node in nodes
        if isinstance(node.tag, str)
        and node.tag in _EMPTIABLE
        and not seen[node]
        and _has_words(node.tail)
    ]


def _drop_keeping_tails(elements: list[lxml.html.HtmlElement]) -> None:
    """Remove ``elements`` (in document order) as ``drop_tree`` would, each one's tail joined
    to the text before it, but each parent's text rebuilt once: one ``drop_tree`` after another
    copies the growing text again every time (quadratic in a run of them)."""
    doomed = set(elements)
    by_parent: dict[Any, None] = {}
    for element in elements:
        parent = element.getparent()
        if parent is not None and not any(a in doomed for a in element.iterancestors()):
            by_parent.setdefault(parent, None)
    for parent in by_parent:
        pieces = [parent.text or ""]
        previous = None
        for child in list(parent):
            if child in doomed:
                pieces.append(child.tail or "")
                child.tail = None
                parent.remove(child)
                continue
            _set_before(parent, previous, "".join(pieces))
            previous, pieces = child, [child.tail or ""]
        _set_before(parent, previous, "".join(pieces))


def _set_before(parent: lxml.html.HtmlElement, previous: Any, text: str) -> None:
    """The text after ``previous`` (``parent``'s own text when None)."""
    if previous is None:
        parent.text = text or None
    else:
        previous.tail = text or None


def _has_words(text: str | None) -> bool:
    return bool(text) and bool(text.strip(_XML_SPACE))  # type: ignore[union-attr]


def _unwrap_depth(tree: lxml.html.HtmlElement) -> int | None:
    """The deepest level (the root is 0) whose elements may keep their descendants' tags with
    the page's weight within ``TEXT_DEPTH_BUDGET``; None when the whole page is within it."""
    chars = len(tree.text_content())
    shallow = TEXT_DEPTH_BUDGET // max(chars, 1)  # a page no deeper than this is within it
    if shallow > 255 or not tree.xpath("/*" + "/*" * shallow):
        return None  # the cheap proof, for every ordinary page: no element that deep
    # chars_at[n]: characters inside n elements (an element's text is inside it and its
    # ancestors, its tail inside its ancestors only)
    chars_at: dict[int, int] = {}
    depth_of = {tree: 0}
    for element in tree.iter(lxml.etree.Element):
        parent = element.getparent()
        depth = depth_of[element] = 0 if parent is None else depth_of[parent] + 1
        chars_at[depth + 1] = chars_at.get(depth + 1, 0) + len(element.text or "")
        if depth:
            chars_at[depth] = chars_at.get(depth, 0) + len(element.tail or "")
    for depth in range(max(chars_at), -1, -1):  # unwrapped at depth: nothing inside more
        weight = sum(count * min(inside, depth + 1) for inside, count in chars_at.items())
        if weight <= TEXT_DEPTH_BUDGET:
            return None if depth + 1 >= max(chars_at) else depth
    return 0


def _is_inline(element: lxml.html.HtmlElement) -> bool:
    return isinstance(element.tag, str) and element.tag in _INLINE


def _paragraphs(container: lxml.html.HtmlElement) -> None:
    """Each run of ``container``'s own text and inline children, between its <br> and block
    children, wrapped in a <p> (a run of whitespace or of empty inline elements left as is)."""
    children = list(container)
    text, container.text = container.text, None
    for child in children:
        container.remove(child)
    paragraph = _put_text(container, None, text)
    for child in children:
        tail, child.tail = child.tail, None
        paragraph = _put_child(container, paragraph, child)
        paragraph = _put_text(container, paragraph, tail)


def _put_child(
    container: lxml.html.HtmlElement,
    paragraph: lxml.html.HtmlElement | None,
    child: lxml.html.HtmlElement,
) -> lxml.html.HtmlElement | None:
    """``child`` back at the end of ``container``: a block as it was (the run ends), an inline
    element in the open run, or opening one when it holds text; the run open after it."""
    if not _is_inline(child):
        container.append(child)
        return None
    if paragraph is None and child.text_content().strip():
        paragraph = _opened(container)
    (container if paragraph is None else paragraph).append(child)
    return paragraph


def _put_text(
    container: lxml.html.HtmlElement, paragraph: lxml.html.HtmlElement | None, words: str | None
) -> lxml.html.HtmlElement | None:
    """``words`` at the end of ``container``: whitespace between runs as it was, other words in
    the open run, or opening one; the run open after them."""
    if not words:
        return paragraph
    if paragraph is None and not words.strip():
        _append_text(container, words)
        return None
    if paragraph is None:
        paragraph = _opened(container)
    _append_text(paragraph, words)
    return paragraph


def _opened(container: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    """A new <p> at the end of ``container``."""
    paragraph = container.makeelement("p", {})
    container.append(paragraph)
    return paragraph


def _append_text(element: lxml.html.HtmlElement, words: str) -> None:
    """``words`` after everything ``element`` holds (its last child's tail, else its text)."""
    if len(element):
        element[-1].tail = (element[-1].tail or "") + words
    else:
        element.text = (element.text or "") + words


def _captions_opened(tree: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    """``tree`` with its figures as blocks and their captions as plain paragraphs (blocks when
    they hold blocks): without the class a caption has, which trafilatura discards."""
    for figure in tree.iter("figure"):
        figure.tag = "div"
    for caption in tree.iter("figcaption"):
        caption.attrib.clear()
        caption.tag = "p" if all(_is_inline(child) for child in caption) else "div"
    return tree


def _chrome_words(tree: lxml.html.HtmlElement) -> Counter[str]:
    """The words of the page's chrome (``_CHROME_TEXT``), each as often as it occurs."""
    return Counter(_WORD.findall(" ".join(_CHROME_TEXT(tree))))


def _added_words(text: str, other: str, chrome: Counter[str]) -> int:
    """The characters of the words of ``text`` that are neither ``other``'s nor the chrome's,
    each word counted as often as it occurs beyond those."""
    added = Counter(_WORD.findall(text)) - Counter(_WORD.findall(other)) - chrome
    return sum(len(word) * count for word, count in added.items())


def _head_facts(tree: lxml.html.HtmlElement) -> dict[str, str]:
    facts: dict[str, str] = {}
    lang = tree.get("lang") or tree.get("{http://www.w3.org/XML/1998/namespace}lang")
    if lang and lang.strip():
        facts["lang"] = lang.strip()
    for link in tree.iterfind(".//link[@rel][@href]"):
        if "canonical" in link.get("rel", "").lower().split() and link.get("href", "").strip():
            facts["canonical"] = link.get("href", "").strip()
            break
    for meta in tree.iterfind(".//meta[@content]"):
        key = (meta.get("property") or meta.get("name") or "").strip().lower()
        if key == "og:title" and meta.get("content", "").strip():
            facts["og_title"] = meta.get("content", "").strip()
            break
    title = tree.find(".//title")
    words = " ".join(title.text_content().split()) if title is not None else ""
    if words:
        facts["title"] = words
    return facts


def _text(document: object) -> str:
    text = _attr(document, "text")
    return text.strip() if text else ""


def _attr(document: object, name: str) -> str | None:
    value = getattr(document, name, None) if document is not None else None
    return value if isinstance(value, str) and value.strip() else None
