"""Each title's nearest titles by embedding (issue 38): its ``k`` highest cosines, itself among
them.

Up to EXACT_MAX titles every pair is compared (the embeddings' product, a block of rows at a
time). Past it, the n × n products cost too much (100,000 titles: 7.7·10¹² floating-point
operations, about 100 s on two cores here), so the titles are blocked: k-means
(scikit-learn) on a sample puts about √n centres among them; each title is compared with the
titles that have its nearest centre among their PROBES nearest, one dense product per centre.
A pair in two neighbouring blocks is then found from at least one side in most cases, and the
graph keeps a pair either title found. Deterministic: the same vectors give the same
neighbours (a fixed sample and seed), so a replay gives the same issues.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

# Titles compared pair by pair; past this, by blocks (1.3 s for 8,192 titles, two cores here).
EXACT_MAX = 8192
# Rows of the embeddings' product computed at once (a block is ROWS × n float32).
ROWS = 1024
# Centres a title is a member of (its nearest ones): more finds more of its neighbours, at the
# cost of products in proportion (generated varied set, pooled F1 at 20,000 titles: 3 probes
# 0.605, 8 probes 0.651, every pair compared 0.688; two partitions of 4 probes 0.638).
PROBES = 8
# Titles k-means learns the centres from, per centre.
SAMPLE_PER_CENTRE = 40
SEED = 38
# Columns whose maximum bounds a row's k-th highest value from below (``_top``).
CHUNK = 64


def nearest(embeddings: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``min(k, n)`` highest cosines with the rows (its own among them) and which
    rows they are, as two n × min(k, n) arrays (float32, int32), highest first."""
    vectors = np.ascontiguousarray(embeddings, dtype=np.float32)
    n = len(vectors)
    k = min(k, n)
    if n <= EXACT_MAX:
        parts = [_top(vectors[s : s + ROWS] @ vectors.T, k) for s in range(0, n, ROWS)]
        if not parts:
            return np.empty((0, 0), dtype=np.float32), np.empty((0, 0), dtype=np.int32)
        values = np.concatenate([p[0] for p in parts])
        return values, np.concatenate([p[1] for p in parts]).astype(np.int32)
    return _blocked(vectors, k)


def _blocked(vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.cluster import KMeans  # only past EXACT_MAX titles

    n = len(vectors)
    centres = math.isqrt(n)
    rng = np.random.default_rng(SEED)
    sample = vectors[np.sort(rng.choice(n, min(n, SAMPLE_PER_CENTRE * centres), replace=False))]
    with warnings.catch_warnings():  # fewer distinct titles than centres: some stay empty
        warnings.simplefilter("ignore")
        # centres started at random titles of the sample: k-means++'s start took longer than
        # the iterations, and the blocks it gave found fewer of a title's nearest (issue 38)
        fitted = KMeans(centres, init="random", n_init=1, max_iter=10, random_state=SEED).fit(
            sample.astype(np.float64)  # float32 was no faster
        )
    centred = fitted.cluster_centers_.astype(np.float32)
    # nearness to a centre as k-means measures it: −‖x − c‖² up to the same ‖x‖² in every row
    to_centres = vectors @ centred.T - 0.5 * np.einsum("ij,ij->i", centred, centred)
    member_of = np.argpartition(-to_centres, PROBES - 1, axis=1)[:, :PROBES]
    nearest_of = np.argmax(np.take_along_axis(to_centres, member_of, axis=1), axis=1)
    home = member_of[np.arange(n), nearest_of]
    del to_centres
    values = np.full((n, k), -np.inf, dtype=np.float32)
    indices = np.zeros((n, k), dtype=np.int32)
    # each centre's members, by one sort of the (title, centre) memberships
    by_centre = np.argsort(member_of.ravel(), kind="stable")
    bounds = np.searchsorted(member_of.ravel()[by_centre], np.arange(centres + 1))
    for centre in range(centres):
        queries = np.flatnonzero(home == centre)
        if not len(queries):
            continue
        members = by_centre[bounds[centre] : bounds[centre + 1]] // PROBES  # the title itself in
        top, at = _top(vectors[queries] @ vectors[members].T, min(k, len(members)))
        values[queries, : top.shape[1]] = top
        indices[queries, : top.shape[1]] = members[at]
    return values, indices


def _top(block: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``k`` highest values (``k`` at most its columns) and their columns, highest
    first, ties by column.

    The row's ``k``-th highest chunk maximum (chunks of CHUNK columns, fewer when the row is
    short) is at most its ``k``-th highest value, so only the values at or above it are
    sorted: a few dozen of a row's thousands (a partition of every row took three times as
    long)."""
    rows, columns = block.shape
    width = max(1, min(CHUNK, columns // (2 * k)))
    starts = np.arange(0, columns, width)
    if len(starts) > k:
        maxima = np.maximum.reduceat(block, starts, axis=1)
        bound = np.partition(maxima, len(starts) - k, axis=1)[:, len(starts) - k]
        row, column = np.nonzero(block >= bound[:, None])
    else:
        row, column = np.divmod(np.arange(block.size), columns)
    value = block[row, column]
    order = np.lexsort((column, -value, row))
    row, column, value = row[order], column[order], value[order]
    rank = np.arange(len(row)) - np.searchsorted(row, np.arange(rows))[row]
    kept = rank < k
    values = np.empty((rows, k), dtype=block.dtype)
    at = np.empty((rows, k), dtype=np.intp)
    values[row[kept], rank[kept]] = value[kept]
    at[row[kept], rank[kept]] = column[kept]
    return values, at
