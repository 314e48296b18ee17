"""Judging a fetched article page: an article, an empty page and why, a list page, or thin.

``judge_page`` reads the page as fetched (decoded), what ``newsdesk.extract.text`` kept of it
and the URL it was finally served from, and gives a ``Verdict``: ``extract_ok``;
``extract_empty`` with the reason the page has no article text (``bot_challenge``,
``consent_wall``, ``paywall``, ``meta_refresh``, ``js_rendered``, else ``no_text``);
``list_page`` (``site_root``, ``section_page``, ``link_list``, ``og_website``); or
``filtered_thin``. The rules, their order and their thresholds (measured on the
article-extraction benchmark and the Korean fixture pages) are in docs/extraction.md, "Judging
a page". Every detection needs evidence on the page itself; a word such as 구독 or "cookie" in
a footer is none.

``text_chars`` is the count the thin rule and the store use: the non-whitespace characters of
the lines of the text that hold a sentence (a full stop, question or exclamation mark that ends
one), so that a menu, a date line or a list of headlines that an extractor kept counts nothing.

``sane_canonical`` keeps a page's ``<link rel="canonical">`` only when it can name the article:
a canonical is a hint, not the truth. ``is_html`` tells a page from a PDF, an image, JSON or a
feed. Nothing here touches the network.
"""

from __future__ import annotations

import contextlib
import functools
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote, urljoin, urlsplit

import lxml.etree

from newsdesk.extract.text import Extracted

EXTRACT_OK = "extract_ok"
EXTRACT_EMPTY = "extract_empty"
LIST_PAGE = "list_page"
FILTERED_THIN = "filtered_thin"

# extract_empty's reasons, in the order they are tried
BOT_CHALLENGE = "bot_challenge"
CONSENT_WALL = "consent_wall"
PAYWALL = "paywall"
META_REFRESH = "meta_refresh"
JS_RENDERED = "js_rendered"
NO_TEXT = "no_text"

# list_page's reasons
SITE_ROOT = "site_root"
SECTION_PAGE = "section_page"
LINK_LIST = "link_list"
OG_WEBSITE = "og_website"

# sane_canonical's reasons for ignoring a canonical
NOT_HTTP = "not_http"
FOREIGN_HOST = "foreign_host"

# Characters of sentence text (text_chars) under which a page is thin: above a Korean photo
# caption (one sentence with its dateline, credit and e-mail: up to about 115), though a brief of
# two short sentences (about 100) falls under it too; an outlet can lower it. The distribution
# is in docs/extraction.md, "EXTRACT_MIN_CHARS" (benchmarks/thin_threshold.py).
DEFAULT_MIN_CHARS = 120

# A page "has nearly no text" when its body shows fewer visible characters than this (scripts,
# styles, <noscript> and <template> left out): a script shell, a bare redirect.
NEARLY_NO_TEXT = 200
# A text node takes part in matching the main text back to the page when it has this many
# non-whitespace characters (shorter ones, "정치", "로그인", match anywhere).
MATCH_MIN = 8
MATCH_SCAN_LIMIT = 20_000_000  # characters of main text searched, at most, for all the nodes
# The main text "comes from" a region when this share of its matched characters lies there.
MOSTLY = 0.5
# The element holding the main text: the deepest one with this share of its matched characters.
CONTAINER_SHARE = 0.8
# A link "is a headline" when its text has this many non-whitespace characters.
HEADLINE_MIN = 10
# link_list: the element the main text comes from holds at least LIST_MIN_LINKS distinct
# headline links, link text is at least LIST_LINK_DENSITY of its text, and the main text has at
# most LIST_TEXT_PER_LINK characters a link (items of a line, not paragraphs). Measured
# (benchmarks/thin_threshold.py): the 19 benchmark articles with 10 or more such links have a
# share of at most 0.183 but one (0.466: a "10 things" round-up, 214 characters a link), and
# at least 163 characters a link; the fixture 정치 section page 0.381 and 21.
LIST_MIN_LINKS = 10
LIST_LINK_DENSITY = 0.25
LIST_TEXT_PER_LINK = 100
# og_website: og:type "website", this many distinct headline links on the page, a thin text and
# a URL that names no article.
OG_WEBSITE_MIN_LINKS = 20
JS_MIN_SCRIPTS = 3  # "many scripts", with nearly no text, is a script-rendered page

