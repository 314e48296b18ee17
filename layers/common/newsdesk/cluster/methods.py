"""The clustering methods by name, with each one's recommended threshold. Importing this module
loads no scikit-learn: settings and handlers name a method without paying for one."""

from __future__ import annotations

from dataclasses import dataclass

# Each method's threshold, chosen by a sweep on the labelled UCI sample
# (benchmarks/cluster_quality.py --sweep); the seed's is the seed's.
DEFAULT_THRESHOLDS = {"seed": 0.60, "centroid": 0.15}
METHODS = tuple(DEFAULT_THRESHOLDS)


@dataclass(frozen=True)
class Group:
    members: list[int]  # indices into the titles, ascending
    representative: int  # the member most similar to the others


def check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"unknown clustering method {method!r}; expected one of {METHODS}")
    return method


def threshold_for(method: str, threshold: float | None) -> float:
    """``threshold``, or the method's recommended one when it is ``None``."""
    return DEFAULT_THRESHOLDS[check_method(method)] if threshold is None else threshold
