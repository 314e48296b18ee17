"""Clustering quality on labelled headlines: each group (category) clustered in time order with
a method and threshold, scored against the gold stories.

    .venv/bin/python benchmarks/cluster_quality.py                       # seed, 0.60
    .venv/bin/python benchmarks/cluster_quality.py --method centroid --threshold 0.3
    .venv/bin/python benchmarks/cluster_quality.py --method centroid --sweep 0.1 0.6 0.05

The default data is the UCI News Aggregator sample beside the repository
(../shared/data/uci_news_5k.csv); --title, --group, --order and --gold name other columns.
"""

from __future__ import annotations

import argparse
import csv
import time
from collections import defaultdict
from pathlib import Path

from newsdesk.clustering import DEFAULT_THRESHOLDS, METHODS, find_groups
from newsdesk_local.quality import Scores, score

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "uci_news_5k.csv"


def load(
    path: Path, title: str, group: str, order: str, gold: str
) -> dict[str, list[dict[str, str]]]:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    by_group: dict[str, list[dict[str, str]]] = defaultdict(list)
    for number, row in enumerate(rows):
        row["_id"] = str(number)
        row["_title"], row["_gold"], row["_order"] = row[title], row[gold], row[order]
        by_group[row[group]].append(row)
    for members in by_group.values():
        members.sort(key=lambda r: (float(r["_order"]), int(r["_id"])))
    return by_group


def evaluate(
    data: dict[str, list[dict[str, str]]],
    method: str,
    threshold: float,
    min_size: int,
    times_in_ms: bool,
) -> tuple[Scores, float]:
    gold: dict[str, str] = {}
    predicted: list[list[str]] = []
    started = time.perf_counter()
    for rows in data.values():
        titles = [r["_title"] for r in rows]
        times = [float(r["_order"]) / (1000 if times_in_ms else 1) for r in rows]
        for group in find_groups(titles, threshold, min_size, method=method, times=times):
            predicted.append([rows[i]["_id"] for i in group.members])
        gold.update({r["_id"]: r["_gold"] for r in rows})
    return score(gold, predicted), time.perf_counter() - started


HEADER = (
    f"{'method':<9} {'thresh':>6} {'pair P':>7} {'pair R':>7} {'pair F1':>7} {'B3 P':>6} "
    f"{'B3 R':>6} {'B3 F1':>6} {'ARI':>6} {'placed':>7} {'issues':>6} {'sec':>6}"
)


def row(method: str, threshold: float, s: Scores, seconds: float) -> str:
    return (
        f"{method:<9} {threshold:>6.2f} {s.pairwise_precision:>7.3f} {s.pairwise_recall:>7.3f} "
        f"{s.pairwise_f1:>7.3f} {s.bcubed_precision:>6.3f} {s.bcubed_recall:>6.3f} "
        f"{s.bcubed_f1:>6.3f} {s.adjusted_rand:>6.3f} {s.placed_share:>7.3f} {s.issues:>6} "
        f"{seconds:>6.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--title", default="TITLE")
    parser.add_argument("--group", default="CATEGORY")
    parser.add_argument("--order", default="TIMESTAMP")
    parser.add_argument("--gold", default="STORY")
    parser.add_argument(
        "--order-in-seconds",
        action="store_true",
        help="the order column is seconds (default: milliseconds, as UCI)",
    )
    parser.add_argument("--method", choices=METHODS, default="seed")
    parser.add_argument("--threshold", type=float)
    parser.add_argument("--min-size", type=int, default=3)
    parser.add_argument("--sweep", type=float, nargs=3, metavar=("FROM", "TO", "STEP"))
    args = parser.parse_args()
    data = load(args.data, args.title, args.group, args.order, args.gold)
    print(
        f"{args.data.name}: {sum(map(len, data.values()))} headlines, {len(data)} groups, "
        f"{len({r['_gold'] for rows in data.values() for r in rows})} stories; "
        f"min size {args.min_size}"
    )
    print(HEADER)
    if args.sweep:
        start, stop, step = args.sweep
        thresholds = [round(start + k * step, 4) for k in range(int((stop - start) / step + 1.5))]
    else:
        thresholds = [
            args.threshold if args.threshold is not None else DEFAULT_THRESHOLDS[args.method]
        ]
    for threshold in thresholds:
        scores, seconds = evaluate(
            data, args.method, threshold, args.min_size, not args.order_in_seconds
        )
        print(row(args.method, threshold, scores, seconds))


if __name__ == "__main__":
    main()
