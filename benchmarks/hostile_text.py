"""Hostile text through the parser, measured (issue 22, points 2 and 5).

    .venv/bin/python benchmarks/hostile_text.py
    .venv/bin/python benchmarks/hostile_text.py --sizes 0.25,0.5,1,2,4 --before-limit 4

**Summaries** (``newsdesk.collect.markup.html_text``, what every summary and every title that
is HTML goes through): CPU seconds at growing sizes for text built to make a backtracking scan
quadratic — ``<`` runs, tags and comments left open, ``</`` runs — and for dense real markup
and an ordinary Korean summary repeated; then, on the same inputs, the regular expressions the
parser used before (``<[^>]+>`` after a script/style/comment pass), up to the size where one
run passes ``--before-limit`` seconds. Linear means the cost doubles with the size.

**Entities** (``newsdesk.collect.parse``): a 1.2 MB feed whose one internal entity (400,000
Hangul characters) is used 30 times in a title, parsed whole; the peak of what Python allocated
(tracemalloc) and the longest title, before (the entity filter the parser had, which kept any
plain-text entity, then feedparser) and after (``parse_feed``: plain-text entities only within
``ENTITY_EXPANSION_BUDGET``); and the entity filter on declarations never closed, before and
after, at growing sizes.
"""

from __future__ import annotations

import argparse
import re
import time
import tracemalloc
import warnings
from collections.abc import Callable
from html import unescape

import feedparser

from newsdesk.collect.markup import html_text
from newsdesk.collect.parse import parse_feed, without_unsafe_entities

MB = 1024 * 1024
PATTERNS = {
    "'<' runs": "<",
    "'<a' left open": "<a",
    "'<!--' left open": "<!--",
    "'</' runs": "</",
    "'<a b=\"' left open": '<a b="',
    "dense tags '<b>x</b>'": "<b>x</b>",
    "Korean summary": (
        '<p class="lead">수익률 3% &lt; 5% 그리고 7 &gt; 2 전망 <a href="https://n.test/a?b=1&amp;c=2">'
        "기사 보기</a><br/><!-- 광고 --><script>var a = 1 < 2;</script></p>"
    ),
}

# The summary handling before issue 22 (newsdesk.collect.parse at 619ecd6).
_TAGS_BEFORE = re.compile(r"<[^>]+>")
_HIDDEN_BEFORE = re.compile(
    r"<(script|style)\b.*?(?:</\1\s*>|\Z)|<!--.*?(?:-->|\Z)", re.IGNORECASE | re.DOTALL
)
_SAFE_ENTITY_BEFORE = re.compile(rb'<!ENTITY\s+[A-Za-z_][\w.-]*\s+"(?:&#\w+;|[^&%"]*)"\s*>')
_ENTITY_DECLARATION_BEFORE = re.compile(rb"<!ENTITY[^>]*>")


def html_text_before(html: str) -> str:
    if "<" in html:
        html = _TAGS_BEFORE.sub(" ", _HIDDEN_BEFORE.sub(" ", html))
    return unescape(html) if "&" in html else html


def cpu(action: Callable[..., object], *args: object) -> float:
    started = time.process_time()
    action(*args)
    return time.process_time() - started


def until(action: Callable[..., object], texts: list[str] | list[bytes], limit: float) -> list[str]:
    """CPU seconds of ``action`` on each text in turn, "-" for those after one passed ``limit``
    (the old code grows as the square: the next would take hours)."""
    seconds: list[str] = []
    for text in texts:
        if seconds and (seconds[-1] == "-" or float(seconds[-1]) > limit):
            seconds.append("-")
            continue
        seconds.append(f"{cpu(action, text):.3f}")
    return seconds


def summaries(sizes: list[float], before_limit: float) -> None:
    print("summary text: CPU seconds (after | before)")
    header = "".join(f"{size:>9g} MB" for size in sizes)
    print(f"  {'input':<26}{header}")
    for name, unit in PATTERNS.items():
        texts = [unit * int(size * MB / len(unit.encode())) for size in sizes]
        after = [cpu(html_text, text) for text in texts]
        before = until(html_text_before, texts, before_limit)
        print(f"  {name:<26}" + "".join(f"{seconds:>12.3f}" for seconds in after))
        print(f"  {'  before':<26}" + "".join(f"{value:>12}" for value in before))
    print(f"  (before: '-' once a run passed {before_limit:g} s; it grows as the square)")


def entity_feed() -> bytes:
    value = "가" * 400_000
    return (
        f'<?xml version="1.0" encoding="utf-8"?><!DOCTYPE rss [<!ENTITY big "{value}">]>'
        '<rss version="2.0"><channel><title>t</title><item>'
        f"<title>{'&big;' * 30}</title><link>https://n.test/1</link></item></channel></rss>"
    ).encode()


def parse_before(content: bytes) -> int:
    defused = defused_before(content)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed = feedparser.parse(defused, sanitize_html=False, resolve_relative_uris=False)
    return max(len(entry.get("title", "")) for entry in parsed.entries)


def parse_after(content: bytes) -> int:
    return max(len(entry.title) for entry in parse_feed(content).entries)


def peak(action: Callable[[bytes], int], content: bytes) -> tuple[int, int, float]:
    """(peak bytes allocated, the action's result, CPU seconds without tracing)"""
    seconds = cpu(action, content)
    tracemalloc.start()
    try:
        result = action(content)
        return tracemalloc.get_traced_memory()[1], result, seconds
    finally:
        tracemalloc.stop()


def defused_before(content: bytes) -> bytes:
    return _ENTITY_DECLARATION_BEFORE.sub(
        lambda m: m.group(0) if _SAFE_ENTITY_BEFORE.fullmatch(m.group(0)) else b"", content
    )


def unclosed(sizes: list[float], before_limit: float) -> None:
    print("\nentity declarations never closed ('<!ENTITY x ' runs): CPU seconds (after | before)")
    texts = [b"<!ENTITY x " * int(size * MB / 11) for size in sizes]
    after = [cpu(without_unsafe_entities, text) for text in texts]
    before = until(defused_before, texts, before_limit)
    print(f"  {'size':<26}" + "".join(f"{size:>9g} MB" for size in sizes))
    print(f"  {'after':<26}" + "".join(f"{seconds:>12.3f}" for seconds in after))
    print(f"  {'before':<26}" + "".join(f"{value:>12}" for value in before))


def entities() -> None:
    content = entity_feed()
    parse_feed(b"<rss version='2.0'><channel/></rss>")  # imports and compiles first
    print(f"\nentities: a {len(content) / MB:.2f} MB feed, one entity used 30 times in a title")
    for name, action in (("before", parse_before), ("after", parse_after)):
        allocated, longest, seconds = peak(action, content)
        print(
            f"  {name:<7} peak {allocated / MB:8.1f} MB allocated, longest title"
            f" {longest:>10,} characters, {seconds:.2f} s CPU"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0.25,0.5,1,2,4", help="MB, comma-separated")
    parser.add_argument("--before-limit", type=float, default=4.0, help="seconds")
    args = parser.parse_args()
    sizes = [float(size) for size in args.sizes.split(",")]
    summaries(sizes, args.before_limit)
    entities()
    unclosed(sizes, args.before_limit)


if __name__ == "__main__":
    main()
