"""Article-extraction quality and CPU on the benchmark beside the repository (issue 14).

    .venv/bin/python benchmarks/extraction_quality.py
    .venv/bin/python benchmarks/extraction_quality.py --data PATH --rounds 3

The data (``html/<key>.html.gz`` and ``ground-truth.json``) is half of the public
article-extraction benchmark, by default ``../shared/data/article-extraction`` beside the
repository, else /work/shared/data/article-extraction. Every configuration runs in the same
process on the same pages: stock trafilatura (``trafilatura.extract(html)``, its defaults),
trafilatura asked for precision without comments (one call, newsdesk's first), and newsdesk's
``extract_text``.
Quality is the benchmark's metric (newsdesk_local.extraction_metric); CPU is process time per
page, the least of ``--rounds`` rounds after one warm-up pass, so the configurations compare.
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from collections.abc import Callable
from pathlib import Path

import trafilatura

from newsdesk.extract.text import extract_text
from newsdesk_local.extraction_metric import Quality, quality

ROOT = Path(__file__).resolve().parents[1]
CANDIDATES = (
    ROOT.parent / "shared" / "data" / "article-extraction",
    Path("/work/shared/data/article-extraction"),
)


def default_data() -> Path:
    for path in CANDIDATES:
        if (path / "ground-truth.json").is_file():
            return path
    return CANDIDATES[0]


def load(path: Path) -> tuple[dict[str, bytes], dict[str, str]]:
    truth = json.loads((path / "ground-truth.json").read_text(encoding="utf-8"))
    pages = {key: gzip.decompress((path / "html" / f"{key}.html.gz").read_bytes()) for key in truth}
    return pages, {key: item.get("articleBody") or "" for key, item in truth.items()}


def stock(html: bytes) -> str:
    return trafilatura.extract(html) or ""


def precise(html: bytes) -> str:
    return trafilatura.extract(html, favor_precision=True, include_comments=False) or ""


def newsdesk(html: bytes) -> str:
    return extract_text(html).text


CONFIGURATIONS: dict[str, Callable[[bytes], str]] = {
    "trafilatura (stock)": stock,
    "trafilatura precision, no comments": precise,
    "newsdesk extract_text": newsdesk,
}


def measure(
    extract: Callable[[bytes], str], pages: dict[str, bytes], rounds: int
) -> tuple[dict[str, str], float]:
    """Each page's text and the least CPU milliseconds per page over the rounds."""
    for html in list(pages.values())[:5]:
        extract(html)
    best = float("inf")
    texts: dict[str, str] = {}
    for _ in range(rounds):
        start = time.process_time()
        texts = {key: extract(html) for key, html in pages.items()}
        best = min(best, (time.process_time() - start) * 1000 / len(pages))
    return texts, best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help="the benchmark's folder")
    parser.add_argument("--rounds", type=int, default=1, help="timed rounds per configuration")
    args = parser.parse_args()
    data = args.data or default_data()
    pages, truth = load(data)
    print(f"{len(pages)} pages from {data}")
    print(f"{'configuration':36s} {'precision':>9s} {'recall':>7s} {'F1':>6s} {'CPU ms/page':>12s}")
    cpu: dict[str, float] = {}
    for name, extract in CONFIGURATIONS.items():
        texts, cpu[name] = measure(extract, pages, max(1, args.rounds))
        scores: Quality = quality((truth[key], texts[key]) for key in truth)
        print(
            f"{name:36s} {scores.precision:9.3f} {scores.recall:7.3f} {scores.f1:6.3f}"
            f" {cpu[name]:12.1f}"
        )
    ratio = cpu["newsdesk extract_text"] / cpu["trafilatura (stock)"]
    print(f"newsdesk CPU / stock trafilatura CPU: {ratio:.2f}")


if __name__ == "__main__":
    main()
