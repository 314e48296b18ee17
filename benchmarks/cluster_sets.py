"""Clustering quality on every labelled set, per method (issue 24), with 95 % bootstrap
intervals over stories (1,000 resamples; for two methods, of their paired difference):

- ko-dev (../shared/data/ko-dev): the day slices and the stream apart, each split into the part
  the headline method was tuned on and the held-out part (below), pooled pairwise F1 against
  ``story_fine`` as its README scores it; and the stream replayed one day after another
  through `newsdesk cluster --at` every 30 minutes (its headlines spread over each day in row
  order), with issues per story;
- UCI (benchmarks/cluster_quality.py's data), one run, and (--replay) replayed every 30
  minutes, with issues per story;
- generated sets (benchmarks/headline_sets.py) at the sizes given, one category, one run; and
  (--replay) each at the --replay-sizes (5,000) replayed over its day every 30 minutes.

    .venv/bin/python -m benchmarks.cluster_sets                        # everything but replays
    .venv/bin/python -m benchmarks.cluster_sets --replay --sizes 5000 20000 100000
    .venv/bin/python -m benchmarks.cluster_quality --sets --replay    # the same, from there
    .venv/bin/python -m benchmarks.cluster_sets --save after.json --against before.json

Tuned on (issue 24): ko-dev's day slices 2025-12-16/정치, 2026-01-14/경제, 2026-01-20~21/기업
and the stream's first day (2026-03-13); held out: 2025-12-18/부동산, 2026-01-15/IT,
2026-02-05/증권 and the stream's 2026-03-14 and 15 (every other slice by date, fixed before
tuning).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import time
from collections import defaultdict
from collections.abc import Hashable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from benchmarks import embedding_cache
from benchmarks.cluster_quality import DATA, gold_stories, load, one_run, policy_env, stream
from benchmarks.headline_sets import GENERATORS, HeadlineSet
from newsdesk.clustering import DEFAULT_THRESHOLDS, find_groups
from newsdesk_local.quality import score
from newsdesk_local.replay import ReplayServices, StreamArticle, replay

KO_DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "ko-dev" / "ko_dev_headlines.csv"
TUNED = {"2025-12-16/정치", "2026-01-14/경제", "2026-01-20~21/기업", "stream/정치@2026-03-13"}
STREAM = "stream/정치"  # the stream's three days in one run
MIN_SIZE = 3
RESAMPLES = 1000

Groups = list[list[Hashable]]
Gold = dict[Hashable, Hashable]


def ko_dev_parts() -> dict[str, list[dict[str, str]]]:
    """The slices as clustered: each day slice whole; the stream's first day (tuned) and its
    other two days (held out) as two pools, and its three days as one (STREAM)."""
    with KO_DEV.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    parts: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        name = row["slice"]
        if name.startswith("stream"):
            day = row["digest_date"]
            name = f"{name}@{day}" if day == "2026-03-13" else f"{name}@2026-03-14~15"
        parts[name].append(row)
    parts[STREAM] = [r for r in rows if r["slice"] == STREAM]
    for members in parts.values():
        members.sort(key=lambda r: int(r["row"]))
    return parts


def f1(gold: Gold, groups: Groups) -> float:
    return score(gold, [g for g in groups if len(g) >= MIN_SIZE]).pairwise_f1


def story_counts(gold: Gold, groups: Groups) -> dict[Hashable, tuple[float, float, float]]:
    """Per gold story: its true pairs found, its gold pairs, and its share of the predicted
    pairs (a pair across two stories counts half to each); groups below the minimum size are
    singletons. Summed over the stories they give pairwise P and R."""
    counts: dict[Hashable, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    sizes: dict[Hashable, int] = defaultdict(int)
    for story in gold.values():
        sizes[story] += 1
    for story, size in sizes.items():
        counts[story][1] = size * (size - 1) / 2
    for group in groups:
        if len(group) < MIN_SIZE:
            continue
        members: dict[Hashable, int] = defaultdict(int)
        for item in group:
            members[gold[item]] += 1
        total = len(group)
        for story, k in members.items():
            counts[story][0] += k * (k - 1) / 2
            # its own pairs, and half of those with the group's other stories
            counts[story][2] += k * (k - 1) / 2 + k * (total - k) / 2
    return {story: (c[0], c[1], c[2]) for story, c in counts.items()}


def _f1_of(tp: np.ndarray, gold_pairs: np.ndarray, system: np.ndarray) -> np.ndarray:
    p = np.divide(tp, system, out=np.zeros_like(tp), where=system > 0)
    r = np.divide(tp, gold_pairs, out=np.zeros_like(tp), where=gold_pairs > 0)
    f1: np.ndarray = np.divide(2 * p * r, p + r, out=np.zeros_like(tp), where=p + r > 0)
    return f1


def bootstrap(gold: Gold, runs: Sequence[Groups], seed: int = 24) -> list[tuple[float, float]]:
    """95 % intervals of each run's pairwise F1 (and, with two runs, of the second minus the
    first, from the same draws), resampling the gold stories with replacement and summing
    their pair counts (``story_counts``), in numpy, a chunk of resamples at a time."""
    per_run = [story_counts(gold, groups) for groups in runs]
    names = sorted(per_run[0], key=str)
    tables = [np.array([counts[s] for s in names], dtype=np.float64) for counts in per_run]
    rng = np.random.default_rng(seed)
    values: list[list[np.ndarray]] = [[] for _ in range(len(runs) + (len(runs) == 2))]
    chunk = max(1, min(RESAMPLES, 4_000_000 // max(len(names), 1)))
    for start in range(0, RESAMPLES, chunk):
        drawn = rng.integers(0, len(names), size=(min(chunk, RESAMPLES - start), len(names)))
        f1s = []
        for k, table in enumerate(tables):
            summed = [table[:, c][drawn].sum(axis=1) for c in range(3)]
            f1s.append(_f1_of(*summed))
            values[k].append(f1s[-1])
        if len(runs) == 2:
            values[2].append(f1s[1] - f1s[0])
    out = []
    for parts in values:
        low, high = np.quantile(np.concatenate(parts), [0.025, 0.975])
        out.append((float(low), float(high)))
    return out


def ko_dev(methods: dict[str, float]) -> None:
    parts = ko_dev_parts()
    days = [p for p in parts if not p.startswith("stream")]
    subsets = {
        "days, tuned": [p for p in days if p in TUNED],
        "days, held out": [p for p in days if p not in TUNED],
        "days, all six (issue 38's gate)": days,
        "stream, tuned (03-13)": [p for p in parts if p in TUNED and "@" in p],
        "stream, held out (03-14~15)": [p for p in parts if p not in TUNED and "@" in p],
        "stream, one run of its three days (the gate)": [STREAM],
        "held out, pooled": [p for p in parts if p not in TUNED and p != STREAM],
        "all, pooled": [p for p in parts if p != STREAM],
    }
    grouped: dict[str, dict[str, Groups]] = {}
    for method, threshold in methods.items():
        grouped[method] = {}
        for name, rows in parts.items():
            titles = [r["title"] for r in rows]
            found = find_groups(titles, threshold, MIN_SIZE, method=method)
            grouped[method][name] = [[(name, rows[i]["row"]) for i in g.members] for g in found]
    print("\nko-dev, one run per slice (pairwise F1 on story_fine, groups below 3 as singles)")
    for subset, names in subsets.items():
        gold: Gold = {(n, r["row"]): (n, r["story_fine"]) for n in names for r in parts[n]}
        line(subset, gold, {m: [g for n in names for g in grouped[m][n]] for m in methods})


# Each line's runs by label and method (--save), and a saved reference's (--against): the
# groups as lists of repr()s of their items.
SAVED: dict[str, dict[str, list[list[str]]]] = {}
REFERENCE: dict[str, dict[str, list[list[str]]]] = {}


def ceiling(gold: Gold) -> float:
    """The F1 of the gold stories themselves as the groups: what a method that found every
    story scores when stories below the minimum size count as singles."""
    stories: dict[Hashable, list[Hashable]] = defaultdict(list)
    for item, story in gold.items():
        stories[story].append(item)
    return f1(gold, list(stories.values()))


def line(label: str, gold: Gold, runs: dict[str, Groups]) -> None:
    """Each run's F1 with its interval; the last minus the first (paired); with a reference,
    each method minus the reference's run of the same method (paired); the set's ``ceiling``.
    Lines are saved and matched by their label up to a parenthesis (the timings)."""
    key = label.split(" (")[0]
    SAVED[key] = {
        name: [[repr(item) for item in g] for g in groups] for name, groups in runs.items()
    }
    names = list(runs)
    cells = []
    for name in names:
        ((low, high),) = bootstrap(gold, [runs[name]])[:1]
        cells.append(f"{name} {f1(gold, runs[name]):.3f} [{low:.3f}, {high:.3f}]")
    if len(names) >= 2:
        *_, (low, high) = bootstrap(gold, [runs[names[0]], runs[names[-1]]])
        cells.append(f"Δ {names[-1]}−{names[0]} [{low:+.3f}, {high:+.3f}]")
    items = {repr(item): item for item in gold}
    for name in names:
        saved = REFERENCE.get(key, {}).get(name)
        if saved is None:
            continue
        before = [[items[r] for r in g if r in items] for g in saved]
        (_, _, (low, high)) = bootstrap(gold, [before, runs[name]])
        cells.append(
            f"{name} before {f1(gold, before):.3f}, Δ after−before [{low:+.3f}, {high:+.3f}]"
        )
    cells.append(f"ceiling {ceiling(gold):.3f}")
    print(f"  {label:<30} " + " | ".join(cells), flush=True)


def uci(methods: dict[str, float]) -> None:
    data = load(DATA, "TITLE", "CATEGORY", "TIMESTAMP", "STORY")
    gold: Gold = dict(gold_stories(data).items())
    runs: dict[str, Groups] = {
        m: [list(g) for g in one_run(data, m, t, MIN_SIZE, True)] for m, t in methods.items()
    }
    print("\nUCI sample, one run per category")
    line("uci_news_5k", gold, runs)


def generated(methods: dict[str, float], sizes: Sequence[int]) -> None:
    print("\ngenerated, one category, one run (seconds in this process)")
    for make in GENERATORS.values():
        for n in sizes:
            made = make(n)
            gold: Gold = dict(enumerate(made.stories))
            runs: dict[str, Groups] = {}
            seconds = {}
            for method, threshold in methods.items():
                started = time.perf_counter()
                found = find_groups(
                    made.titles, threshold, MIN_SIZE, method=method, times=made.times
                )
                seconds[method] = time.perf_counter() - started
                runs[method] = [list(g.members) for g in found]
            timing = ", ".join(f"{m} {s:.1f} s" for m, s in seconds.items())
            line(f"{made.name} ({timing})", gold, runs)


def replayed(
    label: str, gold: Gold, articles: list[StreamArticle], methods: dict[str, float]
) -> dict[str, Groups]:
    """The stream through `newsdesk cluster --at` every CADENCE, per method, each in a
    database of its own: a ``line`` of the stored issues (groups below 3 as singles) and each
    method's issues per story."""
    runs: dict[str, Groups] = {}
    per_story = []
    with ReplayServices(os.environ) as services:
        for method, threshold in methods.items():
            name = re.sub(r"[^a-z0-9]+", "_", f"{label} {method}".lower())
            environ = services.environ(name) | policy_env(method, threshold, MIN_SIZE, 24.0)
            done = replay(articles, cadence(), environ)
            runs[method] = [list(g) for g in done.groups if len(g) >= MIN_SIZE]
            s = score(gold, runs[method])
            per_story.append(
                f"{method} {s.issues} issues, {s.issues_per_story:.2f} per story "
                f"({len(done.runs)} runs, {done.seconds:.0f} s)"
            )
    line(f"{label}, replayed", gold, runs)
    print("  " + " " * 30 + " " + " | ".join(per_story), flush=True)
    return runs


