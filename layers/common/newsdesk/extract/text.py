"""An article page's main text and the metadata that comes with it cheaply (issue 14).

The extractor is trafilatura, asked for precision and without comments. Its precision mode
sometimes drops the article itself and returns a fragment, so a short result (under
``SHORT_TEXT`` characters) is checked against trafilatura's recall mode, and the recall result
is taken when it is more than ``LONGER_BY`` times as long: one extractor configuration by
default, a second only where the first looks wrong. The rule reads only the two results'
lengths, never the page's address or site. On the article-extraction benchmark (docs/extraction.md)
this scores above stock trafilatura (comments included, neither mode) at a similar CPU cost.

Bytes are decoded here, by the evidence (as the collect stage decodes feeds): a byte order
mark; a body that is valid UTF-8 is UTF-8; then the charset the page declares (``<meta
charset>`` or ``http-equiv``), the EUC-KR family read as CP949, its superset; an undeclared
body that is not UTF-8 is CP949 when it is wholly valid CP949, else UTF-8 with bad bytes
replaced. A declaration that cannot describe the page counts as none: UTF-8, UTF-16 or UTF-32
in any form (the body was not UTF-8, and a declaration readable as ASCII is not in UTF-16 or
UTF-32), or a codec that is no text encoding or fails (``rot13``, ``base64``, ``idna``).

Hostile pages are bounded (tests/test_hostile_pages.py). trafilatura measures the text of
elements all the way down and caches the strings (``trim``, ``line_processing``: up to 1,024
strings of any length each), so a page costs it about the sum of its elements' text lengths,
every character counted once for each element it is in: a 2 MB page nested 250 levels deep
with text at every level held 398 MB. A page whose sum is over ``TEXT_DEPTH_BUDGET`` has its
deepest levels unwrapped into their ancestors (the text kept, scripts and styles dropped)
until it is under it; the article-extraction benchmark's pages stay far below it, so none of
them changes. The caches are cleared after every page, so that no page's strings stay in a
warm container. (libxml2 itself stops a document at 255 levels.)
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Any

import lxml.etree
import lxml.html
import trafilatura
import trafilatura.utils

SHORT_TEXT = 1000  # characters: a precision-mode result shorter than this is checked
LONGER_BY = 2.0  # the recall-mode result replaces it when this many times as long
# The most text a page may weigh, in characters times the elements each is in (the
# article-extraction benchmark's heaviest page weighs 4.5 million; what is over is unwrapped).
TEXT_DEPTH_BUDGET = 16_000_000

_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE
)
_KOREAN_LEGACY = {"euc_kr", "cp949"}  # Python's names for ks_c_5601-1987, korean, uhc, …
_NOT_EVIDENCE = ("utf_8", "utf_16", "utf_32")  # and their -sig, -be and -le forms
_UNWRAPPED_DROPS = ("script", "style", "noscript", "template")
# trafilatura's lru_caches of strings of any length, cleared after each page
_STRING_CACHES = (trafilatura.utils.trim, trafilatura.utils.line_processing)
_OPTIONS: dict[str, Any] = {
    "include_comments": False,
    "with_metadata": True,
    # the date from the markup (meta tags, time elements, the URL), not a scan of all the text
    "date_extraction_params": {"original_date": True, "extensive_search": False},
}


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
    mode: str = "precision"  # which extraction was kept: "precision" or "recall"


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
    tree = _parse(page)
    if tree is None:
        return Extracted(text="")
    head = _head_facts(tree)
    document = trafilatura.bare_extraction(tree, url=url, favor_precision=True, **_OPTIONS)
    mode = "precision"
    text = _text(document)
    if len(text) < SHORT_TEXT:
        fallback = _parse(page)
        recall = (
            trafilatura.bare_extraction(fallback, url=url, favor_recall=True, **_OPTIONS)
            if fallback is not None
            else None
        )
        if len(_text(recall)) > LONGER_BY * len(text):
            document, text, mode = recall, _text(recall), "recall"
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


def _parse(page: str) -> lxml.html.HtmlElement | None:
    """The page as a tree (trafilatura's own loader), None when there is nothing to parse."""
    if not page.strip():
        return None
    tree = trafilatura.load_html(page)
    if not isinstance(tree, lxml.html.HtmlElement):
        return None
    depth = _unwrap_depth(tree)
    if depth is not None:
        for deepest in tree.xpath("/*" + "/*" * depth):  # the elements at that depth
            lxml.etree.strip_elements(deepest, *_UNWRAPPED_DROPS, with_tail=False)
            lxml.etree.strip_tags(deepest, "*")
    return tree


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
