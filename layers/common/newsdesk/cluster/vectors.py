"""Title vectors and the similar pairs among them, shared by the clustering methods.

Only the pairs at or above a threshold are kept: the normalised TF-IDF matrix is multiplied by
its transpose one block of rows at a time (sizes chosen so that a block's product stays under a
fixed number of entries). Memory grows with the number of similar pairs, not with N².
"""

from __future__ import annotations

from collections.abc import Sequence

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


ANALYSERS = ("char", "morph", "char+morph", "headline")
# "char+morph": the share of the morpheme block in a row's squared length, so that where both
# blocks are non-zero the cosine is (1 - share) · char cosine + share · morpheme cosine.
MORPH_SHARE = 0.5


def centroid_vectors(titles: Sequence[str], analyser: str = "char") -> sp.csr_matrix:
    """The centroid method's title vectors, rows of unit length (zero rows for blank titles):
    ``"char"``, character n-grams (``char_vectors``); ``"morph"``, TF-IDF over content
    morphemes (``newsdesk.cluster.korean``; Kiwi runs on the titles with Hangul only);
    ``"char+morph"``, both side by side, weighted by ``MORPH_SHARE``, rows renormalised;
    ``"headline"``, the normal form and n-grams of ``newsdesk.cluster.headline`` (issue 24)."""
    if analyser == "char":
        return char_vectors(titles)
    if analyser == "morph":
        return morph_vectors(titles)
    if analyser == "headline":
        from newsdesk.cluster.headline import headline_vectors

        return headline_vectors(titles)
    if analyser == "char+morph":
        blocks = [
            (1 - MORPH_SHARE) ** 0.5 * char_vectors(titles),
            MORPH_SHARE**0.5 * morph_vectors(titles),
        ]
        return normalize(sp.hstack(blocks, format="csr"), copy=False)
    raise ValueError(f"unknown analyser {analyser!r}; expected one of {ANALYSERS}")


def morph_vectors(titles: Sequence[str]) -> sp.csr_matrix:
    """Content morphemes, sublinear term frequency, no IDF (as `char_vectors`), rows of unit
    length."""
    from newsdesk.cluster.korean import content_morphemes  # loads Kiwi only when asked for

    vectorizer = TfidfVectorizer(analyzer=_given_tokens, sublinear_tf=True, use_idf=False)
    try:
        return vectorizer.fit_transform(content_morphemes(titles)).tocsr()
    except ValueError:  # no title has a content morpheme
        return _empty(len(titles))


def _given_tokens(tokens: list[str]) -> list[str]:
    return tokens


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


# The pruned neighbour search leaves out of the product the n-grams that more than this share of
# the window's titles have (and more than COMMON_MIN_TITLES of them), then adds their part back
# for the pairs it found: two titles that share only such n-grams are never neighbours.
COMMON_SHARE = 0.02
COMMON_MIN_TITLES = 1000
BLOCK_ROWS = 2048


def pruned_neighbours(
    vectors: sp.csr_matrix, floor: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's neighbours (itself left out) with similarity at least ``floor``, as CSR
    ``indptr``, ``indices`` and the similarities, found without the n-grams common in the window
    (``COMMON_SHARE``), then made exact."""
    n = vectors.shape[0]
    if n == 0 or vectors.nnz == 0:
        return np.zeros(n + 1, dtype=np.int64), np.empty(0, np.int32), np.empty(0)
    frequency = np.bincount(vectors.indices, minlength=vectors.shape[1])
    common = frequency > max(COMMON_MIN_TITLES, COMMON_SHARE * n)
    rare = vectors[:, np.flatnonzero(~common)].tocsr()
    shared = vectors[:, np.flatnonzero(common)].tocsr() if common.any() else None
    rare_t = rare.T.tocsr()
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    values: list[np.ndarray] = []
    for start in range(0, n, BLOCK_ROWS):
        stop = min(n, start + BLOCK_ROWS)
        product = (rare[start:stop] @ rare_t).tocoo()
        row = product.row.astype(np.int64) + start
        col = product.col.astype(np.int64)
        value = product.data
        keep = row != col
        row, col, value = row[keep], col[keep], value[keep]
        if shared is not None:
            value = value + np.asarray(shared[row].multiply(shared[col]).sum(axis=1)).ravel()
        keep = value >= floor
        rows.append(row[keep])
        cols.append(col[keep].astype(np.int32))
        values.append(value[keep])
    row = np.concatenate(rows)
    order = np.lexsort((np.concatenate(cols), row))
    indptr = np.concatenate(([0], np.cumsum(np.bincount(row, minlength=n))))
    return indptr, np.concatenate(cols)[order], np.concatenate(values)[order]
