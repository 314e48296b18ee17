"""The meaning method (issue 38): the headline method's pass over a similarity that mixes what
a title means with the n-grams it shares.

Two titles are ``w · clip((cos_e − FLOOR) / (1 − FLOOR), 0, 1) + (1 − w) · cos_n`` similar:
``cos_e`` the cosine of their embeddings (``newsdesk.cluster.embedding``), ``cos_n`` that of
the headline method's n-gram vectors (normal form, IDF with a prior). e5 puts any two
headlines about 0.8 apart, so only the part of its cosine above FLOOR counts; paraphrases that
share few characters (李대통령 / 이재명 대통령) are held by the first term, different events
told in the same words kept apart by both. ``w`` and the join threshold are per script, as
the headline method's: a pair of titles with Hangul takes the Hangul weight, any other pair
the other, and a title joins a group when its mean and centroid similarity to the members are
at least its script's threshold. A pair of Hangul titles counts its embedding only when each is
among the other's MUTUAL nearest: in a window of one subject e5 puts every title above FLOOR
of every other, and events would merge.

Only the pairs that count are kept (a sparse graph: pairs above FLOOR by embedding, or
sharing an n-gram), so the pass, the merging of groups found apart and the representatives
run on it as on vectors (``vectors.Graph``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from newsdesk.cluster.centroid import WINDOW_SECONDS, centroid_pass, has_hangul
from newsdesk.cluster.embedding import shared
from newsdesk.cluster.headline import headline_vectors
from newsdesk.cluster.methods import Assignment, Standing
from newsdesk.cluster.vectors import Graph, without_common

FLOOR = 0.8
HANGUL_WEIGHT = 0.5
OTHER_WEIGHT = 0.3
HANGUL_THRESHOLD = 0.25
OTHER_THRESHOLD = 0.12
# Rows of the embeddings' product computed at once (a block is ROWS × n float32, and its
# ranking ROWS × n int64), and the most pairs above FLOOR kept per title (its highest cosines).
ROWS = 1024
NEIGHBOURS = 128
# Hangul titles: how near by meaning two titles must be to each other, in rank (tuned on the
# generated sets at 5,000, ko-dev's tuned part and UCI; English pairs do without: UCI's stories
# of hundreds of headlines lost their links)
MUTUAL = 10


def meaning_graph(
    titles: Sequence[str],
    embeddings: np.ndarray,
    hangul_weight: float = HANGUL_WEIGHT,
    other_weight: float = OTHER_WEIGHT,
    floor: float = FLOOR,
) -> Graph:
    """The titles' mixed similarities, the pairs that count (and each title's own)."""
    if embeddings.shape[0] != len(titles):
        raise ValueError("embeddings must have one row per title")
    lexical = without_common(headline_vectors(titles))
    n_grams = (lexical @ lexical.T).tocoo()
    above, nearest = _above(np.asarray(embeddings, dtype=np.float32), floor)
    meant = above.tocoo()
    hangul = np.array(has_hangul(titles), dtype=bool)
    # a pair of Hangul titles counts its meaning only if each is among the other's MUTUAL
    # nearest: in a window of one subject every title is close to every other
    mutual = ~(hangul[meant.row] & hangul[meant.col]) | (
        meant.data >= np.maximum(nearest[meant.row], nearest[meant.col])
    )
    meant = sp.coo_matrix(
        (meant.data[mutual], (meant.row[mutual], meant.col[mutual])), shape=meant.shape
    )
    rows = np.concatenate([n_grams.row, meant.row])
    cols = np.concatenate([n_grams.col, meant.col])
    both = hangul[rows] & hangul[cols]
    weight = np.where(both, hangul_weight, other_weight)
    scaled = np.clip((meant.data - floor) / (1.0 - floor), 0.0, 1.0)
    lexical_part = (1.0 - weight[: n_grams.nnz]) * n_grams.data
    values = np.concatenate([lexical_part, weight[n_grams.nnz :] * scaled])
    n = len(titles)
    return Graph(sp.csr_matrix((values, (rows, cols)), shape=(n, n)))


def _above(
    embeddings: np.ndarray, floor: float, neighbours: int = NEIGHBOURS
) -> tuple[sp.csr_matrix, np.ndarray]:
    """The embeddings' cosines above ``floor`` (the diagonal among them), each title's
    ``neighbours`` highest at most, both ways (a pair is kept when either title keeps it), a
    block of rows at a time: memory grows with the titles, not with their square (e5 puts
    most headlines of one category above 0.8 of each other); and each title's cosine to its
    MUTUAL-th nearest other title (-inf when there are no more than MUTUAL others)."""
    n = embeddings.shape[0]
    rows, cols, values = [], [], []
    nearest = np.full(n, -np.inf)
    for start in range(0, n, ROWS):
        block = embeddings[start : start + ROWS] @ embeddings.T
        if n > MUTUAL + 1:  # the title itself is its own nearest
            nearest[start : start + ROWS] = np.partition(block, n - MUTUAL - 1, axis=1)[
                :, n - MUTUAL - 1
            ]
        if n > neighbours:  # each row's highest, the rest left out
            kept = np.argpartition(block, n - neighbours, axis=1)[:, n - neighbours :]
            top = np.take_along_axis(block, kept, axis=1)
            r, k = np.nonzero(top > floor)
            c, v = kept[r, k], top[r, k]
        else:
            r, c = np.nonzero(block > floor)
            v = block[r, c]
        rows.append(r + start)
        cols.append(c)
        values.append(v.astype(np.float64))
    if not rows:
        return sp.csr_matrix((n, n)), nearest
    above = sp.csr_matrix(
        (np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)
    )
    return above.maximum(above.T).tocsr(), nearest


def meaning_groups(
    titles: Sequence[str],
    threshold: float,
    min_size: int,
    taken: np.ndarray,
    times: Sequence[float] | None = None,
    standing: Standing | None = None,
    idle_seconds: float = WINDOW_SECONDS,
    embeddings: np.ndarray | None = None,
) -> Assignment:
    """The pass over ``meaning_graph`` (titles embedded when no ``embeddings`` are given),
    merging groups of one story found apart. ``threshold``: the Hangul titles'; the others'
    keeps its ratio to it."""
    vectors = shared().embed(titles) if embeddings is None else embeddings
    graph = meaning_graph(titles, vectors)
    share = OTHER_THRESHOLD / HANGUL_THRESHOLD
    thresholds = [threshold if h else threshold * share for h in has_hangul(titles)]
    # the mean similarity to the members (average linkage) at the threshold too
    args = (graph, thresholds, min_size, taken, times, standing, idle_seconds, thresholds)
    return centroid_pass(*args, merge=True)
