"""`newsdesk feeds` and `newsdesk feeds reset OUTLET…|--all`: what the state table says of every
feed, outlet and page host, failing ones first, or one JSON object; and breakers closed, feeds
made due. The records, where they are read and how they are shown: ``newsdesk_local.feeds``.
Both only read and update records: nothing is created, started or migrated."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from newsdesk.core.errors import ConfigError
from newsdesk.core.settings import Settings
from newsdesk.core.sources import group_by_outlet, load_sources
from newsdesk.core.times import utc_now
from newsdesk_local.commands import arguments, context
from newsdesk_local.output import dump

if TYPE_CHECKING:
    from newsdesk_local.feeds import StateStore

TABLE_HELP = "a deployed stack's state table (default: STATE_TABLE_NAME, else the local one)"


def add(commands: arguments.Commands) -> None:
    feeds = commands.add_parser(
        "feeds", help="each feed's and outlet's state: last status, errors, breaker, next check"
    )
    feeds.add_argument("--failing", action="store_true", help="only what is failing")
    feeds.add_argument("--source", metavar="NAME", help="only this outlet")
    feeds.add_argument("--json", action="store_true", help=arguments.JSON_HELP)
    feeds.add_argument("--table", metavar="NAME", help=TABLE_HELP)
    feeds.add_argument(
        "--sources",
        type=Path,
        metavar="PATH",
        help="the sources file whose feeds are listed, tried or not (default: SOURCES_PATH, "
        "else the one the data folder was last collected with, else the bundled one; with a "
        "table, the bundled one: what a deployed fan-out reads)",
    )
    feeds.set_defaults(run=run)
    feeds_commands = feeds.add_subparsers(metavar="COMMAND")
    reset = feeds_commands.add_parser(
        "reset", help="close outlets' breakers and make their feeds due at the next round"
    )
    reset.add_argument("outlets", nargs="*", metavar="OUTLET")
    reset.add_argument("--all", action="store_true", help="every outlet in the state table")
    reset.add_argument("--table", metavar="NAME", help=TABLE_HELP, default=argparse.SUPPRESS)
    reset.set_defaults(run=run_reset)


def run(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk_local import feeds

    settings = Settings.from_env(env)
    zone = settings.zone
    store = state_store(args, env, settings)
    recorded = store.read()
    known = feeds.with_sources(recorded, group_by_outlet(load_sources(sources_path(args, env))))
    if args.source is not None:
        feeds.chosen(known, [args.source], every=False)
        known = {args.source: known[args.source]}
    now = utc_now()
    shown = feeds.ordered(known.values(), now, args.failing)
    hosts = [h for h in store.hosts() if not args.failing or h.failing(now)]
    if args.json:
        dump({**feeds.as_json(shown, now), "hosts": feeds.hosts_json(hosts, now)}, out)
        return 0
    if not recorded:
        print(f"No feed has been checked yet ({store.where}).", file=out)
        if not known:
            return 0
    for outlet in shown:
        # the outlet's counts are of all its feeds, those --failing leaves out included
        print(feeds.outlet_line(known[outlet.source], now, zone), file=out)
        for feed in outlet.feeds:
            print(feeds.feed_line(outlet, feed, now, zone), file=out)
    for host in hosts:
        print(feeds.host_line(host, now, zone), file=out)
    print(feeds.summary(known.values(), now, settings.timezone, zone), file=out)
    return 0


def run_reset(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk_local import feeds

    if bool(args.outlets) == args.all:
        raise ConfigError("feeds reset: name the outlets to reset, or give --all (not both)")
    settings = Settings.from_env(env)
    store = state_store(args, env, settings)
    known = store.read()
    names = feeds.chosen(known, args.outlets, args.all)  # every name checked before a write
    now = utc_now()
    for name in names:
        store.reset(known[name], now)
        print(feeds.reset_line(known[name], now, settings.zone), file=out, flush=True)
    if not names:
        print(f"Nothing to reset ({store.where} is empty).", file=out)
    return 0


def sources_path(args: argparse.Namespace, env: dict[str, str]) -> Path | None:
    """--sources; else, for a table (a deployed stack's, whose fan-out reads the bundled file),
    the bundled file (None); else the local runs' (SOURCES_PATH, else the data folder's, else
    the bundled file: ``context.sources_path``)."""
    if args.sources is not None:
        return Path(args.sources)
    if getattr(args, "table", None) or env.get("STATE_TABLE_NAME"):
        return None
    return context.sources_path(env)


def state_store(args: argparse.Namespace, env: dict[str, str], settings: Settings) -> StateStore:
    """A deployed stack's table (--table, STATE_TABLE_NAME) with boto3's own credentials; an
    emulator's (AWS_ENDPOINT_URL, else that of a running `newsdesk stack` holding the data
    folder) with the local runtime's; else the items the local runtime saved. Nothing is
    created in any of them."""
    from botocore.exceptions import BotoCoreError

    from newsdesk.aws.clients import operator_client
    from newsdesk.aws.state_table import StateTable
    from newsdesk_local.data_dir import existing
    from newsdesk_local.feeds import STATE_TABLE, SavedStore, TableStore
    from newsdesk_local.folder_lock import holder
    from newsdesk_local.infrastructure import REGION, Infrastructure
    from newsdesk_local.services import FAKE_CREDENTIALS

    endpoint = env.get("AWS_ENDPOINT_URL") or None
    table: str | None = getattr(args, "table", None) or env.get("STATE_TABLE_NAME") or None
    stack = holder(settings.data_dir) if endpoint is None and table is None else None
    if stack is not None and stack.services:  # its table is the live one, and it saves it
        env = {
            **env,
            **FAKE_CREDENTIALS,
            "AWS_DEFAULT_REGION": stack.services["AWS_DEFAULT_REGION"],
        }
        endpoint = stack.services["AWS_ENDPOINT_URL"]
    try:
        if table is not None:
            client = operator_client("dynamodb", **context.deployed(env))
            return TableStore(StateTable(client, table), table)
        if endpoint is not None:
            name = Infrastructure.packaged().table(STATE_TABLE).name
            credentials = {key: env.get(key, value) for key, value in FAKE_CREDENTIALS.items()}
            client = operator_client(
                "dynamodb",
                endpoint_url=endpoint,
                region_name=env.get("AWS_DEFAULT_REGION", REGION),
                aws_access_key_id=credentials["AWS_ACCESS_KEY_ID"],
                aws_secret_access_key=credentials["AWS_SECRET_ACCESS_KEY"],
            )
            return TableStore(StateTable(client, name), f"{name} at {endpoint}")
    except ValueError as e:  # botocore's "Invalid endpoint: …"
        raise ConfigError(f"AWS_ENDPOINT_URL: {e}") from None
    except BotoCoreError as e:  # no region, a broken profile
        raise ConfigError(f"AWS: {e}") from None
    existing(settings.data_dir)  # one that is not there is an error, not "nothing yet"
    return SavedStore(settings.data_dir)
