"""What embedding titles costs (issue 38): CPU seconds per 1,000 titles and the process's peak
memory, Korean (ko-dev) and English (the UCI sample) apart, in a fresh process with the model
loaded once, as the cluster function embeds them (one thread).

    .venv/bin/python -m benchmarks.embedding_cost [--titles 1000]
"""

from __future__ import annotations

import argparse
import csv
import resource
import time

from benchmarks.cluster_quality import DATA
from benchmarks.cluster_sets import KO_DEV
from newsdesk.cluster.embedding import Embedder, model_name


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--titles", type=int, default=1000)
    n = parser.parse_args().titles
    with KO_DEV.open(encoding="utf-8") as handle:
        korean = [row["title"] for row in csv.DictReader(handle)]
    with DATA.open(encoding="utf-8") as handle:
        english = [row["TITLE"] for row in csv.DictReader(handle)]
    embedder = Embedder()
    started = time.process_time()
    embedder.embed(["모델 적재"])
    print(
        f"{model_name()}: loaded in {time.process_time() - started:.2f} s CPU, {peak_mb():.0f} MB"
    )
    for label, titles in (("Korean", korean), ("English", english)):
        chosen = (titles * (n // len(titles) + 1))[:n]
        embedder.memo.clear()
        distinct = len(set(chosen))
        cpu, wall = time.process_time(), time.perf_counter()
        embedder.embed(chosen)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        print(
            f"{label}: {distinct} distinct titles, {cpu / distinct * 1000:.1f} CPU s per 1,000 "
            f"({wall:.1f} s wall), peak {peak_mb():.0f} MB"
        )


if __name__ == "__main__":
    main()
