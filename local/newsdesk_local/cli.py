"""The ``newsdesk`` command: local rounds and operator tasks (docs/architecture.md).

Exit codes: 0 done; 1 an outlet's message failed (SQS would retry it), or for `sources check
--live` a feed failed; 2 a configuration error or a service that cannot be reached (one line on
standard error); 3 feeds were attempted and not one succeeded. A closed pipe (``| head``) ends
the command quietly, with 0. Terminal times are in NEWSDESK_TIMEZONE; JSON's are UTC.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from newsdesk.core.errors import ConfigError, InfrastructureError
from newsdesk.core.report import COOLING_DOWN, FETCHED, SUCCEEDED, totals
from newsdesk.core.settings import LOCAL_CONTACT, Settings
from newsdesk.core.sources import Outlet, group_by_outlet, load_sources, wire_agencies
from newsdesk.core.times import format_time, local_time, parse_time, replay_time, utc_now

if TYPE_CHECKING:
    from newsdesk_local.driver import RoundResult
    from newsdesk_local.feeds import StateStore
    from newsdesk_local.services import LocalServices

EXIT_OK, EXIT_FAILED, EXIT_CONFIG, EXIT_NO_FEED = 0, 1, 2, 3


# The template's queues `dlq redrive` reads (their URLs are also the stack's outputs).
OUTLET_QUEUE, OUTLET_DEAD_LETTERS = "OutletQueue", "OutletDeadLetterQueue"
SCHEDULE_DEAD_LETTERS = "ScheduleDeadLetterQueue"
ARTICLE_QUEUE, ARTICLE_DEAD_LETTERS = "ArticleQueue", "ArticleDeadLetterQueue"
PAGE_MAX_BYTES = 2 * 1024 * 1024  # an article page's cap (issue 14), below a feed's


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    args = _parser().parse_args(argv)
    env = dict(os.environ if environ is None else environ)
    if not env.get("OPERATOR_CONTACT", "").strip():
        # a run on this machine: its requests say so (the functions refuse an unset contact)
        env["OPERATOR_CONTACT"] = LOCAL_CONTACT
    out = _utf8(sys.stdout)
    try:
        code: int = args.run(args, env, out)
        out.flush()
    except (ConfigError, InfrastructureError) as e:
        print(f"newsdesk: {_one_line(str(e))}", file=sys.stderr)
        return EXIT_CONFIG
    except BrokenPipeError:  # the reader went away (| head): end quietly
        _silence(out)
        return EXIT_OK
    except KeyboardInterrupt:  # the local state was saved on the way out
        print("newsdesk: interrupted", file=sys.stderr)
        return 130
    return code


def _utf8(out: TextIO) -> TextIO:
    """Standard output writes UTF-8 whatever the locale says (Korean titles, JSON)."""
    if isinstance(out, io.TextIOWrapper) and out.encoding.lower().replace("-", "") != "utf8":
        out.reconfigure(encoding="utf-8")
    return out


def _silence(out: TextIO) -> None:
    """What is still buffered for a closed pipe goes nowhere, not into a second error when
    the interpreter flushes it on exit."""
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())


def _one_line(text: str) -> str:
    return " ".join(text.split())


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
    cluster.add_argument(
        "--at",
        type=_replay_time,
        help="cluster as if it were TIME: the window ends then, later articles unseen "
        "(ISO 8601, UTC if bare; for backfills and replays)",
    )
    cluster.set_defaults(run=_cluster)

    events = commands.add_parser(
        "events", help="the issue events written (locally: what would have been published)"
    )
    events.add_argument("--json", action="store_true", help="print one JSON object")
    events.add_argument("--since", type=_time, help="written since (ISO 8601, UTC if bare)")
    events.add_argument("--limit", type=_positive, default=100, help="at most this many (100)")
    events.set_defaults(run=_events)

    issues = commands.add_parser("issues", help="list the newest issues and their articles")
    issues.add_argument("--json", action="store_true", help="print one JSON object")
    issues.add_argument("--limit", type=_positive, default=50, help="at most this many (50)")
    issues.set_defaults(run=_issues)

    articles = commands.add_parser(
        "articles", help="the articles collected since a time, with their extraction outcome"
    )
    articles.add_argument(
        "--since", type=_time, help="collected since (ISO 8601, UTC if bare; default: 24 h ago)"
    )
    articles.add_argument("--json", action="store_true", help="print one JSON object")
    articles.set_defaults(run=_articles)

    reextract = commands.add_parser(
        "reextract", help="extract the kept pages again (the raw layer), no fetching"
    )
    reextract.add_argument(
        "--since", type=_time, required=True, help="pages extracted since (ISO 8601, UTC if bare)"
    )
    reextract.add_argument("--json", action="store_true", help="print one JSON object")
    reextract.set_defaults(run=_reextract)

    extract = commands.add_parser(
        "extract-text", help="the main text of a saved page or of a URL, as newsdesk extracts it"
    )
    extract.add_argument("page", metavar="FILE|URL")
    extract.add_argument("--json", action="store_true", help="print one JSON object")
    extract.set_defaults(run=_extract_text)

    dlq = commands.add_parser("dlq", help="dead-letter queues")
    dlq_commands = dlq.add_subparsers(required=True, metavar="COMMAND")
    redrive = dlq_commands.add_parser(
        "redrive",
        help="send dead letters back: outlet messages to the worker's queue, article messages "
        "to the extractor's, schedule events to their function",
    )
    redrive.add_argument("--queue", choices=("outlet", "article", "schedule"), default="outlet")
    redrive.add_argument(
        "--stack",
        help="a deployed stack's name: its queues, with your AWS credentials "
        "(default: the local runtime's)",
    )
    redrive.set_defaults(run=_dlq_redrive)

    feeds = commands.add_parser(
        "feeds", help="each feed's and outlet's state: last status, errors, breaker, next check"
    )
    feeds.add_argument("--failing", action="store_true", help="only what is failing")
    feeds.add_argument("--source", metavar="NAME", help="only this outlet")
    feeds.add_argument("--json", action="store_true", help="print one JSON object")
    table_help = "a deployed stack's state table (default: STATE_TABLE_NAME, else the local one)"
    feeds.add_argument("--table", metavar="NAME", help=table_help)
    feeds.set_defaults(run=_feeds)
    feeds_commands = feeds.add_subparsers(metavar="COMMAND")
    reset = feeds_commands.add_parser(
        "reset", help="close outlets' breakers and make their feeds due at the next round"
    )
    reset.add_argument("outlets", nargs="*", metavar="OUTLET")
    reset.add_argument("--all", action="store_true", help="every outlet in the state table")
    reset.add_argument("--table", metavar="NAME", help=table_help, default=argparse.SUPPRESS)
    reset.set_defaults(run=_feeds_reset)

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
        help="the IPv4 address to listen on: loopback (default 127.0.0.1) or the Docker "
        "bridge's (Linux: 172.17.0.1); any other needs --expose-without-password",
    )
    stack.add_argument(
        "--aws-port", type=_port, default=4566, help="the AWS emulator's port (4566; 0: any)"
    )
    stack.add_argument(
        "--postgres-port", type=_port, default=55432, help="PostgreSQL's port (55432; 0: any)"
    )
    stack.add_argument(
        "--expose-without-password",
        action="store_true",
        help="allow a --bind other than loopback and the Docker bridge (0.0.0.0 included): "
        "the stack has no password, whoever reaches the address has its database",
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

    return run_stack(
        env, args.bind, args.aws_port, args.postgres_port, out, args.expose_without_password
    )


def _time(value: str) -> datetime:
    try:
        return parse_time(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {value!r}") from None


def _replay_time(value: str) -> datetime:
    """``--at``, checked as the cluster function checks its event's ``at``."""
    try:
        return replay_time(value, datetime.now(UTC))
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"{value} {e}") from None


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def _runtime(env: dict[str, str]) -> LocalServices:
    """PostgreSQL (migrated) and AWS for local runs of the functions, to enter."""
    from newsdesk_local.services import LocalServices

    return LocalServices(Settings.from_env(env), env)


