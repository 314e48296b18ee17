"""A fetched page read once, for the judge (``newsdesk.extract.page``): every text node of its
body with what it sits inside (hidden, ``<noscript>``, a consent box, a gate, a challenge's
elements, the page's chrome, an application root, a link), the facts of its head, and the
extracted main text matched back to the nodes it came from. ``PageFacts`` measures; it decides
nothing (the rules do)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import lxml.etree

from newsdesk.extract import nesting
from newsdesk.extract.vocabulary import (
    APP_ROOT_IDS,
    APP_ROOT_TAGS,
    BOILERPLATE_TAGS,
    BOILERPLATE_WORDS,
    CAPTCHA_NAMES,
    CHALLENGE_NAME_PREFIXES,
    CONSENT_NAME_WORDS,
    CONSENT_NAMES,
    CONTAINER_SHARE,
    HEADLINE_MIN,
    MATCH_MIN,
    MATCH_SCAN_LIMIT,
    NOT_A_PAGE,
    PAYWALL_NAMES,
    REFRESH_URL,
    SKIPPED_TAGS,
)

# What a text node sits inside (bits of TextNode.flags): the regions the rules ask about.
HIDDEN = 1  # <script>, <style>, <template>, <noscript>
NOSCRIPT = 2
CONSENT = 4  # a consent container
CHALLENGE = 8  # a challenge page's own elements
BOILERPLATE = 16  # a header, footer, navigation, sidebar, comments, related lists
_CAPTCHA_KIND = 32  # (of an element's names only)
_PAYWALL_KIND = 64
_NONE = -1
_NAME_SEPARATORS = str.maketrans("-_", "  ")


@dataclass(slots=True)
class TextNode:
    """One text node of the body: where it sits and what it is."""

    owner: Any  # the element it belongs to (lxml's, untyped)
    text: str  # whitespace collapsed
    chars: int  # non-whitespace characters
    flags: int
    link: int  # the index of the <a> it is inside in PageFacts.links, or _NONE
    consent: int  # the index of its consent container (PageFacts.consent_boxes), or _NONE
    paywall: int  # the same for gate containers
    app: int  # the same for application roots
    matched: bool = False  # found in the extracted main text


class PageFacts:
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
        self.texts: list[TextNode] = []
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
        if "url" in content.lower() and REFRESH_URL.match(content) and not inside_noscript:
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
            if tag in SKIPPED_TAGS:
                flags |= HIDDEN | (NOSCRIPT if tag == "noscript" else 0)
            elif tag in BOILERPLATE_TAGS:
                flags |= BOILERPLATE
            elif tag == "a":
                link = len(self.links)
                self.links.append((element, (element.get("href") or "").strip()))
            ident = element.get("id") or ""
            names = f"{ident} {element.get('class') or ''}".strip()
            if (ident.lower() in APP_ROOT_IDS or tag in APP_ROOT_TAGS) and app == _NONE:
                app, self.app_roots = self.app_roots, self.app_roots + 1
            if names and not flags & HIDDEN:
                flags, consent, paywall = self._named(names, flags, consent, paywall)
            if element.text:
                self._add(element, element.text, flags, link, consent, paywall, app)

    def _named(self, names: str, flags: int, consent: int, paywall: int) -> tuple[int, int, int]:
        kinds = _name_kinds(names)
        flags |= kinds & (BOILERPLATE | CHALLENGE)
        if kinds & _CAPTCHA_KIND:
            self.captcha_widget = True
        if consent == _NONE and kinds & CONSENT:
            flags |= CONSENT
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
            node = TextNode(owner, collapsed, chars, flags, link, consent, paywall, app)
            self.texts.append(node)

    # measures

    def visible(self, without: int = 0) -> list[TextNode]:
        """The text nodes a reader sees, less those inside any of ``without``'s regions."""
        return [n for n in self.texts if not n.flags & (HIDDEN | without)]

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

    def empty_app_root(self) -> bool:
        """An application root that shows no text: what a script was to fill."""
        filled = {node.app for node in self.visible() if node.app != _NONE}
        return len(filled) < self.app_roots

    def matched_share(self, flag: int) -> float:
        """The share of the main text's matched characters that sit inside ``flag``'s regions."""
        total = inside = 0
        for node in self.texts:
            if node.matched:
                total += node.chars
                if node.flags & flag:
                    inside += node.chars
        return inside / total if total else 0.0

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
                if count >= HEADLINE_MIN and href and not href.startswith(NOT_A_PAGE)
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
        weight = self._matched_weight()
        if not weight or self.body is None:
            return None
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

    def _matched_weight(self) -> dict[int, int]:
        """The main text's matched characters inside each element (by id), ancestors included."""
        weight: dict[int, int] = {}
        for node in self.texts:
            if node.matched:
                weight[id(node.owner)] = weight.get(id(node.owner), 0) + node.chars
        if not weight:
            return weight
        for element in reversed(self.elements):  # children before their parents
            parent = element.getparent()
            if parent is not None and id(element) in weight:
                weight[id(parent)] = weight.get(id(parent), 0) + weight[id(element)]
        return weight


@functools.lru_cache(maxsize=4096)
def _name_kinds(names: str) -> int:
    """What an element's id and class say it is (bits: chrome, challenge, captcha, consent,
    gate); pages repeat the same few names, hence the cache."""
    names = names.lower()
    words = set(names.translate(_NAME_SEPARATORS).split())
    kinds = 0 if words.isdisjoint(BOILERPLATE_WORDS) else BOILERPLATE
    if names.startswith(CHALLENGE_NAME_PREFIXES):
        kinds |= CHALLENGE
    if any(part in names for part in CAPTCHA_NAMES):
        kinds |= _CAPTCHA_KIND
    if not words.isdisjoint(CONSENT_NAME_WORDS) or any(part in names for part in CONSENT_NAMES):
        kinds |= CONSENT
    if any(part in names for part in PAYWALL_NAMES):
        kinds |= _PAYWALL_KIND
    return kinds


def _parse(page: str) -> Any:
    """The page as an lxml tree (comments dropped), all of it however deep (``nesting``), None
    when there is nothing to parse."""
    if not page.strip():
        return None
    return nesting.whole(page, _tree)


def _tree(page: str) -> Any:
    parser = lxml.etree.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True)
    try:
        return lxml.etree.fromstring(page.encode("utf-8", errors="replace"), parser=parser)
    except (lxml.etree.ParserError, lxml.etree.XMLSyntaxError, ValueError):
        return None


def _descendants(element: Any) -> set[int]:
    return {id(child) for child in element.iter()}
