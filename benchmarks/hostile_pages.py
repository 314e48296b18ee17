"""The judge path's CPU on hostile pages at the size cap (issue 39, point 8).

Run from the repository root (it imports ``tests`` as a package):

    .venv/bin/python -m benchmarks.hostile_pages
    .venv/bin/python -m benchmarks.hostile_pages --shape "nested <div> 100,000 deep" --rounds 3

Each shape of tests/hostile_shapes.py (a 2 MiB page, less a kilobyte, its article after the
hostile part) goes through ``PageExtractor.judge``, what the extractor calls on a fetched
page: the type check, decoding, ``extract_text``, ``judge_page`` and, for an article, its copy
keys; the store is a stand-in that keeps what would be recorded. An ordinary page (the
article alone) comes first, for comparison.

Printed per shape: the page's size, the CPU seconds (process time, the least of ``--rounds``,
after a warm-up), the outcome and reason recorded, its ``text_chars``, and how many of the
article's three paragraphs, after the hostile part, are in the text kept. ``--at-budget`` takes
each shape at the largest size the extractor still reads (``text.ELEMENT_BUDGET``; the cap when
it reads the page whole), found by bisection: the most CPU a page of that shape can cost.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from newsdesk.collect.fetch import FetchPolicy
from newsdesk.core.breaker import BreakerPolicy
from newsdesk.extract.extractor import ArticleReport, ExtractPolicy, PageExtractor
from newsdesk.storage.extractions import Extraction, PendingArticle
from tests.hostile_shapes import ARTICLE, SHAPES, SIZE, URL, article, shell


@dataclass
class KeptStore:
    """What ``PageExtractor.judge`` asks of the store, keeping the last record, finding no
    copies."""

    recorded: list[Extraction] = field(default_factory=list)

    def record(
        self, extraction: Extraction, *args: Any, **kwargs: Any
    ) -> tuple[Extraction, list[int]]:
        self.recorded.append(extraction)
        return extraction, []

    def by_key(self, *args: Any) -> set[int]:
        return set()

    def by_hash(self, *args: Any) -> set[int]:
        return set()

    def near_candidates(self, *args: Any) -> dict[int, list[int]]:
        return {}


def extractor(store: KeptStore) -> PageExtractor:
    policy = ExtractPolicy(
        fetch=FetchPolicy(10, 2 * 1024 * 1024, "newsdesk-benchmark", False),
        min_chars=120,
        host_interval_seconds=0,
        host_max_failures=3,
        max_attempts=3,
        retry_after=timedelta(minutes=30),
        breaker=BreakerPolicy(cooldown=timedelta(minutes=30)),
        retention=timedelta(days=30),
    )
    return PageExtractor(policy, store, states=None)  # type: ignore[arg-type]


def judged(content: bytes, rounds: int) -> tuple[float, Extraction]:
    """The least CPU seconds of ``rounds`` judgements of ``content``, and what was recorded."""
    store = KeptStore()
    pages = extractor(store)
    article_ = PendingArticle(1, 1, URL, URL, "한빛일보", "시내버스 노선 개편", None, 0)
    best = float("inf")
    for _ in range(rounds):
        report = ArticleReport(1, 1, URL, "news.example.kr", "")
        started = time.process_time()
        pages.judge(article_, report, content, "text/html; charset=utf-8", URL, 200, None)
        best = min(best, time.process_time() - started)
    return best, store.recorded[-1]


def largest_read(build: Callable[[int], str]) -> int:
    """The largest size (bytes, to about 1 kB) at which ``build``'s page is read rather than
    judged ``too_complex``: the most work of that shape the extractor takes on."""
    from newsdesk.extract.text import _load, _prepared_within_budget

    def read(size: int) -> bool:
        tree = _load(build(size))
        return tree is None or _prepared_within_budget(tree)

    low, high = 4096, SIZE
    if read(high):
        return high
    while high - low > 1024:
        middle = (low + high) // 2
        low, high = (middle, high) if read(middle) else (low, middle)
    return low


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", action="append", help="only this shape (repeatable)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--at-budget",
        action="store_true",
        help="each shape at the largest size still read (ELEMENT_BUDGET), not at the cap",
    )
    args = parser.parse_args()
    judged(shell("", article()).encode(), 1)  # imports, the public suffix list, justext's lists
    shapes: dict[str, Callable[[int], str]] = {"ordinary page": lambda _: shell("", article())}
    shapes |= {name: build for name, build in SHAPES.items() if name in (args.shape or SHAPES)}
    print(f"{'shape':<30} {'kB':>6} {'CPU s':>7}  {'outcome':<28} {'chars':>7} article")
    total = 0.0
    for name, build in shapes.items():
        content = build(largest_read(build) if args.at_budget else SIZE).encode()
        seconds, kept = judged(content, args.rounds)
        total += seconds
        outcome = kept.status + (f" ({kept.reason})" if kept.reason else "")
        found = sum(paragraph in (kept.text or "") for paragraph in ARTICLE)
        print(
            f"{name:<30} {len(content) // 1024:>6} {seconds:>7.3f}  {outcome:<28}"
            f" {kept.chars:>7} {found}/{len(ARTICLE)}",
            flush=True,
        )
    print(f"{'total':<30} {'':>6} {total:>7.3f}")


if __name__ == "__main__":
    main()
