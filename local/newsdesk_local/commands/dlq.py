"""`newsdesk dlq redrive [--queue outlet|article|schedule] [--stack NAME]`: dead letters sent
back (``newsdesk_local.deadletters``): outlet messages to the worker's queue, article messages
to the extractor's (by hand, each in its host's group: SQS's move task does not redrive FIFO
queues), schedule events to the function each names. Locally the queue is then drained as its
event source mapping would (exit 1 if a message failed again); with ``--stack``, a deployed
stack's queues, with boto3's credentials."""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING, Any, TextIO

from newsdesk.core.errors import ConfigError, InfrastructureError
from newsdesk_local.commands import arguments, context
from newsdesk_local.output import EXIT_FAILED, EXIT_OK

if TYPE_CHECKING:
    from newsdesk_local.deadletters import Redrive
    from newsdesk_local.services import LocalServices

# The template's queues `dlq redrive` reads (their URLs are also the stack's outputs).
OUTLET_QUEUE, OUTLET_DEAD_LETTERS = "OutletQueue", "OutletDeadLetterQueue"
SCHEDULE_DEAD_LETTERS = "ScheduleDeadLetterQueue"
ARTICLE_QUEUE, ARTICLE_DEAD_LETTERS = "ArticleQueue", "ArticleDeadLetterQueue"


def add(commands: arguments.Commands) -> None:
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
    redrive.set_defaults(run=run)


def run(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    if args.stack:
        print(redrive_deployed(args.stack, args.queue, env).line(), file=out)
        return EXIT_OK
    with context.runtime(env, "dlq redrive") as runtime:
        if args.queue == "article":
            return redrive_articles(runtime, out)
        return redrive_to_worker(runtime, args.queue, out)


def redrive_articles(runtime: LocalServices, out: TextIO) -> int:
    """The article dead letters back to the article queue, then the extractor drains it."""
    from newsdesk_local import deadletters
    from newsdesk_local.rounds import drain_extractor

    source, target = runtime.queue_url(ARTICLE_DEAD_LETTERS), runtime.queue_url(ARTICLE_QUEUE)
    redrive = deadletters.move_articles_back(runtime.client("sqs"), source, target, time.time())
    print(redrive.line(), file=out)
    articles, failed = drain_extractor(runtime)
    repeated = sum(a.status == "repeated" for a in articles)
    print(
        f"Extractor: {len(articles) - repeated} extracted, {repeated} already done, "
        f"{len(failed)} failed again",
        file=out,
    )
    return EXIT_FAILED if failed else EXIT_OK


def redrive_to_worker(runtime: LocalServices, queue: str, out: TextIO) -> int:
    """The outlet dead letters back to the outlet queue, or the schedules' events to their
    functions (a fan-out sends the worker messages); then the worker drains its queue."""
    from newsdesk_local import deadletters
    from newsdesk_local.invocations import invoke_function
    from newsdesk_local.rounds import drain_worker

    sqs = runtime.client("sqs")
    if queue == "outlet":
        source, target = runtime.queue_url(OUTLET_DEAD_LETTERS), runtime.queue_url(OUTLET_QUEUE)
        redrive = deadletters.Redrive(
            OUTLET_DEAD_LETTERS, deadletters.move_by_hand(sqs, source, target)
        )
    else:
        functions = {f.name: f.logical_id for f in runtime.infrastructure.functions.values()}

        def invoke(target: str, event: dict[str, Any]) -> None:
            name = target.rsplit(":", 1)[-1]
            if name not in functions:
                raise ConfigError(f"a dead letter names {target}, no function of the stack")
            invoke_function(runtime, functions[name], event)

        url = runtime.queue_url(SCHEDULE_DEAD_LETTERS)
        redrive = deadletters.redeliver_schedule_events(sqs, url, invoke, SCHEDULE_DEAD_LETTERS)
    print(redrive.line(), file=out)
    reports, failed = drain_worker(runtime)
    stale = sum(r.stale for r in reports)
    print(
        f"Worker: {len(reports) - stale} collected, {stale} stale (dropped: the rounds since "
        f"covered their feeds), {len(failed)} failed again",
        file=out,
    )
    return EXIT_FAILED if failed else EXIT_OK


def redrive_deployed(stack: str, queue: str, env: dict[str, str]) -> Redrive:
    """A deployed stack's dead letters sent back: the outlet queue's by SQS's message-move
    task, the article queue's by hand, the schedules' events to their functions (async). The
    stack is looked for where ``feeds --table`` looks (``context.deployed``: AWS_REGION)."""
    import botocore.exceptions
    import botocore.parsers

    from newsdesk.aws.clients import operator_client
    from newsdesk_local import deadletters

    options = context.deployed(env)
    try:
        cloudformation = operator_client("cloudformation", **options)
        outputs = cloudformation.describe_stacks(StackName=stack)["Stacks"][0]
        urls = {o["OutputKey"]: o["OutputValue"] for o in outputs.get("Outputs", [])}
        sqs = operator_client("sqs", **options)
        if queue == "outlet":
            return deadletters.start_move_task(
                sqs, urls[f"{OUTLET_DEAD_LETTERS}Url"], OUTLET_DEAD_LETTERS
            )
        if queue == "article":
            return deadletters.move_articles_back(
                sqs, urls[f"{ARTICLE_DEAD_LETTERS}Url"], urls[f"{ARTICLE_QUEUE}Url"], time.time()
            )
        lambda_client = operator_client("lambda", **options)

        def invoke(target: str, event: dict[str, Any]) -> None:
            lambda_client.invoke(
                FunctionName=target, InvocationType="Event", Payload=json.dumps(event).encode()
            )

        queue_url = urls[f"{SCHEDULE_DEAD_LETTERS}Url"]
        return deadletters.redeliver_schedule_events(sqs, queue_url, invoke, SCHEDULE_DEAD_LETTERS)
    except (
        botocore.exceptions.BotoCoreError,
        botocore.exceptions.ClientError,
        botocore.parsers.ResponseParserError,  # an endpoint that answers what is no AWS answer
        KeyError,
    ) as e:
        raise InfrastructureError(f"stack {stack!r}: {e}") from e