_NOT_A_PAGE = ("#", "javascript:", "mailto:", "tel:")
# A sentence ends: . ! ? (or their CJK and full-width forms) not inside a number, before a
# space, a closing quote or bracket, or the line's end.
_SENTENCE_END = re.compile(r"(?<!\d)[.!?。．！？](?=[\s\"'”’)\]>»」』]|$)|\d[.!?。．！？]$")

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
# Types that say what they are: never sniffed as HTML.
_NOT_HTML_TYPES = re.compile(
    r"^(image|audio|video|font|model)/|^application/(pdf|json|[\w.+-]*\+json|rss\+xml|atom\+xml"
    r"|rdf\+xml|feed\+json|zip|gzip|x-gzip|x-tar|javascript|x-javascript|ecmascript|msword"
    r"|vnd\.|postscript|wasm)|^text/(css|csv|javascript|calendar|vcard|markdown)$"
)
# The WHATWG sniffing table's HTML starts: a tag name followed by a space or ">".
_HTML_START = re.compile(
    rb"^<(?:!doctype\s+html|html|head|body|script|iframe|h1|div|font|table|a|style|title|b|br|p"
    rb"|!--)[\s>]",
    re.IGNORECASE,
)
_XML_PROLOG_HTML = re.compile(
    rb"^<\?xml[^>]*>\s*(?:<!--.*?-->\s*)*(?:<!doctype\s+html|<html)", re.I | re.S
)

_SKIPPED_TAGS = frozenset({"script", "style", "template", "noscript"})
_BOILERPLATE_TAGS = frozenset({"header", "footer", "nav", "aside"})
# Words of an id or class (split at spaces, "-" and "_") that mark the page's chrome.
_BOILERPLATE_WORDS = frozenset(
    {
        "header", "footer", "gnb", "lnb", "nav", "navi", "navigation", "menu", "sidebar",
        "side", "aside", "breadcrumb", "location", "comment", "comments", "reply", "replies",
        "ranking", "related",
    }
)  # fmt: skip
_NAME_SEPARATORS = str.maketrans("-_", "  ")

# ---- evidence for extract_empty's reasons ----------------------------------------------------

# Challenge pages' own markup (Cloudflare's challenge, not the JS detection it adds to ordinary
# pages: /cdn-cgi/challenge-platform/scripts/jsd/), DataDome, PerimeterX, Imperva, Sucuri.
_CHALLENGE_MARKUP = (
    "_cf_chl_opt",
    "cf_chl_",
    "cf-chl-",
    "/cdn-cgi/challenge-platform/h/",
    "orchestrate/chl_page",
    "orchestrate/captcha",
    "orchestrate/managed",
    "cf-browser-verification",
    "captcha-delivery.com",
    "px-captcha",
    "_pxcaptcha",
    "_incapsula_resource",
    "incapsula incident",
    "sucuri website firewall",
    "ddos-guard",
)  # (looked for in the page's markup in lower case)
# A challenge's whole title, or its words before the site's name ("… | Cloudflare").
_CHALLENGE_TITLE = re.compile(
    r"^\s*(just a moment|attention required|access denied|please wait|one more step"
    r"|security check|are you a (robot|human)|robot or human|human verification"
    r"|verify(ing)? (that )?you are (a )?human|pardon our interruption|ddos-guard|captcha"
    r"|bot verification|보안 ?확인|자동 ?(입력|접속) ?방지|접근이 ?(차단|제한)(되었습니다|됨)?)"
    r"[\s.!?…]*([|:\-–—].*)?$",
    re.IGNORECASE,
)
_CHALLENGE_TEXT = re.compile(
    r"checking your browser|verifying you are human|verify you are (a )?human|enable javascript "
    r"and cookies to continue|needs to review the security of your connection|you don't have "
    r"permission to access|unusual traffic from your (computer )?network|press (&|and) hold"
    r"|자동입력 ?방지|비정상적인 ?(접근|트래픽)|보안 ?문자를 ?입력",
    re.IGNORECASE,
)
_CAPTCHA_NAMES = ("g-recaptcha", "h-captcha", "hcaptcha", "cf-turnstile")
_CAPTCHA_QUESTION = re.compile(r"robot|human|로봇|자동|보안|unusual|verify|확인", re.IGNORECASE)

