"""AWS clients, with the retry policy every newsdesk call uses. The functions build theirs once
per container (``newsdesk_functions``) and pass them down.

boto3 honours ``AWS_ENDPOINT_URL``, which is how local runs and tests point the same code at
moto's server on 127.0.0.1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_events import EventBridgeClient
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_sqs import SQSClient

# Standard retry mode backs off on throttling; a record that still fails is retried by SQS.
_CONFIG = Config(retries={"mode": "standard", "max_attempts": 4}, connect_timeout=5)
# The operator's: the `newsdesk` command's calls to a deployed stack (or an emulator), which a
# person waits on and no queue retries. botocore waits 60 s for an answer and, with the
# Lambda config's retries, makes four attempts: an endpoint that accepts and never answers held
# `newsdesk feeds` four minutes. Here each call may take two attempts of at most 3 s to connect
# and 5 s for each read (a Scan page, a describe: well under a second when AWS answers), so a
# silent endpoint ends in the error, in words, after about 11 s (OPERATOR_WAIT_SECONDS).
OPERATOR_ATTEMPTS, OPERATOR_CONNECT_SECONDS, OPERATOR_READ_SECONDS = 2, 3, 5
OPERATOR_CONFIG = Config(
    retries={"mode": "standard", "total_max_attempts": OPERATOR_ATTEMPTS},
    connect_timeout=OPERATOR_CONNECT_SECONDS,
    read_timeout=OPERATOR_READ_SECONDS,
)
# the longest a call waits on a silent endpoint: every attempt's connect and read, and standard
# mode's backoff between them (at most 1 s before the second attempt: base 1 s times 2**0)
OPERATOR_WAIT_SECONDS = OPERATOR_ATTEMPTS * (OPERATOR_CONNECT_SECONDS + OPERATOR_READ_SECONDS) + 1


def sqs_client() -> SQSClient:
    return boto3.client("sqs", config=_CONFIG)


def dynamodb_client() -> DynamoDBClient:
    return boto3.client("dynamodb", config=_CONFIG)


def s3_client() -> S3Client:
    return boto3.client("s3", config=_CONFIG)


def events_client() -> EventBridgeClient:
    return boto3.client("events", config=_CONFIG)


def operator_client(service: str, **options: Any) -> Any:
    """A client for the `newsdesk` command, with OPERATOR_CONFIG; ``options`` are boto3's
    (``endpoint_url``, ``region_name``, credentials), its defaults otherwise."""
    return boto3.client(service, config=OPERATOR_CONFIG, **options)  # type: ignore[call-overload]
