"""`newsdesk demo`: the bundled sample feeds and pages served on 127.0.0.1
(``newsdesk_local.demo``), collected and clustered, then a round later (one feed has an update
of a story that is an issue now) again; printed as `collect`, `cluster`, `issues` and `events`
print, or one JSON object. Its data starts from nothing every time, in NEWSDESK_DATA_DIR/demo,
and its output is the same every time but for times and the feed server's port.
Exit codes as `collect`'s, of both rounds (1 before 3)."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from newsdesk.core.report import totals
from newsdesk.core.settings import Settings
from newsdesk_local.commands import arguments, cluster, collect, context, events, issues
from newsdesk_local.folder_lock import LOCK_FILE, FolderLock
from newsdesk_local.output import EXIT_OK, dump, plural

if TYPE_CHECKING:
    from newsdesk.core.sources import Outlet
    from newsdesk.storage.issue_events import IssueEvent
    from newsdesk_local.feedserver import FeedServer
    from newsdesk_local.rounds import RoundResult


@dataclass
class DemoRun:
    """What the demo's two rounds gave, and what the database holds after them."""

    first: RoundResult
    first_cluster: dict[str, Any]
    second: RoundResult
    second_cluster: dict[str, Any]
    issues: list[dict[str, Any]]  # newest first
    events: list[IssueEvent]
    log_path: Path
    # the dossier of the version the second round made (issue 40): what a generator is handed
    update: dict[str, Any] | None = None

    def exit_code(self) -> int:
        """The rounds' exit codes as one: 1 (a message failed) before 3 (no feed succeeded)."""
        codes = map(collect.exit_code, (self.first, self.second))
        return min((code for code in codes if code), default=EXIT_OK)


def add(commands: arguments.Commands) -> None:
    demo = commands.add_parser(
        "demo", help="serve bundled sample feeds on 127.0.0.1, collect them and cluster them"
    )
    demo.add_argument("--json", action="store_true", help=arguments.JSON_HELP)
    demo.set_defaults(run=run)


