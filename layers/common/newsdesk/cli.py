"""The ``newsdesk`` command: local rounds and operator tasks (DESIGN.md, "Command line")."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from newsdesk.errors import ConfigError, InfrastructureError
from newsdesk.report import totals
from newsdesk.settings import Settings
from newsdesk.sources import group_by_outlet, load_sources


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    args = _parser().parse_args(argv)
    env = dict(os.environ if environ is None else environ)
    try:
        code: int = args.run(args, env, sys.stdout)
    except (ConfigError, InfrastructureError) as e:
        print(f"newsdesk: {e}", file=sys.stderr)
        return 2
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
    collect.set_defaults(run=_collect)

    migrate = commands.add_parser("migrate", help="apply the PostgreSQL migrations")
    migrate.set_defaults(run=_migrate)

    sources = commands.add_parser("sources", help="sources.yaml tools")
    sources_commands = sources.add_subparsers(required=True, metavar="COMMAND")
    check = sources_commands.add_parser("check", help="validate a sources.yaml")
    check.add_argument("path", type=Path)
    check.set_defaults(run=_sources_check)

    demo = commands.add_parser(
        "demo", help="serve bundled sample feeds on 127.0.0.1 and run a round"
    )
    demo.add_argument("--json", action="store_true", help="print one JSON object")
    demo.set_defaults(run=_demo)
    return parser


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def _collect(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    if args.sources is not None:
        env["SOURCES_PATH"] = str(args.sources.resolve())
    return _round(env, args.concurrency, args.json, out)


def _round(env: dict[str, str], concurrency: int, as_json: bool, out: TextIO) -> int:
    from newsdesk.local import LocalRuntime, run_collect_round
    from newsdesk.migrate import migrate
    from newsdesk.store import Database

    settings = Settings.from_env(env)
    # a broken file fails here, before anything is sent
    order = [o.name for o in group_by_outlet(load_sources(settings.sources_path))]
    with LocalRuntime(settings, env) as runtime:
        database = Database(lambda: runtime.env["DATABASE_URL"])
        migrate(database)
        database.close()
        result = run_collect_round(runtime, concurrency, order)
    summed = totals(result.outlets)
    if as_json:
        outlets = [{"source": o.source, **o.counts()} for o in result.outlets]
        json.dump({"outlets": outlets, "totals": summed}, out, ensure_ascii=False)
        out.write("\n")
    else:
        for outlet in result.outlets:
            for feed in outlet.feeds:
                print(feed.log_line(), file=out)
        attempted, failed = summed["feeds_attempted"], summed["feeds_failed"]
        print(
            f"Feeds: {attempted} attempted, {attempted - failed} ok, {failed} failed, "
            f"{summed['feeds_skipped']} skipped by the outlet breaker "
            f"({len(result.outlets)} outlets)",
            file=out,
        )
        print(
            f"Articles: {summed['new']} new, {summed['duplicate']} duplicate, "
            f"{summed['photo_filtered']} photo-filtered",
            file=out,
        )
        print(f"Round: {result.seconds:.1f} s; Lambda logs in {runtime.log_path}", file=out)
    for failure in result.failed:
        print(f"newsdesk: outlet {failure.source}: {failure.error}", file=sys.stderr)
    return 1 if result.failed else 0


def _migrate(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk.aws import database_from
    from newsdesk.migrate import migrate

    database = database_from(Settings.from_env(env))
    applied = migrate(database)
    database.close()
    print(f"applied: {', '.join(applied)}" if applied else "up to date", file=out)
    return 0


def _sources_check(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    feeds = load_sources(args.path)
    outlets = group_by_outlet(feeds)
    categories = sorted({f.category for f in feeds})
    print(
        f"{args.path}: ok: {len(feeds)} feeds, {len(outlets)} outlets, "
        f"{len(categories)} categories ({', '.join(categories)})",
        file=out,
    )
    return 0


def _demo(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk.demo import serve_demo_feeds, write_sources
    from newsdesk.feedserver import FeedServer

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
        if not args.json:
            print(f"Serving demo feeds at {server.base_url}; data in {data_dir}", file=out)
        return _round(demo_env, 4, args.json, out)
