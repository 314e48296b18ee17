"""The centroid method's analysers side by side (issue 15, point 5): character n-grams
(``char``), Kiwi's content morphemes (``morph``) and both (``char+morph``).

1. Quality on the labelled English UCI sample (benchmarks/cluster_quality.py's ``load`` and
   newsdesk_local.quality's ``score``), each analyser at the centroid threshold and a small
   sweep, with seconds per run; then, for the best threshold of each, a paired bootstrap over
   the stories of its pooled pairwise F1 minus char's (the noise the decision rule asks about).
2. The Korean paraphrases of tests/korean_pairs.py: each pair's cosine under each analyser,
   in one corpus of all those headlines and the background ones, as a window would hold them.
3. Cost: what kiwipiepy adds to the cluster image on disk (pip install --target, with and
   without it), Kiwi's import, build and first call in a fresh interpreter, and the cluster
   handler's import in a folder laid out as the image (as tests/test_deploy_units.py lays it).

Run from the repository root (it imports ``benchmarks`` and ``tests`` as packages):

    .venv/bin/python -m benchmarks.korean_analyser --data ../shared/data/uci_news_5k.csv
    .venv/bin/python -m benchmarks.korean_analyser --no-costs     # quality only
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from benchmarks.cluster_quality import DATA, load
from newsdesk.cluster.centroid import centroid_pass, strip_tags
from newsdesk.cluster.methods import DEFAULT_THRESHOLDS
from newsdesk.cluster.vectors import without_common
from newsdesk_local.korean import ANALYSERS
from newsdesk_local.korean import analysed_vectors as centroid_vectors
from newsdesk_local.quality import Scores, score
from tests.korean_pairs import BACKGROUND, DIFFERENT_EVENT, SAME_EVENT, WINDOW

ROOT = Path(__file__).resolve().parent.parent
THRESHOLD = DEFAULT_THRESHOLDS["centroid"]
SWEEP = {
    "char": [0.27, 0.30, 0.33],
    "morph": [0.20, 0.25, 0.30, 0.35, 0.40],
    "char+morph": [0.24, 0.27, 0.30, 0.33, 0.36],
}
KIWI_REQUIREMENT = "kiwipiepy>=0.24,<0.25"
Data = dict[str, list[dict[str, str]]]


def cluster(data: Data, analyser: str, threshold: float) -> tuple[dict[str, str], list[list[str]]]:
    """Each group (category) in time order, as benchmarks/cluster_quality.py's ``evaluate``
    does through ``find_groups``, but with the analyser named."""
    gold: dict[str, str] = {}
    predicted: list[list[str]] = []
    for rows in data.values():
        titles = [r["_title"] for r in rows]
        times = [float(r["_order"]) / 1000 for r in rows]  # UCI's are milliseconds
        taken = np.zeros(len(rows), dtype=bool)
        vectors = without_common(centroid_vectors([strip_tags(t) for t in titles], analyser))
        for group in centroid_pass(vectors, threshold, 3, taken, times).groups:
            predicted.append([rows[i]["_id"] for i in group.members])
        gold.update({r["_id"]: r["_gold"] for r in rows})
    return gold, predicted


def bootstrap_f1(
    gold: dict[str, str], predicted: list[list[str]], weights: np.ndarray, stories: list[str]
) -> np.ndarray:
    """Pooled pairwise F1 on each resample of the stories (``weights``: resamples × stories,
    how often each story is drawn; a story drawn twice is two stories, so its copies put in
    one issue are false pairs)."""
    column = {story: k for k, story in enumerate(stories)}
    cluster_of = {item: number for number, group in enumerate(predicted) for item in group}
    cells: dict[tuple[int, int], int] = {}
    for item, story in gold.items():
        if item in cluster_of:
            key = (cluster_of[item], column[story])
            cells[key] = cells.get(key, 0) + 1
    clusters = np.array([c for c, _ in cells], dtype=np.int64)
    cell_story = np.array([s for _, s in cells], dtype=np.int64)
    counts = np.array(list(cells.values()), dtype=np.float64)
    story_sizes = np.bincount([column[s] for s in gold.values()], minlength=len(stories))
    true_pairs = weights[:, cell_story] @ (counts * (counts - 1) / 2)
    gold_pairs = weights @ (story_sizes * (story_sizes - 1) / 2)
    by_cluster = sp.csr_matrix(
        (counts, (cell_story, clusters)), shape=(len(stories), max(len(predicted), 1))
    )
    sizes = np.asarray(by_cluster.T @ weights.T).T  # resamples × clusters
    predicted_pairs = (sizes * (sizes - 1) / 2).sum(axis=1)
    precision = np.divide(true_pairs, predicted_pairs, out=np.ones_like(true_pairs),
                          where=predicted_pairs > 0)  # fmt: skip
    recall = true_pairs / gold_pairs
    return np.asarray(2 * precision * recall / np.maximum(precision + recall, 1e-12))


def quality(data: Data, resamples: int) -> dict[str, float]:
    """The table and the bootstrap; each analyser's best threshold."""
    print(
        f"{'analyser':<10} {'thresh':>6} {'pair P':>7} {'pair R':>7} {'pair F1':>7} "
        f"{'B3 F1':>6} {'issues':>6} {'sec':>6}"
    )
    best: dict[str, tuple[float, float, dict[str, str], list[list[str]]]] = {}
    for analyser in ANALYSERS:
        centroid_vectors(["워밍업 한국어 제목"], analyser)  # Kiwi's loading is not a run's time
        for threshold in SWEEP[analyser]:
            started = time.perf_counter()
            gold, predicted = cluster(data, analyser, threshold)
            seconds = time.perf_counter() - started
            s: Scores = score(gold, predicted)
            print(
                f"{analyser:<10} {threshold:>6.2f} {s.pairwise_precision:>7.3f} "
                f"{s.pairwise_recall:>7.3f} {s.pairwise_f1:>7.3f} {s.bcubed_f1:>6.3f} "
                f"{s.issues:>6} {seconds:>6.2f}"
            )
            if analyser not in best or s.pairwise_f1 > best[analyser][1]:
                best[analyser] = (threshold, s.pairwise_f1, gold, predicted)
    stories = sorted({story for rows in data.values() for story in (r["_gold"] for r in rows)})
    rng = np.random.default_rng(15)
    weights = rng.multinomial(len(stories), [1 / len(stories)] * len(stories), size=resamples)
    f1s = {
        (analyser, threshold): bootstrap_f1(gold, predicted, weights.astype(np.float64), stories)
        for analyser, (threshold, _, gold, predicted) in best.items()
    }
    gold, default_predicted = cluster(data, "char", THRESHOLD)
    f1s["char", THRESHOLD] = bootstrap_f1(
        gold, default_predicted, weights.astype(np.float64), stories
    )
    print(
        f"\npaired bootstrap over the {len(stories)} stories ({resamples} resamples): pooled "
        "pair F1 of each analyser at its best threshold minus char's, 95% interval"
    )
    for analyser, (threshold, f1, _, _) in best.items():
        against = [
            f"char at {reference:.2f} [{low:+.3f}, {high:+.3f}]"
            for reference in sorted({THRESHOLD, best["char"][0]})
            for low, high in [
                np.percentile(f1s[analyser, threshold] - f1s["char", reference], [2.5, 97.5])
            ]
        ]
        print(f"  {analyser:<10} at {threshold:.2f} (F1 {f1:.3f}) minus " + ", ".join(against))
    return {analyser: threshold for analyser, (threshold, _, _, _) in best.items()}


