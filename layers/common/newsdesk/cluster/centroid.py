"""The centroid method: one pass in order, each headline joining the group whose centroid is
most similar to it (if that is at least the threshold), else starting a group of its own.

Headlines are compared as character n-grams (``char_wb``, 2–4), which match across Korean
particles ("폭설에" / "폭설로") and English inflections where word tokens do not; news tags such
as ``[속보]``, ``[단독]``, ``(종합)``, ``[포토]`` are removed first. A group idle for longer than
``WINDOW_SECONDS`` (by ``times``) takes no new members, so yesterday's event does not swallow
today's.

Scale: no N×N matrix. Candidate groups for a headline are those of earlier headlines that share
enough of its less common n-grams with it (found by the block-wise sparse product
on the columns that at most ``RARE_SHARE`` of them have), at most ``MAX_CANDIDATES`` of them
(those with the most such neighbours); its similarity to each candidate's centroid is then
exact, ``x · Σ members / ‖Σ members‖``, from a running sum and squared norm per group.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from newsdesk.cluster.methods import Group
from newsdesk.cluster.vectors import centroid_vectors, representative, similar_pairs

WINDOW_SECONDS = 12 * 3600
# Columns that at most this share of headlines have (within RARE_MINIMUM…RARE_MAXIMUM) find
# candidates;
# pairs below CANDIDATE_SIMILARITY on those columns alone are not candidates.
RARE_SHARE = 0.1
RARE_MINIMUM = 50
RARE_MAXIMUM = 1000  # for large windows: a column in more headlines finds too many pairs
CANDIDATE_SIMILARITY = 0.05
# At most this many candidate groups, those with the most neighbouring earlier headlines, are
# compared exactly.
MAX_CANDIDATES = 12

_TAG = r"[\[\(<【〈《][^\]\)>】〉》]{1,12}[\]\)>】〉》]"
_LEADING_TAGS = re.compile(rf"^\s*(?:{_TAG}\s*)+")
_TRAILING_TAGS = re.compile(rf"(?:\s*{_TAG})+\s*$")


def strip_tags(title: str) -> str:
    """``[속보] 기준금리 동결(종합2보)`` → ``기준금리 동결``; a title that is only tags stays."""
    stripped = _TRAILING_TAGS.sub("", _LEADING_TAGS.sub("", title)).strip()
    return stripped or title.strip()


def centroid_groups(
    titles: Sequence[str],
    threshold: float,
    min_size: int,
    taken: np.ndarray,
    times: Sequence[float] | None = None,
    analyser: str = "char",
) -> list[Group]:
    """Each group of at least ``min_size``, in the order the groups were started."""
    n = len(titles)
    vectors = centroid_vectors([strip_tags(t) for t in titles], analyser)
    indptr, indices = similar_pairs(_rare_columns(vectors), CANDIDATE_SIMILARITY)
    group_of = np.full(n, -1, dtype=np.int64)
    members: list[list[int]] = []
    sums: list[dict[int, float]] = []  # each group's summed vector, by column
    norm2: list[float] = []  # and its squared length
    last_seen: list[float] = []
    self_norm2 = np.asarray(vectors.multiply(vectors).sum(axis=1)).ravel()
    for i in range(n):
        if taken[i]:
            continue
        now = float(times[i]) if times is not None else 0.0
        earlier = indices[indptr[i] : indptr[i + 1]]
        groups, counts = np.unique(group_of[earlier[earlier < i]], return_counts=True)
        ranked = [
            int(g)
            for g in groups[np.argsort(-counts, kind="stable")]
            if g >= 0 and (times is None or now - last_seen[g] <= WINDOW_SECONDS)
        ]
        start, stop = vectors.indptr[i], vectors.indptr[i + 1]
        row = list(
            zip(
                vectors.indices[start:stop].tolist(), vectors.data[start:stop].tolist(), strict=True
            )
        )
        best, best_dot = _nearest(row, ranked[:MAX_CANDIDATES], sums, norm2, threshold)
        if best < 0:
            best = len(members)
            members.append([i])
            sums.append(dict(row))
            norm2.append(float(self_norm2[i]))
            last_seen.append(now)
        else:
            members[best].append(i)
            summed = sums[best]
            for column, weight in row:
                summed[column] = summed.get(column, 0.0) + weight
            norm2[best] += 2 * best_dot + float(self_norm2[i])
            last_seen[best] = now
        group_of[i] = best
    return [
        Group(group, representative(vectors, group)) for group in members if len(group) >= min_size
    ]


def _nearest(
    row: list[tuple[int, float]],
    candidates: list[int],
    sums: list[dict[int, float]],
    norm2: list[float],
    threshold: float,
) -> tuple[int, float]:
    """The candidate group whose centroid is most similar to ``row`` (at least ``threshold``),
    with ``row · Σ members``; (-1, 0) when there is none."""
    best, best_similarity, best_dot = -1, threshold, 0.0
    for group in candidates:
        summed = sums[group]
        dot = sum(weight * summed.get(column, 0.0) for column, weight in row)
        similarity = dot / norm2[group] ** 0.5 if norm2[group] > 0 else 0.0
        if similarity >= best_similarity and (best < 0 or similarity > best_similarity):
            best, best_similarity, best_dot = group, similarity, dot
    return best, best_dot


def _rare_columns(vectors: sp.csr_matrix) -> sp.csr_matrix:
    frequency = np.diff(vectors.tocsc().indptr)
    cap = min(RARE_MAXIMUM, max(RARE_MINIMUM, int(RARE_SHARE * vectors.shape[0])))
    return vectors[:, np.flatnonzero(frequency <= cap)].tocsr()
