"""Judging a fetched article page: an article, an empty page and why, a list page, or thin.

``judge_page`` reads the page as fetched (decoded), what ``newsdesk.extract.text`` kept of it
and the URL it was finally served from, and gives a ``Verdict``: ``extract_ok``;
``extract_empty`` with the reason the page has no article text (``bot_challenge``,
``consent_wall``, ``paywall``, ``meta_refresh``, ``js_rendered``, else ``no_text``; or
``too_complex``, a page the extractor did not read, ``Extracted.unread``);
``list_page`` (``site_root``, ``section_page``, ``link_list``, ``og_website``); or
``filtered_thin``. Each reason is a rule here, a small function of the ``Case`` (the page's
facts, ``newsdesk.extract.facts``; its address; its text's count); ``EMPTY_RULES`` and
``LIST_RULES`` give their order, and the words, markers and thresholds they look for are data
in ``newsdesk.extract.vocabulary``. How they were chosen and measured (the article-extraction
benchmark, the Korean fixture pages) is in docs/extraction.md, "Judging a page". Every
detection needs evidence on the page itself; a word such as 구독 or "cookie" in a footer is
none.

``text_chars`` is the count the thin rule and the store use: the non-whitespace characters of
the lines of the text that hold a sentence (a full stop, question or exclamation mark that ends
one), so that a menu, a date line or a list of headlines that an extractor kept counts nothing.

``sane_canonical`` keeps a page's ``<link rel="canonical">`` only when it can name the article:
a canonical is a hint, not the truth. ``is_html`` tells a page from a PDF, an image, JSON or a
feed. Nothing here touches the network.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from newsdesk.extract.addresses import (
    host_of,
    is_root,
    is_section,
    names_article,
    registrable_domain,
)
from newsdesk.extract.facts import BOILERPLATE, CHALLENGE, CONSENT, NOSCRIPT, PageFacts
from newsdesk.extract.text import Extracted
from newsdesk.extract.vocabulary import (
    AGREE_WORDS,
    ASKS_FOR_JS,
    BOT_CHALLENGE,
    CAPTCHA_QUESTION,
    CHALLENGE_MARKUP,
    CHALLENGE_TEXT,
    CHALLENGE_TITLE,
    CONSENT_WALL,
    COOKIE_WORDS,
    DEFAULT_MIN_CHARS,
    EXTRACT_EMPTY,
    EXTRACT_OK,
    FILTERED_THIN,
    FOREIGN_HOST,
    GATE_PHRASES,
    GATE_WORDS,
    HTML_START,
    HTML_TYPES,
    HYDRATION_DATA,
    JS_MIN_SCRIPTS,
    JS_RENDERED,
    LINK_LIST,
    LIST_LINK_DENSITY,
    LIST_MIN_LINKS,
    LIST_PAGE,
    LIST_TEXT_PER_LINK,
    META_REFRESH,
    MOSTLY,
    NEARLY_NO_TEXT,
    NO_TEXT,
    NOT_FREE,
    NOT_FREE_MARK,
    NOT_HTML_TYPES,
    NOT_HTTP,
    OG_TYPE_ARTICLE,
    OG_TYPE_WEBSITE,
    OG_WEBSITE,
    OG_WEBSITE_MIN_LINKS,
    PAYWALL,
    SECTION_PAGE,
    SENTENCE_END,
    SITE_ROOT,
    TOO_COMPLEX,
    WEB_SCHEMES,
    XML_PROLOG_HTML,
)

__all__ = [
    "BOT_CHALLENGE",
    "CONSENT_WALL",
    "DEFAULT_MIN_CHARS",
    "EMPTY_RULES",
    "EXTRACT_EMPTY",
    "EXTRACT_OK",
    "FILTERED_THIN",
    "FOREIGN_HOST",
    "JS_RENDERED",
    "LINK_LIST",
    "LIST_PAGE",
    "LIST_RULES",
    "META_REFRESH",
    "NOT_HTTP",
    "NO_TEXT",
    "OG_WEBSITE",
    "PAYWALL",
    "SECTION_PAGE",
    "SITE_ROOT",
    "TOO_COMPLEX",
    "Case",
    "Verdict",
    "is_html",
    "judge_page",
    "registrable_domain",
    "sane_canonical",
    "text_chars",
]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a fetched page is: ``status`` one of the four outcomes, ``reason`` for an empty or
    list page (None otherwise), ``chars`` the main text's ``text_chars``."""

    status: str
    reason: str | None
    chars: int


