"""A page nested deeper than the HTML parser goes, made shallow enough to read (issue 39).

libxml2 stops a document at 256 levels of elements: whatever follows, the article after a run
of 100,000 ``<div>`` included, is not in the tree (lxml's ``huge_tree`` only moves the stop to
2,048). ``cut_short`` tells such a tree (its deepest element at the stop) from a page's own;
``shallower`` rewrites the markup with every element deeper than ``MAX_DEPTH`` unwrapped: its
tags dropped (a block's or a cell's replaced by a ``<br>`` where text came before it, so that
its text stays a line of its own), its text, its void elements (``<br>``, ``<img>``) and its
comments kept, a script's, a style's or a textarea's content kept whole with its tags (they
hold text, not elements). Depth is counted as the parser counts it, near enough: an end tag
closes the nearest open element of its name within the last ``END_TAG_REACH`` (one that closes
none is dropped), a ``<p>``, ``<li>``, ``<td>``, ``<tr>`` or ``<option>`` closes the one of
its kind left open, a block an open ``<p>``, and ``<div/>`` opens nothing (libxml2 closes it).
One pass of a regular expression over the page, each character read a bounded number of
times, whatever its shape: about 0.5 s of CPU for 2 MB of tags.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

LIBXML2_DEPTH = 255  # the deepest element libxml2 builds, the root at 0 (2.9 to 2.14)
MAX_DEPTH = 200  # open elements kept, well under it: the parser adds <html>, <body>
END_TAG_REACH = 64  # open elements an end tag is matched against (a stray one is dropped)
_STRAY = 1 << 62  # the depth of an end tag that closes nothing: deeper than any

# A tag (its attributes up to the next "<" or ">": a tag left open costs one scan, not one
# per later tag), a comment (to its end or the page's), or a declaration.
_TOKEN = re.compile(r"<(/?)([A-Za-z][^\s/<>]*)([^<>]*?)(/?)>|<!--.*?(?:-->|\Z)|<[!?][^<>]*>", re.S)
_VOID = frozenset(
    {
        *("area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link"),
        *("meta", "param", "source", "track", "wbr"),
    }
)
_RAW_TEXT = frozenset({"script", "style", "textarea", "title", "xmp", "iframe", "noembed"})
_RAW_TEXT_END = {name: re.compile(rf"</{name}[^<>]*>", re.I) for name in _RAW_TEXT}
# Elements that share their end tags' kind: </th> closes a <td> too, <dd> a <dt>.
_KIND = {"th": "td", "dt": "dd"}
_BLOCKS = frozenset(
    {
        *("address", "article", "aside", "blockquote", "div", "dl", "fieldset", "figure"),
        *("footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main"),
        *("nav", "ol", "p", "pre", "section", "table", "ul"),
    }
)
# Blocks and cells: where one's tags are dropped, a <br> keeps its text a line of its own.
_BREAKS = _BLOCKS | {"caption", "center", "dd", "dt", "td", "th", "tr"}
# What a start tag closes when it is open (the innermost, again while there is one).
_CLOSES = {
    **dict.fromkeys(_BLOCKS, frozenset({"p"})),
    "li": frozenset({"li", "p"}),
    "dd": frozenset({"dd", "p"}),
    "dt": frozenset({"dd", "p"}),
    "td": frozenset({"td"}),
    "th": frozenset({"td"}),
    "tr": frozenset({"td", "tr"}),
    "option": frozenset({"option"}),
}


def cut_short(tree: Any) -> bool:
    """Whether ``tree`` (lxml's) reaches the parser's stop: the page went on below it."""
    return bool(tree.getroottree().xpath("/*" + "/*" * LIBXML2_DEPTH))


def whole(page: str, load: Callable[[str], T | None]) -> T | None:
    """``load(page)``, a tree (None: nothing to parse), read again from the page made
    ``shallower`` when libxml2 cut it short, so that what follows the nesting is in it."""
    tree = load(page)
    if tree is not None and cut_short(tree):
        tree = load(shallower(page))
    return tree


def shallower(page: str, max_depth: int = MAX_DEPTH) -> str:
    """``page`` with the elements deeper than ``max_depth`` unwrapped (the module's docstring
    says how)."""
    pieces: list[str] = []
    kept = 0  # page[:kept] is in pieces
    # the open elements' kinds; one's tags are kept when it opened at a depth under max_depth,
    # and its place in the stack is that depth for as long as it is open
    stack: list[str] = []
    skip_to = 0  # the end of a script's (a style's, …) content
    unbroken = False  # text since the last line break put in
    text_from = 0  # the end of the token before: text, if any, runs from there
    for match in _TOKEN.finditer(page):
        if match.start() < skip_to:
            continue
        if match.start() > text_from and not unbroken:
            unbroken = not page[text_from : match.start()].isspace()
        text_from = match.end()
        closing, name, self_closing = match.group(1, 2, 4)
        if name is None:  # a comment or a declaration
            continue
        name = name.lower()
        if name in _RAW_TEXT and not closing:  # its content and both its tags as they are
            end = _RAW_TEXT_END[name].search(page, match.end())
            skip_to = text_from = len(page) if end is None else end.end()
            continue
        depth = _close(stack, name) if closing else _open(stack, name, bool(self_closing))
        if depth >= max_depth:
            pieces.append(page[kept : match.start()])
            kept = match.end()
            if unbroken and name in _BREAKS:  # a paragraph's end stays a line's end
                pieces.append("<br>")
                unbroken = False
    pieces.append(page[kept:])
    return "".join(pieces)


def _open(stack: list[str], name: str, self_closing: bool) -> int:
    """Open ``name`` after closing what it closes; the depth it opens at, or -1 for one that
    holds nothing (a void element, ``<div/>``: kept, one level deeper at most)."""
    if stack and stack[-1] in _CLOSES.get(name, ()):
        _close_implied(stack, _CLOSES[name])
    if self_closing or name in _VOID:
        return -1
    stack.append(_KIND.get(name, name))
    return len(stack) - 1


def _close(stack: list[str], name: str) -> int:
    """Close the nearest open element of ``name``'s kind (and what is open inside it); the
    depth it was opened at, or ``_STRAY`` for an end tag that closes nothing (dropped)."""
    kind = _KIND.get(name, name)
    for back in range(1, min(len(stack), END_TAG_REACH) + 1):
        if stack[-back] == kind:
            del stack[-back:]
            return len(stack)
    return _STRAY


def _close_implied(stack: list[str], closes: frozenset[str]) -> None:
    """Close what a start tag closes (``closes``: an open ``<p>`` before a block, the open
    ``<li>`` before another, …) while it is the innermost open element."""
    while stack and stack[-1] in closes:
        stack.pop()
