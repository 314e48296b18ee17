"""Extractor: an SQS batch of article messages (FIFO, grouped by host) in, partial batch
failures out. A page that fails is an outcome, recorded; a PostgreSQL, DynamoDB, S3 or SQS
fault fails the record, and with it the rest of its host's messages in the batch (FIFO order
within a group), so that SQS delivers them again; a message of a version the contract does
not name is refused (counted and logged, not failed: the outbox sends its row again). Each
invocation ends by relaying the outbox's due rows (pages that wait for a retry or for a host's
breaker) and, once an hour per container, removing texts older than
ARTICLE_TEXT_RETENTION_DAYS. The response also carries each article's report and the
refusals, which the event source mapping ignores and `sam local invoke` shows (`newsdesk
collect` leaves the refusals to the Lambda log).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from newsdesk.aws.article_queue import ArticleQueue
from newsdesk.aws.clients import dynamodb_client, s3_client, sqs_client
from newsdesk.aws.metrics import add_article_metrics
from newsdesk.aws.raw import RawStore
from newsdesk.aws.state_table import StateTable
from newsdesk.core.errors import MessageError, MessageRefusedError, NewsdeskError, SettingsError
from newsdesk.core.messages import ArticleMessage, Refusal
from newsdesk.core.settings import Settings
from newsdesk.core.sources import load_sources, wire_agencies
from newsdesk.core.times import utc_now
from newsdesk.extract.extractor import ExtractPolicy, PageExtractor
from newsdesk.outbox.articles import relay
from newsdesk.storage.database import database_from
from newsdesk.storage.extractions import ExtractionStore

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

logger = Logger()
metrics = Metrics()
# On a failure, only the failed record's message group (its host) is skipped.
processor = SqsFifoPartialProcessor(skip_group_on_error=True)
# a batch whose every record failed is reported like any other (as the worker's): the relay and
# the metrics still run
processor.raise_on_entire_batch_failure = False
RETENTION_EVERY = timedelta(hours=1)


@dataclass
class Extractor:
    """What the container keeps: the extractor, the outbox and its queue."""

    pages: PageExtractor
    store: ExtractionStore
    queue: ArticleQueue
    policy: ExtractPolicy
    enabled: bool
    retention_done_at: list[datetime] = field(default_factory=list)


def extractor_from(settings: Settings, dynamodb: DynamoDBClient | None = None) -> Extractor:
    if not settings.article_queue_url:
        raise SettingsError("ARTICLE_QUEUE_URL is not set")
    settings.require_operator_contact()  # every request names whom to ask
    # the news agencies of the sources the fan-out reads (its tie rule for originals)
    wire = wire_agencies(load_sources(settings.sources_path))
    store = ExtractionStore(database_from(settings), wire)
    policy = ExtractPolicy.from_settings(settings)
    pages = PageExtractor(
        policy,
        store,
        StateTable(dynamodb or dynamodb_client(), settings.state_table_name),
        raw=RawStore(s3_client(), settings.raw_bucket) if settings.raw_bucket else None,
    )
    queue = ArticleQueue(sqs_client(), settings.article_queue_url)
    return Extractor(pages, store, queue, policy, settings.extract_enabled)


@functools.cache
def container() -> Extractor:
    """Built on the first invocation and kept for the container's life (its connection too)."""
    return extractor_from(Settings.from_env())


def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    response: dict[str, Any] = handle(event, context, container())
    return response


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handle(event: dict[str, Any], context: LambdaContext, extractor: Extractor) -> dict[str, Any]:
    if not extractor.enabled:
        # EXTRACT_ENABLED=false: no page is fetched; the messages' rows go back to the outbox
        # unsent (no relay runs while it is off), to be sent when it is switched back on.
        logger.warning("extraction is off (EXTRACT_ENABLED=false): messages put back")
        for record in event["Records"]:
            try:
                message = ArticleMessage.from_json(record["body"])
            except MessageError:
                continue  # nothing of ours to put back
            extractor.store.defer(message.article_id, message.revision, utc_now())
        metrics.add_metric("ArticleMessagesPutBack", MetricUnit.Count, len(event["Records"]))
        return {"batchItemFailures": [], "articles": [], "refused": [], "relayed": 0}
    record_handler = functools.partial(extract_record, extractor=extractor)
    with processor(records=event["Records"], handler=record_handler, lambda_context=context):
        outcomes = processor.process()
    results = [result for status, result, _ in outcomes if status == "success"]
    reports, refused = Refusal.apart(results)
    response = processor.response()
    now = utc_now()
    relayed = relay(extractor.store, extractor.queue, now)
    _retention(extractor, now)
    metrics.add_metric("ArticleMessagesReceived", MetricUnit.Count, len(event["Records"]))
    metrics.add_metric(
        "ArticleMessagesFailed", MetricUnit.Count, len(response["batchItemFailures"])
    )
    metrics.add_metric("ArticleMessagesRefused", MetricUnit.Count, len(refused))
    metrics.add_metric("OutboxRelayed", MetricUnit.Count, relayed)
    return {**response, "articles": reports, "refused": refused, "relayed": relayed}


def extract_record(record: SQSRecord, extractor: Extractor) -> dict[str, Any] | Refusal:
    logger.remove_keys(["article_id", "host"])  # the batch's record before named its own
    try:
        message = ArticleMessage.from_json(record.body)
        logger.append_keys(article_id=message.article_id, host=message.host)
        report = extractor.pages.extract(message)
    except MessageRefusedError as e:
        return Refusal.logged(record.message_id, e, logger)
    except NewsdeskError:
        logger.exception(
            "record failed; SQS will deliver it again", extra={"message_id": record.message_id}
        )
        raise
    add_article_metrics(
        metrics,
        report.status,
        report.reason,
        report.copy_reason,
        report.canonical_ignored is not None,
        report.host_breaker_tripped,
    )
    logger.info("article extracted", extra=report.log_fields())
    return report.as_dict()


def _retention(extractor: Extractor, now: datetime) -> None:
    done = extractor.retention_done_at
    if done and now - done[0] < RETENTION_EVERY:
        return
    removed = extractor.store.remove_text(now - extractor.policy.retention, now)
    done[:] = [now]
    if removed:
        logger.info("article texts removed (ARTICLE_TEXT_RETENTION_DAYS)", extra={"texts": removed})
