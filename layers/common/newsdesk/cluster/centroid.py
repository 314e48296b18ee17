"""The centroid method: one pass in order, each headline joining the group whose centroid is
most similar to it (if that is at least the threshold), else starting a group of its own.

Headlines are compared as character n-grams (``char_wb``, 2–4), which match across Korean
particles ("폭설에" / "폭설로") and English inflections where word tokens do not; news tags such
as ``[속보]``, ``[단독]``, ``(종합)``, ``[포토]`` are removed first. The n-grams are weighted by
sublinear term frequency without IDF (issue 15): two titles are as similar in a run over an
hour's articles as in one over a day's, so a run every 30 minutes makes the choices one run
over the whole stream would (benchmarks/cluster_quality.py). A group idle for longer than
``WINDOW_SECONDS`` (by ``times``) takes no new members, so yesterday's event does not swallow
today's.

The pass (issue 24) is exact and has no per-n-gram Python loop. A headline's similarity to a
group's centroid is ``x · Σ members / ‖Σ members‖``, and ``x · Σ members`` is the sum of its
similarities to the members, so it needs only the similarities to earlier headlines: the
titles are taken in blocks of rows, each block's products with every earlier title computed at
once (a sparse product), then in steps of ``STEP`` rows the sums per (title, group) for groups
formed before the step are one sort and ``reduceat`` in numpy; only the few pairs within a
step, and each title's candidate groups, are visited in Python. A group is a candidate for a
headline when one of its members is at least ``CANDIDATE_SIMILARITY`` similar to it; each
group's squared length is kept exactly (``+ ‖x‖² + 2 x · Σ members`` as a title joins).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from newsdesk.cluster.headline import strip_tags as strip_tags  # its home before issue 24
from newsdesk.cluster.merging import merge_groups
from newsdesk.cluster.methods import Assignment, Group, Standing
from newsdesk.cluster.vectors import (
    Rows,
    Similar,
    centrality,
    centroid_vectors,
    kept_indptr,
    product_rows,
    representatives,
    self_similarity,
    to_own_groups,
    without_common,
)

WINDOW_SECONDS = 12 * 3600
# A group is a candidate for a headline when one of its members is at least this similar to
# it; below the join threshold (0.30), so that a centroid a little closer than every member
# is still found.
CANDIDATE_SIMILARITY = 0.2
# The headline method (issue 24): a title joins a group only if its mean similarity to the
# members is at least this, so that a big group's centroid, which leans toward the words all
# its members share, does not draw titles that share only those.
HEADLINE_MEAN_FLOOR = 0.2
# The headline method's threshold and HEADLINE_MEAN_FLOOR are for titles with Hangul; a title
# without any (English) joins at this share of the threshold and with this floor (issue 24:
# 0.30 and 0.20 against 0.20 and 0.10). Latin-script headlines are longer and share n-grams of
# common words, so with IDF their paraphrases sit lower (the UCI sample's sweep).
NON_HANGUL_SHARE = 2 / 3
NON_HANGUL_MEAN_FLOOR = 0.1
_HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")


def has_hangul(titles: Sequence[str]) -> list[bool]:
    """Whether each title has a Hangul syllable or jamo: which script's settings it takes."""
    return [_HANGUL.search(t) is not None for t in titles]


# Passes a window's merges may take to settle (issue 24; on the labelled sets, two).
SETTLE_PASSES = 4
# Rows a sparse product covers (against every earlier title), and rows whose sums per group are
# taken at once: a title's similarities to titles of its own step are added in Python.
BLOCK_ROWS = 2048
STEP = 128


