"""The demo's site: an article page for each item of the demo's feeds, and each outlet's front
page.

The feeds' items link to ``https://demo.newsdesk.invalid/<outlet>/<category>/<nnnn>``; the feeds
are served with that origin replaced by the server's own (every occurrence: item links, guids,
the channel's link), and each item's page is served at ``/<outlet>/<category>/<nnnn>``, the
outlet's front page at ``/<outlet>/``. The pages are generated from ``demo_pages/``: one layout
per outlet (``<outlet>.html``, parts read by name), the parts they share (``common.html``), and
every article's text in ``articles.yaml``, which also says which pages are special (``SPECIAL``).
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from functools import cache
from importlib import resources
from string import Template
from typing import Any

import yaml

from newsdesk_local.feedserver import Route

CATEGORIES = {"politics": "정치", "economy": "경제", "society": "사회"}
DEMO_ORIGIN = "https://demo.newsdesk.invalid"


# The pages that are not an outlet's ordinary article page (articles.yaml marks them; a test
# holds this table to it): a photo article whose title carries no photo tag (its issue: none,
# 연합뉴스's and 매일경제's two 환율 items are under the clustering's three), a page rendered
# by JavaScript only, a cookie-consent wall instead of the article, and 연합뉴스's 기준금리
# story republished as 매일경제's wire copy.
SPECIAL = {
    "photo_untagged": "yonhap/economy/0004",
    "javascript": "newsis/politics/0002",
    "consent": "hani/politics/0003",
    "wire_copy": "mk/economy/0001",
    "wire_original": "yonhap/economy/0001",
}


_KST = timezone(timedelta(hours=9))


_PART = re.compile(r"^<!-- part: (\w+) -->\n", re.MULTILINE)


_CP949_OUTLETS = {"mk"}  # its pages are CP949, labelled EUC-KR, as its feeds are


_POPULAR = 5  # headlines in a page's most-read box


_AGO = ("12분 전", "48분 전", "1시간 전", "3시간 전")


@dataclass(frozen=True)
class DemoItem:
    """One item of a served demo feed: its page's path (``yonhap/politics/0001``), title, date
    and served URL."""

    path: str
    title: str
    published: datetime
    url: str

    @property
    def outlet(self) -> str:
        return self.path.split("/")[0]

    @property
    def category(self) -> str:
        return self.path.split("/")[1]


def served_here(feed: bytes, base_url: str) -> bytes:
    """``feed`` with the demo's origin replaced by ``base_url`` (ASCII, so the same in UTF-8 and
    in CP949): its links and guids lead to the pages this server serves."""
    return feed.replace(f"{DEMO_ORIGIN}/".encode(), f"{base_url}/".encode())


def feed_items(feed: bytes, base_url: str) -> list[DemoItem]:
    """The items of a served demo feed whose links are ``base_url``'s."""
    encoding = "cp949" if b'encoding="EUC-KR"' in feed[:100] else "utf-8"
    text = re.sub(r"^<\?xml[^>]*\?>", "", feed.decode(encoding)).strip()
    items: list[DemoItem] = []
    for element in ET.fromstring(text).iter("item"):  # noqa: S314 (our own bundled files)
        url = (element.findtext("link") or "").strip()
        if not url.startswith(f"{base_url}/"):
            continue
        items.append(
            DemoItem(
                path=url.removeprefix(f"{base_url}/"),
                title=(element.findtext("title") or "").strip(),
                published=parsedate_to_datetime(element.findtext("pubDate") or ""),
                url=url,
            )
        )
    return items


@cache
def demo_texts() -> dict[str, Any]:
    """articles.yaml: ``outlets``, ``topics`` and ``articles`` (keyed by item path)."""
    folder = resources.files("newsdesk_local").joinpath("demo_pages")
    texts: dict[str, Any] = yaml.safe_load(folder.joinpath("articles.yaml").read_text("utf-8"))
    return texts


def article_paragraphs(path: str) -> list[str]:
    """The paragraphs of the article at ``path`` as its page shows them (a wire copy's are its
    original's, first replaced, cut to ``keep``; a photo article's, its caption)."""
    article = demo_texts()["articles"][path]
    if "caption" in article:
        return [str(article["caption"])]
    if "copy_of" in article:
        original = article_paragraphs(article["copy_of"])
        return [article["first_paragraph"], *original[1 : article["keep"]]]
    return [str(p) for p in article.get("paragraphs", [])]


