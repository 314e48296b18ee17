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
from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from newsdesk.cluster.methods import Assignment, Group, Standing
from newsdesk.cluster.vectors import centrality, representative, similar_pairs, word_vectors


def seed_groups(
    titles: Sequence[str],
    threshold: float,
    min_size: int,
    taken: np.ndarray,
    standing: Standing | None = None,
) -> Assignment:
    """``taken`` flags titles that shape the vectors but cannot be gathered again.

    With ``standing`` (issue 15), free titles first join the open issue whose leader (the
    title that gathered it) they are most similar to, at or above the threshold; the greedy
    pass then runs over the titles still free, so within a run its groups are the seed's.
    A re-run joins nothing more: a free title as similar as that to a leader would have been
    gathered by it (the leader takes all its free neighbours).
    """
    vectors = word_vectors(titles)
    is_taken = taken.copy()
    joins = _join(vectors, is_taken, standing, threshold) if standing else {}
    if threshold <= 0:
        # Cosines of TF-IDF vectors are never negative: the first free title gathers all.
        free = np.flatnonzero(~is_taken)
        if len(free) < min_size:
            return Assignment([], joins)
        gathered = [Group(free.tolist(), representative(vectors, free), int(free[0]))]
        return _measured(vectors, Assignment(gathered, joins), standing)
    if vectors.nnz == 0:
        return _measured(vectors, Assignment([], joins), standing)
    indptr, indices = similar_pairs(vectors, threshold)
    groups: list[Group] = []
    for i in range(len(titles)):
        if is_taken[i]:
            continue
        neighbours = indices[indptr[i] : indptr[i + 1]]
        members = neighbours[~is_taken[neighbours]]
        if len(members) >= min_size:
            members.sort()
            is_taken[members] = True
            groups.append(Group(members.tolist(), representative(vectors, members), i))
    return _measured(vectors, Assignment(groups, joins), standing)


def _measured(
    vectors: sp.csr_matrix, assignment: Assignment, standing: Standing | None
) -> Assignment:
    """``assignment`` with the centrality of its groups' and growing issues' members."""
    sets = [g.members for g in assignment.groups]
    if standing is not None and assignment.joins:
        stored: dict[int, list[int]] = {issue: [] for issue in assignment.joins}
        for i, of in enumerate(standing.issue_of):
            if of in stored:
                stored[of].append(i)
        sets += [sorted(stored[issue] + joined) for issue, joined in assignment.joins.items()]
    return replace(assignment, centrality=centrality(vectors, sets))


def _join(
    vectors: sp.csr_matrix, taken: np.ndarray, standing: Standing, threshold: float
) -> dict[int, list[int]]:
    """Each free title that is at least ``threshold`` similar to an open issue's leader joins
    the most similar one (the lowest issue id among equals); marks them taken."""
    leaders = sorted((issue, index) for issue, index in standing.open.items() if index >= 0)
    free = np.flatnonzero(~taken)
    if not leaders or not len(free) or vectors.nnz == 0:
        return {}
    similarity = (vectors[free] @ vectors[[index for _, index in leaders]].T).tocsr()
    joins: dict[int, list[int]] = {}
    for row, title in enumerate(free.tolist()):
        start, stop = similarity.indptr[row], similarity.indptr[row + 1]
        best, best_similarity = -1, threshold
        for column, value in zip(
            similarity.indices[start:stop].tolist(),
            similarity.data[start:stop].tolist(),
            strict=True,
        ):
            if value > best_similarity or (
                value == best_similarity and (best < 0 or column < best)
            ):
                best, best_similarity = column, value
        if best >= 0:
            joins.setdefault(leaders[best][0], []).append(title)
            taken[title] = True
    return joins
