"""The meaning method (issue 38): the headline method's pass over a similarity that adds what
a title means to the n-grams it shares.

Two titles are ``lexical · cos_n + meaning · clip((cos_e − floor) / (1 − floor), 0, 1)``
similar: ``cos_n`` the cosine of the headline method's n-gram vectors (normal form, IDF with a
prior), ``cos_e`` that of their embeddings (``newsdesk.cluster.embedding``). e5 puts any two
headlines about 0.8 apart, so only the part of its cosine above a floor counts. The weights,
the floor and the join are the pair's script's (``Script``):

- a pair of Hangul titles keeps its whole n-gram cosine and the embedding only adds, from 0.82
  up: paraphrases that share few characters (李대통령 / 이재명 대통령) are lifted over the join
  (0.30, and the mean similarity to a group's members at least as much: titles that differ
  by an amount or a date do not chain). It counts its embedding only when each title is among
  the other's MUTUAL nearest: in a window of one subject e5 puts every title close to every
  other, and events would merge; and only when the two do not name different subjects
  (``subjects``: "한국타이어, … 목표가↑" and "현대건설, … 목표가↑" are two notes);
- any other pair (English) mixes the two, ``0.3 · e + 0.7 · n`` from 0.8, and joins at 0.12.

Only the pairs that count are kept: by embedding, each title's NEIGHBOURS nearest above its
script's floor (``newsdesk.cluster.neighbours``, without the n × n products past its
EXACT_MAX titles), held whole; by n-grams, the pairs that share one, computed a block of rows
at a time as the pass reads them (``Mixed``), and summed per group from the groups' summed
n-gram vectors where merging and the representatives need them. The pass runs on it as on
vectors (``vectors.Graph``): 100,000 titles of one category never hold their n-gram pairs at
once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from newsdesk.cluster.centroid import WINDOW_SECONDS, centroid_pass, has_hangul
from newsdesk.cluster.embedding import shared
from newsdesk.cluster.headline import headline_vectors
from newsdesk.cluster.methods import Assignment, Standing
from newsdesk.cluster.neighbours import nearest
from newsdesk.cluster.subjects import different_subjects
from newsdesk.cluster.vectors import Graph, first_columns, row_entries, without_common


@dataclass(frozen=True)
class Script:
    """How a pair of titles of one kind is compared: the n-gram cosine's share, the embedding's
    weight and the floor its cosine counts from, and the join (centroid) and mean thresholds."""

    lexical: float
    meaning: float
    floor: float
    join: float
    mean: float


# Pairs of Hangul titles: the best of 72 settings by the mean of five tuned parts' F1 (ko-dev's
# tuned days and stream day, UCI's b and t, the generated sets at 5,000; docs/clustering.md)
HANGUL = Script(lexical=1.0, meaning=0.5, floor=0.82, join=0.30, mean=0.30)
# Any other pair: tuned on the UCI sample's categories b and t
OTHER = Script(lexical=0.7, meaning=0.3, floor=0.8, join=0.12, mean=0.12)
# The most pairs above the lower floor kept per title (its highest cosines).
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
        scripts: tuple[Script, Script] = (HANGUL, OTHER),
    ) -> None:
        self.lexical, self.lexical_t = lexical, lexical.T.tocsr()
        self.hangul_lexical = sp.diags(hangul.astype(np.float64)) @ lexical
        self.meant, self.hangul = meant, hangul
        self.lexical_share = (scripts[0].lexical, scripts[1].lexical)
        self.shape = meant.shape

    def rows(self, start: int, stop: int) -> sp.csr_matrix:
        return self._products(start, stop, self.shape[1])

    def earlier(self, start: int, stop: int) -> sp.csr_matrix:
        return self._products(start, stop, stop)

    def _products(self, start: int, stop: int, columns: int) -> sp.csr_matrix:
        """Titles ``start`` … ``stop - 1``'s n-gram products with the first ``columns`` titles,
        weighted by script, plus their meaning pairs."""
        block = first_columns((self.lexical[start:stop] @ self.lexical_t).tocsr(), columns)
        row_of = np.repeat(np.arange(start, stop), np.diff(block.indptr))
        both = self.hangul[row_of] & self.hangul[block.indices]
        block.data *= np.where(both, *self.lexical_share)
        return (block + first_columns(self.meant[start:stop], columns)).tocsr()

    def entries(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Title ``i``'s n-gram products summed per column, then weighted by the pair's script
        (as ``rows`` weights them: the same values to the last bit), and its meaning pairs."""
        products, parts = row_entries(self.lexical, self.lexical_t, i)
        cols, at = np.unique(products, return_inverse=True)
        values = np.bincount(at, weights=parts, minlength=len(cols))
        values *= np.where(self.hangul[i] & self.hangul[cols], *self.lexical_share)
        lo, hi = self.meant.indptr[i], self.meant.indptr[i + 1]
        return (
            np.concatenate((cols, self.meant.indices[lo:hi])),
            np.concatenate((values, self.meant.data[lo:hi])),
        )

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
    titles: Sequence[str], embeddings: np.ndarray, scripts: tuple[Script, Script] = (HANGUL, OTHER)
) -> Mixed:
    """The titles' mixed similarities: the pairs that count (and each title's own, 1 in all).
    ``scripts``: a pair of Hangul titles', and any other pair's."""
    if embeddings.shape[0] != len(titles):
        raise ValueError("embeddings must have one row per title")
    n = len(titles)
    hangul_script, other_script = scripts
    hangul = np.array(has_hangul(titles), dtype=bool)
    # each title's NEIGHBOURS highest cosines (its own among them): memory grows with the
    # titles, not with their square (e5 puts most headlines of a category above 0.8 of each
    # other); a pair counts when either title keeps it. A window of Hangul titles only counts
    # the pairs of MUTUAL nearest, which the MUTUAL + 1 highest hold (but for exact ties, of
    # copies' vectors, which their n-grams join anyway).
    k = NEIGHBOURS if not hangul.all() else MUTUAL + 1
    values, indices = nearest(np.asarray(embeddings, dtype=np.float32), k)
    # each title's cosine to its MUTUAL-th nearest other (none: no more than MUTUAL others)
    near = values[:, MUTUAL] if n > MUTUAL + 1 else np.full(n, -np.inf, dtype=np.float32)
    rows = np.repeat(np.arange(n, dtype=np.int32), values.shape[1])
    cols, cosines = indices.ravel(), values.ravel()
    both = hangul[rows] & hangul[cols]
    floor = np.where(both, hangul_script.floor, other_script.floor)
    weight = np.where(both, hangul_script.meaning, other_script.meaning)
    # a pair of Hangul titles counts its meaning only if each is among the other's MUTUAL
    # nearest: in a window of one subject every title is close to every other
    kept = (cosines > floor) & (~both | (cosines >= np.maximum(near[rows], near[cols])))
    scaled = weight * np.clip((cosines - floor) / (1.0 - floor), 0.0, 1.0)
    kept &= rows != cols
    # nor if their subjects differ (``subjects``): template headlines of two companies
    pairs = np.flatnonzero(kept & both)
    kept[pairs[different_subjects(titles, rows[pairs], cols[pairs])]] = False
    one_way = sp.csr_matrix((scaled[kept], (rows[kept], cols[kept])), shape=(n, n))
    # a title's own pair carries what its script's n-gram share leaves of 1 (a blank title,
    # the zero vector, nothing)
    rest = 1.0 - np.where(hangul, hangul_script.lexical, other_script.lexical)
    own = sp.diags(rest * (np.linalg.norm(embeddings, axis=1) > 0))
    meant = (one_way.maximum(one_way.T) + own).tocsr()
    meant.eliminate_zeros()
    return Mixed(without_common(headline_vectors(titles)), meant, hangul, scripts)


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
    merging groups of one story found apart. ``threshold``: the Hangul titles' join; the
    others' and both mean thresholds keep their ratio to it."""
    vectors = shared().embed(titles) if embeddings is None else embeddings
    graph = meaning_graph(titles, vectors)
    scale = threshold / HANGUL.join
    script = [HANGUL if h else OTHER for h in graph.hangul]
    joins = [s.join * scale for s in script]
    means = [s.mean * scale for s in script]
    args = (graph, joins, min_size, taken, times, standing, idle_seconds, means)
    return centroid_pass(*args, merge=True)
