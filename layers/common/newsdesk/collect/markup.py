"""HTML to the text a reader sees, in time linear in its length; and character references a
parser would choke on, made ones it reads.

A summary, or a title that is HTML, is read as a browser's tokenizer reads it (WHATWG HTML,
"Tokenization"), as far as text goes: markup opens with "<" and an ASCII letter, "/", "!" or
"?", so "3 < 5" and "<속보>" are text; a tag ends at the first ">" outside a quoted attribute
value; a comment runs to "-->", a declaration or processing instruction to ">"; the content of
script and style is hidden up to their end tag; markup the text never closes is dropped to the
end, as a browser drops it. Each tag or comment becomes a space; then references are decoded
(``html.unescape``, HTML5's table) and a surrogate pair written as two references is the one
character it encodes.

Linear: the one pattern (``_MARKUP``) either fails at a "<"'s second character or matches all
it scanned, to what closes the markup or to the text's end, and the next search starts there
(the tag-stripping expression it replaces, ``<[^>]+>``, scanned to the end from every "<" of a
text with no ">": 160 kB of "<" took 7.6 s, issue 22). The standard library's ``html.parser``
is not used because on the Python 3.12.1 this project runs it is quadratic on markup left open
(80,000 "<a": 24 s; 80,000 "<!--": 66 s; CVE-2025-6069, fixed in later releases), and lxml is
not in the worker's layer (benchmarks/hostile_text.py measures the cost at growing sizes).
"""

from __future__ import annotations

import re
from html import unescape
from html.entities import entitydefs
from typing import AnyStr

from feedparser.sanitizer import _HTMLSanitizer

# A tag's attributes and its ">": runs of plain characters, quoted values (after "="), a lone
# "=" or quote. Every repetition and the closing ">" are optional and the alternatives begin
# with different characters (the three "=" ones differ after the spaces), so whatever follows
# the tag's name matches the first way the engine tries: it never backtracks to try another.
_ATTRIBUTES = r"""(?:[^>"'=]+|=[\t\n\f\r ]*"[^"]*"?|=[\t\n\f\r ]*'[^']*'?|=|["'])*>?"""
_ENDS_NAME = r"(?=[\t\n\f\r />])"
# Markup, as the tokenizer reads it: each alternative matches from its opening characters to
# what closes it or to the text's end (\Z), so a search from a "<" that opens no markup fails
# at its second character, and one that opens markup consumes all it scanned.
_MARKUP = re.compile(
    "|".join(
        [
            *(  # content a reader never sees, to the end tag
                f"<{name}{_ENDS_NAME}{_ATTRIBUTES}.*?(?:</{name}{_ENDS_NAME}[^>]*>?|\\Z)"
                for name in ("script", "style")
            ),
            r"<!--(?:-?>|.*?(?:-->|\Z))",  # a comment ("<!-->" and "<!--->" are empty ones)
            r"<[!?][^>]*>?",  # a declaration, a processing instruction: bogus comments
            f"</[A-Za-z]{_ATTRIBUTES}",  # an end tag
            r"</[^>]+>?|</>",  # "</ x>" a bogus comment, "</>" nothing; "</" at the end is text
            f"<[A-Za-z]{_ATTRIBUTES}",  # a start tag
        ]
    ),
    re.IGNORECASE | re.DOTALL,
)