@cache
def _layout(name: str) -> dict[str, Template]:
    """The parts of ``demo_pages/<name>.html``, by name."""
    text = (
        resources.files("newsdesk_local").joinpath("demo_pages", f"{name}.html").read_text("utf-8")
    )
    pieces = _PART.split(text)
    return {pieces[i]: Template(pieces[i + 1].rstrip("\n")) for i in range(1, len(pieces), 2)}


def demo_pages(items: list[DemoItem], base_url: str) -> dict[str, Route]:
    """Every route the pages need: each item's page, the outlets' front pages, and what the
    JavaScript-rendered page loads (its bundle and its article as JSON)."""
    texts = demo_texts()
    routes: dict[str, Route] = {}
    for outlet in dict.fromkeys(item.outlet for item in items):
        mine = [item for item in items if item.outlet == outlet]
        routes[f"/{outlet}/"] = _html(outlet, _front_page(outlet, mine, base_url))
        for item in mine:
            if item.path not in texts["articles"]:
                raise ValueError(f"demo_pages/articles.yaml has no article {item.path!r}")
            routes.update(_article_routes(item, mine, base_url))
    return routes


def _html(outlet: str, page: str) -> Route:
    if outlet in _CP949_OUTLETS:
        # a character CP949 lacks becomes a character reference, as a CP949 site writes it
        body = page.encode("cp949", errors="xmlcharrefreplace")
        return Route(body, content_type="text/html; charset=euc-kr")
    return Route(page.encode("utf-8"), content_type="text/html; charset=utf-8")


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _json_string(text: str) -> str:
    """``text`` inside a JSON string inside a <script>."""
    return json.dumps(text, ensure_ascii=False)[1:-1].replace("</", "<\\/")


def _reporter(outlet: str, article: dict[str, Any]) -> tuple[str, str]:
    """The byline's name and email address."""
    reporter = article["reporter"]
    if isinstance(reporter, str):  # a desk's name, the email line given apart
        name, email = article["byline"]
        return str(name), str(email)
    name, mailbox = reporter
    return f"{name} 기자", f"{mailbox}@{demo_texts()['outlets'][outlet]['domain']}"


def _common(item: DemoItem, base_url: str) -> dict[str, str]:
    """The values every part of an article page may use (HTML-escaped)."""
    texts = demo_texts()
    outlet = texts["outlets"][item.outlet]
    article = texts["articles"][item.path]
    topic = texts["topics"][article["topic"]]
    paragraphs = article_paragraphs(item.path)
    reporter = article["reporter"]
    label = reporter if isinstance(reporter, str) else f"{reporter[0]} 기자"
    name, email = _reporter(item.outlet, article)
    at = item.published.astimezone(_KST)
    description = " ".join(paragraphs[0].split())[:110] if paragraphs else item.title
    if article.get("special") == "javascript":
        description = item.title  # its head says no more than the title
    return {
        "title": _e(item.title),
        "og_title": _e(item.title),
        "page_title": _e(Template(outlet["title"]).substitute(title=item.title)),
        "json_title": _json_string(item.title),
        "json_author": _json_string(label),
        "canonical": _e(item.url),
        "published": at.isoformat(timespec="seconds"),
        "date_display": at.strftime("%Y.%m.%d %H:%M"),
        "outlet": item.outlet,
        "outlet_name": _e(outlet["name"]),
        "home": f"/{item.outlet}/",
        "static": f"/{item.outlet}/static",
        "category": item.category,
        "section": CATEGORIES[item.category],
        "subsection": _e(topic["subsection"]),
        "description": _e(description),
        "image": _e(f"{base_url}/{item.outlet}/photo/{item.category}/{item.path[-4:]}.jpg"),
        "reporter": _e(label),
        "author": _e(label),
        "byline_name": _e(name),
        "email": _e(email),
        "body_class": "article-view",
    }


def _article_routes(item: DemoItem, siblings: list[DemoItem], base_url: str) -> dict[str, Route]:
    article = demo_texts()["articles"][item.path]
    values = _common(item, base_url)
    common = _layout("common")
    meta = common["meta_article"].substitute(values)
    path = f"/{item.path}"
    if article.get("special") == "consent":
        page = common["consent"].substitute(
            values, consent_action=f"/{item.outlet}/consent", path=path
        )
        return {path: _html(item.outlet, page)}
    if article.get("special") == "javascript":
        return _javascript_routes(item, values, meta)
    parts = _layout(item.outlet)
    main = parts["article"].substitute(
        values,
        body=_body(item, parts, values),
        byline=parts["byline"].substitute(values, name=values["byline_name"]),
        related=_related(item, parts),
        comments=_comments(item, parts),
        comment_count=str(len(_topic(item)["comments"])),
        popular=_popular(item, siblings, parts),
    )
    jsonld = common["jsonld"].substitute(values)
    page = parts["page"].substitute(values, meta=meta, jsonld=jsonld, main=main)
    return {path: _html(item.outlet, page)}


