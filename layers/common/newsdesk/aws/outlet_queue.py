"""The outlet queue: one message per outlet for the workers, sent ten to a SendMessageBatch
call. Entries SQS failed on its side are sent again (``ATTEMPTS`` calls in all, backing off);
what still fails, or an entry SQS refused as the sender's fault, raises FanOutError, so that
the schedule retries the run (a message sent twice is harmless: the worker is idempotent)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from botocore.exceptions import BotoCoreError, ClientError

from newsdesk.core.errors import FanOutError
from newsdesk.core.messages import OutletMessage

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

logger = Logger(child=True)

BATCH = 10  # SendMessageBatch's limit
ATTEMPTS = 3


@dataclass(frozen=True)
class Delivered:
    """What sending took: SendMessageBatch calls, and entries sent again after SQS failed them
    on its side."""

    batches: int = 0
    retried: int = 0


class OutletQueue:
    def __init__(
        self, client: SQSClient, url: str, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self._client = client
        self._url = url
        self._sleep = sleep

    def send(self, messages: Sequence[OutletMessage]) -> Delivered:
        """Send every message (or raise FanOutError naming the outlets SQS would not take)."""
        batches = retried = 0
        for start in range(0, len(messages), BATCH):
            chunk = messages[start : start + BATCH]
            pending = {str(start + i): m for i, m in enumerate(chunk)}
            for attempt in range(1, ATTEMPTS + 1):
                batches += 1
                failed = self._send_batch(pending)
                if not failed:
                    break
                retryable = {i: pending[i] for i, f in failed.items() if not f["SenderFault"]}
                if len(retryable) < len(failed) or attempt == ATTEMPTS:
                    raise FanOutError(_describe(failed, pending))
                retried += len(retryable)
                logger.warning("sqs refused some messages; retrying", extra={"failed": len(failed)})
                pending = retryable
                self._sleep(0.2 * 2**attempt)
        return Delivered(batches, retried)

    def _send_batch(self, pending: dict[str, OutletMessage]) -> dict[str, Any]:
        """The entries SQS failed, by id."""
        try:
            response = self._client.send_message_batch(
                QueueUrl=self._url,
                Entries=[{"Id": i, "MessageBody": m.to_json()} for i, m in pending.items()],
            )
        except (BotoCoreError, ClientError) as e:
            raise FanOutError(f"SendMessageBatch failed: {e}") from e
        return {f["Id"]: f for f in response.get("Failed", [])}


def _describe(failed: dict[str, Any], pending: dict[str, OutletMessage]) -> str:
    outlets = [pending[i].outlet.name for i in failed]
    codes = sorted({f["Code"] for f in failed.values()})
    return f"SQS refused messages for {', '.join(outlets)} ({', '.join(codes)})"
