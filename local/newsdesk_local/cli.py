"""The ``newsdesk`` command: local rounds and operator tasks (docs/architecture.md)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from newsdesk.core.errors import ConfigError, InfrastructureError
from newsdesk.core.report import totals
from newsdesk.core.settings import Settings
from newsdesk.core.sources import Outlet, group_by_outlet, load_sources
from newsdesk.core.times import format_time, parse_time

if TYPE_CHECKING:
    from newsdesk_local.driver import RoundResult
    from newsdesk_local.services import LocalServices


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    args = _parser().parse_args(argv)
    env = dict(os.environ if environ is None else environ)
    try:
        code: int = args.run(args, env, sys.stdout)
    except (ConfigError, InfrastructureError) as e:
        print(f"newsdesk: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # the local state was saved on the way out
        print("newsdesk: interrupted", file=sys.stderr)
        return 130
    return code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="newsdesk", description=__doc__)
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    collect = commands.add_parser("collect", help="run one collection round locally")
    collect.add_argument("--sources", type=Path, help="sources.yaml (default: the bundled one)")
    collect.add_argument("--json", action="store_true", help="print one JSON object")
    collect.add_argument(
        "--concurrency", type=_positive, default=8, help="worker Lambdas at once (default 8)"
    )
    collect.add_argument(
        "--scheduled",
        action="store_true",
        help="only the feeds that are due, as a scheduled round (default: every feed)",
    )
    collect.set_defaults(run=_collect)

    reparse = commands.add_parser(
        "reparse", help="parse, filter and de-duplicate stored raw bodies again, no fetching"
    )
    reparse.add_argument(
        "--since", type=_time, required=True, help="bodies fetched since (ISO 8601, UTC if bare)"
    )
    reparse.add_argument("--json", action="store_true", help="print one JSON object")
    reparse.set_defaults(run=_reparse)

    migrate = commands.add_parser("migrate", help="apply the PostgreSQL migrations")
    migrate.set_defaults(run=_migrate)

    sources = commands.add_parser("sources", help="sources.yaml tools")
    sources_commands = sources.add_subparsers(required=True, metavar="COMMAND")
    check = sources_commands.add_parser("check", help="validate a sources.yaml")
    check.add_argument("path", type=Path)
    check.add_argument(
        "--live",
        action="store_true",
        help="then fetch every feed once, as the worker would, and say how each answered",
    )
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.add_argument(
        "--concurrency", type=_positive, default=4, help="with --live: outlets at once (4)"
    )
    check.set_defaults(run=_sources_check)

    cluster = commands.add_parser("cluster", help="run one clustering pass locally")
    cluster.add_argument("--json", action="store_true", help="print one JSON object")
    cluster.set_defaults(run=_cluster)

    issues = commands.add_parser("issues", help="list the newest issues and their articles")
    issues.add_argument("--json", action="store_true", help="print one JSON object")
    issues.add_argument("--limit", type=_positive, default=50, help="at most this many (50)")
    issues.set_defaults(run=_issues)

    demo = commands.add_parser(
        "demo", help="serve bundled sample feeds on 127.0.0.1, collect them and cluster them"
    )
    demo.add_argument("--json", action="store_true", help="print one JSON object")
    demo.set_defaults(run=_demo)

    stack = commands.add_parser(
        "stack",
        help="run the emulated AWS and PostgreSQL for `sam local invoke` until Ctrl-C",
    )
    stack.add_argument(
        "--bind",
        type=_ipv4,
        default="127.0.0.1",
        help="the IPv4 address to listen on (default 127.0.0.1; Docker on Linux: 172.17.0.1)",
    )
    stack.add_argument(
        "--aws-port", type=_port, default=4566, help="the AWS emulator's port (4566; 0: any)"
    )
    stack.add_argument(
        "--postgres-port", type=_port, default=55432, help="PostgreSQL's port (55432; 0: any)"
    )
    stack.set_defaults(run=_stack)
    return parser


def _ipv4(value: str) -> str:
    import ipaddress

    try:
        return str(ipaddress.IPv4Address(value))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an IPv4 address: {value!r}") from None


def _port(value: str) -> int:
    number = int(value)
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError("must be from 0 to 65535")
    return number


def _stack(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk_local.stack import run_stack

    return run_stack(env, args.bind, args.aws_port, args.postgres_port, out)


def _time(value: str) -> datetime:
    try:
        return parse_time(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {value!r}") from None


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def _runtime(env: dict[str, str]) -> LocalServices:
    """PostgreSQL (migrated) and AWS for local runs of the functions, to enter."""
    from newsdesk_local.services import LocalServices

    return LocalServices(Settings.from_env(env), env)


def _outlet_order(env: dict[str, str]) -> list[str]:
    # a broken sources file fails here, before anything is started or sent
    feeds = load_sources(Settings.from_env(env).sources_path)
    return [outlet.name for outlet in group_by_outlet(feeds)]


def _collect(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk_local.driver import run_collect_round

    if args.sources is not None:
        env["SOURCES_PATH"] = str(args.sources.resolve())
    order = _outlet_order(env)
    with _runtime(env) as runtime:
        result = run_collect_round(runtime, args.concurrency, order, not args.scheduled)
    if args.json:
        _dump(_round_json(result), out)
    else:
        _print_round(result, runtime.log_path, out)
    return _report_failures(result)


def _reparse(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk.aws.raw import RawStore
    from newsdesk.collect.collector import EntryFilter
    from newsdesk.collect.reparse import reparse
    from newsdesk.storage.articles import ArticleStore
    from newsdesk_local.driver import WORKER

    settings = Settings.from_env(env)
    with _runtime(env) as runtime:
        database = runtime.database()
        raw = RawStore(runtime.client("s3"), runtime.function_env(WORKER)["RAW_BUCKET"])
        run = reparse(raw, ArticleStore(database), EntryFilter.from_settings(settings), args.since)
        database.close()
    if args.json:
        _dump(
            {
                "totals": run.totals(),
                "bodies": [
                    {"key": b.key, "fetched_at": format_time(b.fetched_at), **b.report.as_dict()}
                    for b in run.bodies
                ],
            },
            out,
        )
        return 0
    for body in run.bodies:
        print(f"{format_time(body.fetched_at)} {body.report.log_line()}", file=out)
    t = run.totals()
    print(
        f"Reparsed {t['bodies']} bodies ({t['failed']} not a feed): {t['entries_seen']} "
        f"entries, {t['new']} new, {t['duplicate']} duplicate, {t['photo_filtered']} "
        "photo-filtered",
        file=out,
    )
    return 0


def _cluster(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk_local.driver import CLUSTER, invoke_function, scheduled_event

    with _runtime(env) as runtime:
        run = invoke_function(runtime, CLUSTER, scheduled_event(datetime.now(UTC)))
    if args.json:
        _dump(_cluster_json(run), out)
    else:
        _print_cluster(run, out)
    return 0


def _issues(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk.storage.issues import list_issues

    with _runtime(env) as runtime:
        database = runtime.database()
        issues = list_issues(database, args.limit)
        database.close()
    if args.json:
        _dump({"issues": issues}, out)
    else:
        _print_issues(issues, out)
    return 0


def _round_json(result: RoundResult) -> dict[str, Any]:
    outlets = [{"source": o.source, **o.counts()} for o in result.outlets]
    return {"outlets": outlets, "totals": totals(result.outlets)}


def _cluster_json(run: dict[str, Any]) -> dict[str, Any]:
    return {key: run[key] for key in ("issues_created", "articles_clustered", "issues")}


def _dump(document: dict[str, Any], out: TextIO) -> None:
    json.dump(document, out, ensure_ascii=False)
    out.write("\n")


def _print_round(result: RoundResult, log_path: Path, out: TextIO) -> None:
    for outlet in result.outlets:
        for feed in outlet.feeds:
            print(feed.log_line(), file=out)
    summed = totals(result.outlets)
    attempted, failed = summed["feeds_attempted"], summed["feeds_failed"]
    print(
        f"Feeds: {attempted} attempted, {attempted - failed} ok, {failed} failed, "
        f"{summed['feeds_skipped']} skipped by the outlet breaker ({len(result.outlets)} outlets)",
        file=out,
    )
    print(
        f"Articles: {summed['new']} new, {summed['duplicate']} duplicate, "
        f"{summed['photo_filtered']} photo-filtered (of {summed['entries_seen']} entries; "
        f"duplicates: {summed['duplicate_in_message']} within the round, "
        f"{summed['duplicate_url']} by URL, {summed['duplicate_guid']} by guid)",
        file=out,
    )
    print(
        f"Schedule: {summed['feeds_not_modified']} not modified, {summed['feeds_not_due']} not "
        f"due, {summed['feeds_skipped_open_breaker']} skipped while their outlet cools down, "
        f"{summed['messages_stale']} stale messages; {summed['bytes_received'] / 1024:.1f} kB "
        "received",
        file=out,
    )
    print(f"Round: {result.seconds:.1f} s; Lambda logs in {log_path}", file=out)


def _report_failures(result: RoundResult) -> int:
    for failure in result.failed:
        print(f"newsdesk: outlet {failure.source}: {failure.error}", file=sys.stderr)
    return 1 if result.failed else 0


def _print_cluster(run: dict[str, Any], out: TextIO) -> None:
    if run["locked_out"]:
        print("Another clustering run is in progress; nothing done.", file=out)
        return
    print(
        f"Issues: {run['issues_created']} created, {run['articles_clustered']} articles "
        f"clustered, {run['articles_left_single']} left single",
        file=out,
    )
    for issue in run["issues"]:
        print(
            f"#{issue['id']} [{issue['category']}] {issue['title']} "
            f"({len(issue['article_ids'])} articles)",
            file=out,
        )


def _print_issues(issues: list[dict[str, Any]], out: TextIO) -> None:
    if not issues:
        print("No issues yet.", file=out)
    for issue in issues:
        print(
            f"#{issue['id']} [{issue['category']}] {issue['title']} "
            f"({issue['size']} articles, {issue['created_at']})",
            file=out,
        )
        for article in issue["articles"]:
            print(f"    {article['source']}: {article['title']}", file=out)


def _migrate(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    # the runtime's PostgreSQL (DATABASE_URL, else the embedded one), migrated as it starts
    with _runtime(env) as runtime:
        applied = runtime.migrations_applied
    print(f"applied: {', '.join(applied)}" if applied else "up to date", file=out)
    return 0


def _sources_check(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    feeds = load_sources(args.path)
    outlets = group_by_outlet(feeds)
    if args.live:
        return _sources_check_live(args, outlets, Settings.from_env(env), out)
    categories = sorted({f.category for f in feeds})
    if args.json:
        _dump({"feeds": len(feeds), "outlets": len(outlets), "categories": categories}, out)
        return 0
    print(
        f"{args.path}: ok: {len(feeds)} feeds, {len(outlets)} outlets, "
        f"{len(categories)} categories ({', '.join(categories)})",
        file=out,
    )
    return 0


def _sources_check_live(
    args: argparse.Namespace, outlets: list[Outlet], settings: Settings, out: TextIO
) -> int:
    from newsdesk.collect.fetch import FetchPolicy
    from newsdesk_local.feedcheck import check_outlets, failed_outlets, summary

    if not args.json:
        feeds = sum(len(o.feeds) for o in outlets)
        print(
            f"{args.path}: valid; fetching its {feeds} feeds of {len(outlets)} outlets once each",
            file=out,
            flush=True,
        )
    checks = check_outlets(
        outlets,
        FetchPolicy.from_settings(settings),
        settings.fetch_interval_seconds,
        args.concurrency,
    )
    failed = sum(not c.ok for c in checks)
    if args.json:
        totals = {
            "feeds": len(checks),
            "outlets": len(outlets),
            "ok": len(checks) - failed,
            "failed": failed,
            "outlets_failed": failed_outlets(checks),
        }
        _dump({"feeds": [c.as_dict() for c in checks], "totals": totals}, out)
    else:
        for check in checks:
            print(check.line(), file=out)
        print(summary(checks), file=out)
    return 1 if failed else 0


def _demo(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk_local.demo import serve_demo_feeds, write_sources
    from newsdesk_local.driver import CLUSTER, invoke_function, run_collect_round, scheduled_event
    from newsdesk_local.feedserver import FeedServer

    data_dir = Settings.from_env(env).data_dir / "demo"
    shutil.rmtree(data_dir, ignore_errors=True)  # the demo starts from nothing every time
    with FeedServer() as server:
        sources = write_sources(serve_demo_feeds(server), data_dir / "sources.yaml")
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
        )
        order = _outlet_order(demo_env)
        if not args.json:
            print(f"Serving demo feeds at {server.base_url}; data in {data_dir}", file=out)
        with _runtime(demo_env) as runtime:
            result = run_collect_round(runtime, 4, order)
            run = invoke_function(runtime, CLUSTER, scheduled_event(datetime.now(UTC)))
    if args.json:
        _dump({"collect": _round_json(result), "cluster": _cluster_json(run)}, out)
    else:
        _print_round(result, runtime.log_path, out)
        _print_cluster(run, out)
    return _report_failures(result)
