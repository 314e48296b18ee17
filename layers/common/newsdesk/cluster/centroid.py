"""The centroid method: one pass in order, each headline joining the group whose centroid is
most similar to it (if that is at least the threshold), else starting a group of its own.

Headlines are compared as character n-grams (``char_wb``, 2–4), which match across Korean
particles ("폭설에" / "폭설로") and English inflections where word tokens do not; news tags such
as ``[속보]``, ``[단독]``, ``(종합)``, ``[포토]`` are removed first. The n-grams are weighted by
sublinear term frequency without IDF (issue 15): two titles are as similar in a run over an
hour's articles as in one over a day's, so a run every 30 minutes makes the choices one run
over the whole stream would (benchmarks/cluster_quality.py). A group idle for longer than
``WINDOW_SECONDS`` (by ``times``) takes no new members, so yesterday's event does not swallow
today's.

Scale: no N×N matrix. Candidate groups for a headline are those of earlier headlines at least
``CANDIDATE_SIMILARITY`` similar to it (found by the block-wise sparse product); its
similarity to each candidate's centroid is then exact, ``x · Σ members / ‖Σ members‖``, from
a running sum and squared norm per group.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from newsdesk.cluster.headline import strip_tags as strip_tags  # its home before issue 24
from newsdesk.cluster.methods import Assignment, Group, Standing
from newsdesk.cluster.vectors import (
    centroid_vectors,
    pruned_neighbours,
    representative,
    similar_pairs,
)

WINDOW_SECONDS = 12 * 3600
# A group is a candidate for a headline when one of its members is at least this similar to
# it; below the join threshold (0.30), so that a centroid a little closer than every member
# is still found.
CANDIDATE_SIMILARITY = 0.2
# The headline method (issue 24): a title joins a group only if its mean similarity to the
# members is at least this, so that a big group's centroid, which leans toward the words all
# its members share, does not draw titles that share only those.
HEADLINE_MEAN_FLOOR = 0.2


def centroid_groups(
    titles: Sequence[str],
    threshold: float,
    min_size: int,
    taken: np.ndarray,
    times: Sequence[float] | None = None,
    standing: Standing | None = None,
    idle_seconds: float = WINDOW_SECONDS,
    analyser: str = "char",
    mean_floor: float = 0.0,
) -> Assignment:
    """New groups of at least ``min_size``, in the order they were started, and the free
    titles that join the open issues of ``standing``.

    An issue's titles (``standing.issue_of``) join its group where they stand in the order,
    whatever their similarity, so the pass builds each issue's centroid as the runs before it
    did; a free title may then join it like any group while the issue is open (a closed
    issue's group takes no one). A re-run over the same window makes every choice it made
    before: it creates and changes nothing. ``mean_floor``: a title joins only a group whose
    members it is at least this similar to on average (the ``headline`` method's guard
    against a big group's centroid).
    """
    n = len(titles)
    if analyser == "headline":  # its own normal form strips the tags
        vectors = centroid_vectors(titles, analyser)
        indptr, indices, _ = pruned_neighbours(vectors, CANDIDATE_SIMILARITY)
    else:
        vectors = centroid_vectors([strip_tags(t) for t in titles], analyser)
        indptr, indices = similar_pairs(vectors, CANDIDATE_SIMILARITY)
    issue_of = np.full(n, -1) if standing is None else np.asarray(standing.issue_of)
    open_issues = {} if standing is None else standing.open
    group_of = np.full(n, -1, dtype=np.int64)
    groups: list[_Group] = []
    by_issue: dict[int, int] = {}
    self_norm2 = np.asarray(vectors.multiply(vectors).sum(axis=1)).ravel()
    for i in range(n):
        issue = int(issue_of[i])
        if issue < 0 and taken[i]:
            continue
        now = float(times[i]) if times is not None else 0.0
        start, stop = vectors.indptr[i], vectors.indptr[i + 1]
        row = list(
            zip(
                vectors.indices[start:stop].tolist(), vectors.data[start:stop].tolist(), strict=True
            )
        )
        if issue >= 0:
            best = by_issue.get(issue, -1)
            if best < 0:
                best = by_issue[issue] = len(groups)
                groups.append(_Group(issue=issue, closed=issue not in open_issues))
            dot = groups[best].dot(row)
        else:
            earlier = indices[indptr[i] : indptr[i + 1]]
            candidates = [
                int(g)
                for g in np.unique(group_of[earlier[earlier < i]])
                if g >= 0
                and not groups[g].closed
                and (times is None or now - groups[g].last_seen <= idle_seconds)
            ]
            best, dot = _nearest(row, candidates, groups, threshold, mean_floor)
            if best < 0:
                best = len(groups)
                groups.append(_Group())
        groups[best].add(i, row, dot, float(self_norm2[i]), now)
        group_of[i] = best
    assignment = Assignment([])
    for group in groups:
        if group.issue >= 0:
            joined = [i for i in group.members if issue_of[i] < 0]
            if joined and not group.closed:
                assignment.joins[group.issue] = joined
        elif len(group.members) >= min_size:
            members = group.members
            assignment.groups.append(
                Group(members, representative(vectors, members), leader=members[0])
            )
    return assignment


class _Group:
    """A group of the pass: its members, summed vector (by column), squared length and the
    time of its newest member; ``issue`` is the stored issue it stands for (-1: none yet)."""

    def __init__(self, issue: int = -1, closed: bool = False) -> None:
        self.issue = issue
        self.closed = closed
        self.members: list[int] = []
        self.sums: dict[int, float] = {}
        self.norm2 = 0.0
        self.last_seen = float("-inf")

    def dot(self, row: list[tuple[int, float]]) -> float:
        return sum(weight * self.sums.get(column, 0.0) for column, weight in row)

    def add(
        self, index: int, row: list[tuple[int, float]], dot: float, norm2: float, now: float
    ) -> None:
        self.members.append(index)
        for column, weight in row:
            self.sums[column] = self.sums.get(column, 0.0) + weight
        self.norm2 += 2 * dot + norm2
        self.last_seen = max(self.last_seen, now)


def _nearest(
    row: list[tuple[int, float]],
    candidates: list[int],
    groups: list[_Group],
    threshold: float,
    mean_floor: float = 0.0,
) -> tuple[int, float]:
    """The candidate group whose centroid is most similar to ``row`` (at least ``threshold``,
    and ``row``'s mean similarity to its members at least ``mean_floor``), with ``row · Σ
    members``; (-1, 0) when there is none."""
    best, best_similarity, best_dot = -1, threshold, 0.0
    for candidate in candidates:
        group = groups[candidate]
        dot = group.dot(row)
        similarity = dot / group.norm2**0.5 if group.norm2 > 0 else 0.0
        if dot < mean_floor * len(group.members):
            continue
        if similarity >= best_similarity and (best < 0 or similarity > best_similarity):
            best, best_similarity, best_dot = candidate, similarity, dot
    return best, best_dot