def korean(best: dict[str, float]) -> None:
    titles = sorted({t for pair in SAME_EVENT + DIFFERENT_EVENT for t in pair}) + BACKGROUND
    row = {title: i for i, title in enumerate(titles)}
    print(
        f"\nKorean pairs (tests/korean_pairs.py), cosine in one corpus of {len(titles)} "
        "headlines: same event (must be high) | different event sharing a word (must be low)"
    )
    for analyser in ANALYSERS:
        vectors = centroid_vectors([strip_tags(t) for t in titles], analyser)
        similarity = (vectors @ vectors.T).toarray()
        same = [similarity[row[a], row[b]] for a, b in SAME_EVENT]
        different = [similarity[row[a], row[b]] for a, b in DIFFERENT_EVENT]
        print(
            f"  {analyser:<10} same {' '.join(f'{x:.2f}' for x in same)} | "
            f"different {' '.join(f'{x:.2f}' for x in different)}"
        )
        print(
            f"  {'':<10} lowest same {min(same):.3f}, highest different {max(different):.3f}, "
            f"margin {min(same) - max(different):+.3f}; at {THRESHOLD:.2f}: same joined "
            f"{sum(x >= THRESHOLD for x in same)}/{len(same)}, different kept apart "
            f"{sum(x < THRESHOLD for x in different)}/{len(different)}"
        )
    print(
        f"\nthe window of tests/korean_pairs.py ({len(WINDOW)} headlines) clustered, min size 2: "
        "same-event pairs together, other events joined to one, background headlines grouped"
    )
    events = {t for pair in SAME_EVENT + DIFFERENT_EVENT for t in pair}
    for analyser in ANALYSERS:
        for threshold in sorted({THRESHOLD, best[analyser]}):
            taken = np.zeros(len(WINDOW), dtype=bool)
            groups = [
                {WINDOW[i] for i in group.members}
                for group in centroid_pass(
                    without_common(centroid_vectors([strip_tags(t) for t in WINDOW], analyser)),
                    threshold,
                    2,
                    taken,
                ).groups
            ]
            together = [any(a in g and b in g for g in groups) for a, b in SAME_EVENT]
            joined = [any(a in g and b in g for g in groups) for a, b in DIFFERENT_EVENT]
            grouped = sum(t not in events for g in groups for t in g)
            print(
                f"  {analyser:<10} at {threshold:.2f}: together {sum(together)}/{len(together)}, "
                f"joined {sum(joined)}/{len(joined)} "
                f"({', '.join(str(k) for k, j in enumerate(joined) if j) or 'none'}), "
                f"background grouped {grouped}/{len(BACKGROUND)}"
            )


