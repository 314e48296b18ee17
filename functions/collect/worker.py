"""Collect worker: an SQS batch of outlet messages in, partial batch failures out.

A failed feed is part of a successful record; a PostgreSQL or DynamoDB fault fails the record
so that SQS delivers it again. A message refused (another version, a time ahead of the clock)
is counted and logged, not failed: SQS would only deliver it again. The response also carries
each outlet's report and the refusals, which the event source mapping ignores and `sam local
invoke` shows (`newsdesk collect` leaves the refusals to the Lambda log).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from newsdesk.aws.article_queue import ArticleQueue
from newsdesk.aws.clients import dynamodb_client, s3_client, sqs_client
from newsdesk.aws.metrics import add_outlet_metrics
from newsdesk.aws.raw import RawStore
from newsdesk.aws.state_table import StateTable
from newsdesk.collect.collector import CollectPolicy, OutletCollector
from newsdesk.core.errors import MessageRefusedError, NewsdeskError
from newsdesk.core.messages import OutletMessage, Refusal
from newsdesk.core.settings import Settings
from newsdesk.core.times import utc_now
from newsdesk.outbox.articles import relay
from newsdesk.storage.articles import ArticleStore
from newsdesk.storage.database import Database, database_from
from newsdesk.storage.extractions import ExtractionStore

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

logger = Logger()
metrics = Metrics()
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


@dataclass(frozen=True)
class Worker:
    collector: OutletCollector
    outbox: tuple[ExtractionStore, ArticleQueue] | None  # None: extraction is off


def worker_from(settings: Settings, dynamodb: DynamoDBClient | None = None) -> Worker:
    settings.require_operator_contact()  # every request names whom to ask
    database = database_from(settings)
    collector = OutletCollector(
        CollectPolicy.from_settings(settings),
        ArticleStore(database),
        StateTable(dynamodb or dynamodb_client(), settings.state_table_name),
        raw=RawStore(s3_client(), settings.raw_bucket) if settings.raw_bucket else None,
    )
    return Worker(collector, _outbox(settings, database))


def _outbox(settings: Settings, database: Database) -> tuple[ExtractionStore, ArticleQueue] | None:
    queue = settings.extraction_queue
    if queue is None:
        return None
    return ExtractionStore(database), ArticleQueue(sqs_client(), queue)


@functools.cache
def container() -> Worker:
    """Built on the first invocation and kept for the container's life (its connection too)."""
    return worker_from(Settings.from_env())


def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    response: dict[str, Any] = handle(event, context, container())
    return response


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handle(event: dict[str, Any], context: LambdaContext, worker: Worker) -> dict[str, Any]:
    record_handler = functools.partial(collect_record, collector=worker.collector)
    with processor(records=event["Records"], handler=record_handler, lambda_context=context):
        outcomes = processor.process()
    results = [result for status, result, _ in outcomes if status == "success"]
    reports, refused = Refusal.apart(results)
    response = processor.response()
    metrics.add_metric("MessagesReceived", MetricUnit.Count, len(event["Records"]))
    metrics.add_metric("MessagesFailed", MetricUnit.Count, len(response["batchItemFailures"]))
    metrics.add_metric("MessagesRefused", MetricUnit.Count, len(refused))
    relayed = 0
    if worker.outbox is not None:  # the articles stored are queued for extraction
        relayed = relay(*worker.outbox, utc_now())
        metrics.add_metric("OutboxRelayed", MetricUnit.Count, relayed)
    return {**response, "outlets": reports, "refused": refused, "relayed": relayed}


def collect_record(record: SQSRecord, collector: OutletCollector) -> dict[str, Any] | Refusal:
    logger.remove_keys(["outlet"])  # the batch's record before named its own
    try:
        message = OutletMessage.from_json(record.body)
        logger.append_keys(outlet=message.outlet.name)
        report = collector.collect(message)
    except MessageRefusedError as e:
        return Refusal.logged(record.message_id, e, logger)
    except NewsdeskError:
        logger.exception(
            "record failed; SQS will deliver it again", extra={"message_id": record.message_id}
        )
        raise
    add_outlet_metrics(metrics, report)
    return report.as_dict()
