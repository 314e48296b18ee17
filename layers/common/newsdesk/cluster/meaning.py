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

Only the pairs that count are kept: by embedding, each title's NEIGHBOURS nearest above FLOOR
(``newsdesk.cluster.neighbours``, without the n × n products past its EXACT_MAX titles), held
whole; by n-grams, the pairs that share one, computed a block of rows at a time as the pass
reads them (``Mixed``), and summed per group from the groups' summed n-gram vectors where
merging and the representatives need them. The pass runs on it as on vectors
(``vectors.Graph``): 100,000 titles of one category never hold their n-gram pairs at once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from newsdesk.cluster.centroid import WINDOW_SECONDS, centroid_pass, has_hangul
from newsdesk.cluster.embedding import shared
from newsdesk.cluster.headline import headline_vectors
from newsdesk.cluster.methods import Assignment, Standing
from newsdesk.cluster.neighbours import nearest
from newsdesk.cluster.vectors import Graph, without_common

FLOOR = 0.8
HANGUL_WEIGHT = 0.5
OTHER_WEIGHT = 0.3
HANGUL_THRESHOLD = 0.25
OTHER_THRESHOLD = 0.12
# The most pairs above FLOOR kept per title (its highest cosines).
NEIGHBOURS = 128
# Hangul titles: how near by meaning two titles must be to each other, in rank (tuned on the
# generated sets at 5,000, ko-dev's tuned part and UCI; English pairs do without: UCI's stories
# of hundreds of headlines lost their links)
MUTUAL = 10


class Mixed(Graph):
    """The titles' mixed similarities, each block of rows computed when the pass reads it:
    the n-gram products weighted by the pair's script, plus the embedding's pairs that count
    (kept whole: each title's NEIGHBOURS at most). The n-gram pairs are never held all at
    once: they are what grows with a window of one subject."""

    def __init__(
        self,
        lexical: sp.csr_matrix,
        meant: sp.csr_matrix,
        hangul: np.ndarray,
        hangul_weight: float,
        other_weight: float,
    ) -> None:
        self.lexical, self.lexical_t = lexical, lexical.T.tocsr()
        self.hangul_lexical = sp.diags(hangul.astype(np.float64)) @ lexical
        self.meant, self.hangul = meant, hangul
        self.lexical_share = (1.0 - hangul_weight, 1.0 - other_weight)
        self.shape = meant.shape

    def rows(self, start: int, stop: int) -> sp.csr_matrix:
        block = (self.lexical[start:stop] @ self.lexical_t).tocsr()
        row_of = np.repeat(np.arange(start, stop), np.diff(block.indptr))
        both = self.hangul[row_of] & self.hangul[block.indices]
        block.data *= np.where(both, *self.lexical_share)
        return (block + self.meant[start:stop]).tocsr()

    def between(self, membership: sp.csr_matrix) -> sp.csr_matrix:
        """As ``Graph.between``, the n-gram part from the groups' summed vectors: each pair's
        share is the other script's, and the Hangul titles' sums add the difference."""
        hangul_share, other_share = self.lexical_share
        sums, hangul_sums = self._summed(membership)
        lexical = other_share * (sums @ sums.T) + (hangul_share - other_share) * (
            hangul_sums @ hangul_sums.T
        )
        return (lexical + membership @ self.meant @ membership.T).tocsr()

    def to_own_group(
        self, membership: sp.csr_matrix, members: np.ndarray, group: np.ndarray
    ) -> np.ndarray:
        hangul_share, other_share = self.lexical_share
        rows = self.lexical[members]
        sums, hangul_sums = self._summed(membership)
        lexical = other_share * _row_dots(rows, sums[group]) + (
            hangul_share - other_share
        ) * self.hangul[members] * _row_dots(rows, hangul_sums[group])
        meant = (self.meant[members] @ membership.T).tocsr()
        own: np.ndarray = lexical + np.asarray(meant[np.arange(len(members)), group]).ravel()
        return own

    def _summed(self, membership: sp.csr_matrix) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """Each group's n-gram vectors summed, and its Hangul titles' alone."""
        return membership @ self.lexical, membership @ self.hangul_lexical

    def diagonal(self) -> np.ndarray:
        squared = np.asarray(self.lexical.multiply(self.lexical).sum(axis=1)).ravel()
        share = np.where(self.hangul, *self.lexical_share)
        return share * squared + np.asarray(self.meant.diagonal(), dtype=np.float64)


def _row_dots(a: sp.csr_matrix, b: sp.csr_matrix) -> np.ndarray:
    return np.asarray(a.multiply(b).sum(axis=1), dtype=np.float64).ravel()


def meaning_graph(
    titles: Sequence[str],
    embeddings: np.ndarray,
    hangul_weight: float = HANGUL_WEIGHT,
    other_weight: float = OTHER_WEIGHT,
    floor: float = FLOOR,
) -> Mixed:
    """The titles' mixed similarities: the pairs that count (and each title's own)."""
    if embeddings.shape[0] != len(titles):
        raise ValueError("embeddings must have one row per title")
    n = len(titles)
    # each title's NEIGHBOURS highest cosines (its own among them): memory grows with the
    # titles, not with their square (e5 puts most headlines of a category above 0.8 of each
    # other); a pair counts when either title keeps it
    values, indices = nearest(np.asarray(embeddings, dtype=np.float32), NEIGHBOURS)
    # each title's cosine to its MUTUAL-th nearest other (none: no more than MUTUAL others)
    near = values[:, MUTUAL] if n > MUTUAL + 1 else np.full(n, -np.inf, dtype=np.float32)
    rows = np.repeat(np.arange(n, dtype=np.int32), values.shape[1])
    cols, cosines = indices.ravel(), values.ravel()
    hangul = np.array(has_hangul(titles), dtype=bool)
    # a pair of Hangul titles counts its meaning only if each is among the other's MUTUAL
    # nearest: in a window of one subject every title is close to every other
    both = hangul[rows] & hangul[cols]
    kept = (cosines > floor) & (~both | (cosines >= np.maximum(near[rows], near[cols])))
    weight = np.where(both[kept], hangul_weight, other_weight)
    scaled = weight * np.clip((cosines[kept] - floor) / (1.0 - floor), 0.0, 1.0)
    one_way = sp.csr_matrix((scaled, (rows[kept], cols[kept])), shape=(n, n))
    lexical = without_common(headline_vectors(titles))
    return Mixed(lexical, one_way.maximum(one_way.T).tocsr(), hangul, hangul_weight, other_weight)


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
