"""What the page judge knows, as data: its outcomes and reasons, its thresholds, and the marks
of each kind of page (markup, names, words, addresses). The rules that read them are in
``newsdesk.extract.page`` (the judge), ``newsdesk.extract.facts`` (the page read once) and
``newsdesk.extract.addresses`` (what a URL names); why each value is what it is, and how it was
measured, is in docs/extraction.md, "Judging a page".

Patterns are compiled here, once; lists of markers are tuples (looked for as parts of a string)
and sets of words are frozensets (looked up whole). Markup markers are in lower case, matched
against the page in lower case; ids and class names likewise.
"""

from __future__ import annotations

import re

# ---- outcomes and reasons --------------------------------------------------------------------

EXTRACT_OK = "extract_ok"
EXTRACT_EMPTY = "extract_empty"
LIST_PAGE = "list_page"
FILTERED_THIN = "filtered_thin"

# extract_empty's reasons (the judge tries them in this order: page.EMPTY_RULES)
BOT_CHALLENGE = "bot_challenge"
CONSENT_WALL = "consent_wall"
PAYWALL = "paywall"
META_REFRESH = "meta_refresh"
JS_RENDERED = "js_rendered"
NO_TEXT = "no_text"
# … and one the judge gives without reading the page: too many elements to extract in bounded
# CPU (text.ELEMENT_BUDGET)
TOO_COMPLEX = "too_complex"

# list_page's reasons (page.LIST_RULES)
SITE_ROOT = "site_root"
SECTION_PAGE = "section_page"
LINK_LIST = "link_list"
OG_WEBSITE = "og_website"

# sane_canonical's reasons for ignoring a canonical (besides SITE_ROOT and SECTION_PAGE)
NOT_HTTP = "not_http"
FOREIGN_HOST = "foreign_host"

# ---- thresholds ------------------------------------------------------------------------------

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

# ---- text and answers ------------------------------------------------------------------------

# A sentence ends: . ! ? (or their CJK and full-width forms) not inside a number, before a
# space, a closing quote or bracket, or the line's end.
SENTENCE_END = re.compile(r"(?<!\d)[.!?。．！？](?=[\s\"'”’)\]>»」』]|$)|\d[.!?。．！？]$")

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
# Types that say what they are: never sniffed as HTML.
NOT_HTML_TYPES = re.compile(
    r"^(image|audio|video|font|model)/|^application/(pdf|json|[\w.+-]*\+json|rss\+xml|atom\+xml"
    r"|rdf\+xml|feed\+json|zip|gzip|x-gzip|x-tar|javascript|x-javascript|ecmascript|msword"
    r"|vnd\.|postscript|wasm)|^text/(css|csv|javascript|calendar|vcard|markdown)$"
)
# The WHATWG sniffing table's HTML starts: a tag name followed by a space or ">".
HTML_START = re.compile(
    rb"^<(?:!doctype\s+html|html|head|body|script|iframe|h1|div|font|table|a|style|title|b|br|p"
    rb"|!--)[\s>]",
    re.IGNORECASE,
)
XML_PROLOG_HTML = re.compile(
    rb"^<\?xml[^>]*>\s*(?:<!--.*?-->\s*)*(?:<!doctype\s+html|<html)", re.I | re.S
)

# ---- the page's structure --------------------------------------------------------------------

NOT_A_PAGE = ("#", "javascript:", "mailto:", "tel:")  # a link's href that leads to no page
SKIPPED_TAGS = frozenset({"script", "style", "template", "noscript"})  # no reader sees them
BOILERPLATE_TAGS = frozenset({"header", "footer", "nav", "aside"})
# Words of an id or class (split at spaces, "-" and "_") that mark the page's chrome.
BOILERPLATE_WORDS = frozenset(
    {
        "header", "footer", "gnb", "lnb", "nav", "navi", "navigation", "menu", "sidebar",
        "side", "aside", "breadcrumb", "location", "comment", "comments", "reply", "replies",
        "ranking", "related",
    }
)  # fmt: skip
OG_TYPE_ARTICLE = "article"  # og:type values the list rules read
OG_TYPE_WEBSITE = "website"

# ---- bot_challenge ---------------------------------------------------------------------------