CADENCE = [timedelta(minutes=30)]  # how often a replay runs (--cadence)


def cadence() -> timedelta:
    return CADENCE[0]


def ko_dev_stream() -> tuple[list[dict[str, str]], list[StreamArticle]]:
    """ko-dev's stream rows and, one day after another, their articles: each day's headlines
    spread over 06:00–22:00 KST in row order."""
    rows = ko_dev_parts()[STREAM]
    by_day: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r in rows:
        by_day[r["digest_date"]].append(r)
    articles = []
    for day, members in sorted(by_day.items()):
        start = datetime.fromisoformat(day).replace(tzinfo=UTC) - timedelta(hours=3)
        step = timedelta(hours=16) / len(members)
        articles += [
            StreamArticle(r["row"], r["title"], "정치", start + k * step)
            for k, r in enumerate(members)
        ]
    return rows, articles


def generated_stream(made: HeadlineSet) -> tuple[list[StreamArticle], Gold]:
    """A generated set's titles as articles over its one day, in one category, and its gold."""
    day = datetime(2026, 3, 1, tzinfo=UTC)
    articles = [
        StreamArticle(str(k), title, "generated", day + timedelta(seconds=at))
        for k, (title, at) in enumerate(zip(made.titles, made.times, strict=True))
    ]
    return articles, {str(k): story for k, story in enumerate(made.stories)}


