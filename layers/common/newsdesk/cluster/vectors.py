"""Title vectors and the similar pairs among them, shared by the clustering methods.

Only the pairs at or above a threshold are kept: the normalised TF-IDF matrix is multiplied by
its transpose one block of rows at a time (sizes chosen so that a block's product stays under a
fixed number of entries). Memory grows with the number of similar pairs, not with N².
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeAlias

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.preprocessing import normalize

TOKEN_PATTERN = r"(?u)\b\w\w+\b"  # noqa: S105  (the seed's tokens, not a secret)
# Upper bound on the entries of one block's product (about 12 bytes each before thresholding).
BLOCK_PRODUCT_ENTRIES = 4_000_000


def word_vectors(titles: Sequence[str]) -> sp.csr_matrix:
    """The seed's TF-IDF over word tokens, rows of unit length (zero rows for titles without a
    token), as ``cosine_similarity`` normalises them."""
    vectorizer = TfidfVectorizer(token_pattern=TOKEN_PATTERN)
    try:
        matrix = vectorizer.fit_transform(titles)
    except ValueError:  # no title has a token: the vocabulary is empty
        return _empty(len(titles))
    return normalize(matrix, copy=True).tocsr()


def char_vectors(titles: Sequence[str]) -> sp.csr_matrix:
    """Character n-grams within words (2–4), sublinear term frequency, no IDF (a title's
    vector does not depend on the others), rows of unit length."""
    vectorizer = TfidfVectorizer(
        analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True, use_idf=False
    )
    try:
        return vectorizer.fit_transform(titles).tocsr()
    except ValueError:  # nothing but blanks
        return _empty(len(titles))


ANALYSERS = ("char", "headline")


def centroid_vectors(titles: Sequence[str], analyser: str = "char") -> sp.csr_matrix:
    """The centroid method's title vectors, rows of unit length (zero rows for blank titles):
    ``"char"``, character n-grams (``char_vectors``); ``"headline"``, the normal form and
    n-grams of ``newsdesk.cluster.headline`` (issue 24). Kiwi's morphemes are not here: they
    are compared in ``newsdesk_local.korean`` (benchmarks and tests), not shipped."""
    if analyser == "char":
        return char_vectors(titles)
    if analyser == "headline":
        from newsdesk.cluster.headline import headline_vectors

        return headline_vectors(titles)
    raise ValueError(f"unknown analyser {analyser!r}; expected one of {ANALYSERS}")


def _empty(rows: int) -> sp.csr_matrix:
    return sp.csr_matrix((rows, 1), dtype=np.float64)


def similar_pairs(vectors: sp.csr_matrix, threshold: float) -> tuple[np.ndarray, np.ndarray]:
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


def representative(vectors: sp.csr_matrix, members: Sequence[int] | np.ndarray) -> int:
    """The member most similar to the group: each member's summed similarity to the others is
    its vector dotted with the group's sum."""
    rows = vectors[list(members)]
    summed = np.asarray(rows @ np.asarray(rows.sum(axis=0)).ravel()).ravel()
    return int(members[int(np.argmax(summed))])


def group_sums(vectors: sp.csr_matrix, groups: Sequence[Sequence[int]]) -> sp.csr_matrix:
    """Each group's members' vectors summed (groups by columns), as one product with a
    membership matrix."""
    return (_membership(groups, vectors.shape[0]) @ vectors).tocsr()


