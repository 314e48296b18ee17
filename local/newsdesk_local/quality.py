"""Clustering quality against labelled stories: pairwise and B-cubed precision / recall / F1,
adjusted Rand index, the share of headlines placed in an issue, the number of issues and how
many issues a story is split into. Headlines not in a group (of at least the minimum size)
count as singletons.

The figures are pooled over whatever the items span: pairs are counted over every item at once,
so for issues that never cross a category they are the sum of each category's pairs, provided
the gold labels do not cross categories either (key them by category and story to make sure)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TypeVar


@dataclass(frozen=True)
class Scores:
    pairwise_precision: float
    pairwise_recall: float
    pairwise_f1: float
    bcubed_precision: float
    bcubed_recall: float
    bcubed_f1: float
    adjusted_rand: float
    placed_share: float
    issues: int
    # each issue counts for the story most of its items belong to: issues per such story
    issues_per_story: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def _f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _pairs(count: int) -> int:
    return count * (count - 1) // 2


K = TypeVar("K", bound=Hashable)


def score(gold: Mapping[K, Hashable], groups: Sequence[Sequence[K]]) -> Scores:
    """``gold``: every item's true story; ``groups``: the predicted issues (items not in one
    are singletons)."""
    predicted: dict[K, Hashable] = {item: ("single", item) for item in gold}
    for number, group in enumerate(groups):
        for item in group:
            predicted[item] = ("issue", number)
    cells = Counter((predicted[item], gold[item]) for item in gold)
    cluster_sizes = Counter(predicted.values())
    story_sizes = Counter(gold.values())
    true_pairs = sum(_pairs(n) for n in cells.values())
    predicted_pairs = sum(_pairs(n) for n in cluster_sizes.values())
    gold_pairs = sum(_pairs(n) for n in story_sizes.values())
    precision = true_pairs / predicted_pairs if predicted_pairs else 1.0
    recall = true_pairs / gold_pairs if gold_pairs else 1.0
    # B-cubed: per item, its cluster's and its story's overlap, averaged (Bagga & Baldwin).
    total = len(gold)
    b_precision = sum(n * n / cluster_sizes[c] for (c, _), n in cells.items()) / total
    b_recall = sum(n * n / story_sizes[s] for (_, s), n in cells.items()) / total
    placed = sum(len(group) for group in groups)
    return Scores(
        pairwise_precision=precision,
        pairwise_recall=recall,
        pairwise_f1=_f1(precision, recall),
        bcubed_precision=b_precision,
        bcubed_recall=b_recall,
        bcubed_f1=_f1(b_precision, b_recall),
        adjusted_rand=_adjusted_rand(cells, cluster_sizes, story_sizes, total),
        placed_share=placed / total if total else 0.0,
        issues=len(groups),
        issues_per_story=_issues_per_story(gold, groups),
    )


def _issues_per_story(gold: Mapping[K, Hashable], groups: Sequence[Sequence[K]]) -> float:
    """The issues divided by the stories that at least one issue counts for (0 without
    issues). A tie goes to the tied story the issue lists first."""
    stories = {
        Counter(gold[item] for item in group).most_common(1)[0][0] for group in groups if group
    }
    return len(groups) / len(stories) if stories else 0.0


def _adjusted_rand(
    cells: Counter[tuple[Hashable, Hashable]],
    cluster_sizes: Counter[Hashable],
    story_sizes: Counter[Hashable],
    total: int,
) -> float:
    """Hubert and Arabie's ARI from the contingency table."""
    index = sum(_pairs(n) for n in cells.values())
    a = sum(_pairs(n) for n in cluster_sizes.values())
    b = sum(_pairs(n) for n in story_sizes.values())
    expected = a * b / _pairs(total) if total > 1 else 0.0
    maximum = (a + b) / 2
    if maximum == expected:
        return 1.0
    return (index - expected) / (maximum - expected)