def stream_replay(methods: dict[str, float]) -> None:
    """ko-dev's stream (``ko_dev_stream``), the stored issues scored on the whole stream and on
    its held-out days (an issue's members from the tuned day left out)."""
    rows, articles = ko_dev_stream()
    gold: Gold = {r["row"]: r["story_fine"] for r in rows}
    print(f"\nko-dev stream replayed every {cadence()} through `newsdesk cluster --at`")
    found = replayed("ko-dev stream", gold, articles, methods)
    # what the replay is held to: one run over the same titles at the same times (an issue
    # idle ISSUE_IDLE_HOURS, 12, takes no more members, in both)
    titles, times = [a.title for a in articles], [a.collected_at.timestamp() for a in articles]
    at_once: dict[str, Groups] = {
        m: [
            [articles[i].key for i in g.members]
            for g in find_groups(titles, t, MIN_SIZE, method=m, times=times)
        ]
        for m, t in methods.items()
    }
    line("ko-dev stream, one run at these times", gold, at_once)
    held: Gold = {r["row"]: r["story_fine"] for r in rows if r["digest_date"] != "2026-03-13"}
    runs = {m: [[k for k in g if k in held] for g in groups] for m, groups in found.items()}
    line("ko-dev stream held out, replayed", held, runs)


def uci_replay(methods: dict[str, float]) -> None:
    """The UCI sample replayed (benchmarks/cluster_quality.py's stream)."""
    data = load(DATA, "TITLE", "CATEGORY", "TIMESTAMP", "STORY")
    gold: Gold = dict(gold_stories(data).items())
    print(f"\nUCI sample replayed every {cadence()} through `newsdesk cluster --at`")
    replayed("uci_news_5k", gold, stream(data, True), methods)