def _extract_text(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    """For debugging a site: what the extractor keeps of one page (fetched as the worker
    fetches, with a page's size cap, or read from a file)."""
    import dataclasses

    from newsdesk.collect.collector import CollectPolicy
    from newsdesk.collect.fetch import fetch
    from newsdesk.core.errors import FeedError
    from newsdesk.extract.text import extract_text

    page: str = args.page
    if page.startswith(("http://", "https://")):
        policy = CollectPolicy.from_settings(Settings.from_env(env)).fetch
        policy = dataclasses.replace(policy, max_bytes=min(policy.max_bytes, PAGE_MAX_BYTES))
        try:
            fetched = fetch(page, policy)
        except FeedError as e:
            print(f"newsdesk: {page}: {e}", file=sys.stderr)
            return EXIT_FAILED
        content, url = fetched.content, fetched.url
    else:
        try:
            content, url = Path(page).read_bytes(), None
        except OSError as e:
            raise ConfigError(f"{page}: {e.strerror}") from e
    extracted = extract_text(content, url)
    if args.json:
        _dump({"url": url, "chars": len(extracted.text), **dataclasses.asdict(extracted)}, out)
        return EXIT_OK
    facts = {k: v for k, v in dataclasses.asdict(extracted).items() if k != "text" and v}
    for name, value in {"url": url, **facts, "chars": len(extracted.text)}.items():
        if value:
            print(f"{name}: {value}", file=out)
    print(file=out)
    print(extracted.text or "(no main text)", file=out)
    return EXIT_OK


def _dlq_redrive(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    if args.stack:
        print(_redrive_deployed(args.stack, args.queue).line(), file=out)
        return 0
    from newsdesk_local import deadletters
    from newsdesk_local.driver import drain_extractor, drain_worker, invoke_function

    with _runtime(env) as runtime:
        sqs = runtime.client("sqs")
        if args.queue == "article":
            redrive = deadletters.move_articles_back(
                sqs,
                runtime.queue_url(ARTICLE_DEAD_LETTERS),
                runtime.queue_url(ARTICLE_QUEUE),
                time.time(),
            )
            print(redrive.line(), file=out)
            articles, failed_articles = drain_extractor(runtime)
            repeated = sum(a.status == "repeated" for a in articles)
            print(
                f"Extractor: {len(articles) - repeated} extracted, {repeated} already done, "
                f"{len(failed_articles)} failed again",
                file=out,
            )
            return EXIT_FAILED if failed_articles else EXIT_OK
        if args.queue == "outlet":
            moved = deadletters.move_by_hand(
                sqs, runtime.queue_url(OUTLET_DEAD_LETTERS), runtime.queue_url(OUTLET_QUEUE)
            )
            redrive = deadletters.Redrive(OUTLET_DEAD_LETTERS, moved)
        else:
            functions = {f.name: f.logical_id for f in runtime.infrastructure.functions.values()}

            def invoke(target: str, event: dict[str, Any]) -> None:
                name = target.rsplit(":", 1)[-1]
                if name not in functions:
                    raise ConfigError(f"a dead letter names {target}, no function of the stack")
                invoke_function(runtime, functions[name], event)

            queue = runtime.queue_url(SCHEDULE_DEAD_LETTERS)
            redrive = deadletters.redeliver_schedule_events(
                sqs, queue, invoke, SCHEDULE_DEAD_LETTERS
            )
        print(redrive.line(), file=out)
        # what the worker's event source mapping would do next: a fan-out sends it messages
        reports, failed = drain_worker(runtime)
    stale = sum(r.stale for r in reports)
    print(
        f"Worker: {len(reports) - stale} collected, {stale} stale (dropped: the rounds since "
        f"covered their feeds), {len(failed)} failed again",
        file=out,
    )
    return EXIT_FAILED if failed else EXIT_OK


def _redrive_deployed(stack: str, queue: str) -> Any:
    import boto3
    import botocore.exceptions

    from newsdesk_local import deadletters

    try:
        outputs = boto3.client("cloudformation").describe_stacks(StackName=stack)["Stacks"][0]
        urls = {o["OutputKey"]: o["OutputValue"] for o in outputs.get("Outputs", [])}
        sqs = boto3.client("sqs")
        if queue == "outlet":
            return deadletters.start_move_task(
                sqs, urls[f"{OUTLET_DEAD_LETTERS}Url"], OUTLET_DEAD_LETTERS
            )
        if queue == "article":  # FIFO: sent back by hand, each in its host's group
            return deadletters.move_articles_back(
                sqs, urls[f"{ARTICLE_DEAD_LETTERS}Url"], urls[f"{ARTICLE_QUEUE}Url"], time.time()
            )
        lambda_client = boto3.client("lambda")

        def invoke(target: str, event: dict[str, Any]) -> None:
            lambda_client.invoke(
                FunctionName=target, InvocationType="Event", Payload=json.dumps(event).encode()
            )

        queue_url = urls[f"{SCHEDULE_DEAD_LETTERS}Url"]
        return deadletters.redeliver_schedule_events(sqs, queue_url, invoke, SCHEDULE_DEAD_LETTERS)
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError, KeyError) as e:
        raise InfrastructureError(f"stack {stack!r}: {e}") from e


def _outlets(env: dict[str, str]) -> list[Outlet]:
    # a broken sources file (or setting) fails here, before anything is started or sent
    return group_by_outlet(load_sources(Settings.from_env(env).sources_path))


def _collect(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk_local.driver import run_collect_round

    if args.sources is not None:
        env["SOURCES_PATH"] = str(args.sources.resolve())
    outlets = _outlets(env)
    zone = Settings.from_env(env).zone
    with _runtime(env) as runtime:
        result = run_collect_round(runtime, args.concurrency, outlets, not args.scheduled)
    if args.json:
        _dump(_round_json(result), out)
    else:
        _print_round(result, runtime.log_path, zone, out)
    return _round_exit(result)


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
        fetched = local_time(body.fetched_at, settings.zone)
        print(f"{fetched} {body.report.log_line(settings.zone)}", file=out)
    t = run.totals()
    print(
        f"Reparsed {t['bodies']} bodies ({t['failed']} not a feed): {t['entries_seen']} "
        f"entries, {t['new']} new, {t['duplicate']} duplicate, {t['photo_filtered']} "
        "photo-filtered",
        file=out,
    )
    return 0


def _cluster(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk_local.driver import run_cluster, scheduled_event

    event = scheduled_event(args.at or datetime.now(UTC))
    if args.at is not None:
        event["at"] = format_time(args.at)
    with _runtime(env) as runtime:
        run = run_cluster(runtime, event)
    if args.json:
        _dump(_cluster_json(run), out)
    else:
        _print_cluster(run, out)
    return 0


def _issues(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk.storage.issues import list_issues
    from newsdesk_local.services import read_only_database

    settings = Settings.from_env(env)
    with read_only_database(settings) as database:  # creates nothing, migrates nothing
        issues = list_issues(database, args.limit) if database is not None else []
    if args.json:
        _dump({"issues": issues}, out)
    else:
        _print_issues(issues, settings.zone, out)
    return 0


def _events(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk.storage.issue_events import IssueEvent, IssueEventStore
    from newsdesk_local.services import read_only_database

    settings = Settings.from_env(env)
    events: list[IssueEvent] = []
    with read_only_database(settings) as database:  # creates nothing, migrates nothing
        if database is not None:
            events = IssueEventStore(database).events(args.since, args.limit)
    if args.json:
        _dump({"events": [e.as_dict() for e in events]}, out)
        return EXIT_OK
    _print_events(events, settings.zone, out)
    return EXIT_OK


def _print_events(events: list[Any], zone: tzinfo, out: TextIO) -> None:
    if not events:
        print("No issue events yet.", file=out)
    for event in events:
        detail = event.detail
        published = (
            f"published {local_time(event.published_at, zone)}"
            if event.published_at
            else "not published" + (f" ({event.last_error})" if event.last_error else "")
        )
        added = detail["added_article_ids"]
        print(
            f"{local_time(detail['changed_at'], zone)} {event.type} {event.id} "
            f"[{detail['category']}] {detail['title']} ({detail['size']} articles"
            + (f", added {', '.join(f'#{a}' for a in added)}" if added else "")
            + f"; {published})",
            file=out,
        )


def _articles(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk.extract.extractor import ArticleReport
    from newsdesk.storage.extractions import ArticleRow, ExtractionStore
    from newsdesk_local.services import read_only_database

    settings = Settings.from_env(env)
    since = args.since or utc_now() - timedelta(hours=24)
    rows: list[ArticleRow] = []
    with read_only_database(settings) as database:  # creates nothing, migrates nothing
        if database is not None:
            rows = ExtractionStore(database).articles(since)
    documents = [_article_json(row) for row in rows]
    if args.json:
        _dump({"articles": documents}, out)
        return EXIT_OK
    if not rows:
        print(f"No article collected since {local_time(since, settings.zone)}.", file=out)
    for row, document in zip(rows, documents, strict=True):
        extraction = document["extraction"]
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
        ).outcome(settings.zone)
        issue = f"issue #{row.issue_id}" if row.issue_id else "no issue"
        print(
            f"#{row.id} {row.source} | {row.category} | {outcome} | {issue} | {row.title} | "
            f"{row.url}",
            file=out,
        )
    return EXIT_OK


def _article_json(row: Any) -> dict[str, Any]:
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


def _reextract(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk.aws.raw import RawStore
    from newsdesk.aws.state_table import StateTable
    from newsdesk.core.errors import RawStoreError
    from newsdesk.extract.extractor import ArticleReport, ExtractPolicy, PageExtractor
    from newsdesk.storage.extractions import ExtractionStore
    from newsdesk_local.driver import EXTRACTOR

    with _runtime(env) as runtime:
        function_env = runtime.function_env(EXTRACTOR)
        settings = Settings.from_env(function_env)
        database = runtime.database()
        store = ExtractionStore(database, wire_agencies(load_sources(settings.sources_path)))
        raw = RawStore(runtime.client("s3"), function_env["RAW_BUCKET"])
        states = StateTable(runtime.client("dynamodb"), settings.state_table_name)
        extractor = PageExtractor(ExtractPolicy.from_settings(settings), store, states, raw)
        done: list[tuple[str, ArticleReport]] = []
        gone = 0
        for article, key, before in store.raw_pages(args.since):
            try:
                page = raw.page(key)
            except RawStoreError:  # expired (ArticleTextRetentionDays) or removed
                gone += 1
                continue
            report = ArticleReport(article.id, article.revision, article.url, "", "")
            report.source, report.title = article.source, article.title
            extractor.judge(
                article, report, page.content, page.content_type, page.final_url, page.status, key
            )
            done.append((before.status, report))
        database.close()
    zone = Settings.from_env(env).zone
    if args.json:
        _dump({"articles": [{**r.as_dict(), "was": was} for was, r in done]}, out)
        return EXIT_OK
    for was, report in done:
        print(f"{report.line(zone)} (was {was})", file=out)
    changed = sum(was != r.status for was, r in done)
    print(
        f"Re-extracted {len(done)} pages from the raw layer; {changed} changed outcome; "
        f"{gone} no longer kept",
        file=out,
    )
    return EXIT_OK


def _state_store(args: argparse.Namespace, env: dict[str, str], settings: Settings) -> StateStore:
    """A deployed stack's table (--table, STATE_TABLE_NAME) with boto3's own credentials; an
    emulator's (AWS_ENDPOINT_URL) with the local runtime's; else the items the local runtime
    saved. Nothing is created in any of them."""
    import boto3
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError

    from newsdesk.aws.state_table import StateTable
    from newsdesk_local.feeds import STATE_TABLE, SavedStore, TableStore
    from newsdesk_local.infrastructure import REGION, Infrastructure
    from newsdesk_local.services import FAKE_CREDENTIALS

    config = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=5)
    endpoint = env.get("AWS_ENDPOINT_URL") or None
    table: str | None = getattr(args, "table", None) or env.get("STATE_TABLE_NAME") or None
    try:
        if table is not None:
            region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None
            client = boto3.client(
                "dynamodb", region_name=region, endpoint_url=endpoint, config=config
            )
            return TableStore(StateTable(client, table), table)
        if endpoint is not None:
            name = Infrastructure.packaged().table(STATE_TABLE).name
            client = boto3.client(
                "dynamodb",
                endpoint_url=endpoint,
                region_name=env.get("AWS_DEFAULT_REGION", REGION),
                aws_access_key_id=env.get(
                    "AWS_ACCESS_KEY_ID", FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"]
                ),
                aws_secret_access_key=env.get(
                    "AWS_SECRET_ACCESS_KEY", FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"]
                ),
                config=config,
            )
            return TableStore(StateTable(client, name), f"{name} at {endpoint}")
    except ValueError as e:  # botocore's "Invalid endpoint: …"
        raise ConfigError(f"AWS_ENDPOINT_URL: {e}") from None
    except BotoCoreError as e:  # no region, a broken profile
        raise ConfigError(f"AWS: {e}") from None
    return SavedStore(settings.data_dir)


def _feeds(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk_local import feeds

    settings = Settings.from_env(env)
    zone = settings.zone
    store = _state_store(args, env, settings)
    known = store.read()
    if args.source is not None:
        feeds.chosen(known, [args.source], every=False)
        known = {args.source: known[args.source]}
    now = utc_now()
    shown = feeds.ordered(known.values(), now, args.failing)
    hosts = [h for h in store.hosts() if not args.failing or h.failing(now)]
    if args.json:
        _dump({**feeds.as_json(shown, now), "hosts": feeds.hosts_json(hosts, now)}, out)
        return 0
    if not known:
        print(f"No feed has been checked yet ({store.where}).", file=out)
        return 0
    for outlet in shown:
        print(feeds.outlet_line(outlet, now, zone), file=out)
        for feed in outlet.feeds:
            print(feeds.feed_line(feed, zone), file=out)
    for host in hosts:
        print(feeds.host_line(host, now, zone), file=out)
    print(feeds.summary(known.values(), now, settings.timezone, zone), file=out)
    return 0


def _feeds_reset(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk_local import feeds

    if bool(args.outlets) == args.all:
        raise ConfigError("feeds reset: name the outlets to reset, or give --all (not both)")
    settings = Settings.from_env(env)
    store = _state_store(args, env, settings)
    known = store.read()
    names = feeds.chosen(known, args.outlets, args.all)  # every name checked before a write
    now = utc_now()
    for name in names:
        store.reset(known[name], now)
        print(feeds.reset_line(known[name], now, settings.zone), file=out, flush=True)
    if not names:
        print(f"Nothing to reset ({store.where} is empty).", file=out)
    return 0


def _round_json(result: RoundResult) -> dict[str, Any]:
    return {
        "outlets": [o.entry() for o in result.outlets],
        "totals": totals(result.outlets),
        "articles": [a.as_dict() for a in result.articles],
    }


def _cluster_json(run: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "issues_created",
        "issues_updated",
        "issues_closed",
        "articles_clustered",
        "articles_joined",
        "issues",
        "updated",
        "closed",
    )
    return {key: run[key] for key in keys}


def _dump(document: dict[str, Any], out: TextIO) -> None:
    json.dump(document, out, ensure_ascii=False)
    out.write("\n")


def _print_round(result: RoundResult, log_path: Path, zone: tzinfo, out: TextIO) -> None:
    for outlet in result.outlets:
        if outlet.skipped == COOLING_DOWN:
            print(outlet.cooling_line(zone), file=out)
            continue
        for feed in outlet.feeds:
            print(feed.log_line(zone), file=out)
    summed = totals(result.outlets)
    attempted, failed = summed["feeds_attempted"], summed["feeds_failed"]
    cooling = sum(o.skipped == COOLING_DOWN for o in result.outlets)
    print(
        f"Feeds: {attempted} attempted, {attempted - failed} ok, {failed} failed, "
        f"{summed['feeds_skipped']} skipped by the outlet breaker ({len(result.outlets)} outlets, "
        f"{cooling} cooling down)",
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
    if result.articles or result.articles_failed:
        for article in result.articles:
            print(article.line(zone), file=out)
        print(_pages_line(result), file=out)
    print(f"Round: {result.seconds:.1f} s; Lambda logs in {log_path}", file=out)


def _pages_line(result: RoundResult) -> str:
    counts = Counter(a.status for a in result.articles)
    copies = sum(a.copy_of is not None for a in result.articles)
    copies += sum(len(a.original_of) for a in result.articles)
    return (
        f"Pages: {counts['extract_ok']} ok, {counts['filtered_thin']} thin, "
        f"{counts['extract_empty']} empty, {counts['list_page']} list pages, "
        f"{counts['extract_error']} failed, {counts['deferred']} waiting for their host; "
        f"{copies} found to copy another article; {len(result.articles_failed)} messages failed"
    )


def _round_exit(result: RoundResult) -> int:
    """1 if a message failed (SQS would retry it); else 3 if feeds were attempted and not one
    succeeded (offline, or every outlet down); else 0, a round with nothing due included."""
    for failure in result.failed:
        print(f"newsdesk: outlet {failure.source}: {_one_line(failure.error)}", file=sys.stderr)
    if result.failed:
        return EXIT_FAILED
    statuses = [f.status for o in result.outlets for f in o.feeds]
    attempted = sum(s in FETCHED for s in statuses)
    if attempted and not any(s in SUCCEEDED for s in statuses):
        print(f"newsdesk: not one of the {attempted} feeds attempted succeeded", file=sys.stderr)
        return EXIT_NO_FEED
    return EXIT_OK


def _print_cluster(run: dict[str, Any], out: TextIO, listed: bool = True) -> None:
    if run["locked_out"]:
        print("Another clustering run is in progress; nothing done.", file=out)
        return
    print(
        f"Issues: {run['issues_created']} created, {run['issues_updated']} grown, "
        f"{run['issues_closed']} closed; {run['articles_clustered']} articles clustered "
        f"({run['articles_joined']} joined an open issue), {run['articles_left_single']} left "
        "single"
        + (
            f", {run['copies_attached']} copies put in their original's issue"
            if run.get("copies_attached")
            else ""
        ),
        file=out,
    )
    for issue in run["issues"] if listed else []:
        print(
            f"#{issue['id']} [{issue['category']}] {issue['title']} "
            f"({len(issue['article_ids'])} articles)",
            file=out,
        )
    for issue in run["updated"] if listed else []:
        print(
            f"#{issue['id']} [{issue['category']}] {issue['title']} "
            f"(+{len(issue['article_ids'])}, version {issue['version']})",
            file=out,
        )


def _print_issues(issues: list[dict[str, Any]], zone: tzinfo, out: TextIO) -> None:
    if not issues:
        print("No issues yet.", file=out)
    for issue in issues:
        first, last = (local_time(issue[k], zone) for k in ("first_article_at", "last_article_at"))
        span = first if last == first else f"{first} – {last}"
        print(
            f"#{issue['id']} [{issue['category']}] {issue['title']} "
            f"({issue['size']} articles, {span}; {issue['state']}, version {issue['version']})",
            file=out,
        )
        articles = issue["articles"]
        copies: dict[int, list[dict[str, Any]]] = {}
        for article in articles:
            if article.get("copy_of"):
                copies.setdefault(article["copy_of"]["id"], []).append(article)
        shown = {a["id"] for a in articles if not a.get("copy_of")}
        for article in articles:
            copy = article.get("copy_of")
            if copy and copy["id"] in shown:
                continue  # under its original
            print(f"    {_article_line(article)}", file=out)
            for copied in copies.get(article["id"], []):
                reason = copied["copy_of"]["reason"].removeprefix("duplicate_by_")
                print(f"        copy ({reason}): {_article_line(copied)}", file=out)


def _article_line(article: dict[str, Any]) -> str:
    chars = article.get("chars")
    text = f"{chars} chars" if chars else "no text"
    return f"#{article['id']} {article['source']}: {article['title']} ({text})"


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
            print(check.line(settings.zone), file=out)
        print(summary(checks, settings.timezone, settings.zone), file=out)
    return 1 if failed else 0


def _demo_exit(*rounds: RoundResult) -> int:
    """The rounds' exit codes as one: 1 (a message failed) before 3 (no feed succeeded)."""
    return min((code for code in map(_round_exit, rounds) if code), default=EXIT_OK)


def _demo(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk.storage.issue_events import IssueEventStore
    from newsdesk.storage.issues import list_issues
    from newsdesk_local.demo import serve_demo_feeds, serve_second_round, write_sources
    from newsdesk_local.driver import run_cluster, run_collect_round, scheduled_event
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
            # every demo page is on one host, 127.0.0.1: paced, but not as a real outlet is
            EXTRACT_HOST_INTERVAL_SECONDS="0.1",
        )
        outlets = _outlets(demo_env)
        if not args.json:
            print(f"Serving demo feeds at {server.base_url}; data in {data_dir}", file=out)
        with _runtime(demo_env) as runtime:
            result = run_collect_round(runtime, 4, outlets)
            run = run_cluster(runtime, scheduled_event(datetime.now(UTC)))
            # a round later: one feed has an update of a story that is an issue now
            serve_second_round(server)
            second = run_collect_round(runtime, 4, outlets)
            second_run = run_cluster(runtime, scheduled_event(datetime.now(UTC)))
            database = runtime.database()
            issues = list_issues(database)
            events = IssueEventStore(database).events()
            database.close()
    if args.json:
        _dump(
            {
                "collect": _round_json(result),
                "cluster": _cluster_json(run),
                "second_round": {
                    "collect": _round_json(second),
                    "cluster": _cluster_json(second_run),
                },
                "events": [e.as_dict() for e in events],
            },
            out,
        )
        return _demo_exit(result, second)
    zone = Settings.from_env(env).zone
    _print_round(result, runtime.log_path, zone, out)
    _print_cluster(run, out, listed=False)
    print("\nA round later (one feed has an update of a story):", file=out)
    for article in second.articles:
        print(article.line(zone), file=out)
    summed = totals(second.outlets)
    print(f"Feeds: {summed['feeds_attempted']} attempted; new articles: {summed['new']}", file=out)
    _print_cluster(second_run, out)
    print("\nIssues, oldest first:", file=out)
    _print_issues(issues[::-1], zone, out)
    print(
        "\nIssue events (locally kept in the outbox; deployed, published to the issue bus):",
        file=out,
    )
    _print_events(events, zone, out)
    return _demo_exit(result, second)
