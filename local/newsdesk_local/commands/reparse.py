"""`newsdesk reparse --since TIME`: the raw bodies fetched since TIME parsed, filtered and
de-duplicated again (``newsdesk.collect.reparse``), what is missing stored; nothing fetched.
A line per body and the totals, or one JSON object."""

from __future__ import annotations

import argparse
from datetime import tzinfo
from typing import TYPE_CHECKING, Any, TextIO

from newsdesk.core.settings import Settings
from newsdesk.core.times import format_time, local_time
from newsdesk_local.commands import arguments, context
from newsdesk_local.output import dump, plural

if TYPE_CHECKING:
    from newsdesk.collect.reparse import ReparseRun


def add(commands: arguments.Commands) -> None:
    reparse = commands.add_parser(
        "reparse", help="parse, filter and de-duplicate stored raw bodies again, no fetching"
    )
    reparse.add_argument(
        "--since",
        type=arguments.time,
        required=True,
        metavar="TIME",
        help=f"bodies fetched since TIME; {arguments.TIME_HELP}",
    )
    reparse.add_argument("--json", action="store_true", help=arguments.JSON_HELP)
    reparse.set_defaults(run=run)


def run(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk.aws.raw import RawStore
    from newsdesk.collect.collector import EntryFilter
    from newsdesk.collect.reparse import reparse
    from newsdesk.storage.articles import ArticleStore
    from newsdesk_local.invocations import WORKER

    settings = Settings.from_env(env)
    with context.runtime(env, "reparse") as runtime:
        database = runtime.database()
        raw = RawStore(runtime.client("s3"), runtime.function_env(WORKER)["RAW_BUCKET"])
        done = reparse(raw, ArticleStore(database), EntryFilter.from_settings(settings), args.since)
        database.close()
    if args.json:
        dump(as_json(done), out)
    else:
        print_run(done, settings.zone, out)
    return 0


def as_json(done: ReparseRun) -> dict[str, Any]:
    return {
        "totals": done.totals(),
        "bodies": [
            {"key": b.key, "fetched_at": format_time(b.fetched_at), **b.report.as_dict()}
            for b in done.bodies
        ],
    }


def print_run(done: ReparseRun, zone: tzinfo, out: TextIO) -> None:
    for body in done.bodies:
        print(f"{local_time(body.fetched_at, zone)} {body.report.log_line(zone)}", file=out)
    t = done.totals()
    print(
        f"Reparsed {plural(t['bodies'], 'body')} ({t['failed']} not a feed): "
        f"{plural(t['entries_seen'], 'entry')}, {t['new']} new, {t['duplicate']} duplicate, "
        f"{t['photo_filtered']} photo-filtered",
        file=out,
    )