def generated_replay(methods: dict[str, float], sizes: Sequence[int]) -> None:
    """Each generated set over its one day, in one category."""
    print(f"\ngenerated, one category, replayed every {cadence()} through `newsdesk cluster --at`")
    for make in GENERATORS.values():
        for n in sizes:
            made = make(n)
            articles, gold = generated_stream(made)
            replayed(made.name, gold, articles, methods)


SETS = ("ko-dev", "uci", "generated")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--methods", nargs="*", default=["seed", "centroid", "headline"])
    parser.add_argument("--sizes", type=int, nargs="*", default=[5000, 20000])
    parser.add_argument(
        "--one-run",
        nargs="*",
        choices=SETS,
        default=list(SETS),
        help="the sets clustered in one run (default: all)",
    )
    parser.add_argument(
        "--replay",
        nargs="*",
        choices=SETS,
        help="the sets replayed every --cadence minutes (alone: all; default: none)",
    )
    parser.add_argument(
        "--cadence", type=float, default=30.0, help="minutes between a replay's runs (30)"
    )
    parser.add_argument(
        "--replay-sizes",
        type=int,
        nargs="*",
        default=[5000],
        help="the generated sets replayed at these sizes (with --replay)",
    )
    parser.add_argument("--save", type=Path, help="every line's groups, as JSON")
    parser.add_argument(
        "--against", type=Path, help="a --save of another version: paired differences to it"
    )
    args = parser.parse_args()
    if args.against:
        REFERENCE.update(json.loads(args.against.read_text(encoding="utf-8")))
    methods = {m: DEFAULT_THRESHOLDS[m] for m in args.methods}
    if args.cadence <= 0:
        parser.error("--cadence: minutes above 0")
    CADENCE[0] = timedelta(minutes=args.cadence)
    print("methods: " + ", ".join(f"{m} {t:.2f}" for m, t in methods.items()))
    chosen = set(args.one_run)
    replays = set(SETS if args.replay == [] else args.replay or [])
    if "meaning" in methods:
        print(f"embeddings: {embedding_cache.load()} titles cached")
    if "ko-dev" in chosen:
        ko_dev(methods)
    if "uci" in chosen:
        uci(methods)
    if "generated" in chosen and args.sizes:
        generated(methods, args.sizes)
    if "ko-dev" in replays:
        stream_replay(methods)
    if "uci" in replays:
        uci_replay(methods)
    if "generated" in replays and args.replay_sizes:
        generated_replay(methods, args.replay_sizes)
    if args.save:
        args.save.write_text(json.dumps(SAVED, ensure_ascii=False), encoding="utf-8")
    if "meaning" in methods:
        embedding_cache.save()


if __name__ == "__main__":
    main()
