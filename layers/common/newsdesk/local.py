"""Local runs: the Lambda functions on one machine, with embedded stand-ins for AWS.

AWS is ``AWS_ENDPOINT_URL`` if set, else moto's server on 127.0.0.1 inside this process, its
DynamoDB items kept in ``NEWSDESK_DATA_DIR/aws-state.json`` between runs. PostgreSQL is
``DATABASE_URL`` if set, else pgserver under ``NEWSDESK_DATA_DIR/pg``. Each function runs in a
pool of worker processes, as concurrent Lambda containers would: warm between invocations, one
invocation at a time each, their logs and EMF metrics written to ``NEWSDESK_DATA_DIR/lambda.log``.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import multiprocessing
import os
import time
import urllib.request
import uuid
import warnings
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import boto3

from newsdesk.errors import ConfigError
from newsdesk.messages import OutletMessage, format_time
from newsdesk.report import OutletReport
from newsdesk.settings import Settings

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

QUEUE_NAME = "newsdesk-outlets"
DEAD_LETTER_QUEUE_NAME = "newsdesk-outlets-dlq"
TABLE_NAME = "newsdesk-state"
RAW_BUCKET = "newsdesk-raw"
RAW_FOLDER = "raw-bodies"  # the emulated bucket's objects between runs
REGION = "ap-northeast-2"
MAX_RECEIVE_COUNT = 3
VISIBILITY_TIMEOUT_SECONDS = 900
STATE_FILE = "aws-state.json"
LOG_FILE = "lambda.log"


@dataclass
class LocalContext:
    """The parts of the Lambda context object that Powertools reads."""

    function_name: str
    memory_limit_in_mb: int = 512
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    timeout_seconds: int = 900
    started: float = field(default_factory=time.monotonic)

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:{REGION}:123456789012:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        left = self.timeout_seconds - (time.monotonic() - self.started)
        return max(0, int(left * 1000))


class LocalRuntime:
    """Starts (or finds) PostgreSQL and AWS, and holds the environment the functions get."""

    def __init__(self, settings: Settings, environ: Mapping[str, str]) -> None:
        self.settings = settings
        self.data_dir = settings.data_dir
        self._environ = dict(environ)
        self._stack = contextlib.ExitStack()
        self.env: dict[str, str] = {}

    @property
    def log_path(self) -> Path:
        return self.data_dir / LOG_FILE

    def __enter__(self) -> LocalRuntime:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        try:
            database_url = self.settings.database_url or self._embedded_postgres()
            embedded_aws = "AWS_ENDPOINT_URL" not in self._environ
            aws = self._start_moto() if embedded_aws else self._given_aws()
            self.env = {
                **self._environ,
                **aws,
                "DATABASE_URL": database_url,
                "STATE_TABLE_NAME": TABLE_NAME,
                "RAW_BUCKET": RAW_BUCKET,
                "POWERTOOLS_SERVICE_NAME": self._environ.get("POWERTOOLS_SERVICE_NAME", "newsdesk"),
                "POWERTOOLS_METRICS_NAMESPACE": self._environ.get(
                    "POWERTOOLS_METRICS_NAMESPACE", "newsdesk"
                ),
            }
            self.env["OUTLET_QUEUE_URL"] = self._ensure_resources(restore=embedded_aws)
            if embedded_aws:
                self._stack.callback(self._save_state)
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stack.close()

    def client(self, service: str) -> Any:
        return boto3.client(
            service,  # type: ignore[call-overload]
            endpoint_url=self.env["AWS_ENDPOINT_URL"],
            region_name=self.env["AWS_DEFAULT_REGION"],
            aws_access_key_id=self.env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=self.env["AWS_SECRET_ACCESS_KEY"],
        )

    def _embedded_postgres(self) -> str:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
            try:
                import pgserver
            except ImportError:
                raise ConfigError(
                    "DATABASE_URL is not set and pgserver is not installed: "
                    "pip install 'newsdesk[local]', or point DATABASE_URL at a PostgreSQL"
                ) from None
            server = pgserver.get_server(self.data_dir / "pg", cleanup_mode="stop")
        return str(server.get_uri())

    def _given_aws(self) -> dict[str, str]:
        return {
            "AWS_ENDPOINT_URL": self._environ["AWS_ENDPOINT_URL"],
            "AWS_DEFAULT_REGION": self._environ.get("AWS_DEFAULT_REGION", REGION),
            "AWS_ACCESS_KEY_ID": self._environ.get("AWS_ACCESS_KEY_ID", "testing"),
            "AWS_SECRET_ACCESS_KEY": self._environ.get("AWS_SECRET_ACCESS_KEY", "testing"),
        }

    def _start_moto(self) -> dict[str, str]:
        host, port = self._stack.enter_context(_moto_server())
        return {
            "AWS_ENDPOINT_URL": f"http://{host}:{port}",
            "AWS_DEFAULT_REGION": REGION,
            # moto accepts any key; fixed fake ones keep real credentials from being sent at all
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
        }

    def _ensure_resources(self, restore: bool) -> str:
        sqs = self.client("sqs")
        dlq_url = sqs.create_queue(QueueName=DEAD_LETTER_QUEUE_NAME)["QueueUrl"]
        dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        queue_url: str = sqs.create_queue(
            QueueName=QUEUE_NAME,
            Attributes={
                "VisibilityTimeout": str(VISIBILITY_TIMEOUT_SECONDS),
                "RedrivePolicy": json.dumps(
                    {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": MAX_RECEIVE_COUNT}
                ),
            },
        )["QueueUrl"]
        s3 = self.client("s3")
        if RAW_BUCKET not in {b["Name"] for b in s3.list_buckets().get("Buckets", [])}:
            s3.create_bucket(
                Bucket=RAW_BUCKET, CreateBucketConfiguration={"LocationConstraint": REGION}
            )
        dynamodb = self.client("dynamodb")
        if TABLE_NAME not in dynamodb.list_tables()["TableNames"]:
            dynamodb.create_table(
                TableName=TABLE_NAME,
                KeySchema=[
                    {"AttributeName": "pk", "KeyType": "HASH"},
                    {"AttributeName": "sk", "KeyType": "RANGE"},
                ],
                AttributeDefinitions=[
                    {"AttributeName": "pk", "AttributeType": "S"},
                    {"AttributeName": "sk", "AttributeType": "S"},
                ],
                BillingMode="PAY_PER_REQUEST",
            )
            if restore:
                self._restore_state()
        return queue_url

    def _restore_state(self) -> None:
        path = self.data_dir / STATE_FILE
        if path.exists():
            dynamodb = self.client("dynamodb")
            for item in json.loads(path.read_text(encoding="utf-8"))["items"]:
                dynamodb.put_item(TableName=TABLE_NAME, Item=item)
        s3 = self.client("s3")
        for meta_path in sorted((self.data_dir / RAW_FOLDER).rglob("*.meta.json")):
            saved = json.loads(meta_path.read_text(encoding="utf-8"))
            body = meta_path.with_name(meta_path.name.removesuffix(".meta.json"))
            s3.put_object(
                Bucket=RAW_BUCKET,
                Key=saved["key"],
                Body=body.read_bytes(),
                ContentType="application/gzip",
                Metadata=saved["metadata"],
            )

    def _save_state(self) -> None:
        dynamodb = self.client("dynamodb")
        items: list[dict[str, Any]] = []
        for page in dynamodb.get_paginator("scan").paginate(TableName=TABLE_NAME):
            items.extend(page["Items"])
        path = self.data_dir / STATE_FILE
        path.write_text(json.dumps({"items": items}, ensure_ascii=False), encoding="utf-8")
        s3 = self.client("s3")
        folder = self.data_dir / RAW_FOLDER
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=RAW_BUCKET):
            for entry in page.get("Contents", []):
                target = folder / entry["Key"]
                if target.exists():
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                stored = s3.get_object(Bucket=RAW_BUCKET, Key=entry["Key"])
                target.write_bytes(stored["Body"].read())
                meta = {"key": entry["Key"], "metadata": stored["Metadata"]}
                target.with_name(target.name + ".meta.json").write_text(json.dumps(meta), "utf-8")


@contextlib.contextmanager
def _moto_server() -> Iterator[tuple[str, int]]:
    try:
        from moto.server import ThreadedMotoServer
    except ImportError:
        raise ConfigError(
            "AWS_ENDPOINT_URL is not set and moto is not installed: "
            "pip install 'newsdesk[local]', or point AWS_ENDPOINT_URL at an AWS emulator"
        ) from None
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        # moto keeps its state per process, not per server: start from nothing, then from
        # the state file, whatever this process emulated before.
        urllib.request.urlopen(
            urllib.request.Request(f"http://{host}:{port}/moto-api/reset", method="POST"),
            timeout=10,
        ).close()
        yield host, port
    finally:
        server.stop()


# --- invoking the functions -------------------------------------------------------------------

FUNCTIONS = {
    "fanout": "newsdesk_functions.collect.fanout",
    "worker": "newsdesk_functions.collect.worker",
    "cluster": "newsdesk_functions.cluster.app",
}


def _start_container(env: dict[str, str], log_path: str) -> None:
    os.environ.update(env)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)


def _invoke(function: str, event: dict[str, Any]) -> dict[str, Any]:
    module = importlib.import_module(FUNCTIONS[function])
    result: dict[str, Any] = module.lambda_handler(event, LocalContext(f"newsdesk-{function}"))
    return result


@contextlib.contextmanager
def lambda_pool(runtime: LocalRuntime, concurrency: int) -> Iterator[ProcessPoolExecutor]:
    pool = ProcessPoolExecutor(
        max_workers=concurrency,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_container,
        initargs=(runtime.env, str(runtime.log_path)),
    )
    with pool:
        yield pool


def _load_collect_functions() -> None:
    for function in ("fanout", "worker"):
        importlib.import_module(FUNCTIONS[function])


def warm_pool(pool: ProcessPoolExecutor, concurrency: int) -> None:
    """Start ``concurrency`` containers with the collect handlers imported, as warm Lambdas
    (or provisioned concurrency) would be: a round then measures work, not cold starts."""
    for future in [pool.submit(_load_collect_functions) for _ in range(concurrency)]:
        future.result()


def invoke_function(runtime: LocalRuntime, function: str, event: dict[str, Any]) -> dict[str, Any]:
    """One invocation of ``function`` in a fresh container (process)."""
    with lambda_pool(runtime, 1) as pool:
        return pool.submit(_invoke, function, event).result()


def scheduled_event(at: datetime) -> dict[str, Any]:
    """The event an EventBridge schedule delivers (the file events/fanout.json has one)."""
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": "123456789012",
        "time": format_time(at),
        "region": REGION,
        "resources": [],
        "detail": {},
    }


def sqs_event(messages: list[dict[str, Any]], queue_arn: str) -> dict[str, Any]:
    """An SQS event as the event source mapping builds it from received messages."""
    return {
        "Records": [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": m.get("Attributes", {}),
                "messageAttributes": {},
                "md5OfBody": m["MD5OfBody"],
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": REGION,
            }
            for m in messages
        ]
    }


@dataclass
class FailedMessage:
    source: str
    error: str


@dataclass
class RoundResult:
    fanout: dict[str, Any]
    outlets: list[OutletReport]
    failed: list[FailedMessage]
    seconds: float


def run_collect_round(
    runtime: LocalRuntime,
    concurrency: int,
    outlet_order: Sequence[str] = (),
    ignore_schedule: bool = True,
    pool: ProcessPoolExecutor | None = None,
) -> RoundResult:
    """Fan-out, then every message on the queue through the worker, one record an invocation
    (the template's BatchSize), ``concurrency`` at a time. Records the worker reports failed
    stay on the queue, as with the real event source mapping. Reports come in ``outlet_order``
    (the sources file's), any outlet not in it after those. Without ``pool`` the round starts
    its own containers."""
    started = time.monotonic()
    sqs = runtime.client("sqs")
    queue_url = runtime.env["OUTLET_QUEUE_URL"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])[
        "Attributes"
    ]["QueueArn"]
    with contextlib.ExitStack() as stack:
        if pool is None:
            pool = stack.enter_context(lambda_pool(runtime, concurrency))
        event = scheduled_event(datetime.now(UTC)) | {"ignore_schedule": ignore_schedule}
        fanout = pool.submit(_invoke, "fanout", event).result()
        messages = _receive_all(sqs, queue_url)
        futures: dict[Future[dict[str, Any]], dict[str, Any]] = {
            pool.submit(_invoke, "worker", sqs_event([m], queue_arn)): m for m in messages
        }
        reports: list[OutletReport] = []
        failed: list[FailedMessage] = []
        for future in as_completed(futures):
            message = futures[future]
            source = OutletMessage.from_json(message["Body"]).outlet.name
            try:
                response = future.result()
            except Exception as e:  # the invocation itself crashed: the record stays queued
                failed.append(FailedMessage(source, f"{type(e).__name__}: {e}"))
                continue
            if response["batchItemFailures"]:
                failed.append(FailedMessage(source, f"record failed, see {runtime.log_path}"))
                continue
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
            reports += [OutletReport.from_dict(o) for o in response["outlets"]]
    rank = {name: i for i, name in enumerate(outlet_order)}
    reports.sort(key=lambda r: (rank.get(r.source, len(rank)), r.source))
    return RoundResult(fanout, reports, failed, time.monotonic() - started)


def _receive_all(sqs: SQSClient, queue_url: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    while True:
        batch = sqs.receive_message(
            QueueUrl=queue_url,
            MaxNumberOfMessages=10,
            WaitTimeSeconds=0,
            AttributeNames=["All"],
        ).get("Messages", [])
        if not batch:
            return messages
        messages.extend(batch)  # type: ignore[arg-type]
