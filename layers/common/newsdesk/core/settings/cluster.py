"""The cluster stage's settings: the method and its threshold, the window, issues across runs
(newsdesk.cluster; docs/clustering.md)."""

from __future__ import annotations

from dataclasses import dataclass

from newsdesk.core.settings.table import (
    CLUSTER,
    FLAG,
    INTEGER,
    NUMBER,
    TEXT,
    choice,
    setting,
)

# The clustering methods and each one's recommended threshold, chosen by a sweep on the
# labelled UCI sample (benchmarks/cluster_quality.py --sweep); the seed's is the seed's;
# meaning's (issue 38), its Hangul titles' (the others' keep its ratio: meaning.py).
# newsdesk.cluster.methods is their registry (DEFAULT_THRESHOLDS, METHODS); a new method is a
# line here and its pass there.
METHOD_THRESHOLDS = {"seed": 0.60, "centroid": 0.30, "headline": 0.30, "meaning": 0.30}
CLUSTER_METHODS = tuple(METHOD_THRESHOLDS)


@dataclass(frozen=True)
class ClusterSettings:
    cluster_method: str = setting(
        "meaning",
        choice(CLUSTER_METHODS),
        "how titles are grouped (docs/clustering.md): `meaning` by a sentence embedding and the "
        "n-grams titles share; `seed` gives the seed pipeline's groups, exactly",
        (CLUSTER,),
    )
    cluster_threshold: float | None = setting(
        None,
        NUMBER,
        "the similarity an article needs to join a group",
        (CLUSTER,),
        in_template=False,
        minimum=0,
        maximum=1,
        shown="unset: the method's ("
        + ", ".join(f"{method} {value}" for method, value in METHOD_THRESHOLDS.items())
        + ")",
    )
    cluster_min_size: int = setting(
        3, INTEGER, "the fewest articles an issue starts with", (CLUSTER,), minimum=1
    )
    cluster_window_hours: float = setting(
        24.0,
        NUMBER,
        "how far back the clustering job reads articles",
        (CLUSTER,),
        minimum=0.1,
    )
    cluster_queue_url: str | None = setting(
        None,
        TEXT,
        "a schedule's event sends one message per category there, each clustered by an "
        "invocation of its own",
        (CLUSTER,),
        shown="unset: one invocation clusters every category",
    )
    cluster_copies_count: bool = setting(
        False,
        FLAG,
        "copies of another article's text take part in clustering and count toward an "
        "issue's minimum size (a story republished verbatim by three outlets is then an "
        "issue); false: they only join their original's issue",
        (CLUSTER,),
        in_template=False,
    )
    cluster_pending_wait_minutes: float = setting(
        30.0,
        NUMBER,
        "an article whose page is not extracted yet waits this long before it is clustered "
        "without its text",
        (CLUSTER,),
        in_template=False,
        minimum=0,
    )
    issue_idle_hours: float = setting(
        12.0,
        NUMBER,
        "an issue with no new article for this long closes (`IssueClosed`) and takes no more",
        (CLUSTER,),
        minimum=0.1,
    )
    dossier_max_chars: int = setting(
        12_000,
        INTEGER,
        "the characters of article text an issue version's dossier carries at most (about "
        "7,800 tokens of Korean by multilingual-e5's tokenizer); what does not fit is counted, "
        "no sentence is cut",
        (CLUSTER,),
        minimum=500,
    )
    dossier_bucket: str | None = setting(
        None,
        TEXT,
        "the S3 bucket each issue version's dossier is written to before its event is "
        "published (required with EVENT_BUS_NAME)",
        (CLUSTER,),
        shown="unset: dossiers are kept in the outbox only (`newsdesk dossier`)",
    )
    event_bus_name: str | None = setting(
        None,
        TEXT,
        "the EventBridge bus issue events are published to",
        (CLUSTER,),
        shown="unset: events are kept in the outbox only (`newsdesk events`)",
    )