def centroid_groups(
    titles: Sequence[str],
    threshold: float,
    min_size: int,
    taken: np.ndarray,
    times: Sequence[float] | None = None,
    standing: Standing | None = None,
    idle_seconds: float = WINDOW_SECONDS,
    analyser: str = "char",
    mean_floor: float = 0.0,
    merge: bool = False,
) -> Assignment:
    """New groups of at least ``min_size``, in the order they were started, and the free
    titles that join the open issues of ``standing``.

    An issue's titles (``standing.issue_of``) join its group where they stand in the order,
    whatever their similarity, so the pass builds each issue's centroid as the runs before it
    did; a free title may then join it like any group while the issue is open (a closed
    issue's group takes no one). A re-run over the same window makes every choice it made
    before: it creates and changes nothing. ``mean_floor``: a title joins only a group whose
    members it is at least this similar to on average (the ``headline`` method's guard
    against a big group's centroid). ``merge``: groups of one story found apart are then
    merged (``newsdesk.cluster.merging``).
    """
    thresholds: float | list[float] = threshold
    floors: float | list[float] = mean_floor
    if analyser == "headline":  # its own normal form strips the tags
        vectors = centroid_vectors(titles, analyser)
        hangul = has_hangul(titles)
        thresholds = [threshold * (1.0 if h else NON_HANGUL_SHARE) for h in hangul]
        floors = [mean_floor if h else min(mean_floor, NON_HANGUL_MEAN_FLOOR) for h in hangul]
    else:
        vectors = centroid_vectors([strip_tags(t) for t in titles], analyser)
    common = without_common(vectors)
    args = (common, thresholds, min_size, taken, times, standing, idle_seconds, floors)
    return centroid_pass(*args, merge=merge)


def centroid_pass(
    vectors: Similar,
    threshold: float | Sequence[float],
    min_size: int,
    taken: np.ndarray,
    times: Sequence[float] | None = None,
    standing: Standing | None = None,
    idle_seconds: float = WINDOW_SECONDS,
    mean_floor: float | Sequence[float] = 0.0,
    block_rows: int = BLOCK_ROWS,
    step_rows: int = STEP,
    merge: bool = False,
    settle: str = "changed",
) -> Assignment:
    """``centroid_groups`` over given title vectors (rows of unit length, or zero);
    ``threshold`` and ``mean_floor`` may be one per title (the headline method's, by script).
    With ``merge``, after each pass that merged groups the pass runs again with the groups it
    left pinned as issues are (their titles where they stand), until a pass merges nothing:
    that last pass is what a re-run over the same window does, so a re-run changes nothing
    (at most ``SETTLE_PASSES``). ``settle``: ``"changed"`` compares again only titles whose
    groups the merges changed (``_Pass.settle``), ``"whole"`` every title (the same outcome)."""
    issue_of = [-1] * vectors.shape[0] if standing is None else list(standing.issue_of)
    opened = {} if standing is None else dict(standing.open)
    state = _Pass(vectors, threshold, mean_floor, issue_of, taken.tolist(), times, idle_seconds)
    state.stored_open = dict(opened)
    state.neighbours = _Neighbours(vectors.shape[0]) if merge else None
    rows = product_rows(vectors)
    state.run(opened, rows, block_rows, step_rows)
    passes = 1
    while merge and state.merge(min_size) and passes < SETTLE_PASSES:
        before = state
        state, opened = before.pinned(min_size)
        if settle == "whole":
            state.neighbours = None
            state.run(opened, rows, block_rows, step_rows)
        else:
            state.settle(before, opened, rows)
        passes += 1
    return state.assignment(min_size)


