"""The seed's clustering (dense matrix, Python loop over each row) against cluster_titles.

Headlines are generated to look like a day of news: events of 3-30 near-paraphrased headlines
among many singletons, all sharing common words. Each measurement runs in a fresh process and
reports wall time and peak resident memory (the process's high-water mark minus its size once
the titles are built). Usage:

    .venv/bin/python benchmarks/cluster_scale.py            # N = 5,000 and 20,000 both ways,
                                                            # then cluster_titles at 100,000
    .venv/bin/python benchmarks/cluster_scale.py --sizes 2000 --big 0
    .venv/bin/python -m benchmarks.cluster_scale --methods headline newsdesk \
        --sizes 5000 20000 100000                # issue 24: time and peak RSS per method
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import random
import resource
import time
from typing import Any

from newsdesk_local.seed_reference import seed_clusters

COMMON = [
    "정부",
    "대통령",
    "국회",
    "서울",
    "오늘",
    "속보",
    "발표",
    "예정",
    "관련",
    "논란",
    "확대",
    "지원",
    "추진",
    "결정",
    "검토",
    "전망",
    "우려",
    "사고",
    "경찰",
    "시장",
    "기업",
    "경제",
    "한국",
    "미국",
    "중국",
    "올해",
    "내년",
    "최대",
    "첫",
    "사실상",
]
PARTICLES = ["", "", "", "은", "는", "이", "가", "을", "를", "에", "서", "의", "로"]
SYLLABLES = [chr(c) for c in range(0xAC00, 0xAC00 + 2000, 7)]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))


def headlines(n: int, seed: int = 20261201) -> list[str]:
    """About 40 % of titles in events of 3-30, the rest singletons; shuffled in time order."""
    rng = random.Random(seed)
    titles: list[str] = []
    while len(titles) < n:
        if rng.random() < 0.08:
            keys = [_word(rng) for _ in range(rng.randint(3, 5))]
            for _ in range(rng.randint(3, 30)):
                words = rng.sample(keys, k=len(keys) - rng.choice([0, 0, 1]))
                words += rng.sample(COMMON, k=rng.randint(1, 2))
                rng.shuffle(words)
                # a paraphrase: the same key words, now and then with another particle
                titles.append(
                    " ".join(
                        w + (rng.choice(PARTICLES) if rng.random() < 0.2 else "") for w in words
                    )
                )
        else:
            words = [_word(rng) for _ in range(rng.randint(2, 4))]
            words += rng.sample(COMMON, k=rng.randint(1, 3))
            rng.shuffle(words)
            titles.append(" ".join(w + rng.choice(PARTICLES) for w in words))
    titles = titles[:n]
    # Events unfold over the day: interleave them with everything else.
    order = sorted(range(n), key=lambda i: i + rng.gauss(0, n / 20))
    return [titles[i] for i in order]


def newsdesk_implementation(titles: list[str]) -> list[list[int]]:
    from newsdesk.clustering import cluster_titles

    return cluster_titles(titles, 0.60, 3)


def centroid_implementation(titles: list[str]) -> list[list[int]]:
    from newsdesk.clustering import DEFAULT_THRESHOLDS, cluster_titles

    return cluster_titles(titles, DEFAULT_THRESHOLDS["centroid"], 3, method="centroid")


def headline_implementation(titles: list[str]) -> list[list[int]]:
    from newsdesk.clustering import DEFAULT_THRESHOLDS, cluster_titles

    return cluster_titles(titles, DEFAULT_THRESHOLDS["headline"], 3, method="headline")


def _measure(which: str, n: int, generated: str = "") -> dict[str, Any]:
    import sklearn.feature_extraction.text  # noqa: F401  imports are not the algorithm's cost

    import newsdesk.clustering  # noqa: F401

    if generated:
        from benchmarks.headline_sets import GENERATORS

        titles = GENERATORS[generated](n).titles
    else:
        titles = headlines(n)
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cpu = time.process_time()
    started = time.perf_counter()
    implementation = {
        "seed": seed_clusters,
        "newsdesk": newsdesk_implementation,
        "centroid": centroid_implementation,
        "headline": headline_implementation,
    }[which]
    groups = implementation(titles)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    digest = hashlib.sha256(repr(groups).encode()).hexdigest()[:12]
    return {
        "seconds": seconds,
        "cpu_seconds": time.process_time() - cpu,
        "process_peak_mb": peak / 1024,
        "peak_mb": (peak - baseline) / 1024,
        "groups": len(groups),
        "clustered": sum(map(len, groups)),
        "digest": digest,
    }


def measure(which: str, n: int, generated: str = "") -> dict[str, Any]:
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        result: dict[str, Any] = pool.apply(_measure, (which, n, generated))
    return result


def methods_at_sizes(methods: list[str], sizes: list[int], generated: list[str]) -> None:
    """Issue 24's scale table: each method on each generated set at each size, one category,
    in a fresh process; wall and CPU seconds of the clustering, the whole process's peak RSS
    (interpreter, imports and titles included)."""
    print(
        f"{'set':<17} {'N':>7} {'method':<9} {'wall s':>7} {'CPU s':>6} {'process peak MB':>15} "
        f"{'groups':>7}"
    )
    for name in generated:
        for n in sizes:
            for method in methods:
                r = measure(method, n, name)
                print(
                    f"{name:<17} {n:>7} {method:<9} {r['seconds']:>7.2f} {r['cpu_seconds']:>6.2f} "
                    f"{r['process_peak_mb']:>15.0f} {r['groups']:>7}",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="*", default=[5_000, 20_000])
    parser.add_argument("--big", type=int, default=100_000, help="cluster_titles alone; 0: skip")
    parser.add_argument("--centroid", action="store_true", help="at --big, the centroid method too")
    parser.add_argument(
        "--methods",
        nargs="*",
        help="issue 24's table instead: these methods (newsdesk = seed's) on --generated sets",
    )
    parser.add_argument(
        "--generated", nargs="*", default=["varied", "small-vocabulary"], help="with --methods"
    )
    args = parser.parse_args()
    if args.methods:
        methods_at_sizes(args.methods, args.sizes, args.generated)
        return
    print(
        f"{'N':>7} {'method':<14} {'seconds':>8} {'peak MB':>8} {'groups':>7} "
        f"{'clustered':>9} {'groups digest':>14}"
    )
    for n in args.sizes:
        seed = measure("seed", n)
        ours = measure("newsdesk", n)
        for name, r in (("seed (dense)", seed), ("cluster_titles", ours)):
            print(
                f"{n:>7} {name:<14} {r['seconds']:>8.2f} {r['peak_mb']:>8.0f} {r['groups']:>7} "
                f"{r['clustered']:>9} {r['digest']:>14}"
            )
        same = "identical" if seed["digest"] == ours["digest"] else "DIFFERENT"
        print(
            f"{n:>7} groups {same}; cluster_titles {seed['seconds'] / ours['seconds']:.0f}x "
            f"faster, {seed['peak_mb'] / max(ours['peak_mb'], 1):.0f}x less peak memory"
        )
    if args.big and args.centroid:
        r = measure("centroid", args.big)
        print(
            f"{args.big:>7} {'centroid':<14} {r['seconds']:>8.2f} {r['peak_mb']:>8.0f} "
            f"{r['groups']:>7} {r['clustered']:>9} {r['digest']:>14}"
        )
    if args.big:
        r = measure("newsdesk", args.big)
        print(
            f"{args.big:>7} {'cluster_titles':<14} {r['seconds']:>8.2f} {r['peak_mb']:>8.0f} "
            f"{r['groups']:>7} {r['clustered']:>9} {r['digest']:>14}"
        )


if __name__ == "__main__":
    main()
