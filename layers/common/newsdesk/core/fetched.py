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

    def header(self, name: str) -> str | None:
        """A header's value, its name in any case."""
        wanted = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == wanted), None)

    @property
    def location(self) -> str | None:
        """Where a redirect leads (a 3xx's Location, as sent); None for any other answer."""
        redirect = 300 <= self.status < 400 and self.status != 304
        return self.header("Location") if redirect else None
