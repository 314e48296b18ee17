"""The titles a benchmark embeds, kept between its runs (.cache/embeddings/, one file per model):
the meaning method embeds a title in about 25 ms of CPU, so a labelled set is embedded once on a
machine and read back after. Only this process's embedder is seeded: the local runtime's
containers (replays) embed what they are given."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from newsdesk.cluster.embedding import model_name, shared

CACHE = Path(__file__).resolve().parent.parent / ".cache" / "embeddings"


def _path() -> Path:
    return CACHE / (re.sub(r"[^A-Za-z0-9.]+", "-", model_name()) + ".npz")


def load() -> int:
    """The cached titles put in the shared embedder's memo; how many."""
    path = _path()
    if not path.exists():
        return 0
    with np.load(path) as cached:
        shared().memo.update(zip(cached["titles"].tolist(), cached["vectors"], strict=True))
    return len(shared().memo)


def save() -> None:
    memo = shared().memo
    if memo:
        CACHE.mkdir(parents=True, exist_ok=True)
        np.savez(_path(), titles=np.array(list(memo)), vectors=np.stack(list(memo.values())))