class Graph:
    """Similarities given outright rather than as dot products of title vectors: a sparse
    symmetric n×n matrix, each title's similarity to itself on the diagonal. The centroid
    pass, merging and ``representatives`` take it where they take vectors, reading it a block
    of rows at a time (``rows``), so that a graph whose rows are computed on demand (the
    meaning method's, issue 38) is never held whole: a title's summed similarity to a group is
    its row summed over the members."""

    def __init__(self, matrix: sp.spmatrix) -> None:
        self.matrix = sp.csr_matrix(matrix)
        self.shape: tuple[int, int] = self.matrix.shape

    def rows(self, start: int, stop: int) -> sp.csr_matrix:
        """Titles ``start`` … ``stop - 1``'s similarities to every title."""
        return self.matrix[start:stop]

    def earlier(self, start: int, stop: int) -> sp.csr_matrix:
        """Titles ``start`` … ``stop - 1``'s similarities to the titles before ``stop``."""
        return first_columns(self.rows(start, stop), stop)

    def entries(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Title ``i``'s similarities (``Rows.entries``)."""
        row = self.rows(i, i + 1)
        return row.indices, row.data

    def diagonal(self) -> np.ndarray:
        return np.asarray(self.matrix.diagonal(), dtype=np.float64)

    def between(self, membership: sp.csr_matrix) -> sp.csr_matrix:
        """The summed similarities of every pair of groups' members (``membership``: groups
        by titles), a block of rows at a time."""
        by_column = membership.tocsc()
        summed = sp.csr_matrix((membership.shape[0], self.shape[0]))
        for start, stop in self._spans():
            summed += by_column[:, start:stop] @ self.rows(start, stop)
        return (summed @ membership.T).tocsr()

    def to_own_group(
        self, membership: sp.csr_matrix, members: np.ndarray, group: np.ndarray
    ) -> np.ndarray:
        """Each of ``members``' row summed over its group's members (``group``: its row of
        ``membership``), a block of rows at a time."""
        to_groups_of = membership.T.tocsr()
        score = np.zeros(len(members))
        for start, stop in self._spans():
            at = np.flatnonzero((members >= start) & (members < stop))
            if len(at):
                to_groups = (self.rows(start, stop) @ to_groups_of).tocsr()
                score[at] = np.asarray(to_groups[members[at] - start, group[at]]).ravel()
        return score

    def _spans(self) -> list[tuple[int, int]]:
        n = self.shape[0]
        return [(start, min(n, start + GRAPH_ROWS)) for start in range(0, n, GRAPH_ROWS)]


# Title vectors, or similarities given outright.
Similar: TypeAlias = sp.csr_matrix | Graph
# Rows of a Graph read at once where all of it is summed (merging, representatives).
GRAPH_ROWS = 2048


def self_similarity(vectors: Similar) -> np.ndarray:
    """Each title's similarity to itself: its vector's squared length, or the diagonal."""
    if isinstance(vectors, Graph):
        return vectors.diagonal()
    return np.asarray(vectors.multiply(vectors).sum(axis=1), dtype=np.float64).ravel()


class Rows(Protocol):
    """The titles' similarities as a pass reads them: a block of rows at once, or one title's
    (a settling pass compares thousands of single titles again, and a sparse matrix costs
    more to make than their products)."""

    def rows(self, start: int, stop: int) -> sp.csr_matrix:
        """Titles ``start`` … ``stop - 1``'s similarities to every title."""
        ...

    def earlier(self, start: int, stop: int) -> sp.csr_matrix:
        """Titles ``start`` … ``stop - 1``'s similarities to the titles before ``stop`` (a
        ``stop - start`` × ``stop`` matrix): all a pass in order reads of them, about half the
        entries of ``rows``."""
        ...

    def entries(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Title ``i``'s similarities as columns and values, a column possibly more than once
        (its values add up)."""
        ...


class _Products:
    """Title vectors' products over the n-grams two titles share."""

    def __init__(self, vectors: sp.csr_matrix) -> None:
        frequency = np.bincount(vectors.indices, minlength=vectors.shape[1])
        shared = np.flatnonzero(frequency > 1)
        self.left = vectors if len(shared) == vectors.shape[1] else vectors[:, shared].tocsr()
        self.right = self.left.T.tocsr()

    def rows(self, start: int, stop: int) -> sp.csr_matrix:
        return (self.left[start:stop] @ self.right).tocsr()

    def earlier(self, start: int, stop: int) -> sp.csr_matrix:
        return first_columns(self.rows(start, stop), stop)

    def entries(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        return row_entries(self.left, self.right, i)


def product_rows(vectors: Similar) -> Rows:
    """The titles' similarities as a pass reads them: the vectors' products, or the graph."""
    return vectors if isinstance(vectors, Graph) else _Products(vectors)


def first_columns(matrix: sp.csr_matrix, stop: int) -> sp.csr_matrix:
    """``matrix[:, :stop]``, by one mask over its entries."""
    if stop >= matrix.shape[1]:
        return matrix
    kept = matrix.indices < stop
    return sp.csr_matrix(
        (matrix.data[kept], matrix.indices[kept], kept_indptr(matrix.indptr, kept)),
        shape=(matrix.shape[0], stop),
    )


def kept_indptr(indptr: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """A CSR matrix's ``indptr`` once only the entries flagged ``kept`` are left."""
    counts = np.concatenate(([0], np.cumsum(kept, dtype=np.int64)))
    shifted: np.ndarray = counts[indptr]
    return shifted


def row_entries(left: sp.csr_matrix, right: sp.csr_matrix, i: int) -> tuple[np.ndarray, np.ndarray]:
    """Row ``i`` of ``left @ right`` as ``Rows.entries`` gives it, unsummed: each of the row's
    terms times that term's row of ``right``, gathered in numpy."""
    lo, hi = left.indptr[i], left.indptr[i + 1]
    terms, weights = left.indices[lo:hi], left.data[lo:hi]
    starts = right.indptr[terms]
    counts = right.indptr[terms + 1] - starts
    offsets = np.cumsum(counts) - counts
    at = np.arange(int(counts.sum())) + np.repeat(starts - offsets, counts)
    return right.indices[at], right.data[at] * np.repeat(weights, counts)


def _membership(groups: Sequence[Sequence[int]], n: int) -> sp.csr_matrix:
    """Groups by titles, a one for each member."""
    sizes = [len(g) for g in groups]
    return sp.csr_matrix(
        (
            np.ones(sum(sizes)),
            np.concatenate([np.asarray(g, dtype=np.int64) for g in groups]),
            np.concatenate(([0], np.cumsum(sizes))),
        ),
        shape=(len(groups), n),
    )


def between_groups(vectors: Similar, groups: Sequence[Sequence[int]]) -> sp.csr_matrix:
    """The summed similarities of every pair of groups' members (groups by groups)."""
    if isinstance(vectors, Graph):
        return vectors.between(_membership(groups, vectors.shape[0]))
    sums = group_sums(vectors, groups)
    return (sums @ sums.T).tocsr()


def to_own_groups(vectors: Similar, groups: Sequence[Sequence[int]]) -> np.ndarray:
    """Each member's similarity summed over its group (itself included), the groups' members
    one after another: a membership matrix gives the groups' sums, each member dotted with its
    own group's; over a ``Graph``, each member's row summed over its group."""
    members = np.concatenate([np.asarray(g, dtype=np.int64) for g in groups])
    group = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
    if isinstance(vectors, Graph):
        return vectors.to_own_group(_membership(groups, vectors.shape[0]), members, group)
    sums = group_sums(vectors, groups)
    return np.asarray(vectors[members].multiply(sums[group]).sum(axis=1)).ravel()


def centrality(
    vectors: Similar, groups: Sequence[Sequence[int]], summed: np.ndarray | None = None
) -> dict[int, float]:
    """Each member of a group of two or more: its mean similarity to the group's other
    members. ``summed``: ``to_own_groups(vectors, groups)``, when the caller has it."""
    if not groups:
        return {}
    summed = to_own_groups(vectors, groups) if summed is None else summed
    members = np.concatenate([np.asarray(g, dtype=np.int64) for g in groups])
    sizes = np.repeat([len(g) for g in groups], [len(g) for g in groups])
    many = sizes > 1
    mean = (summed - self_similarity(vectors)[members])[many] / (sizes[many] - 1)
    return {int(i): round(float(m), 6) for i, m in zip(members[many], mean, strict=True)}


def representatives(
    vectors: Similar, groups: Sequence[Sequence[int]], summed: np.ndarray | None = None
) -> list[int]:
    """``representative`` of each group, at once: the member with the highest similarity
    summed over its group (``to_own_groups``, or ``summed`` when the caller has it; the first
    of equals, to 9 decimals, wins)."""
    if not groups:
        return []
    summed = to_own_groups(vectors, groups) if summed is None else summed
    # equal by any order of summing, to 9 decimals: the first wins
    score = np.round(summed, 9)
    chosen = []
    start = 0
    for g in groups:
        chosen.append(int(g[int(np.argmax(score[start : start + len(g)]))]))
        start += len(g)
    return chosen


# The centroid pass's products cost, per n-gram, about its document frequency squared over two
# (the pairs of titles that share it): at most this many in all (issue 24). A window of
# ordinary size spends far less (the UCI sample's largest category, 2,038 English titles:
# 4·10⁷); only at volume are the commonest n-grams left out.
PAIR_BUDGET = 60_000_000


def without_common(vectors: sp.csr_matrix, budget: float = PAIR_BUDGET) -> sp.csr_matrix:
    """``vectors`` with the n-grams too common to compare by left out (weight zero, rows not
    renormalised): those above the highest document frequency ``cap`` such that the pairs of
    titles sharing the n-grams in at most ``cap`` titles number at most ``budget`` (``Σ df·(df
    − 1) / 2``). Unchanged when every n-gram fits."""
    frequency = np.bincount(vectors.indices, minlength=vectors.shape[1])
    values, counts = np.unique(frequency, return_counts=True)
    cost = np.cumsum(counts * values.astype(np.float64) * (values - 1) / 2)
    if not len(cost) or cost[-1] <= budget:
        return vectors
    fits = values[cost <= budget]
    cap = int(fits[-1]) if len(fits) else 0
    out = vectors.copy()
    out.data[frequency[out.indices] > cap] = 0.0
    out.eliminate_zeros()
    return out