@dataclass(frozen=True, slots=True)
class Case:
    """What every rule reads: the page's facts, the URL it was finally served from, its main
    text's ``text_chars``, and the thin threshold."""

    facts: PageFacts
    url: str
    chars: int
    min_chars: int


Rule = Callable[[Case], bool]


def judge_page(
    page: str, extracted: Extracted, final_url: str, min_chars: int = DEFAULT_MIN_CHARS
) -> Verdict:
    """The verdict on ``page`` (decoded), served from ``final_url``, of which the extractor kept
    ``extracted``; ``min_chars`` is the thin threshold in ``text_chars``. A page with enough
    text of its own is never examined for walls: its footer's 구독 or cookie banner is no
    evidence."""
    if extracted.unread is not None:  # the page was not read: only its address says more
        return _unread(extracted.unread, final_url)
    chars = text_chars(extracted.text)
    case = Case(PageFacts(page, extracted.text), final_url, chars, min_chars)
    if chars < min_chars or _text_from_a_wall(case.facts):
        reason = _first_reason(EMPTY_RULES, case)
        if reason is not None:
            return Verdict(EXTRACT_EMPTY, reason, chars)
    reason = _first_reason(LIST_RULES, case)
    if reason is not None:
        return Verdict(LIST_PAGE, reason, chars)
    if chars == 0:
        return Verdict(EXTRACT_EMPTY, NO_TEXT, chars)
    if chars < min_chars:
        return Verdict(FILTERED_THIN, None, chars)
    return Verdict(EXTRACT_OK, None, chars)


def _unread(reason: str, final_url: str) -> Verdict:
    """The verdict on a page the extractor did not read (``reason``, TOO_COMPLEX): a list page
    by its address, else empty for that reason."""
    if is_root(final_url):
        return Verdict(LIST_PAGE, SITE_ROOT, 0)
    if is_section(final_url):
        return Verdict(LIST_PAGE, SECTION_PAGE, 0)
    return Verdict(EXTRACT_EMPTY, reason, 0)


def _first_reason(rules: tuple[tuple[str, Rule], ...], case: Case) -> str | None:
    """The reason of the first rule with evidence on the page, None when none has any."""
    return next((reason for reason, rule in rules if rule(case)), None)


def _text_from_a_wall(facts: PageFacts) -> bool:
    """The extractor's text came mostly from a consent box, a challenge or <noscript> (it keeps
    a consent dialog's 439 characters, or a shell's "You need to enable JavaScript")."""
    return any(facts.matched_share(region) >= MOSTLY for region in (CONSENT, CHALLENGE, NOSCRIPT))


# ---- extract_empty's reasons -----------------------------------------------------------------


def _bot_challenge(case: Case) -> bool:
    """A challenge's own markup or title, a challenge's words, or a captcha that asks
    whether the reader is a robot on a page with nearly nothing else."""
    facts = case.facts
    if any(marker in facts.raw_lower for marker in CHALLENGE_MARKUP):
        return True
    if CHALLENGE_TITLE.search(facts.title):
        return True
    text = facts.visible_text()
    if CHALLENGE_TEXT.search(text):
        return True
    return (
        facts.captcha_widget
        and facts.visible_chars() < NEARLY_NO_TEXT
        and bool(CAPTCHA_QUESTION.search(text))
    )


def _consent_wall(case: Case) -> bool:
    """A consent container that speaks of cookies and agreeing, and either the main text
    came from it or, with no main text, it holds most of what the body shows."""
    facts = case.facts
    if not any(COOKIE_WORDS.search(b) and AGREE_WORDS.search(b) for b in facts.boxes("consent")):
        return False
    if facts.matched_share(CONSENT) >= MOSTLY:
        return True
    everything = facts.visible_chars()
    return case.chars == 0 and everything - facts.visible_chars(CONSENT) >= MOSTLY * everything


def _paywall(case: Case) -> bool:
    """schema.org's isAccessibleForFree false, a gate container that speaks of
    subscribing or logging in, or a gate's own phrase outside the page's chrome."""
    facts = case.facts
    if NOT_FREE_MARK in facts.raw_lower and NOT_FREE.search(facts.raw):
        return True
    if any(GATE_WORDS.search(box) for box in facts.boxes("paywall")):
        return True
    return bool(GATE_PHRASES.search(facts.visible_text(BOILERPLATE)))


def _meta_refresh(case: Case) -> bool:
    """A <meta http-equiv="refresh"> to an address, outside <noscript>, on a page that
    shows nearly nothing."""
    return case.facts.refresh and case.facts.visible_chars() < NEARLY_NO_TEXT