# Consent management: containers by their vendors' or their own names.
# (parts of an id or class, in lower case; "cmp" only as a word of it)
_CONSENT_NAMES = (
    "consent", "cookie", "gdpr", "onetrust", "optanon", "didomi", "qc-cmp", "sp_message",
    "cybotcookiebot", "usercentrics", "truste", "osano", "cc-window", "privacywall",
    "privacy-wall",
)  # fmt: skip
_COOKIE_WORDS = re.compile(r"cookie|쿠키", re.IGNORECASE)
_AGREE_WORDS = re.compile(r"consent|accept|agree|동의|수락|허용", re.IGNORECASE)

# Subscription gates: schema.org's flag, gate containers by name, and phrases that only a gate
# uses (not 구독 alone, nor 로그인 후 이용, which every comment box says).
_NOT_FREE = re.compile(
    r"\"isAccessibleForFree\"\s*:\s*(?:false|\"false\")|itemprop=[\"']isAccessibleForFree[\"']"
    r"\s+content=[\"']false[\"']",
    re.IGNORECASE,
)
_PAYWALL_NAMES = (
    "paywall", "pay-wall", "premium-gate", "subscriber-only", "subscribers-only",
    "subscription-wall", "subscribe-wall", "article-lock", "locked-content", "regwall",
    "reg-wall", "member-only", "members-only", "tp-modal", "tp-container", "piano-",
)  # fmt: skip
_GATE_WORDS = re.compile(
    r"구독|유료|회원|로그인|subscri|sign in|log in|premium|프리미엄|member", re.IGNORECASE
)
_GATE_PHRASES = re.compile(
    r"유료 ?회원 ?전용|유료 ?기사|유료 ?콘텐츠|구독자 ?전용|구독 ?회원 ?전용|회원 ?전용 ?기사"
    r"|프리미엄 ?회원 ?전용|(기사 ?)?전문(을|은)? ?(보시려면|보려면|읽으려면|읽어 ?보세요)"
    r"|구독하고 ?(기사 ?)?전문|구독 ?후 ?(기사 ?)?(전문|이용|열람)|로그인 ?후 ?(기사 ?)?(전문|열람)"
    r"|subscribe (now )?to (continue|read|keep reading|unlock)|subscribers? only"
    r"|subscriber-only|already a subscriber|to continue reading,? (please )?(subscribe|sign in"
    r"|log in)|this (article|content|story) is (only )?(available|reserved) (to|for) "
    r"(subscribers|members)",
    re.IGNORECASE,
)

# Script-rendered pages: an empty application root, data for the script to render from, a
# <noscript> asking for JavaScript.
_APP_ROOT_IDS = frozenset({"root", "app", "__next", "__nuxt", "___gatsby", "app-root", "svelte"})
_HYDRATION_DATA = (
    "__NEXT_DATA__", "window.__NUXT__", "__INITIAL_STATE__", "__PRELOADED_STATE__",
    "__APOLLO_STATE__",
)  # fmt: skip
_ASKS_FOR_JS = re.compile(r"javascript|자바스크립트|스크립트를 ?(사용|허용|활성)", re.IGNORECASE)
_REFRESH_URL = re.compile(r"^\s*\d*\s*[;,]?\s*(url\s*=)?\s*\S", re.IGNORECASE)

# ---- URLs: site roots, sections, article ids, registrable domains ----------------------------