class _Pass:
    """The pass's groups: each one's members, squared length, time of its newest member and
    the stored issue it stands for (-1: none yet)."""

    def __init__(
        self,
        vectors: Similar,
        threshold: float | Sequence[float],
        mean_floor: float | Sequence[float],
        issue_of: list[int],
        taken: list[bool],
        times: Sequence[float] | None,
        idle_seconds: float,
    ) -> None:
        self.vectors = vectors
        n = vectors.shape[0]
        self.thresholds = _per_title(threshold, n)
        self.mean_floors = _per_title(mean_floor, n)
        self.issue_of = issue_of
        self.taken = taken
        self.times = None if times is None else [float(t) for t in times]
        self.idle_seconds = idle_seconds
        self.self_norm2 = self_similarity(vectors).tolist()
        self.group_of = np.full(vectors.shape[0], -1, dtype=np.int64)
        self.groups_list = [-1] * vectors.shape[0]
        self.members: list[list[int]] = []
        self.norm2: list[float] = []
        self.last_seen: list[float] = []
        self.issue: list[int] = []
        self.closed: list[bool] = []
        self.by_issue: dict[int, int] = {}
        self.open_issues: dict[int, int] = {}
        # The stored issues (a settling pass pins more, ``fresh``: groups of the pass before).
        self.stored_issue_of = issue_of
        self.stored_open: dict[int, int] = {}
        self.fresh: set[int] = set()
        # What a settling pass reads of this one: each title's dot with its group when placed,
        # and the pairs of titles at least CANDIDATE_SIMILARITY similar (when merging).
        self.placed_dot = [0.0] * n
        self.neighbours: _Neighbours | None = None

    def run(
        self,
        opened: dict[int, int],
        rows: Rows,
        block_rows: int,
        step_rows: int,
    ) -> None:
        """The pass over every title, ``opened`` the issues that take members; ``rows``: the
        titles' similarities, a block of rows at a time (``product_rows``)."""
        self.open_issues = opened
        n = self.vectors.shape[0]
        for start in range(0, n, block_rows):
            stop = min(n, start + block_rows)
            # the block's products with every title before its end (the step drops the
            # products of titles after each row)
            block = rows.earlier(start, stop)
            for step in range(start, stop, step_rows):
                products = block[step - start : min(stop, step + step_rows) - start]
                if self.neighbours is not None:
                    self.neighbours.add(products, step)
                self.step(products, step)
        if self.neighbours is not None:
            self.neighbours.finish()

    def pinned(self, min_size: int) -> tuple[_Pass, dict[int, int]]:
        """A fresh pass with this one's outcome pinned: a title that joined an open issue is
        that issue's, a new group of ``min_size`` an issue of its own (an id above every
        stored one, in ``fresh``), each placed where it stands in the next pass."""
        issue_of = list(self.stored_issue_of)
        opened = dict(self.stored_open)
        fresh: set[int] = set()
        first = max([*self.stored_issue_of, *self.stored_open, -1]) + 1
        for g, members in enumerate(self.members):
            real = self.issue[g] >= 0 and self.issue[g] not in self.fresh
            if real and not self.closed[g]:
                issue = self.issue[g]
            elif not real and len(members) >= min_size:
                issue = first + g
                opened[issue] = -1
                fresh.add(issue)
            else:
                continue
            for i in members:
                issue_of[i] = issue
        after = _Pass(
            self.vectors,
            self.thresholds,
            self.mean_floors,
            issue_of,
            self.taken,
            self.times,
            self.idle_seconds,
        )
        after.stored_issue_of = self.stored_issue_of
        after.stored_open = self.stored_open
        after.fresh = fresh
        after.neighbours = self.neighbours
        return after, opened

    def new_group(self, issue: int = -1) -> int:
        self.members.append([])
        self.norm2.append(0.0)
        self.last_seen.append(-math.inf)
        self.issue.append(issue)
        self.closed.append(issue >= 0 and issue not in self.open_issues)
        return len(self.members) - 1

    def step(self, products: sp.csr_matrix, first: int) -> None:
        """Titles ``first`` … ``first + rows - 1``, given their products with every title up to
        the block's last (earlier titles' groups are known, this step's are placed in turn)."""
        sums, near = self._sums_per_group(products, first)
        s_ptr, s_idx, s_val = sums.indptr.tolist(), sums.indices, sums.data
        c_ptr, c_idx, c_val = near.indptr.tolist(), near.indices.tolist(), near.data.tolist()
        w_ptr, w_idx, w_val = _within_step(products, first)
        for row in range(products.shape[0]):
            dots = dict(
                zip(
                    c_idx[c_ptr[row] : c_ptr[row + 1]],
                    c_val[c_ptr[row] : c_ptr[row + 1]],
                    strict=True,
                )
            )
            candidates = set(dots)
            extra: dict[int, float] = {}
            for other, value in zip(
                w_idx[w_ptr[row] : w_ptr[row + 1]], w_val[w_ptr[row] : w_ptr[row + 1]], strict=True
            ):
                g = self.groups_list[other]
                if g >= 0:
                    extra[g] = extra.get(g, 0.0) + value
                    if value >= CANDIDATE_SIMILARITY:
                        candidates.add(g)
            earlier = _Dots(
                dots, extra, s_idx[s_ptr[row] : s_ptr[row + 1]], s_val[s_ptr[row] : s_ptr[row + 1]]
            )
            self.place(first + row, candidates, earlier.dot)

    def _sums_per_group(
        self, products: sp.csr_matrix, first: int
    ) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """Each title's similarities summed per group formed before the step, and those sums
        for its groups with a member at least CANDIDATE_SIMILARITY similar: products with the
        membership."""
        placed = self.group_of[: products.shape[1]] >= 0
        placed[first:] = False
        groups = max(len(self.members), 1)
        membership = sp.csr_matrix(
            (
                np.ones(int(placed.sum())),
                self.group_of[: products.shape[1]][placed],
                np.concatenate(([0], np.cumsum(placed))),
            ),
            shape=(products.shape[1], groups),
        )
        sums = (products @ membership).tocsr()
        close = products.data >= CANDIDATE_SIMILARITY
        near = (
            sp.csr_matrix(
                (
                    np.ones(int(close.sum())),
                    products.indices[close],
                    kept_indptr(products.indptr, close),
                ),
                shape=products.shape,
            )
            @ membership
        ).tocsr()
        return sums, sums.multiply(near.astype(bool)).tocsr()

    def place(self, i: int, candidates: set[int], dot: Callable[[int], float]) -> None:
        """Title ``i`` into its issue's group, the best candidate's or a new one."""
        issue = self.issue_of[i]
        if issue < 0 and self.taken[i]:
            return
        now = self.times[i] if self.times is not None else 0.0
        if issue >= 0:
            best = self.by_issue.get(issue, -1)
            if best < 0:
                best = self.by_issue[issue] = self.new_group(issue)
            best_dot = dot(best) if self.members[best] else 0.0
        else:
            best, best_similarity, best_dot = -1, self.thresholds[i], 0.0
            for g in sorted(candidates):
                if self.closed[g] or (
                    self.times is not None and now - self.last_seen[g] > self.idle_seconds
                ):
                    continue
                d = dot(g)
                if d < self.mean_floors[i] * len(self.members[g]):
                    continue
                similarity = d / math.sqrt(self.norm2[g]) if self.norm2[g] > 0 else 0.0
                if similarity >= best_similarity and (best < 0 or similarity > best_similarity):
                    best, best_similarity, best_dot = g, similarity, d
            if best < 0:
                best = self.new_group()
        self.add(i, best, best_dot)

    def add(self, i: int, g: int, dot: float) -> None:
        """Title ``i`` into group ``g``, ``dot`` its summed similarity to the members."""
        self.members[g].append(i)
        self.norm2[g] += self.self_norm2[i] + 2 * dot
        now = self.times[i] if self.times is not None else 0.0
        self.last_seen[g] = max(self.last_seen[g], now)
        self.group_of[i] = g
        self.groups_list[i] = g
        self.placed_dot[i] = dot

    def settle(self, before: _Pass, opened: dict[int, int], rows: Rows) -> None:
        """``run``'s outcome, given ``before``, the pass whose merged groups this one pins: a
        title whose candidate groups are, as of it, ``before``'s (the same members so far)
        makes ``before``'s choice with its dot; only the others are compared again (their
        products, one title at a time). Merges change a few groups."""
        if before.neighbours is None:
            raise ValueError("a settling pass needs the pass before's pairs (merge=True)")
        self.open_issues = opened
        twins = _Twins(before.group_of, before.neighbours)
        for i in range(self.vectors.shape[0]):
            issue = self.issue_of[i]
            if issue < 0 and self.taken[i]:
                continue
            was = int(before.group_of[i])
            if issue >= 0:
                target = self.by_issue.get(issue, -1)
                same = twins.founded(was, i) if target < 0 else twins.twin[target] == was
            else:
                target = -1 if twins.founded(was, i) else twins.counterpart.get(was, -1)
                same = not twins.suspect[i] and (target >= 0 or twins.founded(was, i))
            if same:
                if target < 0:
                    target = self.new_group(issue)
                    if issue >= 0:
                        self.by_issue[issue] = target
                self.add(i, target, before.placed_dot[i])
            else:
                self.place(i, *self._compared(i, rows))
            twins.placed(self, i, was)

    def _compared(self, i: int, rows: Rows) -> tuple[set[int], Callable[[int], float]]:
        """Title ``i``'s candidate groups and its summed similarity to each group, from its
        products with the titles placed before it."""
        entries, parts = rows.entries(i)
        earlier = entries < i
        cols, at = np.unique(entries[earlier], return_inverse=True)
        values = np.bincount(at, weights=parts[earlier], minlength=len(cols))
        groups = self.group_of[cols]
        placed = groups >= 0
        groups, values = groups[placed], values[placed]
        # summed per group: one array over every group so far (thousands, in a window of
        # 100,000 titles), which costs less than sorting the few groups a title meets
        sums = np.bincount(groups, weights=values, minlength=len(self.members))
        candidates = set(np.unique(groups[values >= CANDIDATE_SIMILARITY]).tolist())
        return candidates, lambda g: float(sums[g]) if g < len(sums) else 0.0

    def merge(self, min_size: int) -> bool:
        """Fold groups of one story found apart (``merge_groups``, at the titles' join
        thresholds): new groups of at least ``min_size`` and open issues' groups. Whether any
        group was folded."""
        live = [
            not self.closed[g] and (self.issue[g] >= 0 or len(m) >= min_size)
            for g, m in enumerate(self.members)
        ]
        stored = [-1 if i in self.fresh else i for i in self.issue]
        args = (self.vectors, self.members, stored, live, self.times, self.idle_seconds)
        merged = merge_groups(*args, self.thresholds)
        folded = merged != self.members
        self.members = merged
        return folded

    def assignment(self, min_size: int) -> Assignment:
        assignment = Assignment([])
        kept, grown = [], []
        for g, members in enumerate(self.members):
            if self.issue[g] >= 0 and self.issue[g] not in self.fresh:
                joined = [i for i in members if self.stored_issue_of[i] < 0]
                if joined and not self.closed[g]:
                    assignment.joins[self.issue[g]] = joined
                    grown.append(members)
            elif len(members) >= min_size:
                kept.append(members)
        # each member's similarity summed over its group, once: the new groups' representatives
        # and every member's centrality (an issue's dossier reads it) both come from it
        everyone = kept + grown
        summed = to_own_groups(self.vectors, everyone) if everyone else np.zeros(0)
        chosen = representatives(self.vectors, kept, summed[: sum(map(len, kept))])
        for members, representative in zip(kept, chosen, strict=True):
            assignment.groups.append(Group(members, representative, leader=members[0]))
        return replace(assignment, centrality=centrality(self.vectors, everyone, summed))