def _js_rendered(case: Case) -> bool:
    """Nearly nothing shown, no main text but what <noscript> says, and a script's page:
    an empty application root, data for a script to render, a <noscript> asking for
    JavaScript, or many scripts."""
    facts = case.facts
    if facts.visible_chars() >= NEARLY_NO_TEXT:
        return False
    if case.chars > 0 and facts.matched_share(NOSCRIPT) < MOSTLY:
        return False
    return (
        facts.empty_app_root()
        or any(ASKS_FOR_JS.search(text) for text in facts.noscripts)
        or any(marker in facts.raw for marker in HYDRATION_DATA)
        or facts.scripts >= JS_MIN_SCRIPTS
    )


# ---- list_page's reasons ---------------------------------------------------------------------


def _site_root(case: Case) -> bool:
    return is_root(case.url)


def _section_page(case: Case) -> bool:
    return is_section(case.url)


def _link_list(case: Case) -> bool:
    """The element the main text comes from is mostly headline links, a line of text each —
    unless the page says it is an article at an address that names one."""
    if case.facts.og_type == OG_TYPE_ARTICLE and names_article(case.url):
        return False
    links, density = case.facts.container_links()
    return (
        links >= LIST_MIN_LINKS
        and density >= LIST_LINK_DENSITY
        and case.chars <= LIST_TEXT_PER_LINK * links
    )


def _og_website(case: Case) -> bool:
    """A thin text on a page that calls itself a website, with many headline links, at an
    address that names no article."""
    return (
        case.chars < case.min_chars
        and case.facts.og_type == OG_TYPE_WEBSITE
        and case.facts.headline_links() >= OG_WEBSITE_MIN_LINKS
        and not names_article(case.url)
    )


# The order the reasons are tried in: the first with evidence wins.
EMPTY_RULES: tuple[tuple[str, Rule], ...] = (
    (BOT_CHALLENGE, _bot_challenge),
    (CONSENT_WALL, _consent_wall),
    (PAYWALL, _paywall),
    (META_REFRESH, _meta_refresh),
    (JS_RENDERED, _js_rendered),
)
LIST_RULES: tuple[tuple[str, Rule], ...] = (
    (SITE_ROOT, _site_root),
    (SECTION_PAGE, _section_page),
    (LINK_LIST, _link_list),
    (OG_WEBSITE, _og_website),
)


# ---- the text's count, the answer's type, the canonical --------------------------------------


def text_chars(text: str) -> int:
    """Non-whitespace characters of the lines of ``text`` that hold a sentence end."""
    count = 0
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and SENTENCE_END.search(stripped):
            count += sum(len(word) for word in stripped.split())
    return count


def is_html(content_type: str | None, content: bytes) -> bool:
    """Whether an answer is an HTML page: its type says so, or it names none (or an unhelpful
    one: text/plain, octet-stream, generic XML) and its first bytes look like HTML."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media in HTML_TYPES:
        return True
    if NOT_HTML_TYPES.search(media):
        return False
    head = content[:1024].removeprefix(b"\xef\xbb\xbf")
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16: its ASCII, to look at
        encoding = "utf-16-le" if head.startswith(b"\xff\xfe") else "utf-16-be"
        head = head[2:].decode(encoding, errors="ignore").encode("ascii", errors="ignore")
    head = head.lstrip(b" \t\r\n\f")
    return bool(HTML_START.match(head) or XML_PROLOG_HTML.match(head))


def sane_canonical(canonical: str | None, page_url: str) -> tuple[str | None, str | None]:
    """``(the canonical, None)`` when it can name the article at ``page_url``, resolved
    against it; ``(None, reason)`` when it is ignored; ``(None, None)`` when there is none."""
    if canonical is None or not canonical.strip():
        return None, None
    resolved = urljoin(page_url, canonical.strip())
    try:
        parts = urlsplit(resolved)
        host = parts.hostname or ""
    except ValueError:
        return None, NOT_HTTP
    if parts.scheme.lower() not in WEB_SCHEMES or not host:
        return None, NOT_HTTP
    page_host = host_of(page_url)
    if page_host is None or registrable_domain(host) != registrable_domain(page_host):
        return None, FOREIGN_HOST
    if is_root(resolved):
        return None, SITE_ROOT
    if is_section(resolved) or (names_article(page_url) and not names_article(resolved)):
        return None, SECTION_PAGE
    return resolved, None
