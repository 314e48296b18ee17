"""The outlet breaker within one message: after ``max_failures`` failed feeds, counted
cumulatively (not consecutively: a flapping outlet is as slow as a dead one), the outlet's
remaining feeds are skipped."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class OutletBreaker:
    max_failures: int
    failures: int = 0

    @property
    def is_open(self) -> bool:
        return self.failures >= self.max_failures

    def record_failure(self) -> None:
        self.failures += 1