# Numeric references XML refuses (surrogates, beyond U+10FFFF), and a surrogate pair written as
# two of them, as text (ranges spelled out: no value is computed but for what matches).
_HIGH = (
    r"[xX]0*[dD][89abAB][0-9a-fA-F]{2}"
    r"|0*(?:5529[6-9]|55[3-9][0-9]{2}|56[0-2][0-9]{2}|563[01][0-9])"
)
_LOW = (
    r"[xX]0*[dD][c-fC-F][0-9a-fA-F]{2}"
    r"|0*(?:563[2-9][0-9]|56[4-9][0-9]{2}|57[0-2][0-9]{2}|573[0-3][0-9]|5734[0-3])"
)
_BEYOND = (
    r"[xX]0*(?:1[1-9a-fA-F]|[2-9a-fA-F][0-9a-fA-F])[0-9a-fA-F]{4}|[xX]0*[1-9a-fA-F][0-9a-fA-F]{6,}"
    r"|0*(?:111411[2-9]|11141[2-9][0-9]|1114[2-9][0-9]{2}|111[5-9][0-9]{3}|11[2-9][0-9]{4}"
    r"|1[2-9][0-9]{5}|[2-9][0-9]{6}|[1-9][0-9]{7,})"
)
_BAD_REFERENCE = f"&#(?:({_HIGH});&#({_LOW})|{_HIGH}|{_LOW}|{_BEYOND});"
_BAD_BYTES = re.compile(_BAD_REFERENCE.encode("ascii"))
_PAIR_TEXT = re.compile(f"&#({_HIGH});&#({_LOW});")


def html_text(html: str) -> str:
    """The text of ``html``: markup and what a browser never shows removed, references decoded,
    whitespace as it was (the caller collapses it)."""
    if "<" in html:
        html = _without_markup(html)
    if "&" in html:
        html = unescape(_PAIR_TEXT.sub(_paired_text, html))
    return html


def looks_like_html(text: str) -> bool:
    """feedparser's test for a title or description that does not say what it is (RSS):
    HTML when it has an end tag or a reference and every tag and entity is HTML's
    (``_FeedParserMixin.looks_like_html``, feedparser 6), so that both readers read a title
    alike."""
    if not (_END_TAG.search(text) or _ANY_REFERENCE.search(text)):
        return False
    if any(name.lower() not in _HTML_ELEMENTS for name in _ANY_TAG.findall(text)):
        return False
    return all(name in _HTML_ENTITIES for name in _NAMED_REFERENCE.findall(text))


def well_formed_references(content: bytes) -> tuple[bytes, int]:
    """``content`` with each surrogate pair written as two numeric references written as one,
    and each reference to a lone surrogate or past U+10FFFF written as U+FFFD's; and how many
    were replaced. XML refuses all three, and feedparser's loose parser raises on them (an
    emoji written as ``&#xD83D;&#xDE00;`` failed the whole feed)."""
    if b"&#" not in content:
        return content, 0
    replaced = 0

    def fixed(found: re.Match[bytes]) -> bytes:
        nonlocal replaced
        if found.group(1) is not None:
            return f"&#x{_paired(found.group(1), found.group(2)):X};".encode("ascii")
        replaced += 1
        return b"&#xFFFD;"

    return _BAD_BYTES.sub(fixed, content), replaced


def _without_markup(html: str) -> str:
    return _MARKUP.sub(" ", html)


def _paired(high: AnyStr, low: AnyStr) -> int:
    return 0x10000 + ((_number(high) - 0xD800) << 10) + (_number(low) - 0xDC00)


def _number(reference: AnyStr) -> int:
    text = reference.decode("ascii") if isinstance(reference, bytes) else reference
    return int(text[1:], 16) if text[:1] in "xX" else int(text)


def _paired_text(found: re.Match[str]) -> str:
    return chr(_paired(found.group(1), found.group(2)))


# feedparser's test (mixin.py), on its vocabulary: the sanitiser's HTML elements and the
# standard library's entity names.
_END_TAG = re.compile(r"</(\w+)>")
_ANY_REFERENCE = re.compile(r"&#?\w+;")
_ANY_TAG = re.compile(r"</?(\w+)")
_NAMED_REFERENCE = re.compile(r"&(\w+);")
_HTML_ELEMENTS: frozenset[str] = frozenset(_HTMLSanitizer.acceptable_elements)
_HTML_ENTITIES: frozenset[str] = frozenset(entitydefs)
