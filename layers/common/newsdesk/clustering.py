"""Issue clustering: the seed's greedy groups over TF-IDF cosine similarity of titles.

The seed builds the dense N×N similarity matrix and walks it row by row in Python. Here only
the pairs at or above the threshold are kept: the normalised TF-IDF matrix is multiplied by its
transpose one block of rows at a time (sizes chosen so that a block's product stays under a
fixed number of entries), and the greedy pass reads each row's short neighbour list. Memory
grows with the number of similar pairs, not with N².

The groups are exactly the seed's: the vectors are sklearn's, normalised as
``cosine_similarity`` normalises them, and each similarity is the same sum of products in the
same order (Gustavson's row-by-row product, in scipy as in sklearn), so every comparison with
the threshold comes out the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.preprocessing import normalize

METHODS = ("seed", "centroid")
# Each method's threshold, chosen by a sweep on the labelled UCI sample
# (benchmarks/cluster_quality.py --sweep); the seed's is the seed's.
DEFAULT_THRESHOLDS = {"seed": 0.60, "centroid": 0.15}

TOKEN_PATTERN = r"(?u)\b\w\w+\b"  # noqa: S105  (the seed's tokens, not a secret)
# Upper bound on the entries of one block's product (about 12 bytes each before thresholding).
BLOCK_PRODUCT_ENTRIES = 4_000_000


@dataclass(frozen=True)
class Group:
    members: list[int]
    representative: int  # the member most similar to the others


def cluster_titles(
    titles: Sequence[str], threshold: float = 0.6, min_size: int = 3, method: str = "seed"
) -> list[list[int]]:
    """Groups of indices into ``titles``, ascending, in the order they are found. ``method``
    is one of ``METHODS``; each has its recommended threshold in ``DEFAULT_THRESHOLDS``."""
    return [group.members for group in find_groups(titles, threshold, min_size, method=method)]


def find_groups(
    titles: Sequence[str],
    threshold: float = 0.6,
    min_size: int = 3,
    taken: Sequence[bool] | None = None,
    method: str = "seed",
    times: Sequence[float] | None = None,
) -> list[Group]:
    """``taken`` marks titles that count for the vectors (their words shape the IDF) but are
    already in an issue and cannot be gathered again. ``times`` (seconds, ascending) lets the
    centroid method forget groups idle for longer than its window."""
    if min_size < 1:
        raise ValueError("min_size must be at least 1")
    if method not in METHODS:
        raise ValueError(f"unknown clustering method {method!r}; expected one of {METHODS}")
    n = len(titles)
    is_taken = np.zeros(n, dtype=bool) if taken is None else np.array(taken, dtype=bool)
    if is_taken.shape != (n,):
        raise ValueError("taken must have one flag per title")
    if n == 0:
        return []
    if method == "centroid":
        from newsdesk.centroid import centroid_groups

        found = centroid_groups(titles, threshold, min_size, is_taken, times)
        return [Group(members, representative) for members, representative in found]
    vectors = _vectors(titles)
    if threshold <= 0:
        # Cosines of TF-IDF vectors are never negative: the first free title gathers all.
        free = np.flatnonzero(~is_taken)
        members = free if len(free) >= min_size else None
        return [] if members is None else [_group(vectors, members)]
    if vectors.nnz == 0:
        return []
    indptr, indices = _similar_pairs(vectors, threshold)
    groups: list[Group] = []
    for i in range(n):
        if is_taken[i]:
            continue
        neighbours = indices[indptr[i] : indptr[i + 1]]
        free = neighbours[~is_taken[neighbours]]
        if len(free) >= min_size:
            free.sort()
            is_taken[free] = True
            groups.append(_group(vectors, free))
    return groups


def _vectors(titles: Sequence[str]) -> sp.csr_matrix:
    """Rows of unit length (zero rows for titles without a token), as cosine_similarity has them."""
    vectorizer = TfidfVectorizer(token_pattern=TOKEN_PATTERN)
    try:
        matrix = vectorizer.fit_transform(titles)
    except ValueError:  # no title has a token: the vocabulary is empty
        return sp.csr_matrix((len(titles), 1), dtype=np.float64)
    return normalize(matrix, copy=True).tocsr()


def _similar_pairs(vectors: sp.csr_matrix, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Each row's neighbours with similarity >= threshold, as CSR ``indptr`` and ``indices``."""
    transposed = vectors.T.tocsr()
    # A row's product has at most as many entries as its terms' document frequencies add up to.
    indicator = vectors.copy()
    indicator.data[:] = 1.0
    bound = indicator @ np.diff(transposed.indptr).astype(np.float64)
    counts = np.zeros(vectors.shape[0], dtype=np.int64)
    pieces: list[np.ndarray] = []
    start = 0
    for stop in _block_stops(bound):
        product = (vectors[start:stop] @ transposed).tocsr()
        keep = product.data >= threshold
        rows = np.repeat(np.arange(start, stop), np.diff(product.indptr))[keep]
        counts += np.bincount(rows, minlength=vectors.shape[0])
        pieces.append(product.indices[keep].astype(np.int32))
        start = stop
    indptr = np.concatenate(([0], np.cumsum(counts)))
    indices = np.concatenate(pieces) if pieces else np.empty(0, dtype=np.int32)
    return indptr, indices


def _block_stops(bound: np.ndarray) -> list[int]:
    stops: list[int] = []
    total = 0.0
    for row, entries in enumerate(bound):
        if total and total + entries > BLOCK_PRODUCT_ENTRIES:
            stops.append(row)
            total = 0.0
        total += entries
    stops.append(len(bound))
    return stops


def _group(vectors: sp.csr_matrix, members: np.ndarray) -> Group:
    # Each member's summed similarity to the group is its vector dotted with the group's sum.
    rows = vectors[members]
    summed = np.asarray(rows @ np.asarray(rows.sum(axis=0)).ravel()).ravel()
    return Group(members=members.tolist(), representative=int(members[int(np.argmax(summed))]))
