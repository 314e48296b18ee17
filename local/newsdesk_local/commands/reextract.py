"""`newsdesk reextract --since TIME`: the pages the raw layer keeps for the articles extracted
since TIME, extracted, judged and keyed again (``newsdesk.extract.reextract``) with the extractor
function's settings; nothing fetched. An ``Article:`` line per page with what it was, and the
totals, or one JSON object."""

from __future__ import annotations

import argparse
from datetime import tzinfo
from typing import TYPE_CHECKING, Any, TextIO

from newsdesk.core.settings import Settings
from newsdesk_local.commands import arguments, context
from newsdesk_local.output import EXIT_OK, dump, plural

if TYPE_CHECKING:
    from newsdesk.extract.reextract import ReextractRun
    from newsdesk_local.services import LocalServices


def add(commands: arguments.Commands) -> None:
    reextract = commands.add_parser(
        "reextract", help="extract the kept pages again (the raw layer), no fetching"
    )
    reextract.add_argument(
        "--since",
        type=arguments.time,
        required=True,
        metavar="TIME",
        help=f"pages extracted since TIME; {arguments.TIME_HELP}",
    )
    reextract.add_argument("--json", action="store_true", help=arguments.JSON_HELP)
    reextract.set_defaults(run=run)


def run(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    with context.runtime(env, "reextract") as runtime:
        done = reextract_pages(runtime, args)
    if args.json:
        dump(as_json(done), out)
    else:
        print_run(done, Settings.from_env(env).zone, out)
    return EXIT_OK


def reextract_pages(runtime: LocalServices, args: argparse.Namespace) -> ReextractRun:
    """The extractor as the extractor function builds it (its environment's settings, the
    sources' wire agencies), over the runtime's database, raw layer and state table."""
    from newsdesk.aws.raw import RawStore
    from newsdesk.aws.state_table import StateTable
    from newsdesk.core.sources import load_sources, wire_agencies
    from newsdesk.extract.extractor import ExtractPolicy, PageExtractor
    from newsdesk.extract.reextract import reextract
    from newsdesk.storage.extractions import ExtractionStore
    from newsdesk_local.invocations import EXTRACTOR

    function_env = runtime.function_env(EXTRACTOR)
    settings = Settings.from_env(function_env)
    database = runtime.database()
    try:
        store = ExtractionStore(database, wire_agencies(load_sources(settings.sources_path)))
        raw = RawStore(runtime.client("s3"), function_env["RAW_BUCKET"])
        states = StateTable(runtime.client("dynamodb"), settings.state_table_name)
        extractor = PageExtractor(ExtractPolicy.from_settings(settings), store, states, raw)
        return reextract(extractor, store, raw, args.since)
    finally:
        database.close()


def as_json(done: ReextractRun) -> dict[str, Any]:
    return {"articles": [{**page.report.as_dict(), "was": page.was} for page in done.pages]}


def print_run(done: ReextractRun, zone: tzinfo, out: TextIO) -> None:
    from newsdesk.extract.extractor import status_words

    for page in done.pages:
        print(f"{page.report.line(zone)} (was {status_words(page.was)})", file=out)
    print(
        f"Re-extracted {plural(len(done.pages), 'page')} from the raw layer; "
        f"{done.changed()} changed outcome; {done.gone} no longer kept",
        file=out,
    )
