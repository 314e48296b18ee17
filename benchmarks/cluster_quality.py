"""Clustering quality on labelled headlines, scored against the gold stories: one run over the
whole stream (each group, the category, clustered in time order in this process), and replays of
the stream through the clustering job as it runs, `newsdesk cluster --at T` every 30 minutes and
every 12 hours, scored on the issues stored at the end (newsdesk_local.replay).

    .venv/bin/python benchmarks/cluster_quality.py                  # seed 0.60 and centroid 0.15
    .venv/bin/python benchmarks/cluster_quality.py --method centroid --cadence 30m
    .venv/bin/python benchmarks/cluster_quality.py --method centroid --threshold 0.3 --cadence
    .venv/bin/python benchmarks/cluster_quality.py --method centroid --sweep 0.1 0.6 0.05
    .venv/bin/python -m benchmarks.cluster_quality --sets --replay --sizes 5000 20000 100000

--sets (issue 24) reports every labelled set instead, each with a 95 % bootstrap interval over
stories, for one run and (--replay) for replays every 30 minutes: ko-dev (day slices, stream,
pooled; the tuned and the held-out part apart), UCI and the generated sets; the rest of the
arguments are benchmarks/cluster_sets.py's (its --help).

The default data is the UCI News Aggregator sample beside the repository
(../shared/data/uci_news_5k.csv); --title, --group, --order and --gold name other columns. The
figures are pooled over the groups: a story is keyed by its group too, so that one which crossed
groups would count as one story in each (issues never cross one). Issues per story: each issue
counts for the story most of its headlines belong to. A replay runs in a temporary local state
folder of its own, with PostgreSQL and moto started once for all its runs; its seconds are the
whole replay's, storing the stream included.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import sys
import time
from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from newsdesk.clustering import DEFAULT_THRESHOLDS, METHODS, find_groups
from newsdesk_local.quality import Scores, score
from newsdesk_local.replay import ReplayServices, StreamArticle, replay

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "uci_news_5k.csv"
CADENCES = ("30m", "12h")
UNITS = {"s": "seconds", "m": "minutes", "h": "hours"}
ONE_RUN = "one run"

Rows = dict[str, list[dict[str, str]]]


def load(path: Path, title: str, group: str, order: str, gold: str) -> Rows:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    by_group: Rows = defaultdict(list)
    for number, row in enumerate(rows):
        row["_id"] = str(number)
        row["_title"], row["_gold"], row["_order"] = row[title], row[gold], row[order]
        by_group[row[group]].append(row)
    for members in by_group.values():
        members.sort(key=lambda r: (float(r["_order"]), int(r["_id"])))
    return by_group


def gold_stories(data: Rows) -> dict[str, Hashable]:
    return {r["_id"]: (group, r["_gold"]) for group, rows in data.items() for r in rows}


def crossing_stories(data: Rows) -> int:
    """How many stories have headlines in more than one group."""
    groups: dict[str, set[str]] = defaultdict(set)
    for group, rows in data.items():
        for r in rows:
            groups[r["_gold"]].add(group)
    return sum(len(g) > 1 for g in groups.values())


def seconds_of(row: dict[str, str], times_in_ms: bool) -> float:
    return float(row["_order"]) / (1000 if times_in_ms else 1)


def one_run(
    data: Rows, method: str, threshold: float, min_size: int, times_in_ms: bool
) -> list[list[str]]:
    predicted: list[list[str]] = []
    for rows in data.values():
        titles = [r["_title"] for r in rows]
        times = [seconds_of(r, times_in_ms) for r in rows]
        for group in find_groups(titles, threshold, min_size, method=method, times=times):
            predicted.append([rows[i]["_id"] for i in group.members])
    return predicted


def stream(data: Rows, times_in_ms: bool) -> list[StreamArticle]:
    return [
        StreamArticle(
            r["_id"], r["_title"], group, datetime.fromtimestamp(seconds_of(r, times_in_ms), UTC)
        )
        for group, rows in data.items()
        for r in rows
    ]


def cadence(value: str) -> timedelta:
    """``30m``, ``12h``, ``90s``."""
    matched = re.fullmatch(r"(\d+(?:\.\d+)?)([smh])", value)
    if matched is None:
        raise argparse.ArgumentTypeError(f"not a cadence (such as 30m or 12h): {value!r}")
    return timedelta(**{UNITS[matched[2]]: float(matched[1])})


def label(every: timedelta) -> str:
    seconds = every.total_seconds()
    if seconds % 3600 == 0:
        return f"{seconds / 3600:g} h"
    return f"{seconds / 60:g} min" if seconds % 60 == 0 else f"{seconds:g} s"


@dataclass(frozen=True)
class Measured:
    mode: str
    method: str
    threshold: float
    scores: Scores
    seconds: float
    runs: int


HEADER = (
    f"{'mode':<8} {'method':<9} {'thresh':>6} {'pair P':>7} {'pair R':>7} {'pair F1':>7} "
    f"{'B3 F1':>6} {'issues':>6} {'per story':>9} {'placed':>7} {'sec':>7} {'runs':>5}"
)


def line(m: Measured) -> str:
    s = m.scores
    return (
        f"{m.mode:<8} {m.method:<9} {m.threshold:>6.2f} {s.pairwise_precision:>7.3f} "
        f"{s.pairwise_recall:>7.3f} {s.pairwise_f1:>7.3f} {s.bcubed_f1:>6.3f} {s.issues:>6} "
        f"{s.issues_per_story:>9.2f} {s.placed_share:>7.3f} {m.seconds:>7.2f} {m.runs:>5}"
    )


def policy_env(method: str, threshold: float, min_size: int, window_hours: float) -> dict[str, str]:
    """The cluster function's settings for a replay (extraction off: no page is fetched)."""
    return {
        "CLUSTER_METHOD": method,
        "CLUSTER_THRESHOLD": str(threshold),
        "CLUSTER_MIN_SIZE": str(min_size),
        "CLUSTER_WINDOW_HOURS": str(window_hours),
        "EXTRACT_ENABLED": "false",
    }


