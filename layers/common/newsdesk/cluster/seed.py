"""The seed's method: TF-IDF over title words, cosine similarity, and the greedy pass — in id
order, each free title with at least ``min_size`` free neighbours at or above the threshold
(itself among them) takes them all as one group.

The seed builds the dense N×N similarity matrix and walks it row by row in Python; here the
greedy pass reads each row's short neighbour list from ``similar_pairs``. The groups are
exactly the seed's: the vectors are sklearn's, normalised as ``cosine_similarity`` normalises
them, and each similarity is the same sum of products in the same order (Gustavson's
row-by-row product, in scipy as in sklearn), so every comparison with the threshold comes out
the same.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from newsdesk.cluster.methods import Group
from newsdesk.cluster.vectors import representative, similar_pairs, word_vectors


def seed_groups(
    titles: Sequence[str], threshold: float, min_size: int, taken: np.ndarray
) -> list[Group]:
    """``taken`` flags titles that shape the vectors but cannot be gathered again."""
    vectors = word_vectors(titles)
    if threshold <= 0:
        # Cosines of TF-IDF vectors are never negative: the first free title gathers all.
        free = np.flatnonzero(~taken)
        if len(free) < min_size:
            return []
        return [Group(free.tolist(), representative(vectors, free))]
    if vectors.nnz == 0:
        return []
    indptr, indices = similar_pairs(vectors, threshold)
    is_taken = taken.copy()
    groups: list[Group] = []
    for i in range(len(titles)):
        if is_taken[i]:
            continue
        neighbours = indices[indptr[i] : indptr[i + 1]]
        members = neighbours[~is_taken[neighbours]]
        if len(members) >= min_size:
            members.sort()
            is_taken[members] = True
            groups.append(Group(members.tolist(), representative(vectors, members)))
    return groups
