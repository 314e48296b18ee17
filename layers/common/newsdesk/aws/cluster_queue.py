"""The cluster queue (issue 24): one message per category of a clustering run, sent by the
cluster function's schedule invocation, each consumed by an invocation of its own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

from newsdesk.core.errors import QueueError
from newsdesk.core.messages import ClusterMessage

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_sqs.type_defs import SendMessageBatchRequestEntryTypeDef

BATCH = 10  # SendMessageBatch's limit


class ClusterQueue:
    def __init__(self, client: SQSClient, url: str) -> None:
        self._client = client
        self._url = url

    def send(self, messages: Sequence[ClusterMessage]) -> None:
        """Send every message; a refused entry or a failed call raises QueueError (the
        schedule's retry sends the run again: a category run twice at one time changes
        nothing the second time)."""
        for start in range(0, len(messages), BATCH):
            entries: list[SendMessageBatchRequestEntryTypeDef] = [
                {"Id": str(k), "MessageBody": m.to_json()}
                for k, m in enumerate(messages[start : start + BATCH])
            ]
            try:
                response = self._client.send_message_batch(QueueUrl=self._url, Entries=entries)
            except (BotoCoreError, ClientError) as e:
                raise QueueError(f"cannot send to the cluster queue: {e}") from e
            if response.get("Failed"):
                raise QueueError(f"the cluster queue refused {len(response['Failed'])} messages")