def install(target: Path, requirements: Sequence[str]) -> float:
    """pip install into ``target``; its size in MB."""
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "--target", str(target), *requirements],
        check=True,
    )  # fmt: skip
    return _megabytes(target)


def _megabytes(path: Path) -> float:
    files = [path] if path.is_file() else [f for f in path.rglob("*") if f.is_file()]
    return sum(f.stat().st_size for f in files) / 1e6


def timed(python: str, code: str, cwd: Path, runs: int) -> dict[str, float]:
    """The medians of the timings ``code`` prints as JSON, each run a fresh interpreter."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PYTHON"))},
        "DATABASE_URL": "postgresql://unused@127.0.0.1:9/none",
        "AWS_DEFAULT_REGION": "ap-northeast-2",
        "POWERTOOLS_METRICS_NAMESPACE": "newsdesk",
    }
    samples = []
    for _ in range(runs):
        run = [python, "-I", "-S", "-c", code]
        done = subprocess.run(run, cwd=cwd, env=env, capture_output=True, text=True, check=True)
        samples.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {key: statistics.median(s[key] for s in samples) for key in samples[0]}


IMPORT_APP = """
import json, sys, time
sys.path.insert(0, ".")
started = time.perf_counter()
import app
print(json.dumps({"import app": time.perf_counter() - started,
                  "kiwipiepy loaded": float("kiwipiepy" in sys.modules)}))
"""
LOAD_KIWI = """
import json, resource, sys, time
sys.path.insert(0, ".")
started = time.perf_counter()
from kiwipiepy import Kiwi
imported = time.perf_counter()
kiwi = Kiwi({options})
built = time.perf_counter()
kiwi.tokenize("한국은행이 기준금리를 3.5%로 동결했다")
called = time.perf_counter()
print(json.dumps({{"import": imported - started, "Kiwi()": built - imported,
                  "first call": called - built, "total": called - started,
                  "peak RSS MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""
FIRST_MORPH = """
import json, sys, time
sys.path.insert(0, ".")
import app
from newsdesk_local.korean import analysed_vectors
started = time.perf_counter()
analysed_vectors(["한국은행이 기준금리를 3.5%로 동결했다"], "char+morph")
print(json.dumps({"first char+morph call": time.perf_counter() - started}))
"""


def costs(runs: int) -> None:
    common = str(ROOT / "layers" / "common" / "requirements.txt")
    cluster_requirements = str(ROOT / "functions" / "cluster" / "requirements.txt")
    image = ["boto3", "-r", common, "-r", cluster_requirements]
    python = sys.executable
    with tempfile.TemporaryDirectory() as scratch:
        without, with_kiwi = Path(scratch) / "without", Path(scratch) / "with"
        size_without = install(without, image)
        size_with = install(with_kiwi, [*image, KIWI_REQUIREMENT])
        added = {
            entry.name: _megabytes(entry)
            for entry in sorted(with_kiwi.iterdir())
            if not (without / entry.name).exists()
        }
        print(
            f"\ncluster image's packages (pip install --target, {sys.platform}, "
            f"Python {sys.version_info.major}.{sys.version_info.minor}): "
            f"{size_without:.0f} MB without kiwipiepy, {size_with:.0f} MB with "
            f"(+{size_with - size_without:.0f} MB)"
        )
        print("  added: " + ", ".join(f"{name} {mb:.1f} MB" for name, mb in added.items()))
        for folder in (without, with_kiwi):
            shutil.copytree(ROOT / "layers" / "common" / "newsdesk", folder / "newsdesk")
            # the analyser Kiwi would ship as, were it kept (issue 24 moved it out)
            (folder / "newsdesk_local").mkdir()
            (folder / "newsdesk_local" / "__init__.py").touch()
            shutil.copy(ROOT / "local" / "newsdesk_local" / "korean.py", folder / "newsdesk_local")
            shutil.copy(ROOT / "functions" / "cluster" / "app.py", folder)
        print(f"\nfresh interpreters (-I -S, the image's folder), medians of {runs} runs, seconds:")
        for name, folder in (("without kiwipiepy", without), ("with kiwipiepy", with_kiwi)):
            print(f"  import app, {name}: {_shown(timed(python, IMPORT_APP, folder, runs))}")
        for options in ("", "load_typo_dict=False, load_multi_dict=False"):
            shown = _shown(timed(python, LOAD_KIWI.format(options=options), with_kiwi, runs))
            print(f"  Kiwi({options}): {shown}")
        print(f"  after import app: {_shown(timed(python, FIRST_MORPH, with_kiwi, runs))}")


def _shown(timings: dict[str, float]) -> str:
    return ", ".join(f"{key} {value:.3f}" for key, value in timings.items())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-costs", action="store_true", help="skip the installs and timings")
    args = parser.parse_args()
    data = load(args.data, "TITLE", "CATEGORY", "TIMESTAMP", "STORY")
    print(f"{args.data.name}: {sum(map(len, data.values()))} headlines, {len(data)} groups")
    best = quality(data, args.resamples)
    korean(best)
    if not args.no_costs:
        costs(args.runs)


if __name__ == "__main__":
    main()
