"""AWS clients and the database, created once per container (or process) and reused.

boto3 honours ``AWS_ENDPOINT_URL``, which is how local runs and tests point the same code at
moto's server on 127.0.0.1.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING
from urllib.parse import quote

import boto3
from aws_lambda_powertools.utilities import parameters
from botocore.config import Config

from newsdesk.errors import SettingsError
from newsdesk.settings import Settings
from newsdesk.store import Database

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_sqs import SQSClient

# Standard retry mode backs off on throttling; a record that still fails is retried by SQS.
_CONFIG = Config(retries={"mode": "standard", "max_attempts": 4}, connect_timeout=5)


@functools.cache
def sqs_client() -> SQSClient:
    return boto3.client("sqs", config=_CONFIG)


@functools.cache
def dynamodb_client() -> DynamoDBClient:
    return boto3.client("dynamodb", config=_CONFIG)


@functools.cache
def s3_client() -> S3Client:
    return boto3.client("s3", config=_CONFIG)


def database_from(settings: Settings) -> Database:
    if settings.database_url:
        url = settings.database_url
        return Database(lambda: url)
    if settings.db_secret_arn:
        arn, host, port, name = (
            settings.db_secret_arn,
            settings.db_host,
            settings.db_port,
            settings.db_name,
        )
        return Database(lambda: dsn_from_secret(arn, host, port, name))
    raise SettingsError("set DATABASE_URL (or DB_SECRET_ARN and DB_HOST in AWS)")


def dsn_from_secret(arn: str, host: str | None, port: int, name: str) -> str:
    """A DSN from the secret's username and password. RDS-managed master secrets hold only
    those two, so host, port and database come from the function's environment (the RDS Proxy
    endpoint), else from the secret. Powertools caches the secret for five minutes, so a
    rotated password is picked up on the next reconnect."""
    secret = parameters.get_secret(arn, transform="json", max_age=300)
    if not isinstance(secret, dict):
        raise SettingsError(f"DB_SECRET_ARN {arn}: secret is not a JSON object")
    if host is None:  # an RDS-format secret that carries its own address
        host, port, name = secret.get("host"), secret.get("port", port), secret.get("dbname", name)
    if not host:
        raise SettingsError("DB_HOST is not set and the secret names no host")
    user, password = (quote(str(secret[key]), safe="") for key in ("username", "password"))
    return f"postgresql://{user}:{password}@{host}:{port}/{name}?sslmode=require"
