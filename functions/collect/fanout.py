"""Collect fan-out: a scheduled event in, one SQS message per outlet out."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.utilities.typing import LambdaContext

from newsdesk.aws import dynamodb_client, sqs_client
from newsdesk.fanout import fan_out
from newsdesk.messages import parse_time
from newsdesk.metrics import add_fanout_metrics
from newsdesk.settings import Settings
from newsdesk.sources import group_by_outlet, load_sources
from newsdesk.state import BREAKER_OPEN, StateTable

logger = Logger()
metrics = Metrics()


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    settings = Settings.from_env()
    # EventBridge rules put the schedule time in "time"; the template's Scheduler input does too.
    scheduled_at = parse_time(event["time"]) if event.get("time") else datetime.now(UTC)
    feeds = load_sources(settings.sources_path)
    breakers = StateTable(dynamodb_client(), settings.state_table_name).outlets(
        [outlet.name for outlet in group_by_outlet(feeds)]
    )
    result = fan_out(
        feeds,
        scheduled_at,
        sqs_client(),
        settings.require_queue_url(),
        skip={name for name, s in breakers.items() if s.breaker_at(scheduled_at) == BREAKER_OPEN},
        # A round on demand ({"ignore_schedule": true}, as `newsdesk collect` sends) checks
        # every feed; scheduled rounds only those that are due.
        ignore_schedule=bool(event.get("ignore_schedule", False)),
    )
    add_fanout_metrics(metrics, result)
    return result.as_dict()