_INDEX_FILE = re.compile(
    r"^(index|default|main|home)\.(s?html?|php\d?|aspx?|jsp|cgi)$", re.IGNORECASE
)
_LIST_FILE = re.compile(
    r"^(article_?list|news_?list|section_?list|list|section|sub_?list)\.(s?html?|php\d?|aspx?"
    r"|jsp)$",
    re.IGNORECASE,
)
SECTION_WORDS = frozenset(
    {
        "news", "politics", "political", "economy", "economic", "business", "finance",
        "market", "markets", "stock", "stocks", "industry", "realestate", "society", "social",
        "national", "nation", "local", "region", "regional", "world", "international",
        "global", "culture", "life", "lifestyle", "living", "entertainment", "sports", "sport",
        "opinion", "opinions", "editorial", "editorials", "column", "columns", "people",
        "science", "tech", "technology", "it", "health", "education", "photo", "photos",
        "gallery", "video", "videos", "tv", "english", "section", "sections", "category",
        "categories", "latest", "breaking", "all", "list", "issue", "issues", "series",
        "special", "premium", "home", "main",
        "정치", "경제", "사회", "국제", "세계", "문화", "스포츠", "연예", "오피니언", "사설",
        "칼럼", "포토", "영상", "전국", "지역", "생활", "과학", "산업", "증권", "부동산",
        "뉴스", "전체", "최신",
    }
)  # fmt: skip
_ID_DIGITS = re.compile(r"\d{5,}")
_QUERY_ID = re.compile(r"\d{4,}")
_WORD_SEPARATORS = re.compile(r"[-_+]+")
# Korea's second-level domains (KISA): co.kr and the rest, and the regional ones.
_KR_SECOND_LEVEL = frozenset(
    {
        "co", "ne", "or", "re", "pe", "go", "mil", "ac", "hs", "ms", "es", "sc", "kg",
        "seoul", "busan", "daegu", "incheon", "gwangju", "daejeon", "ulsan", "sejong",
        "gyeonggi", "gangwon", "chungbuk", "chungnam", "jeonbuk", "jeonnam", "gyeongbuk",
        "gyeongnam", "jeju",
    }
)  # fmt: skip
# Elsewhere, a country code's common second levels (co.uk, com.au, co.jp, ne.jp, com.br, …).
_GENERIC_SECOND_LEVEL = frozenset(
    {"co", "com", "net", "org", "gov", "edu", "ac", "or", "ne", "go", "gob", "mil", "nic"}
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a fetched page is: ``status`` one of the four outcomes, ``reason`` for an empty or
    list page (None otherwise), ``chars`` the main text's ``text_chars``."""

    status: str
    reason: str | None
    chars: int


def text_chars(text: str) -> int:
    """Non-whitespace characters of the lines of ``text`` that hold a sentence end."""
    count = 0
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and _SENTENCE_END.search(stripped):
            count += _nonspace(stripped)
    return count


def is_html(content_type: str | None, content: bytes) -> bool:
    """Whether an answer is an HTML page: its type says so, or it names none (or an unhelpful
    one: text/plain, octet-stream, generic XML) and its first bytes look like HTML."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media in _HTML_TYPES:
        return True
    if _NOT_HTML_TYPES.search(media):
        return False
    head = content[:1024].removeprefix(b"\xef\xbb\xbf")
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16: its ASCII, to look at
        encoding = "utf-16-le" if head.startswith(b"\xff\xfe") else "utf-16-be"
        head = head[2:].decode(encoding, errors="ignore").encode("ascii", errors="ignore")
    head = head.lstrip(b" \t\r\n\f")
    return bool(_HTML_START.match(head) or _XML_PROLOG_HTML.match(head))


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
    if parts.scheme.lower() not in ("http", "https") or not host:
        return None, NOT_HTTP
    page_host = _host(page_url)
    if page_host is None or registrable_domain(host) != registrable_domain(page_host):
        return None, FOREIGN_HOST
    if _is_root(resolved):
        return None, SITE_ROOT
    if _is_section(resolved) or (_names_article(page_url) and not _names_article(resolved)):
        return None, SECTION_PAGE
    return resolved, None


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
    if (top == "kr" and second in _KR_SECOND_LEVEL) or (
        len(top) == 2 and second in _GENERIC_SECOND_LEVEL
    ):
        return ".".join(labels[-3:])
    return ".".join(labels[-2:])


def judge_page(
    page: str, extracted: Extracted, final_url: str, min_chars: int = DEFAULT_MIN_CHARS
) -> Verdict:
    """The verdict on ``page`` (decoded), served from ``final_url``, of which the extractor kept
    ``extracted``; ``min_chars`` is the thin threshold in ``text_chars``."""
    chars = text_chars(extracted.text)
    facts = _PageFacts(page, extracted.text)
    if chars < min_chars or facts.text_from_a_wall():
        reason = facts.empty_reason(chars)
        if reason is not None:
            return Verdict(EXTRACT_EMPTY, reason, chars)
    list_reason = _list_reason(facts, final_url, chars, min_chars)
    if list_reason is not None:
        return Verdict(LIST_PAGE, list_reason, chars)
    if chars == 0:
        return Verdict(EXTRACT_EMPTY, NO_TEXT, chars)
    if chars < min_chars:
        return Verdict(FILTERED_THIN, None, chars)
    return Verdict(EXTRACT_OK, None, chars)


def _list_reason(facts: _PageFacts, final_url: str, chars: int, min_chars: int) -> str | None:
    if _is_root(final_url):
        return SITE_ROOT
    if _is_section(final_url):
        return SECTION_PAGE
    declared_article = facts.og_type == "article" and _names_article(final_url)
    links, density = facts.container_links()
    if (
        not declared_article
        and links >= LIST_MIN_LINKS
        and density >= LIST_LINK_DENSITY
        and chars <= LIST_TEXT_PER_LINK * links
    ):
        return LINK_LIST
    if (
        chars < min_chars
        and facts.og_type == "website"
        and facts.headline_links() >= OG_WEBSITE_MIN_LINKS
        and not _names_article(final_url)
    ):
        return OG_WEBSITE
    return None


# ---- the page, read once ---------------------------------------------------------------------

# What a text node sits inside (bits of _Text.flags).
_HIDDEN = 1  # <script>, <style>, <template>, <noscript>
_NOSCRIPT = 2
_CONSENT = 4  # a consent container
_CHALLENGE = 8  # a challenge page's own elements
_BOILERPLATE = 16  # a header, footer, navigation, sidebar, comments, related lists
_CAPTCHA_KIND = 32  # (of an element's names only)
_PAYWALL_KIND = 64
_NONE = -1


@dataclass(slots=True)
class _Text:
    """One text node of the body: where it sits and what it is."""

    owner: Any  # the element it belongs to (lxml's, untyped)
    text: str  # whitespace collapsed
    chars: int  # non-whitespace characters
    flags: int
    link: int  # the index of the <a> it is inside in _PageFacts.links, or _NONE
    consent: int  # the index of its consent container in _PageFacts.consent_boxes, or _NONE
    paywall: int  # the same for gate containers
    app: int  # the same for application roots
    matched: bool = False  # found in the extracted main text


class _PageFacts:
    """What the rules read of a page: its text nodes with where each sits, facts of its head,
    and the main text matched back to the nodes it came from."""

    def __init__(self, page: str, main_text: str) -> None:
        self.raw = page
        self.title = ""
        self.og_type = ""
        self.refresh = False
        self.scripts = 0
        self.noscripts: list[str] = []
        self.captcha_widget = False
        self.body: Any = None
        self.elements: list[Any] = []  # the body's, in document order
        self.texts: list[_Text] = []
        self.links: list[tuple[Any, str]] = []  # (<a>, href)
        self.consent_boxes = 0
        self.paywall_boxes = 0
        self.app_roots = 0
        tree = _parse(page)
        if tree is not None:
            self._read(tree)
        self._match(main_text)

    def _match(self, main_text: str) -> None:
        """Mark the text nodes found in the main text: a whole line of it (a paragraph, looked
        up), else anywhere in it, searched while the characters scanned stay under
        MATCH_SCAN_LIMIT (a huge page's text is not searched once per node)."""
        main = " ".join(main_text.split())
        if not main:
            return
        lines = {" ".join(line.split()) for line in main_text.splitlines()}
        budget = MATCH_SCAN_LIMIT
        for node in self.texts:
            if node.chars < MATCH_MIN:
                continue
            if node.text in lines:
                node.matched = True
            elif budget > 0:
                budget -= len(main)
                node.matched = node.text in main

    @functools.cached_property
    def raw_lower(self) -> str:
        return self.raw.lower()

    # reading

    def _read(self, tree: Any) -> None:
        for element in tree.iter("title", "meta", "script", "noscript"):
            tag = element.tag
            if tag == "title" and not self.title:
                self.title = " ".join("".join(element.itertext()).split())
            elif tag == "meta":
                self._meta(element)
            elif tag == "script":
                self.scripts += 1
            else:
                self.noscripts.append(" ".join("".join(element.itertext()).split()))
        body = tree.find("body")
        self.body = body if body is not None else tree
        self._walk(self.body)

    def _meta(self, meta: Any) -> None:
        key = (meta.get("property") or meta.get("name") or "").strip().lower()
        if key == "og:type" and not self.og_type:
            self.og_type = (meta.get("content") or "").strip().lower()
        if (meta.get("http-equiv") or "").strip().lower() != "refresh":
            return
        content = meta.get("content") or ""
        inside_noscript = any(a.tag == "noscript" for a in meta.iterancestors())
        if "url" in content.lower() and _REFRESH_URL.match(content) and not inside_noscript:
            self.refresh = True

    def _walk(self, body: Any) -> None:
        """Every text node of the body with what it sits inside, in one pass, no recursion."""
        flags, link, consent, paywall, app = 0, _NONE, _NONE, _NONE, _NONE
        saved: list[tuple[int, int, int, int, int]] = []
        for event, element in lxml.etree.iterwalk(body, events=("start", "end")):
            tag = element.tag if isinstance(element.tag, str) else ""
            if event == "end":
                flags, link, consent, paywall, app = saved.pop()
                parent = element.getparent()
                if element.tail and parent is not None and element is not body:
                    self._add(parent, element.tail, flags, link, consent, paywall, app)
                continue
            saved.append((flags, link, consent, paywall, app))
            if not tag:
                continue
            self.elements.append(element)
            if tag in _SKIPPED_TAGS:
                flags |= _HIDDEN | (_NOSCRIPT if tag == "noscript" else 0)
            elif tag in _BOILERPLATE_TAGS:
                flags |= _BOILERPLATE
            elif tag == "a":
                link = len(self.links)
                self.links.append((element, (element.get("href") or "").strip()))
            ident = element.get("id") or ""
            names = f"{ident} {element.get('class') or ''}".strip()
            if (ident.lower() in _APP_ROOT_IDS or tag == "app-root") and app == _NONE:
                app, self.app_roots = self.app_roots, self.app_roots + 1
            if names and not flags & _HIDDEN:
                flags, consent, paywall = self._named(names, flags, consent, paywall)
            if element.text:
                self._add(element, element.text, flags, link, consent, paywall, app)

    def _named(self, names: str, flags: int, consent: int, paywall: int) -> tuple[int, int, int]:
        kinds = _name_kinds(names)
        flags |= kinds & (_BOILERPLATE | _CHALLENGE)
        if kinds & _CAPTCHA_KIND:
            self.captcha_widget = True
        if consent == _NONE and kinds & _CONSENT:
            flags |= _CONSENT
            consent, self.consent_boxes = self.consent_boxes, self.consent_boxes + 1
        if paywall == _NONE and kinds & _PAYWALL_KIND:
            paywall, self.paywall_boxes = self.paywall_boxes, self.paywall_boxes + 1
        return flags, consent, paywall

    def _add(
        self, owner: Any, text: str, flags: int, link: int, consent: int, paywall: int, app: int
    ) -> None:
        collapsed = " ".join(text.split())
        if collapsed:
            chars = len(collapsed) - collapsed.count(" ")
            self.texts.append(_Text(owner, collapsed, chars, flags, link, consent, paywall, app))

    # measures

    def visible(self, without: int = 0) -> list[_Text]:
        """The text nodes a reader sees, less those inside any of ``without``'s regions."""
        return [n for n in self.texts if not n.flags & (_HIDDEN | without)]

    def visible_chars(self, without: int = 0) -> int:
        return sum(node.chars for node in self.visible(without))

    def visible_text(self, without: int = 0) -> str:
        return " ".join(node.text for node in self.visible(without))

    def boxes(self, field: str) -> list[str]:
        """The visible text of each consent (``field="consent"``) or gate container."""
        parts: dict[int, list[str]] = {}
        for node in self.visible():
            index = getattr(node, field)
            if index != _NONE:
                parts.setdefault(index, []).append(node.text)
        return [" ".join(words) for words in parts.values()]

    def matched_share(self, flag: int) -> float:
        """The share of the main text's matched characters that sit inside ``flag``'s regions."""
        total = inside = 0
        for node in self.texts:
            if node.matched:
                total += node.chars
                if node.flags & flag:
                    inside += node.chars
        return inside / total if total else 0.0

    def text_from_a_wall(self) -> bool:
        """The extractor's text came mostly from a consent box, a challenge or <noscript>."""
        return any(self.matched_share(flag) >= MOSTLY for flag in (_CONSENT, _CHALLENGE, _NOSCRIPT))

    def headline_links(self, within: Any = None) -> int:
        """Distinct addresses of the visible links whose text is a headline's length."""
        chars: dict[int, int] = {}
        inside = _descendants(within) if within is not None else None
        for node in self.visible():
            if node.link != _NONE and (inside is None or id(node.owner) in inside):
                chars[node.link] = chars.get(node.link, 0) + node.chars
        return len(
            {
                href
                for index, count in chars.items()
                for href in (self.links[index][1],)
                if count >= HEADLINE_MIN and href and not href.startswith(_NOT_A_PAGE)
            }
        )

    def container_links(self) -> tuple[int, float]:
        """Distinct headline links in the element the main text comes from, and the share of
        that element's visible text that is link text; nothing when that element is the body
        (the text is not from one region)."""
        container = self.container()
        if container is None or container is self.body:
            return 0, 0.0
        inside = _descendants(container)
        total = linked = 0
        for node in self.visible():
            if id(node.owner) in inside:
                total += node.chars
                linked += node.chars if node.link != _NONE else 0
        return self.headline_links(container), (linked / total if total else 0.0)

    def container(self) -> Any:
        """The deepest element holding CONTAINER_SHARE of the main text's matched characters."""
        weight: dict[int, int] = {}
        for node in self.texts:
            if node.matched:
                weight[id(node.owner)] = weight.get(id(node.owner), 0) + node.chars
        if not weight or self.body is None:
            return None
        for element in reversed(self.elements):  # children before their parents
            parent = element.getparent()
            if parent is not None and id(element) in weight:
                weight[id(parent)] = weight.get(id(parent), 0) + weight[id(element)]
        total = weight.get(id(self.body), 0)
        current = self.body
        while True:
            heaviest = max(
                (child for child in current if isinstance(child.tag, str)),
                key=lambda child: weight.get(id(child), 0),
                default=None,
            )
            if heaviest is None or weight.get(id(heaviest), 0) < CONTAINER_SHARE * total:
                return current
            current = heaviest

    # extract_empty's reasons

    def empty_reason(self, chars: int) -> str | None:
        if self.bot_challenge():
            return BOT_CHALLENGE
        if self.consent_wall(chars):
            return CONSENT_WALL
        if self.paywall():
            return PAYWALL
        if self.meta_refresh():
            return META_REFRESH
        if self.js_rendered(chars):
            return JS_RENDERED
        return None

    def bot_challenge(self) -> bool:
        """A challenge's own markup or title, a challenge's words, or a captcha that asks
        whether the reader is a robot on a page with nearly nothing else."""
        if any(marker in self.raw_lower for marker in _CHALLENGE_MARKUP):
            return True
        if _CHALLENGE_TITLE.search(self.title):
            return True
        text = self.visible_text()
        if _CHALLENGE_TEXT.search(text):
            return True
        return (
            self.captcha_widget
            and self.visible_chars() < NEARLY_NO_TEXT
            and bool(_CAPTCHA_QUESTION.search(text))
        )

    def consent_wall(self, chars: int) -> bool:
        """A consent container that speaks of cookies and agreeing, and either the main text
        came from it or, with no main text, it holds most of what the body shows."""
        if not any(
            _COOKIE_WORDS.search(b) and _AGREE_WORDS.search(b) for b in self.boxes("consent")
        ):
            return False
        if self.matched_share(_CONSENT) >= MOSTLY:
            return True
        everything = self.visible_chars()
        return chars == 0 and everything - self.visible_chars(_CONSENT) >= MOSTLY * everything

    def paywall(self) -> bool:
        """schema.org's isAccessibleForFree false, a gate container that speaks of
        subscribing or logging in, or a gate's own phrase outside the page's chrome."""
        if "isaccessibleforfree" in self.raw_lower and _NOT_FREE.search(self.raw):
            return True
        if any(_GATE_WORDS.search(box) for box in self.boxes("paywall")):
            return True
        return bool(_GATE_PHRASES.search(self.visible_text(_BOILERPLATE)))

    def meta_refresh(self) -> bool:
        """A <meta http-equiv="refresh"> to an address, outside <noscript>, on a page that
        shows nearly nothing."""
        return self.refresh and self.visible_chars() < NEARLY_NO_TEXT

    def js_rendered(self, chars: int) -> bool:
        """Nearly nothing shown, no main text but what <noscript> says, and a script's page:
        an empty application root, data for a script to render, a <noscript> asking for
        JavaScript, or many scripts."""
        if self.visible_chars() >= NEARLY_NO_TEXT:
            return False
        if chars > 0 and self.matched_share(_NOSCRIPT) < MOSTLY:
            return False
        filled = {node.app for node in self.visible() if node.app != _NONE}
        return (
            len(filled) < self.app_roots
            or any(_ASKS_FOR_JS.search(text) for text in self.noscripts)
            or any(marker in self.raw for marker in _HYDRATION_DATA)
            or self.scripts >= JS_MIN_SCRIPTS
        )


@functools.lru_cache(maxsize=4096)
def _name_kinds(names: str) -> int:
    """What an element's id and class say it is (bits: chrome, challenge, captcha, consent,
    gate); pages repeat the same few names, hence the cache."""
    names = names.lower()
    words = set(names.translate(_NAME_SEPARATORS).split())
    kinds = 0 if words.isdisjoint(_BOILERPLATE_WORDS) else _BOILERPLATE
    if names.startswith(("challenge", "cf-")):
        kinds |= _CHALLENGE
    if any(part in names for part in _CAPTCHA_NAMES):
        kinds |= _CAPTCHA_KIND
    if "cmp" in words or any(part in names for part in _CONSENT_NAMES):
        kinds |= _CONSENT
    if any(part in names for part in _PAYWALL_NAMES):
        kinds |= _PAYWALL_KIND
    return kinds


def _parse(page: str) -> Any:
    """The page as an lxml tree (comments dropped), None when there is nothing to parse."""
    if not page.strip():
        return None
    parser = lxml.etree.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True)
    try:
        return lxml.etree.fromstring(page.encode("utf-8", errors="replace"), parser=parser)
    except (lxml.etree.ParserError, lxml.etree.XMLSyntaxError, ValueError):
        return None


def _descendants(element: Any) -> set[int]:
    return {id(child) for child in element.iter()}


def _nonspace(text: str) -> int:
    return sum(len(word) for word in text.split())


# ---- URLs ------------------------------------------------------------------------------------


def _host(url: str) -> str | None:
    try:
        return urlsplit(url).hostname or None
    except ValueError:
        return None


def _segments(url: str) -> tuple[list[str], str]:
    try:
        parts = urlsplit(url)
    except ValueError:
        return [], ""
    return [unquote(s) for s in parts.path.split("/") if s], parts.query


def _is_root(url: str) -> bool:
    """The site's root: no path (or only an index file) and no query."""
    segments, query = _segments(url)
    if query:
        return False
    return not segments or (len(segments) == 1 and bool(_INDEX_FILE.match(segments[0])))


def _is_section(url: str) -> bool:
    """A section or list page: a list file (articleList.html, list.php …), or one or two
    segments that name no article, the first a section word and the second, if any, a section
    word or a name of at most two words (/politics, /news/politics, /society/society_general)."""
    segments, _ = _segments(url)
    if segments and _INDEX_FILE.match(segments[-1]):
        segments = segments[:-1]
    if segments and _LIST_FILE.match(segments[-1]):
        return True
    if not 1 <= len(segments) <= 2 or _names_article(url):
        return False
    first = segments[0].lower()
    if first not in SECTION_WORDS:
        return False
    if len(segments) == 2:
        second = segments[1].lower()
        words = [w for w in _WORD_SEPARATORS.split(second) if w]
        if second not in SECTION_WORDS and (len(words) > 2 or "." in second):
            return False
    return True


def _names_article(url: str) -> bool:
    """The URL carries an article's identity: a run of five or more digits in its path or
    query, a query value of four or more digits (?idx=8576), or a slug (a path segment of three
    or more words)."""
    segments, query = _segments(url)
    if _ID_DIGITS.search(query) or any(_ID_DIGITS.search(s) for s in segments):
        return True
    if any(_QUERY_ID.fullmatch(value) for _, value in parse_qsl(query)):
        return True
    return any(len([w for w in _WORD_SEPARATORS.split(s) if w]) >= 3 for s in segments)