def _topic(item: DemoItem) -> dict[str, Any]:
    texts = demo_texts()
    topic: dict[str, Any] = texts["topics"][texts["articles"][item.path]["topic"]]
    return topic


def _body(item: DemoItem, parts: dict[str, Template], values: dict[str, str]) -> str:
    article = demo_texts()["articles"][item.path]
    if "caption" in article:
        return parts["photo"].substitute(
            values, alt=values["title"], caption=_e(" ".join(article["caption"].split()))
        )
    paragraphs = [parts["paragraph"].substitute(text=_e(p)) for p in article_paragraphs(item.path)]
    if "ad" in parts:  # an ad slot after the second paragraph
        paragraphs.insert(2, parts["ad"].substitute())
    return "\n".join(paragraphs)


def _related(item: DemoItem, parts: dict[str, Template]) -> str:
    """The topic's related headlines, linking to pages of the outlet's that the demo does not
    serve (as a related list links to older articles)."""
    topics = list(demo_texts()["topics"])
    number = 1000 + 10 * topics.index(demo_texts()["articles"][item.path]["topic"])
    return "\n".join(
        parts["related"].substitute(
            href=f"/{item.outlet}/{item.category}/{number + n}", headline=_e(headline)
        )
        for n, headline in enumerate(_topic(item)["related"])
    )


def _comments(item: DemoItem, parts: dict[str, Template]) -> str:
    return "\n".join(
        parts["comment"].substitute(user=_e(user), text=_e(text), likes=likes, ago=_AGO[n])
        for n, (user, text, likes) in enumerate(_topic(item)["comments"])
    )


def _popular(item: DemoItem, siblings: list[DemoItem], parts: dict[str, Template]) -> str:
    """The outlet's other articles (photo articles aside), as its most-read box lists them."""
    articles = demo_texts()["articles"]
    others = [s for s in siblings if s is not item and "caption" not in articles[s.path]]
    return "\n".join(
        parts["popular"].substitute(rank=rank, href=f"/{other.path}", headline=_e(other.title))
        for rank, other in enumerate(others[:_POPULAR], start=1)
    )


def _javascript_routes(item: DemoItem, values: dict[str, str], meta: str) -> dict[str, Route]:
    """An app shell (an empty #root, a bundle, a <noscript>), the bundle, and the article as the
    JSON the bundle fetches."""
    bundle = resources.files("newsdesk_local").joinpath("demo_pages", "app.js").read_bytes()
    bundle_path = f"/{item.outlet}/static/js/main.{hashlib.sha256(bundle).hexdigest()[:8]}.js"
    api = f"/{item.outlet}/api/articles"
    article_path = f"/{item.category}/{item.path.split('/')[2]}"
    page = _layout("common")["app_shell"].substitute(
        values, meta=meta, bundle=bundle_path, api=api, path=article_path
    )
    document = {
        "title": item.title,
        "byline": html.unescape(values["byline_name"]),
        "published": values["published"],
        "paragraphs": article_paragraphs(item.path),
    }
    return {
        f"/{item.path}": _html(item.outlet, page),
        bundle_path: Route(bundle, content_type="application/javascript; charset=utf-8"),
        f"{api}{article_path}.json": Route(
            json.dumps(document, ensure_ascii=False).encode("utf-8"),
            content_type="application/json; charset=utf-8",
        ),
    }


def _front_page(outlet: str, items: list[DemoItem], base_url: str) -> str:
    """The outlet's front page (the feeds' channel link): its latest headlines, a list page."""
    parts = _layout(outlet)
    name = demo_texts()["outlets"][outlet]["name"]
    values = {
        "outlet_name": _e(name),
        "canonical": _e(f"{base_url}/{outlet}/"),
        "page_title": _e(
            Template(demo_texts()["outlets"][outlet]["title"]).substitute(title="최신 뉴스")
        ),
        "static": f"/{outlet}/static",
        "home": f"/{outlet}/",
        "body_class": "section-list",
        "author": "",
        "category": "",
    }
    listed = "\n".join(
        parts["section_item"].substitute(
            href=f"/{item.path}",
            headline=_e(item.title),
            date_display=item.published.astimezone(_KST).strftime("%Y.%m.%d %H:%M"),
        )
        for item in sorted(items, key=lambda i: i.published, reverse=True)
    )
    meta = _layout("common")["meta_section"].substitute(values)
    main = parts["section"].substitute(items=listed)
    return parts["page"].substitute(values, meta=meta, jsonld="", main=main)
