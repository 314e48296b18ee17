"""What a page's address says: a site's root, a section or list page, an article's identity,
and who registered its host. Pure functions of the URL (the words they look for are
``newsdesk.extract.vocabulary``'s); the page judge and ``sane_canonical`` read them."""

from __future__ import annotations

import contextlib
from urllib.parse import parse_qsl, unquote, urlsplit

from newsdesk.extract.vocabulary import (
    ARTICLE_SLUG_MIN_WORDS,
    GENERIC_SECOND_LEVEL,
    ID_DIGITS,
    INDEX_FILE,
    KR_SECOND_LEVEL,
    LIST_FILE,
    QUERY_ID,
    SECTION_NAME_MAX_WORDS,
    SECTION_WORDS,
    WORD_SEPARATORS,
)


def host_of(url: str) -> str | None:
    try:
        return urlsplit(url).hostname or None
    except ValueError:
        return None


def is_root(url: str) -> bool:
    """The site's root: no path (or only an index file) and no query."""
    segments, query = _segments(url)
    if query:
        return False
    return not segments or (len(segments) == 1 and bool(INDEX_FILE.match(segments[0])))


def is_section(url: str) -> bool:
    """A section or list page: a list file (articleList.html, list.php …), or one or two
    segments that name no article, the first a section word and the second, if any, a section
    word or a name of at most two words (/politics, /news/politics, /society/society_general)."""
    segments, _ = _segments(url)
    if segments and INDEX_FILE.match(segments[-1]):
        segments = segments[:-1]
    if segments and LIST_FILE.match(segments[-1]):
        return True
    if not 1 <= len(segments) <= 2 or names_article(url):
        return False
    first, *rest = (segment.lower() for segment in segments)
    return first in SECTION_WORDS and all(_names_a_section(segment) for segment in rest)


def names_article(url: str) -> bool:
    """The URL carries an article's identity: a run of five or more digits in its path or
    query, a query value of four or more digits (?idx=8576), or a slug (a path segment of three
    or more words)."""
    segments, query = _segments(url)
    if ID_DIGITS.search(query) or any(ID_DIGITS.search(s) for s in segments):
        return True
    if any(QUERY_ID.fullmatch(value) for _, value in parse_qsl(query)):
        return True
    return any(len(_words(s)) >= ARTICLE_SLUG_MIN_WORDS for s in segments)


def registrable_domain(host: str) -> str:
    """The part of ``host`` an outlet registers: the last two labels, or three under a
    country's second level (hanbitnews.co.kr, example.co.uk); an IP address as it is."""
    name = host.strip().rstrip(".").lower()
    if not name.isascii():
        with contextlib.suppress(UnicodeError):
            name = name.encode("idna").decode("ascii")
    labels = name.split(".")
    if len(labels) <= 2 or name.replace(".", "").isdigit() or ":" in name:
        return name
    top, second = labels[-1], labels[-2]
    if (top == "kr" and second in KR_SECOND_LEVEL) or (
        len(top) == 2 and second in GENERIC_SECOND_LEVEL
    ):
        return ".".join(labels[-3:])
    return ".".join(labels[-2:])


def _segments(url: str) -> tuple[list[str], str]:
    try:
        parts = urlsplit(url)
    except ValueError:
        return [], ""
    return [unquote(s) for s in parts.path.split("/") if s], parts.query


def _words(segment: str) -> list[str]:
    return [word for word in WORD_SEPARATORS.split(segment) if word]


def _names_a_section(segment: str) -> bool:
    """A section's second segment: a section word, or a name of at most two words that is not
    a file's (society_general, not a-story-slug, not page.html)."""
    return segment in SECTION_WORDS or (
        len(_words(segment)) <= SECTION_NAME_MAX_WORDS and "." not in segment
    )
