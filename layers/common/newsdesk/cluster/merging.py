"""Groups of one story found apart (issue 24). The pass places each title by its similarity to
the groups formed before it, so a story whose first titles were told two ways can start two
groups, which grow side by side and are never compared. After the headline method's pass, a
new group whose members are on average as similar to another group's members as a title must
be to a centroid to join it (average linkage, ``Σa · Σb / (|a| |b|)``, at least the join
threshold of each group's first title: 0.30 with Hangul, 0.20 without) is folded into that
group, a new one or an open issue's, the most similar pairs first. Pairs are scored between
the pass's groups and not again as sets grow, so a set takes any group one of its groups is
close to (single linkage over the groups' average linkage), and the idle window (no merge of
groups more than it apart) is asked of each pair. Two issues are never folded into one. A new
group folded into an issue's group is titles joining that issue. No number of its own: the
thresholds are the pass's (tried with 0.2 for every title, the small-vocabulary set lost 0.01
at 5,000 and 20,000 titles, paired intervals below zero; with centroids' cosine at 0.5, 0.24
at 20,000)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from newsdesk.cluster.vectors import Similar, between_groups


def merge_groups(
    vectors: Similar,
    members: list[list[int]],
    issue: Sequence[int],
    live: Sequence[bool],
    times: Sequence[float] | None,
    idle_seconds: float,
    thresholds: Sequence[float],
) -> list[list[int]]:
    """``members`` with every merged group's members moved (ascending) into the group it was
    folded into and the group left empty. ``live``: the groups that may merge (new ones of at
    least the minimum size, open issues'); ``thresholds``: each title's join threshold; two
    groups merge only if neither's newest member is more than ``idle_seconds`` before the
    other's first."""
    chosen = [g for g in range(len(members)) if live[g] and members[g]]
    if len(chosen) < 2:
        return members
    folds = _Folds([issue[g] >= 0 for g in chosen])
    floors = [thresholds[members[g][0]] for g in chosen]
    at = [0.0] * vectors.shape[0] if times is None else times
    spans = [(min(at[i] for i in members[g]), max(at[i] for i in members[g])) for g in chosen]
    for a, b in _similar_pairs(vectors, [members[g] for g in chosen], floors):
        (first_a, last_a), (first_b, last_b) = spans[a], spans[b]
        if max(first_a - last_b, first_b - last_a) <= idle_seconds:
            folds.join(a, b)
    out = [list(m) for m in members]
    for k, g in enumerate(chosen):
        into = chosen[folds.find(k)]
        if into != g:
            out[into] += out[g]
            out[g] = []
    for g in chosen:
        out[g].sort()
    return out


class _Folds:
    """Union-find over the groups that may merge, a set with an issue never joining another
    with one; a set is kept by its issue's group, else by its first group."""

    def __init__(self, has_issue: list[bool]) -> None:
        self.root = list(range(len(has_issue)))
        self.has_issue = has_issue

    def find(self, k: int) -> int:
        while self.root[k] != k:
            self.root[k] = self.root[self.root[k]]
            k = self.root[k]
        return k

    def join(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb or (self.has_issue[ra] and self.has_issue[rb]):
            return
        if self.has_issue[rb] or (not self.has_issue[ra] and rb < ra):
            ra, rb = rb, ra
        self.root[rb] = ra
        self.has_issue[ra] = self.has_issue[ra] or self.has_issue[rb]


def _similar_pairs(
    vectors: Similar, groups: list[list[int]], floors: list[float]
) -> list[tuple[int, int]]:
    """Pairs of groups (positions in ``groups``) whose members are on average at least both
    groups' ``floors`` similar, the most similar first (ties by position)."""
    sizes = [len(m) for m in groups]
    inverse = sp.diags(1.0 / np.asarray(sizes, dtype=np.float64))
    similar = sp.triu(inverse @ between_groups(vectors, groups) @ inverse, k=1).tocoo()
    floor = np.asarray(floors)
    close = similar.data >= np.maximum(floor[similar.row], floor[similar.col])
    rows, cols, values = similar.row[close], similar.col[close], similar.data[close]
    order = np.lexsort((cols, rows, -values))
    return [(int(rows[k]), int(cols[k])) for k in order]
