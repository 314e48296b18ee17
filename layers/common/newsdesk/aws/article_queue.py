"""The article queue: a FIFO queue whose message groups are the pages' hosts, so that SQS hands
one host's messages to one extractor at a time however many run (per-host concurrency of one,
across containers), and the extractor paces the requests within it. The deduplication id is
the article, revision and attempt: a relay that sends a row twice within five minutes (its
transaction failed after the send) is sent once; a retry (the next attempt) is a new message.
A host longer than a message group id may be (128 characters: DNS allows 253) is its first
characters and a digest, the same for every page of the host (``message_group``)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

from newsdesk.core.errors import QueueError
from newsdesk.core.messages import ArticleMessage

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_sqs.type_defs import SendMessageBatchRequestEntryTypeDef

BATCH = 10  # SendMessageBatch's limit
GROUP_MAX_CHARS = 128  # SQS's bound on a MessageGroupId


def message_group(host: str) -> str:
    """The FIFO message group of a host's pages: the host, or, when it is too long for a
    group id, its first characters and a digest of all of it."""
    if len(host) <= GROUP_MAX_CHARS:
        return host
    digest = hashlib.sha256(host.encode()).hexdigest()[:32]
    return f"{host[: GROUP_MAX_CHARS - len(digest) - 1]}~{digest}"


class ArticleQueue:
    def __init__(self, client: SQSClient, url: str) -> None:
        self._client = client
        self._url = url

    def send(self, messages: Sequence[ArticleMessage]) -> list[ArticleMessage]:
        """Send ``messages``; return those sent. A refused entry is left out (its outbox row
        stays unsent, for the next relay); a failed call raises QueueError."""
        sent: list[ArticleMessage] = []
        for start in range(0, len(messages), BATCH):
            batch = {str(i): m for i, m in enumerate(messages[start : start + BATCH])}
            entries: list[SendMessageBatchRequestEntryTypeDef] = [
                {
                    "Id": key,
                    "MessageBody": message.to_json(),
                    "MessageGroupId": message_group(message.host),
                    "MessageDeduplicationId": message.deduplication_id,
                }
                for key, message in batch.items()
            ]
            try:
                response = self._client.send_message_batch(QueueUrl=self._url, Entries=entries)
            except (BotoCoreError, ClientError) as e:
                raise QueueError(f"cannot send to the article queue: {e}") from e
            sent += [batch[ok["Id"]] for ok in response.get("Successful", [])]
        return sent
