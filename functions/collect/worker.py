"""Collect worker: an SQS batch of outlet messages in, partial batch failures out.

A failed feed is part of a successful record; a PostgreSQL or DynamoDB fault fails the record
so that SQS delivers it again. The response also carries each outlet's report, which the
event source mapping ignores and `sam local invoke` and `newsdesk collect` show.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from newsdesk.aws import database_from, dynamodb_client, s3_client
from newsdesk.collect import CollectPolicy, OutletCollector
from newsdesk.errors import NewsdeskError
from newsdesk.messages import OutletMessage
from newsdesk.metrics import add_outlet_metrics
from newsdesk.raw import RawStore
from newsdesk.settings import Settings
from newsdesk.state import StateTable
from newsdesk.store import ArticleStore

logger = Logger()
metrics = Metrics()
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
settings = Settings.from_env()
database = database_from(settings)
collector = OutletCollector(
    CollectPolicy.from_settings(settings),
    ArticleStore(database),
    StateTable(dynamodb_client(), settings.state_table_name),
    raw=RawStore(s3_client(), settings.raw_bucket) if settings.raw_bucket else None,
)


def record_handler(record: SQSRecord) -> dict[str, Any]:
    try:
        message = OutletMessage.from_json(record.body)
        logger.append_keys(outlet=message.outlet.name)
        report = collector.collect(message)
    except NewsdeskError:
        logger.exception(
            "record failed; SQS will deliver it again", extra={"message_id": record.message_id}
        )
        raise
    add_outlet_metrics(metrics, report)
    return report.as_dict()


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    with processor(records=event["Records"], handler=record_handler, lambda_context=context):
        outcomes = processor.process()
    reports = [result for status, result, _ in outcomes if status == "success"]
    response = processor.response()
    metrics.add_metric("MessagesReceived", MetricUnit.Count, len(event["Records"]))
    metrics.add_metric("MessagesFailed", MetricUnit.Count, len(response["batchItemFailures"]))
    return {**response, "outlets": reports}