def scored(gold: dict[str, Hashable], groups: Sequence[list[str]], min_size: int) -> Scores:
    """Groups below the minimum count as single headlines."""
    return score(gold, [g for g in groups if len(g) >= min_size])


def measure_replays(
    data: Rows, methods: dict[str, float], cadences: Sequence[timedelta], args: argparse.Namespace
) -> None:
    """Each cadence's replay with each method, in a database of its own, printed as it ends."""
    gold, articles = gold_stories(data), stream(data, not args.order_in_seconds)
    with ReplayServices(os.environ) as services:
        for every in cadences:
            for method, threshold in methods.items():
                name = f"replay_{method}_{int(every.total_seconds())}"
                env = services.environ(name) | policy_env(
                    method, threshold, args.min_size, args.window_hours
                )
                replayed = replay(articles, every, env)
                scores = scored(gold, replayed.groups, args.min_size)
                measured = Measured(
                    label(every), method, threshold, scores, replayed.seconds, len(replayed.runs)
                )
                print(line(measured), flush=True)


def main() -> None:
    if "--sets" in sys.argv[1:]:
        sys.argv.remove("--sets")
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from benchmarks import cluster_sets

        cluster_sets.main()
        return
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
    parser.add_argument("--method", choices=METHODS, help="default: every method")
    parser.add_argument("--threshold", type=float, help="with --method (default: its own)")
    parser.add_argument("--min-size", type=int, default=3)
    parser.add_argument("--window-hours", type=float, default=24.0, help="a replay's window")
    parser.add_argument(
        "--cadence",
        type=cadence,
        nargs="*",
        help=f"replays, one a cadence (default: {' '.join(CADENCES)}; none: the one run only)",
    )
    parser.add_argument(
        "--sweep",
        type=float,
        nargs=3,
        metavar=("FROM", "TO", "STEP"),
        help="thresholds, for the one run only",
    )
    args = parser.parse_args()
    if args.threshold is not None and args.method is None:
        parser.error("--threshold needs --method")
    if args.sweep and args.cadence:
        parser.error("--sweep scores the one run only (a replay takes minutes)")
    data = load(args.data, args.title, args.group, args.order, args.gold)
    gold = gold_stories(data)
    print(
        f"{args.data.name}: {len(gold)} headlines, {len(data)} groups, "
        f"{len({r['_gold'] for rows in data.values() for r in rows})} stories "
        f"({crossing_stories(data)} in more than one group); min size {args.min_size}"
    )
    methods = [args.method] if args.method else list(METHODS)
    print(HEADER, flush=True)
    chosen = {
        m: DEFAULT_THRESHOLDS[m] if args.threshold is None else args.threshold for m in methods
    }
    if args.sweep:
        start, stop, step = args.sweep
        count = int((stop - start) / step + 1.5)
        sweep = [(m, round(start + k * step, 4)) for m in methods for k in range(count)]
    else:
        sweep = list(chosen.items())
    for method, threshold in sweep:
        started = time.perf_counter()
        groups = one_run(data, method, threshold, args.min_size, not args.order_in_seconds)
        seconds = time.perf_counter() - started
        scores = scored(gold, groups, args.min_size)
        print(line(Measured(ONE_RUN, method, threshold, scores, seconds, 1)), flush=True)
    if not args.sweep:
        cadences = [cadence(c) for c in CADENCES] if args.cadence is None else args.cadence
        measure_replays(data, chosen, cadences, args)


if __name__ == "__main__":
    main()
