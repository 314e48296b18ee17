"""The fan-out: one SQS message per outlet, sent ten to a SendMessageBatch call. Entries SQS
failed on its side are sent again; what still fails raises, so the schedule retries the run
(a message sent twice is harmless: the worker is idempotent)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from botocore.exceptions import BotoCoreError, ClientError

from newsdesk.aws.state_table import StateTable
from newsdesk.core.errors import FanOutError
from newsdesk.core.messages import OutletMessage
from newsdesk.core.schedule import open_breakers
from newsdesk.core.sources import Feed, group_by_outlet
from newsdesk.core.times import format_time

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

logger = Logger(child=True)

BATCH_SIZE = 10
ATTEMPTS = 3


@dataclass(frozen=True)
class FanOutResult:
    outlets: int
    feeds: int
    messages_sent: int
    batches: int
    retried: int
    outlets_skipped_open: int = 0
    # the outlets skipped, each {"source", "open_until" (…Z), "trips"}: a round's report
    # lists them as cooling down
    outlets_cooling: tuple[dict[str, Any], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "outlets_cooling": list(self.outlets_cooling)}

    def metric_counts(self) -> dict[str, int]:
        """The fan-out's EMF metrics by name."""
        return {
            "OutletsScheduled": self.outlets,
            "FeedsScheduled": self.feeds,
            "MessagesSent": self.messages_sent,
            "OutletsSkippedOpenBreaker": self.outlets_skipped_open,
        }


def fan_out_round(
    feeds: Sequence[Feed],
    scheduled_at: datetime,
    sqs: SQSClient,
    queue_url: str,
    states: StateTable,
    ignore_schedule: bool = False,
    sleep: Callable[[float], None] = time.sleep,
) -> FanOutResult:
    """A round: a message for every outlet but those whose breaker is open at
    ``scheduled_at`` (they cool down; the worker would skip them anyway)."""
    breakers = states.outlets([outlet.name for outlet in group_by_outlet(feeds)])
    cooling = open_breakers(breakers, scheduled_at)
    result = fan_out(
        feeds,
        scheduled_at,
        sqs,
        queue_url,
        sleep=sleep,
        skip=cooling,
        ignore_schedule=ignore_schedule,
    )
    skipped = tuple(
        {
            "source": name,
            "open_until": format_time(breakers[name].open_until or scheduled_at),
            "trips": breakers[name].trips,
        }
        for name in sorted(cooling)
    )
    return dataclasses.replace(result, outlets_cooling=skipped)


def fan_out(
    feeds: Sequence[Feed],
    scheduled_at: datetime,
    sqs: SQSClient,
    queue_url: str,
    sleep: Callable[[float], None] = time.sleep,
    skip: Collection[str] = (),
    ignore_schedule: bool = False,
) -> FanOutResult:
    """``skip``: outlets whose breaker is open; ``ignore_schedule``: a round on demand, in which
    every feed is due."""
    outlets = group_by_outlet(feeds)
    messages = [
        OutletMessage(outlet, scheduled_at, ignore_schedule)
        for outlet in outlets
        if outlet.name not in skip
    ]
    batches = retried = 0
    for start in range(0, len(messages), BATCH_SIZE):
        chunk = messages[start : start + BATCH_SIZE]
        pending = {str(start + i): m.to_json() for i, m in enumerate(chunk)}
        for attempt in range(1, ATTEMPTS + 1):
            batches += 1
            failed = _send_batch(sqs, queue_url, pending)
            if not failed:
                break
            retryable = {id_: pending[id_] for id_, f in failed.items() if not f["SenderFault"]}
            if len(retryable) < len(failed) or attempt == ATTEMPTS:
                raise FanOutError(_describe(failed, pending))
            retried += len(retryable)
            logger.warning("sqs refused some messages; retrying", extra={"failed": len(failed)})
            pending = retryable
            sleep(0.2 * 2**attempt)
    result = FanOutResult(
        outlets=len(outlets),
        feeds=len(feeds),
        messages_sent=len(messages),
        batches=batches,
        retried=retried,
        outlets_skipped_open=len(outlets) - len(messages),
    )
    logger.info("outlets fanned out", extra=result.as_dict())
    return result


def _send_batch(sqs: SQSClient, queue_url: str, pending: dict[str, str]) -> dict[str, Any]:
    try:
        response = sqs.send_message_batch(
            QueueUrl=queue_url,
            Entries=[{"Id": id_, "MessageBody": body} for id_, body in pending.items()],
        )
    except (BotoCoreError, ClientError) as e:
        raise FanOutError(f"SendMessageBatch failed: {e}") from e
    return {f["Id"]: f for f in response.get("Failed", [])}


def _describe(failed: dict[str, Any], pending: dict[str, str]) -> str:
    outlets = [OutletMessage.from_json(pending[id_]).outlet.name for id_ in failed]
    codes = sorted({f["Code"] for f in failed.values()})
    return f"SQS refused messages for {', '.join(outlets)} ({', '.join(codes)})"
