"""One HTTP answer as the fetcher leaves it and the raw layer keeps it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class FetchResult:
    url: str  # the final URL, after redirects
    status: int
    content: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    elapsed_seconds: float = 0.0
    wire_bytes: int = 0  # body bytes as transferred (before gzip is undone)

    @property
    def not_modified(self) -> bool:
        return self.status == 304

    @property
    def content_type(self) -> str | None:
        return self.headers.get("Content-Type")
