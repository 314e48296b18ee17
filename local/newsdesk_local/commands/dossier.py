"""`newsdesk dossier ISSUE`: the dossier kept with an issue version's event (issue 40), as a
generator is handed it: its representative, what is new in the version, its texts within the
budget, its copies and pages without text, how big the story is; or, with --json, the
dossier's JSON as it is kept and published. It only reads PostgreSQL."""

from __future__ import annotations

import argparse
import json
from datetime import tzinfo
from typing import Any, TextIO

from newsdesk.core.errors import ConfigError
from newsdesk.core.settings import Settings
from newsdesk.core.times import local_time
from newsdesk_local.commands import arguments
from newsdesk_local.output import EXIT_OK, plural


def add(commands: arguments.Commands) -> None:
    dossier = commands.add_parser(
        "dossier", help="print an issue version's dossier, what a content generator is handed"
    )
    dossier.add_argument("issue", type=arguments.positive, metavar="ISSUE", help="the issue's id")
    dossier.add_argument(
        "--version",
        type=arguments.positive,
        metavar="V",
        help="the issue's version (its newest with a dossier when not given)",
    )
    dossier.add_argument("--json", action="store_true", help="the dossier's JSON, as published")
    dossier.add_argument("--stack", metavar="NAME", help=arguments.STACK_READ_HELP)
    dossier.set_defaults(run=run)


def run(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk.storage.issue_events import dossier_json, kept_dossier
    from newsdesk_local.local_postgres import read_only_database

    settings = Settings.from_env(env)
    if args.stack:
        from newsdesk_local.commands import deployed

        asked = {"command": "dossier", "issue": args.issue, "version": args.version}
        made = next(deployed.pages(args.stack, asked, env))["dossier"]
        kept = None if made is None else dossier_json(made)
    else:
        with read_only_database(settings) as database:  # creates nothing, migrates nothing
            kept = None if database is None else kept_dossier(database, args.issue, args.version)
    if kept is None:
        which = f"version {args.version} of issue" if args.version else "issue"
        raise ConfigError(
            f"no dossier for {which} {args.issue} (`newsdesk issues` lists the issues; a "
            "closing version has none)"
        )
    if args.json:
        out.write(kept + "\n")
    else:
        print_dossier(json.loads(kept), settings.zone, out)
    return EXIT_OK


def print_dossier(dossier: dict[str, Any], zone: tzinfo, out: TextIO) -> None:
    issue, size = dossier["issue"], dossier["size"]
    print(
        f"Issue #{issue['id']} version {issue['version']} [{issue['category']}] {issue['state']}: "
        f"{plural(size['articles'], 'article')} from {plural(size['outlets'], 'outlet')}, "
        f"{size['articles_last_hour']} in the last hour; importance {size['importance']}",
        file=out,
    )
    first = size["first_reporter"]
    if first:
        lead = size["lead_seconds"]
        ahead = f"{lead // 60} min" if lead and lead >= 60 else f"{lead} s"
        led = f", {ahead} ahead of the next outlet" if lead else ""
        when = local_time(first["at"], zone)
        print(f"First reported by {first['outlet']} at {when}{led}", file=out)
    chosen = dossier["representative"]
    if chosen is None:
        print("Representative: none (no article has text)", file=out)
    else:
        print(f"Representative: {_cited(chosen)}", file=out)
    new = dossier["new"]
    if new["nothing_new"]:
        print("New in this version: nothing", file=out)
    else:
        print(f"New in this version ({plural(len(new['sentences']), 'sentence')}):", file=out)
        for sentence in new["sentences"]:
            print(f"  #{sentence['article_id']} {sentence['text']}", file=out)
    left = dossier["left_out"]
    chars = sum(len(p["text"]) for t in dossier["texts"] for p in t["passages"])
    print(
        f"Texts ({chars:,} of {dossier['budget_chars']:,} characters; left out: "
        f"{plural(left['repeated_sentences'], 'repeated sentence')}, "
        f"{plural(left['sentences_over_budget'], 'sentence')} over the budget):",
        file=out,
    )
    for text in dossier["texts"]:
        print(f"  {_cited(text)}", file=out)
        for passage in text["passages"]:
            print(f"    {passage['text']}", file=out)
    for copy in dossier["copies"]:
        of = f"of #{copy['copy_of']} ({copy['reason']})"
        print(f"Copy: #{copy['id']} {copy['outlet']} {of}", file=out)
    for page in dossier["without_text"]:
        print(f"Without text: #{page['id']} {page['outlet']} ({page['reason']})", file=out)


def _cited(article: dict[str, Any]) -> str:
    return f"#{article['article_id']} {article['outlet']} {article['title']} <{article['url']}>"
