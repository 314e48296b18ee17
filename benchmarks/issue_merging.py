"""What merging stored issues (an ``IssueMerged`` event, issue 24) could gain, measured before
building it. Each set is replayed with the headline method every 30 minutes (`newsdesk cluster
--at`, as benchmarks/cluster_sets.py --replay does); then, per category, the stored issues are
folded by average linkage (``newsdesk.cluster.merging.merge_groups``, the rule that merges a
run's groups, here with every issue free to fold) over the headline vectors at the pass's join
threshold for titles without Hangul and below, and over word TF-IDF (English stop words), as
issue 15 measured for the centroid method (docs/clustering.md).

The sets: the UCI sample, whose categories are split (a threshold is chosen on business and
science/tech, ``b`` and ``t``, and read on entertainment and health, ``e`` and ``m``: the
sample is the only English set); ko-dev's stream, one day after another; and the generated
sets at 5,000 titles in one category (each built as cluster_sets.py replays it).

    .venv/bin/python -m benchmarks.issue_merging              # every set (about 3 minutes)
    .venv/bin/python -m benchmarks.issue_merging --sets uci
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer

from benchmarks.cluster_quality import DATA, gold_stories, load, policy_env, stream
from benchmarks.cluster_sets import MIN_SIZE, Gold, cadence, generated_stream, ko_dev_stream
from benchmarks.headline_sets import GENERATORS
from newsdesk.cluster.centroid import NON_HANGUL_SHARE, WINDOW_SECONDS
from newsdesk.cluster.headline import headline_vectors
from newsdesk.cluster.merging import merge_groups
from newsdesk.clustering import DEFAULT_THRESHOLDS
from newsdesk_local.quality import score
from newsdesk_local.replay import ReplayServices, StreamArticle, replay

# Each rule's vectors and the thresholds swept (the first of headline's: its join threshold
# for titles without Hangul, what the pass's merging asks of the UCI sample).
JOIN = DEFAULT_THRESHOLDS["headline"] * NON_HANGUL_SHARE
RULES = {
    "headline vectors": [JOIN, 0.15, 0.12, 0.10],
    "word TF-IDF": [0.10, 0.08, 0.05, 0.03],
}
GENERATED_SIZE = 5000


@dataclass
class Labelled:
    name: str
    articles: list[StreamArticle]
    parts: dict[str, Gold]  # a part's label: its headlines' stories


def uci() -> Labelled:
    data = load(DATA, "TITLE", "CATEGORY", "TIMESTAMP", "STORY")
    gold: Gold = dict(gold_stories(data).items())
    articles = stream(data, True)
    category: dict[Hashable, str] = {a.key: a.category for a in articles}

    def part(categories: str) -> Gold:
        return {k: story for k, story in gold.items() if category[k] in categories}

    return Labelled(
        "UCI", articles, {"all": gold, "tuned b, t": part("bt"), "held out e, m": part("em")}
    )


def ko_dev() -> Labelled:
    rows, articles = ko_dev_stream()
    return Labelled("ko-dev stream", articles, {"all": {r["row"]: r["story_fine"] for r in rows}})


def generated() -> Iterator[Labelled]:
    for make in GENERATORS.values():
        made = make(GENERATED_SIZE)
        articles, gold = generated_stream(made)
        yield Labelled(made.name, articles, {"all": gold})


SETS: dict[str, Callable[[], Iterable[Labelled]]] = {
    "uci": lambda: [uci()],
    "ko-dev": lambda: [ko_dev()],
    "generated": generated,
}


def vectors(rule: str, titles: Sequence[str]) -> sp.csr_matrix:
    if rule == "headline vectors":
        return headline_vectors(titles)
    return TfidfVectorizer(stop_words="english").fit_transform(titles).tocsr()


def folded(
    issues: list[list[str]], articles: list[StreamArticle], rule: str, threshold: float
) -> list[list[str]]:
    """The issues after folding, category by category (an issue never crosses one)."""
    by_key = {a.key: a for a in articles}
    out: list[list[str]] = []
    for category in sorted({a.category for a in articles}):
        keys = [a.key for a in articles if a.category == category]
        at = {k: i for i, k in enumerate(keys)}
        mine = [sorted(at[k] for k in issue) for issue in issues if issue and issue[0] in at]
        merged = merge_groups(
            vectors(rule, [by_key[k].title for k in keys]),
            mine,
            [-1] * len(mine),
            [True] * len(mine),
            [by_key[k].collected_at.timestamp() for k in keys],
            WINDOW_SECONDS,
            [threshold] * len(keys),
        )
        out += [[keys[i] for i in members] for members in merged if members]
    return out


def row(rule: str, threshold: str, parts: dict[str, Gold], issues: list[list[str]]) -> str:
    """Pooled pairwise F1 and issues per story on each part (groups below the minimum count
    as single headlines)."""
    cells = []
    for gold in parts.values():
        kept = [g for g in issues if len(g) >= MIN_SIZE and g[0] in gold]
        s = score(gold, kept)
        cells.append(f"{s.pairwise_f1:>17.3f}, {s.issues_per_story:.2f}")
    return f"  {rule:<18} {threshold:>9} " + " ".join(cells)


def measure(services: ReplayServices, labelled: Labelled) -> None:
    method = "headline"
    name = re.sub(r"[^a-z0-9]+", "_", f"merging {labelled.name}".lower())
    environ = services.environ(name) | policy_env(
        method, DEFAULT_THRESHOLDS[method], MIN_SIZE, 24.0
    )
    issues = replay(labelled.articles, cadence(), environ).groups
    print(f"\n{labelled.name}, replayed every {cadence()}, headline method; issues folded after")
    print(
        f"  {'folded by':<18} {'threshold':>9} "
        + " ".join(f"{p + ' F1, /story':>24}" for p in labelled.parts)
    )
    print(row("(nothing)", "", labelled.parts, issues))
    for rule, thresholds in RULES.items():
        for threshold in thresholds:
            after = folded(issues, labelled.articles, rule, threshold)
            print(row(rule, f"{threshold:.2f}", labelled.parts, after), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sets", nargs="+", choices=sorted(SETS), default=list(SETS))
    args = parser.parse_args()
    with ReplayServices(os.environ) as services:
        for name in args.sets:
            for labelled in SETS[name]():
                measure(services, labelled)


if __name__ == "__main__":
    main()
