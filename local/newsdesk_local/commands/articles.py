"""`newsdesk articles [--since TIME] [--stack NAME]`: the articles collected since TIME (24 h ago
by default) with their extraction outcome and issue, or one JSON object (status ``pending``
while the page waits in the outbox, ``not_extracted`` when it was never queued). It only reads
PostgreSQL: the local data folder's, or a deployed stack's through its read function."""

from __future__ import annotations

import argparse
import sys
from datetime import timedelta, tzinfo
from typing import TYPE_CHECKING, Any, TextIO

from newsdesk.core.settings import Settings
from newsdesk.core.times import local_time, parse_time, utc_now
from newsdesk_local.commands import arguments
from newsdesk_local.output import EXIT_OK, dump

if TYPE_CHECKING:
    from newsdesk.storage.extractions import ArticleRow


def add(commands: arguments.Commands) -> None:
    articles = commands.add_parser(
        "articles", help="the articles collected since a time, with their extraction outcome"
    )
    articles.add_argument(
        "--since",
        type=arguments.time,
        metavar="TIME",
        help=f"collected since TIME (default: 24h ago); {arguments.TIME_HELP}",
    )
    articles.add_argument("--json", action="store_true", help=arguments.JSON_HELP)
    articles.add_argument("--stack", metavar="NAME", help=arguments.STACK_READ_HELP)
    articles.set_defaults(run=run)


def run(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk.storage.extractions import ArticleRow, ExtractionStore
    from newsdesk_local.local_postgres import read_only_database

    settings = Settings.from_env(env)
    since = args.since or utc_now() - timedelta(hours=24)
    rows: list[ArticleRow] = []
    if args.stack:
        from newsdesk_local.commands import deployed

        asked = {"command": "articles", "since": since.isoformat()}
        found = deployed.items(args.stack, asked, "articles", sys.maxsize, env)
        rows = [ArticleRow(**a | {"collected_at": parse_time(a["collected_at"])}) for a in found]
    else:
        with read_only_database(settings) as database:  # creates nothing, migrates nothing
            if database is not None:
                rows = ExtractionStore(database).articles(since)
    if args.json:
        dump({"articles": [as_json(row) for row in rows]}, out)
        return EXIT_OK
    if not rows:
        print(f"No article collected since {local_time(since, settings.zone)}.", file=out)
    for row in rows:
        print(line(row, settings.zone), file=out)
    return EXIT_OK


def as_json(row: ArticleRow) -> dict[str, Any]:
    status = row.status or ("pending" if row.queued else "not_extracted")
    return {
        "id": row.id,
        "source": row.source,
        "category": row.category,
        "title": row.title,
        "url": row.url,
        "extraction": {"status": status, "reason": row.reason, "chars": row.chars},
        "copy_of": {"id": row.copy_of, "reason": row.copy_reason} if row.copy_of else None,
    }


def line(row: ArticleRow, zone: tzinfo) -> str:
    """``#id source | category | outcome | issue #N | title | URL``: the outcome in the
    extractor's words."""
    from newsdesk.extract.extractor import ArticleReport

    extraction = as_json(row)["extraction"]
    outcome = ArticleReport(
        row.id,
        row.revision,
        row.url,
        "",
        extraction["status"],
        extraction["reason"],
        extraction["chars"] or 0,
        row.copy_of,
        row.copy_reason,
    ).outcome(zone)
    issue = f"issue #{row.issue_id}" if row.issue_id else "no issue"
    return (
        f"#{row.id} {row.source} | {row.category} | {outcome} | {issue} | {row.title} | {row.url}"
    )
