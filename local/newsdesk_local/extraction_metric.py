"""The article-extraction benchmark's metric (shared/data/article-extraction/README.md).

Both texts are split into ``\\w+`` tokens and formed into 4-token shingles (a text shorter than
4 tokens is one shingle; an empty text has none). Per page, true positives are the shingles both
sides share, counted with repeats (the smaller count), false positives and false negatives the
excess on either side, the three normalised to sum to 1. Precision is the mean over pages of
tp/(tp+fp), recall the mean of tp/(tp+fn) (both 1 on a page with neither fp nor fn, both 0 on
one with no tp), and F1 = 2PR/(P+R) of those two means.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

SHINGLE_SIZE = 4
_TOKEN = re.compile(r"\w+", re.UNICODE)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text or "")


def shingles(text: str, n: int = SHINGLE_SIZE) -> Counter[str]:
    """The n-token shingles of ``text`` with their counts; fewer than n tokens make one."""
    words = tokens(text)
    if not words:
        return Counter()
    return Counter(" ".join(words[i : i + n]) for i in range(max(1, len(words) - n + 1)))


@dataclass(frozen=True, slots=True)
class PageScore:
    """One page's tp, fp and fn, normalised to sum to 1 (all 0 when both texts are empty)."""

    tp: float
    fp: float
    fn: float

    @property
    def precision(self) -> float:
        if self.fp == 0 and self.fn == 0:
            return 1.0
        if self.tp == 0:
            return 0.0
        return self.tp / (self.tp + self.fp)

    @property
    def recall(self) -> float:
        if self.fp == 0 and self.fn == 0:
            return 1.0
        if self.tp == 0:
            return 0.0
        return self.tp / (self.tp + self.fn)


def score_page(true: str, predicted: str) -> PageScore:
    want, got = shingles(true), shingles(predicted)
    tp = sum((want & got).values())
    fp = sum((got - want).values())
    fn = sum((want - got).values())
    total = tp + fp + fn
    if total == 0:
        return PageScore(0.0, 0.0, 0.0)
    return PageScore(tp / total, fp / total, fn / total)


@dataclass(frozen=True, slots=True)
class Quality:
    precision: float
    recall: float
    pages: int

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def quality(pairs: Iterable[tuple[str, str]]) -> Quality:
    """The benchmark's precision, recall (means over pages) and F1 for (true, predicted) pairs."""
    scores = [score_page(true, predicted) for true, predicted in pairs]
    if not scores:
        return Quality(0.0, 0.0, 0)
    n = len(scores)
    return Quality(sum(s.precision for s in scores) / n, sum(s.recall for s in scores) / n, n)
