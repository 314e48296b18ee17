"""One HTTP answer as the fetcher leaves it and the raw layer keeps it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field


class Headers(Mapping[str, str]):
    """Response headers as they came (their names' case kept, for the raw layer), looked up by
    name in any case: field names are case-insensitive (RFC 9110, 5.1), and a server may send
    `content-type` where another sends `Content-Type`."""

    def __init__(self, headers: Mapping[str, str] | None = None) -> None:
        self._sent = dict(headers or {})
        self._by_name = {name.lower(): value for name, value in self._sent.items()}

    def __getitem__(self, name: str) -> str:
        return self._by_name[name.lower()]

    def __iter__(self) -> Iterator[str]:
        return iter(self._sent)

    def __len__(self) -> int:
        return len(self._sent)

    def __repr__(self) -> str:
        return f"Headers({self._sent!r})"


@dataclass(frozen=True)
class FetchResult:
    url: str  # the final URL, after redirects
    status: int
    content: bytes
    headers: Mapping[str, str] = field(default_factory=Headers)
    elapsed_seconds: float = 0.0
    wire_bytes: int = 0  # body bytes as transferred (before gzip is undone)

    def __post_init__(self) -> None:
        if not isinstance(self.headers, Headers):
            object.__setattr__(self, "headers", Headers(self.headers))

    @property
    def not_modified(self) -> bool:
        return self.status == 304

    @property
    def content_type(self) -> str | None:
        return self.headers.get("Content-Type")

    def header(self, name: str) -> str | None:
        """A header's value, its name in any case."""
        return self.headers.get(name)

    @property
    def location(self) -> str | None:
        """Where a redirect leads (a 3xx's Location, as sent); None for any other answer."""
        redirect = 300 <= self.status < 400 and self.status != 304
        return self.header("Location") if redirect else None