class _Neighbours:
    """The pairs of titles at least CANDIDATE_SIMILARITY similar, a pass's candidates, each
    title's later ones as CSR ``indptr`` and ``indices`` (gathered step by step)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.pieces: list[tuple[np.ndarray, np.ndarray]] = []
        self.indptr = np.zeros(n + 1, dtype=np.int64)
        self.indices = np.empty(0, dtype=np.int32)

    def add(self, products: sp.csr_matrix, first: int) -> None:
        """The pairs of a step's products (rows ``first`` …) with an earlier title."""
        row_of = np.repeat(np.arange(first, first + products.shape[0]), np.diff(products.indptr))
        close = (products.data >= CANDIDATE_SIMILARITY) & (products.indices < row_of)
        self.pieces.append(
            (products.indices[close].astype(np.int32), row_of[close].astype(np.int32))
        )

    def finish(self) -> None:
        if not self.pieces:
            return
        earlier = np.concatenate([p[0] for p in self.pieces])
        later = np.concatenate([p[1] for p in self.pieces])
        self.pieces = []
        order = np.argsort(earlier, kind="stable")
        counts = np.bincount(earlier, minlength=self.n)
        self.indptr = np.concatenate(([0], np.cumsum(counts)))
        self.indices = later[order]

    def later(self, members: Sequence[int]) -> np.ndarray:
        """The titles after them that ``members`` are candidates for."""
        if not members:
            return self.indices[:0]
        return np.concatenate([self.indices[self.indptr[m] : self.indptr[m + 1]] for m in members])


