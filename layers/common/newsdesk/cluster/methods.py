"""The clustering methods by name, with each one's recommended threshold. Importing this module
loads no scikit-learn: settings and handlers name a method without paying for one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from newsdesk.core.settings import CLUSTER_METHODS, METHOD_THRESHOLDS, ClusterSettings

# Each method's threshold, declared with the cluster stage's settings (core.settings.cluster,
# which sits below the stages and validates CLUSTER_METHOD).
DEFAULT_THRESHOLDS = METHOD_THRESHOLDS
METHODS = CLUSTER_METHODS
# What ``cluster_titles``, ``find_groups`` and ``assign`` use when not told: the seed's method
# and threshold (DESIGN.md's contract: ``cluster_titles(titles)`` is the seed's groups), and
# CLUSTER_MIN_SIZE's default. A deployment's runs take CLUSTER_METHOD's default instead
# (``job.ClusterPolicy``, issue 38: the meaning method).
DEFAULT_METHOD = "seed"
DEFAULT_THRESHOLD = DEFAULT_THRESHOLDS[DEFAULT_METHOD]
DEFAULT_MIN_SIZE = ClusterSettings.cluster_min_size


@dataclass(frozen=True)
class Group:
    members: list[int]  # indices into the titles, ascending
    representative: int  # the member most similar to the others
    leader: int | None = None  # the seed's: the title that gathered the others


@dataclass(frozen=True)
class Standing:
    """What a window's titles already belong to, for a pass that grows open issues (issue 15).

    ``issue_of``: each title's issue id, -1 for a free title. ``open``: the issues that take
    members in this pass, each with the index of its leader title in the window (-1 when the
    leader is not in it); a title of any other issue is taken and joins nothing.
    """

    issue_of: Sequence[int]
    open: Mapping[int, int]


@dataclass(frozen=True)
class Assignment:
    """A pass's outcome: new groups (of at least the minimum size) and, per open issue, the
    free titles that join it (ascending)."""

    groups: list[Group]
    joins: dict[int, list[int]] = field(default_factory=dict)
    # each title of a new group or of a growing issue (the members in the window): its mean
    # similarity to the others, by the method's own measure (an issue's dossier picks its
    # representative by it)
    centrality: dict[int, float] = field(default_factory=dict)


def check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"unknown clustering method {method!r}; expected one of {METHODS}")
    return method


def threshold_for(method: str, threshold: float | None) -> float:
    """``threshold``, or the method's recommended one when it is ``None``."""
    return DEFAULT_THRESHOLDS[check_method(method)] if threshold is None else threshold
