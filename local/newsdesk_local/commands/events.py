"""`newsdesk events`: the issue events of the outbox, oldest first, each with its state
(published, or waiting with its error) and its dossier's key, or one JSON object. Locally the
relay publishes to moto's bus and writes the dossiers to its bucket, as deployed. It only reads
PostgreSQL."""

from __future__ import annotations

import argparse
from datetime import tzinfo
from typing import TYPE_CHECKING, Any, TextIO

from newsdesk.core.settings import Settings
from newsdesk.core.times import local_time, parse_time
from newsdesk_local.commands import arguments
from newsdesk_local.output import EXIT_OK, dump, plural

if TYPE_CHECKING:
    from newsdesk.storage.issue_events import IssueEvent


def add(commands: arguments.Commands) -> None:
    events = commands.add_parser(
        "events", help="the issue events written, published or waiting, with their dossiers' keys"
    )
    events.add_argument("--json", action="store_true", help=arguments.JSON_HELP)
    events.add_argument(
        "--since",
        type=arguments.time,
        metavar="TIME",
        help=f"written since TIME; {arguments.TIME_HELP}",
    )
    events.add_argument(
        "--limit", type=arguments.positive, default=100, help="at most this many (100)"
    )
    events.add_argument("--stack", metavar="NAME", help=arguments.STACK_READ_HELP)
    events.set_defaults(run=run)


def run(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk.storage.issue_events import IssueEventStore
    from newsdesk_local.local_postgres import read_only_database

    settings = Settings.from_env(env)
    events: list[IssueEvent] = []
    if args.stack:
        from newsdesk_local.commands import deployed

        since = args.since.isoformat() if args.since else None
        asked = {"command": "events", "since": since, "limit": args.limit}
        found = deployed.items(args.stack, asked, "events", args.limit, env)
        events = [event_of(e) for e in reversed(found)]  # they come newest first
    else:
        with read_only_database(settings) as database:  # creates nothing, migrates nothing
            if database is not None:
                events = IssueEventStore(database).events(args.since, args.limit)
    if args.json:
        dump({"events": [e.as_dict() for e in events]}, out)
        return EXIT_OK
    print_events(events, settings.zone, out)
    return EXIT_OK


def event_of(shown: dict[str, Any]) -> IssueEvent:
    """An event as ``IssueEvent.as_dict`` shows it, read back."""
    from newsdesk.storage.issue_events import IssueEvent

    issue, version = shown["id"].removeprefix("issue:").split(":v")
    published = shown["published_at"]
    return IssueEvent(
        int(issue),
        int(version),
        shown["detail_type"],
        shown["detail"],
        parse_time(shown["created_at"]),
        parse_time(published) if published else None,
        shown["attempts"],
        shown["last_error"],
    )


def print_events(events: list[IssueEvent], zone: tzinfo, out: TextIO) -> None:
    if not events:
        print("No issue events yet.", file=out)
    for event in events:
        print(event_line(event, zone), file=out)


def event_line(event: IssueEvent, zone: tzinfo) -> str:
    """``TIME IssueUpdated issue:1:v2 [정치] title (4 articles, added #33; not published)``."""
    detail = event.detail
    published = (
        f"published {local_time(event.published_at, zone)}"
        if event.published_at
        else "not published" + (f" ({event.last_error})" if event.last_error else "")
    )
    added = detail["added_article_ids"]
    dossier = detail.get("dossier")  # none in an event an earlier release wrote
    return (
        f"{local_time(detail['changed_at'], zone)} {event.type} {event.id} "
        f"[{detail['category']}] {detail['title']} ({plural(detail['size'], 'article')}"
        + (f", added {', '.join(f'#{a}' for a in added)}" if added else "")
        + f"; {published}"
        + (f"; dossier {dossier['key']}" if dossier else "")
        + ")"
    )
