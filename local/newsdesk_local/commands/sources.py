"""`newsdesk sources check PATH [--live]`: a sources file validated (its feeds, outlets and
categories, or the entry and field at fault, exit 2); with ``--live``, then every feed fetched
once as the worker would (``newsdesk_local.feedcheck``), a line each and a summary, exit 1 if
one failed. Or one JSON object."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from newsdesk.core.settings import Settings
from newsdesk.core.sources import Outlet, group_by_outlet, load_sources
from newsdesk_local.commands import arguments
from newsdesk_local.output import dump, plural


def add(commands: arguments.Commands) -> None:
    sources = commands.add_parser("sources", help="sources.yaml tools")
    sources_commands = sources.add_subparsers(required=True, metavar="COMMAND")
    check = sources_commands.add_parser("check", help="validate a sources.yaml")
    check.add_argument("path", type=Path)
    check.add_argument(
        "--live",
        action="store_true",
        help="then fetch every feed once, as the worker would, and say how each answered",
    )
    check.add_argument("--json", action="store_true", help=arguments.JSON_HELP)
    check.add_argument(
        "--concurrency",
        type=arguments.positive,
        default=4,
        help="with --live: outlets at once (4)",
    )
    check.set_defaults(run=run)


def run(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    feeds = load_sources(args.path)
    outlets = group_by_outlet(feeds)
    if args.live:
        return check_live(args, outlets, Settings.from_env(env), out)
    categories = sorted({f.category for f in feeds})
    if args.json:
        dump({"feeds": len(feeds), "outlets": len(outlets), "categories": categories}, out)
        return 0
    print(
        f"{args.path}: ok: {plural(len(feeds), 'feed')}, {plural(len(outlets), 'outlet')}, "
        f"{plural(len(categories), 'category')} ({', '.join(categories)})",
        file=out,
    )
    return 0


def check_live(
    args: argparse.Namespace, outlets: list[Outlet], settings: Settings, out: TextIO
) -> int:
    from newsdesk.collect.fetch import FetchPolicy
    from newsdesk_local.feedcheck import check_outlets, failed_outlets, summary

    if not args.json:
        feeds = sum(len(o.feeds) for o in outlets)
        print(
            f"{args.path}: valid; fetching its {plural(feeds, 'feed')} of "
            f"{plural(len(outlets), 'outlet')} once each",
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
        dump({"feeds": [c.as_dict() for c in checks], "totals": totals}, out)
    else:
        for check in checks:
            print(check.line(settings.zone), file=out)
        print(summary(checks, settings.timezone, settings.zone), file=out)
    return 1 if failed else 0