class _Twins:
    """A settling pass's groups against those of the pass before (``was``: each title's group
    then): the group each one equals so far (the same members; ``twin``, -1 once they differ),
    the group of this pass equal to each one of before (``counterpart``), and the titles that
    may be placed otherwise (``suspect``: a candidate group of theirs differs)."""

    def __init__(self, was: np.ndarray, neighbours: _Neighbours) -> None:
        self.neighbours = neighbours
        placed = np.flatnonzero(was >= 0)
        groups, first = np.unique(was[placed], return_index=True)
        self.founder = dict(zip(groups.tolist(), placed[first].tolist(), strict=True))
        self.twin: list[int] = []
        self.counterpart: dict[int, int] = {}
        self.suspect = np.zeros(len(was), dtype=bool)

    def founded(self, was: int, i: int) -> bool:
        """Whether title ``i`` started its group ``was`` in the pass before."""
        return self.founder.get(was) == i

    def placed(self, state: _Pass, i: int, was: int) -> None:
        """After title ``i`` is placed: its group is still ``was``'s twin, or both differ."""
        g = int(state.group_of[i])
        if g == len(self.twin):  # a group of its own
            self.twin.append(was if self.founded(was, i) else -1)
            if self.twin[g] == was:
                self.counterpart[was] = g
                return
        elif self.twin[g] == was:
            return
        neighbours = self.neighbours
        if self.twin[g] >= 0:  # now unlike any group before: all its members' later titles
            self.counterpart.pop(self.twin[g], None)
            self.twin[g] = -1
            self.suspect[neighbours.later(state.members[g])] = True
        else:
            self.suspect[neighbours.later([i])] = True
        other = self.counterpart.pop(was, -1)
        if other >= 0:  # before's group, without i from here on
            self.twin[other] = -1
            self.suspect[neighbours.later(state.members[other])] = True


