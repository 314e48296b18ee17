"""`newsdesk cluster [--at TIME]`: one clustering pass locally, through the cluster function as
it runs in Lambda (its queue drained by the event source mapping); the issues created and grown,
or one JSON object. ``cluster`` is the pass itself, for the replay harness
(``newsdesk_local.replay``): its answer as an object, not as printed."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any, TextIO

from newsdesk.core.times import format_time
from newsdesk_local.commands import arguments, context
from newsdesk_local.output import dump, plural

# the run's answer `--json` prints (the cluster function's has counts of its own besides)
JSON_KEYS = (
    "issues_created",
    "issues_updated",
    "issues_closed",
    "articles_clustered",
    "articles_joined",
    "issues",
    "updated",
    "closed",
)


def add(commands: arguments.Commands) -> None:
    cluster = commands.add_parser("cluster", help="run one clustering pass locally")
    cluster.add_argument("--json", action="store_true", help=arguments.JSON_HELP)
    cluster.add_argument(
        "--at",
        type=arguments.cluster_time,
        metavar="TIME",
        help="cluster as if it were TIME, not in the future: the window ends then, later "
        f"articles unseen (for backfills and replays); {arguments.TIME_HELP}",
    )
    cluster.set_defaults(run=run)


def cluster(env: dict[str, str], at: datetime | None = None) -> dict[str, Any]:
    """One pass as `newsdesk cluster [--at AT]` makes it, with ``env`` as its environment: the
    cluster function's answer (``newsdesk_local.cluster_runs.run_cluster``: the categories' runs
    summed). With ``at``, a replay's: the window ends then, later articles unseen."""
    from newsdesk_local.cluster_runs import run_cluster
    from newsdesk_local.invocations import scheduled_event

    event = scheduled_event(at or datetime.now(UTC))
    if at is not None:
        event["at"] = format_time(at)
    with context.runtime(env, "cluster") as runtime:
        return run_cluster(runtime, event)


def run(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    answer = cluster(env, args.at)
    if args.json:
        dump(as_json(answer), out)
    else:
        print_run(answer, out)
    return 0


def as_json(answer: dict[str, Any]) -> dict[str, Any]:
    return {key: answer[key] for key in JSON_KEYS}


def print_run(answer: dict[str, Any], out: TextIO, listed: bool = True) -> None:
    """The counts, then (``listed``) a line per issue created and per issue grown."""
    if answer["locked_out"]:
        print("Another clustering run is in progress; nothing done.", file=out)
        return
    copies = answer.get("copies_attached")
    print(
        f"Issues: {answer['issues_created']} created, {answer['issues_updated']} grown, "
        f"{answer['issues_closed']} closed; {plural(answer['articles_clustered'], 'article')} "
        f"clustered ({answer['articles_joined']} joined an open issue), "
        f"{answer['articles_left_single']} left single"
        + (f", {plural(copies, 'copy')} put in their original's issue" if copies else ""),
        file=out,
    )
    for issue in answer["issues"] if listed else []:
        print(
            f"#{issue['id']} [{issue['category']}] {issue['title']} "
            f"({plural(len(issue['article_ids']), 'article')})",
            file=out,
        )
    for issue in answer["updated"] if listed else []:
        print(
            f"#{issue['id']} [{issue['category']}] {issue['title']} "
            f"(+{len(issue['article_ids'])}, version {issue['version']})",
            file=out,
        )
