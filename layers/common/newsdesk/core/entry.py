"""One feed entry as the parser leaves it and the article store takes it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Entry:
    title: str
    link: str
    summary: str
    guid: str | None
    published_at: datetime | None