class _Dots:
    """A title's similarity summed per group: the candidates' sums, any other group's from
    the row of sums, plus what this step's titles add."""

    def __init__(
        self, dots: dict[int, float], extra: dict[int, float], groups: np.ndarray, sums: np.ndarray
    ) -> None:
        self.dots, self.extra, self.groups, self.sums = dots, extra, groups, sums

    def dot(self, g: int) -> float:
        if g not in self.dots:
            at = np.flatnonzero(self.groups == g)
            self.dots[g] = float(self.sums[at[0]]) if len(at) else 0.0
        return self.dots[g] + self.extra.get(g, 0.0)


def _within_step(products: sp.csr_matrix, first: int) -> tuple[list[int], list[int], list[float]]:
    """The step's pairs of a title with an earlier title of the same step, in order, as CSR
    ``indptr``, ``indices`` and ``data`` lists."""
    row_of = np.repeat(np.arange(products.shape[0]), np.diff(products.indptr))
    within = (products.indices >= first) & (products.indices < row_of + first)
    w_ptr = kept_indptr(products.indptr, within).tolist()
    return w_ptr, products.indices[within].tolist(), products.data[within].tolist()


def _per_title(value: float | Sequence[float], n: int) -> list[float]:
    return [float(value)] * n if isinstance(value, int | float) else [float(v) for v in value]
