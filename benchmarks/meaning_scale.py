"""The meaning method at volume (issue 38): the first 5,000, 20,000 and 100,000 titles of a
generated set of 100,000 (one category, a day), clustered from stored vectors. Each
measurement is a process of its own that reads the titles (with their times and stories) and
their vectors from files, imports, clusters and exits: its wall and CPU seconds from start to
exit, the clustering's share of them, its peak resident memory, and the pooled pairwise F1 of
what it found (groups below 3 as singles). Python keeps the bytecode it compiles, as on a
user's machine (an environment's PYTHONDONTWRITEBYTECODE is dropped, and a first measurement
runs unmeasured).

The vectors are the bundled model's, made once and kept in .cache/embeddings/ (about 25 ms of
CPU a title: 40 CPU minutes a set, spread over a process per core, 20 minutes on two):

    .venv/bin/python -m benchmarks.meaning_scale --embed      # once
    .venv/bin/python -m benchmarks.meaning_scale              # the table
    .venv/bin/python -m benchmarks.meaning_scale --sets varied --sizes 100000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from benchmarks.embedding_cache import CACHE

SIZE = 100_000
SETS = ("varied", "small-vocabulary")


def _path(name: str) -> Path:
    return CACHE / f"generated-{name}-{SIZE}.npz"


def _titles_path(name: str) -> Path:
    return CACHE / f"generated-{name}-{SIZE}.json"


def write_titles(name: str) -> None:
    """The set's titles, times and stories in a file, for the measurements to read."""
    from benchmarks.headline_sets import GENERATORS

    made = GENERATORS[name](SIZE)
    kept = {"titles": made.titles, "times": made.times, "stories": made.stories}
    _titles_path(name).write_text(json.dumps(kept, ensure_ascii=False), encoding="utf-8")


# Titles embedded by one call (a process of the pool's): the batches within a chunk are the same
# whichever process embeds it, so the vectors are too.
CHUNK = 6400


def _embedded(titles: list[str]) -> np.ndarray:
    from newsdesk.cluster.embedding import Embedder

    return Embedder().embed(titles)


def embed(name: str) -> None:
    """The set's titles through the model, a chunk per process at a time, kept for the
    measurements."""
    from benchmarks.headline_sets import GENERATORS
    from newsdesk.cluster.embedding import _text

    titles = sorted({_text(t) for t in GENERATORS[name](SIZE).titles} - {""})
    chunks = [titles[start : start + CHUNK] for start in range(0, len(titles), CHUNK)]
    vectors = []
    with ProcessPoolExecutor(os.cpu_count()) as pool:
        for vectors_of_chunk in pool.map(_embedded, chunks):
            vectors.append(vectors_of_chunk)
            done = sum(len(v) for v in vectors)
            print(f"{name}: {done:,} of {len(titles):,}", flush=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.savez(_path(name), titles=np.array(titles), vectors=np.concatenate(vectors))


def one(name: str, n: int) -> None:
    """One measurement, in this process (``--one``): prints a JSON line."""
    cpu, wall = time.process_time(), time.perf_counter()
    from newsdesk.cluster.embedding import _text
    from newsdesk.clustering import DEFAULT_THRESHOLDS, find_groups
    from newsdesk_local.quality import score

    made = json.loads(_titles_path(name).read_text(encoding="utf-8"))
    titles, times, stories = made["titles"][:n], made["times"][:n], made["stories"][:n]
    with np.load(_path(name)) as stored:
        row = {t: i for i, t in enumerate(stored["titles"].tolist())}
        vectors = stored["vectors"][[row[_text(t)] for t in titles]]
    clustering = time.perf_counter()
    groups = find_groups(
        titles, DEFAULT_THRESHOLDS["meaning"], 3, method="meaning", times=times, embeddings=vectors
    )
    clustered = time.perf_counter() - clustering
    f1 = score(dict(enumerate(stories)), [g.members for g in groups]).pairwise_f1
    print(
        json.dumps(
            {
                "cluster_seconds": clustered,
                "inside_seconds": time.perf_counter() - wall,
                "inside_cpu": time.process_time() - cpu,
                "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "groups": len(groups),
                "f1": f1,
            }
        )
    )


def measure(name: str, n: int) -> dict[str, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    command = [sys.executable, "-m", "benchmarks.meaning_scale", "--one", name, str(n)]
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=environ)
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result["seconds"] = time.perf_counter() - started
    result["cpu"] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sets", nargs="*", default=list(SETS), choices=SETS)
    parser.add_argument("--sizes", type=int, nargs="*", default=[5_000, 20_000, SIZE])
    parser.add_argument("--embed", action="store_true", help="embed the sets first (once)")
    parser.add_argument("--one", nargs=2, metavar=("SET", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(args.one[0], int(args.one[1]))
        return
    missing = [name for name in args.sets if args.embed or not _path(name).exists()]
    if missing and not args.embed:
        sys.exit(f"no stored vectors for {', '.join(missing)}: run with --embed first")
    for name in missing:
        embed(name)
    if not args.sets:
        parser.error("--sets: at least one")
    for name in args.sets:
        if name in missing or not _titles_path(name).exists():
            write_titles(name)
    measure(args.sets[0], 1000)  # unmeasured: the imports' bytecode compiled and kept
    print(
        f"{'set':<17} {'N':>7} {'whole s':>8} {'CPU s':>6} {'cluster s':>9} {'peak MB':>8} "
        f"{'groups':>7} {'F1':>6}"
    )
    for name in args.sets:
        for n in args.sizes:
            r = measure(name, n)
            print(
                f"{name:<17} {n:>7,} {r['seconds']:>8.1f} {r['cpu']:>6.1f} "
                f"{r['cluster_seconds']:>9.1f} {r['peak_mb']:>8.0f} {r['groups']:>7.0f} "
                f"{r['f1']:>6.3f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