def run(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk_local.data_dir import remember_sources, writable
    from newsdesk_local.demo import serve_demo_feeds, write_sources
    from newsdesk_local.feedserver import FeedServer
    from newsdesk_local.local_postgres import clear_folder

    data_dir = writable(Settings.from_env(env).data_dir) / "demo"
    with FolderLock(data_dir, "newsdesk demo"), FeedServer() as server:
        clear_folder(data_dir, keep=LOCK_FILE)  # the demo starts from nothing every time
        started = datetime.now(UTC)  # both rounds' feeds are dated as of this one moment
        sources = write_sources(serve_demo_feeds(server, started), data_dir / "sources.yaml")
        remember_sources(data_dir, sources)  # `feeds` and `collect` there list these feeds
        demo_env = demo_environment(env, data_dir, sources)
        outlets = context.outlets(demo_env)
        zone = Settings.from_env(env).zone
        if not args.json:
            print(f"Serving demo feeds at {server.base_url}; data in {data_dir}", file=out)
        live = Live(outlets, zone, out) if not args.json and out.isatty() else None
        done = two_rounds(demo_env, server, outlets, started, live)
    if args.json:
        dump(as_json(done), out)
        return done.exit_code()
    if live is None:
        print_demo(done, zone, out)
    else:
        print_end(done, zone, out)
    print(file=out)  # a line apart: a print is one line (newsdesk_local.output.TerminalText)
    print(next_line(data_dir), file=out)
    return done.exit_code()


class Live:
    """A terminal's demo as it goes: the first round's outlets as they are done (``collect``'s
    Progress), each part of the demo printed once it is done, in print_demo's order."""

    def __init__(self, outlets: list[Outlet], zone: tzinfo, out: TextIO) -> None:
        self.zone, self.out = zone, out
        self.outlets = outlets
        self.first = collect.Progress(outlets, zone, out)
        # the second round prints its pages, not its feeds: its phases alone
        self.second = collect.Progress(outlets, zone, out, outlet_lines=False)
        self.note = self.first.note

    def first_round(self, first: RoundResult, log_path: Path) -> None:
        collect.print_round(first, log_path, self.zone, self.out, self.first)

    def first_cluster(self, answer: dict[str, Any]) -> None:
        cluster.print_run(answer, self.out, listed=False)
        print(file=self.out)
        print(SECOND_ROUND, file=self.out, flush=True)

    def second_round(self, second: RoundResult, answer: dict[str, Any]) -> None:
        print_second(second, answer, self.zone, self.out)
        self.out.flush()


CLUSTERING = "Clustering the articles into issues…"
# Worker Lambdas at once: one, so that the outlets are stored one after another, in the sources
# file's order, and the pages extracted in the order of their ids: the ids and every line are
# the same on every run (the README shows one). Five outlets on 127.0.0.1 take no longer so.
WORKERS = 1
SECOND_ROUND = "A round later (one feed has an update of a story):"  # after an empty line


def next_line(data_dir: Path) -> str:
    """What to look at after the demo: its data, with the commands that read it."""
    return (
        f"Next: the demo's data stays in {data_dir} until the next demo: "
        f"`NEWSDESK_DATA_DIR={data_dir} newsdesk issues` (or `articles`, `events`, `feeds`); "
        "`newsdesk collect` runs a round on the real outlets' feeds (sources.yaml)"
    )


def demo_environment(env: dict[str, str], data_dir: Path, sources: Path) -> dict[str, str]:
    """The caller's environment but for its services (the demo has its own) and settings for
    a loopback feed server."""
    demo_env = {
        key: value
        for key, value in env.items()
        if key not in {"DATABASE_URL", "AWS_ENDPOINT_URL", "DB_SECRET_ARN"}
    }
    demo_env.update(
        NEWSDESK_DATA_DIR=str(data_dir),
        SOURCES_PATH=str(sources),
        FETCH_ALLOW_PRIVATE_NETWORKS="true",
        FETCH_TIMEOUT_SECONDS="5",
        # every demo page is on one host, 127.0.0.1: paced, but not as a real outlet is
        EXTRACT_HOST_INTERVAL_SECONDS="0.1",
    )
    return demo_env


def two_rounds(
    demo_env: dict[str, str],
    server: FeedServer,
    outlets: list[Outlet],
    started: datetime,
    live: Live | None = None,
) -> DemoRun:
    """The first round collected and clustered, the second round's feeds served (dated as of
    ``started``, as the first's were), it collected and clustered; the issues and events
    stored. ``live`` is shown each part as it is done."""
    from newsdesk.storage.issue_events import UPDATED, IssueEventStore, kept_dossier
    from newsdesk.storage.issue_lists import list_issues
    from newsdesk_local.cluster_runs import run_cluster
    from newsdesk_local.demo import serve_second_round
    from newsdesk_local.invocations import scheduled_event
    from newsdesk_local.rounds import run_collect_round

    if live is not None:
        live.note(collect.STARTING)
    with context.started(demo_env) as runtime:  # in the folder its caller holds
        if live is not None:
            live.note(collect.collecting(outlets))
        first = run_collect_round(runtime, WORKERS, outlets, progress=live.first if live else None)
        if live is not None:
            live.first_round(first, runtime.log_path)
            live.note(CLUSTERING)
        first_cluster = run_cluster(runtime, scheduled_event(datetime.now(UTC)))
        if live is not None:
            live.first_cluster(first_cluster)
            live.note(collect.collecting(outlets))
        # a round later: one feed has an update of a story that is an issue now
        serve_second_round(server, started)
        second = run_collect_round(
            runtime, WORKERS, outlets, progress=live.second if live else None
        )
        if live is not None:
            live.note(CLUSTERING)
        second_cluster = run_cluster(runtime, scheduled_event(datetime.now(UTC)))
        if live is not None:
            live.second_round(second, second_cluster)
        database = runtime.database()
        stored = list_issues(database)
        written = IssueEventStore(database).events()
        updates = [e for e in written if e.type == UPDATED]
        update = updates[-1] if updates else None
        kept = kept_dossier(database, update.issue_id, update.version) if update else None
        database.close()
    return DemoRun(
        first,
        first_cluster,
        second,
        second_cluster,
        stored,
        written,
        runtime.log_path,
        json.loads(kept) if kept else None,
    )


def as_json(done: DemoRun) -> dict[str, Any]:
    return {
        "collect": collect.as_json(done.first),
        "cluster": cluster.as_json(done.first_cluster),
        "second_round": {
            "collect": collect.as_json(done.second),
            "cluster": cluster.as_json(done.second_cluster),
        },
        "events": [e.as_dict() for e in done.events],
        "update_dossier": done.update,
    }


def print_demo(done: DemoRun, zone: tzinfo, out: TextIO) -> None:
    collect.print_round(done.first, done.log_path, zone, out)
    cluster.print_run(done.first_cluster, out, listed=False)
    print(file=out)
    print(SECOND_ROUND, file=out)
    print_second(done.second, done.second_cluster, zone, out)
    print_end(done, zone, out)


def print_second(second: RoundResult, answer: dict[str, Any], zone: tzinfo, out: TextIO) -> None:
    for article in second.articles:
        print(article.line(zone), file=out)
    summed = totals(second.outlets)
    print(f"Feeds: {summed['feeds_attempted']} attempted; new articles: {summed['new']}", file=out)
    cluster.print_run(answer, out)


def print_end(done: DemoRun, zone: tzinfo, out: TextIO) -> None:
    """The issues and their events, after both rounds."""
    print(file=out)
    print("Issues, oldest first:", file=out)
    issues.print_issues(done.issues[::-1], zone, out)
    print(file=out)
    print("Issue events (published to the issue bus, each after its dossier):", file=out)
    events.print_events(done.events, zone, out)
    if done.update is not None:
        print(file=out)
        print_update(done.update, out)


def print_update(made: dict[str, Any], out: TextIO) -> None:
    """What a generator revising its piece reads of the update: the representative, and the
    sentences no earlier version carried."""
    issue = made["issue"]
    print(
        f"The update's dossier (`newsdesk dossier {issue['id']} --version {issue['version']}`):",
        file=out,
    )
    chosen = made["representative"]
    print(
        f"Representative: #{chosen['article_id']} {chosen['outlet']} {chosen['title']}"
        if chosen
        else "Representative: none (no article has text)",
        file=out,
    )
    new = made["new"]["sentences"]
    print(f"New in version {issue['version']}: {plural(len(new), 'sentence')}", file=out)
    for sentence in new:
        print(f"  #{sentence['article_id']} {sentence['text']}", file=out)