# Challenge pages' own markup (Cloudflare's challenge, not the JS detection it adds to ordinary
# pages: /cdn-cgi/challenge-platform/scripts/jsd/), DataDome, PerimeterX, Imperva, Sucuri.
CHALLENGE_MARKUP = (
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
CHALLENGE_TITLE = re.compile(
    r"^\s*(just a moment|attention required|access denied|please wait|one more step"
    r"|security check|are you a (robot|human)|robot or human|human verification"
    r"|verify(ing)? (that )?you are (a )?human|pardon our interruption|ddos-guard|captcha"
    r"|bot verification|보안 ?확인|자동 ?(입력|접속) ?방지|접근이 ?(차단|제한)(되었습니다|됨)?)"
    r"[\s.!?…]*([|:\-–—].*)?$",
    re.IGNORECASE,
)
CHALLENGE_TEXT = re.compile(
    r"checking your browser|verifying you are human|verify you are (a )?human|enable javascript "
    r"and cookies to continue|needs to review the security of your connection|you don't have "
    r"permission to access|unusual traffic from your (computer )?network|press (&|and) hold"
    r"|자동입력 ?방지|비정상적인 ?(접근|트래픽)|보안 ?문자를 ?입력",
    re.IGNORECASE,
)
CHALLENGE_NAME_PREFIXES = ("challenge", "cf-")  # an id or class that starts so
CAPTCHA_NAMES = ("g-recaptcha", "h-captcha", "hcaptcha", "cf-turnstile")
CAPTCHA_QUESTION = re.compile(r"robot|human|로봇|자동|보안|unusual|verify|확인", re.IGNORECASE)

# ---- consent_wall ----------------------------------------------------------------------------

# Consent management: containers by their vendors' or their own names (parts of an id or
# class), or by a word of them.
CONSENT_NAMES = (
    "consent", "cookie", "gdpr", "onetrust", "optanon", "didomi", "qc-cmp", "sp_message",
    "cybotcookiebot", "usercentrics", "truste", "osano", "cc-window", "privacywall",
    "privacy-wall",
)  # fmt: skip
CONSENT_NAME_WORDS = frozenset({"cmp"})
COOKIE_WORDS = re.compile(r"cookie|쿠키", re.IGNORECASE)
AGREE_WORDS = re.compile(r"consent|accept|agree|동의|수락|허용", re.IGNORECASE)

# ---- paywall ---------------------------------------------------------------------------------

# Subscription gates: schema.org's flag, gate containers by name, and phrases that only a gate
# uses (not 구독 alone, nor 로그인 후 이용, which every comment box says).
NOT_FREE_MARK = "isaccessibleforfree"  # (in lower case: a page without it is not searched)
NOT_FREE = re.compile(
    r"\"isAccessibleForFree\"\s*:\s*(?:false|\"false\")|itemprop=[\"']isAccessibleForFree[\"']"
    r"\s+content=[\"']false[\"']",
    re.IGNORECASE,
)
PAYWALL_NAMES = (
    "paywall", "pay-wall", "premium-gate", "subscriber-only", "subscribers-only",
    "subscription-wall", "subscribe-wall", "article-lock", "locked-content", "regwall",
    "reg-wall", "member-only", "members-only", "tp-modal", "tp-container", "piano-",
)  # fmt: skip
GATE_WORDS = re.compile(
    r"구독|유료|회원|로그인|subscri|sign in|log in|premium|프리미엄|member", re.IGNORECASE
)
GATE_PHRASES = re.compile(
    r"유료 ?회원 ?전용|유료 ?기사|유료 ?콘텐츠|구독자 ?전용|구독 ?회원 ?전용|회원 ?전용 ?기사"
    r"|프리미엄 ?회원 ?전용|(기사 ?)?전문(을|은)? ?(보시려면|보려면|읽으려면|읽어 ?보세요)"
    r"|구독하고 ?(기사 ?)?전문|구독 ?후 ?(기사 ?)?(전문|이용|열람)|로그인 ?후 ?(기사 ?)?(전문|열람)"
    r"|subscribe (now )?to (continue|read|keep reading|unlock)|subscribers? only"
    r"|subscriber-only|already a subscriber|to continue reading,? (please )?(subscribe|sign in"
    r"|log in)|this (article|content|story) is (only )?(available|reserved) (to|for) "
    r"(subscribers|members)",
    re.IGNORECASE,
)

# ---- meta_refresh and js_rendered ------------------------------------------------------------

# a refresh's content that names an address ("0; url=…")
REFRESH_URL = re.compile(r"^\s*\d*\s*[;,]?\s*(url\s*=)?\s*\S", re.IGNORECASE)
# Script-rendered pages: an empty application root, data for the script to render from, a
# <noscript> asking for JavaScript. (HYDRATION_DATA is looked for in the markup as written.)
APP_ROOT_IDS = frozenset({"root", "app", "__next", "__nuxt", "___gatsby", "app-root", "svelte"})
APP_ROOT_TAGS = frozenset({"app-root"})
HYDRATION_DATA = (
    "__NEXT_DATA__", "window.__NUXT__", "__INITIAL_STATE__", "__PRELOADED_STATE__",
    "__APOLLO_STATE__",
)  # fmt: skip
ASKS_FOR_JS = re.compile(r"javascript|자바스크립트|스크립트를 ?(사용|허용|활성)", re.IGNORECASE)

# ---- addresses: site roots, sections, article ids, registrable domains -----------------------

WEB_SCHEMES = ("http", "https")
INDEX_FILE = re.compile(
    r"^(index|default|main|home)\.(s?html?|php\d?|aspx?|jsp|cgi)$", re.IGNORECASE
)
LIST_FILE = re.compile(
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
SECTION_NAME_MAX_WORDS = 2  # a section's second segment: a section word or a name this short
ARTICLE_SLUG_MIN_WORDS = 3  # a path segment of this many words is an article's slug
ID_DIGITS = re.compile(r"\d{5,}")  # an article's id, in its path or query
QUERY_ID = re.compile(r"\d{4,}")  # a query value that is an article's id (?idx=8576)
WORD_SEPARATORS = re.compile(r"[-_+]+")  # between the words of a path segment
# Korea's second-level domains (KISA): co.kr and the rest, and the regional ones.
KR_SECOND_LEVEL = frozenset(
    {
        "co", "ne", "or", "re", "pe", "go", "mil", "ac", "hs", "ms", "es", "sc", "kg",
        "seoul", "busan", "daegu", "incheon", "gwangju", "daejeon", "ulsan", "sejong",
        "gyeonggi", "gangwon", "chungbuk", "chungnam", "jeonbuk", "jeonnam", "gyeongbuk",
        "gyeongnam", "jeju",
    }
)  # fmt: skip
# Elsewhere, a country code's common second levels (co.uk, com.au, co.jp, ne.jp, com.br, …).
GENERIC_SECOND_LEVEL = frozenset(
    {"co", "com", "net", "org", "gov", "edu", "ac", "or", "ne", "go", "gob", "mil", "nic"}
)
