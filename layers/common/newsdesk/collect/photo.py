"""The photo-news filter: titles that start with a photo tag carry no text to summarise."""

from __future__ import annotations

import re
from collections.abc import Iterable


class PhotoFilter:
    def __init__(self, patterns: Iterable[str]) -> None:
        alternatives = "|".join(f"(?:{pattern})" for pattern in patterns)
        self._pattern = re.compile(alternatives) if alternatives else None

    def is_photo(self, title: str) -> bool:
        return self._pattern is not None and self._pattern.match(title.strip()) is not None
