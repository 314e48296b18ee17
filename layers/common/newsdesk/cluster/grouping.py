"""Titles in, groups out, by the method named: the one entry point the job and the tests use."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from newsdesk.cluster.centroid import HEADLINE_MEAN_FLOOR, WINDOW_SECONDS, centroid_groups
from newsdesk.cluster.meaning import meaning_groups
from newsdesk.cluster.methods import (
    DEFAULT_METHOD,
    DEFAULT_MIN_SIZE,
    DEFAULT_THRESHOLD,
    Assignment,
    Group,
    Standing,
    check_method,
)
from newsdesk.cluster.seed import seed_groups


def cluster_titles(
    titles: Sequence[str],
    threshold: float = DEFAULT_THRESHOLD,
    min_size: int = DEFAULT_MIN_SIZE,
    method: str = DEFAULT_METHOD,
) -> list[list[int]]:
    """Groups of indices into ``titles``, ascending, in the order they are found. ``method``
    is one of ``METHODS``; each has its recommended threshold in ``DEFAULT_THRESHOLDS``."""
    return [group.members for group in find_groups(titles, threshold, min_size, method=method)]


def find_groups(
    titles: Sequence[str],
    threshold: float = DEFAULT_THRESHOLD,
    min_size: int = DEFAULT_MIN_SIZE,
    taken: Sequence[bool] | None = None,
    method: str = DEFAULT_METHOD,
    times: Sequence[float] | None = None,
    embeddings: np.ndarray | None = None,
) -> list[Group]:
    """``taken`` marks titles that count for the vectors (their words shape the seed's IDF) but are
    already in an issue and cannot be gathered again. ``times`` (seconds, ascending) lets the
    centroid method forget groups idle for longer than its window. ``embeddings``: the meaning
    method's title vectors, one row per title (unset: the titles are embedded)."""
    return assign(
        titles, threshold, min_size, taken=taken, method=method, times=times, embeddings=embeddings
    ).groups


def assign(
    titles: Sequence[str],
    threshold: float = DEFAULT_THRESHOLD,
    min_size: int = DEFAULT_MIN_SIZE,
    taken: Sequence[bool] | None = None,
    method: str = DEFAULT_METHOD,
    times: Sequence[float] | None = None,
    standing: Standing | None = None,
    idle_seconds: float = WINDOW_SECONDS,
    embeddings: np.ndarray | None = None,
) -> Assignment:
    """As ``find_groups``, and with ``standing`` the free titles that join open issues (a
    title with an issue in ``standing`` is taken). ``idle_seconds``: how long the centroid
    method's groups, issues among them, take new members after their newest."""
    if min_size < 1:
        raise ValueError("min_size must be at least 1")
    check_method(method)
    is_taken = _taken(len(titles), taken, standing)
    if len(titles) == 0:
        return Assignment([])
    args = (titles, threshold, min_size, is_taken, times, standing, idle_seconds)
    if method == "centroid":
        return centroid_groups(*args)
    if method == "headline":
        return centroid_groups(*args, "headline", mean_floor=HEADLINE_MEAN_FLOOR, merge=True)
    if method == "meaning":
        return meaning_groups(*args, embeddings=embeddings)
    return seed_groups(titles, threshold, min_size, is_taken, standing)


def _taken(n: int, taken: Sequence[bool] | None, standing: Standing | None) -> np.ndarray:
    """One flag per title: taken, or in an issue of ``standing``."""
    is_taken = np.zeros(n, dtype=bool) if taken is None else np.array(taken, dtype=bool)
    if is_taken.shape != (n,):
        raise ValueError("taken must have one flag per title")
    if standing is not None:
        if len(standing.issue_of) != n:
            raise ValueError("standing must name one issue (or -1) per title")
        is_taken |= np.asarray(standing.issue_of) >= 0
    return is_taken
