"""The emulated services: PostgreSQL and AWS for local runs, with every queue, table and bucket
of the template (``newsdesk_local.infrastructure``) created and the schema migrated.

AWS is ``AWS_ENDPOINT_URL`` if set, else moto's server in a process of its own (on 127.0.0.1
and a free port unless told otherwise: ``newsdesk stack`` gives its address), its tables' items
and buckets' objects kept under ``NEWSDESK_DATA_DIR`` between runs. PostgreSQL is
``DATABASE_URL`` if set, else pgserver under ``NEWSDESK_DATA_DIR/pg`` (on a Unix socket); the
two start side by side.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from newsdesk.aws.clients import operator_client
from newsdesk.core.errors import ConfigError, InfrastructureError
from newsdesk.core.settings import Settings
from newsdesk.storage.database import Database, checked_url
from newsdesk.storage.migrate import migrate
from newsdesk_local.data_dir import writable
from newsdesk_local.deadletters import message_attributes
from newsdesk_local.emulator import MotoProcess, moto_server
from newsdesk_local.infrastructure import REGION, Infrastructure, QueueAddress
from newsdesk_local.local_postgres import pgserver_at
from newsdesk_local.pool import start_fork_server
from newsdesk_local.saved_state import (
    META,
    RECEIVES,
    each,
    fetch_bucket,
    load_queues,
    load_tables,
    saved_message,
    store_tables,
    taken_messages,
)

LOG_FILE = "lambda.log"  # every container's output


BUCKETS_FOLDER = "buckets"  # the buckets' objects between runs, one folder each


# What earlier releases kept: raw bodies here.
OLD_RAW_FOLDER, OLD_RAW_BUCKET = "raw-bodies", "RawBucket"


# moto accepts any key; fixed fake ones, and none of the caller's session, keep real
# credentials from being sent at all
FAKE_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


REAL_CREDENTIALS = ("AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE")


class LocalServices:
    """Starts (or finds) PostgreSQL and AWS; ``env`` is what every function gets from them."""

    def __init__(
        self,
        settings: Settings,
        environ: Mapping[str, str],
        infrastructure: Infrastructure | None = None,
        *,
        aws_listen: tuple[str, int] = ("127.0.0.1", 0),
        cloudformation_responses: bool = False,
        containers: bool = True,
    ) -> None:
        """``aws_listen``: where an embedded moto listens (an IPv4 address and a port, 0 for a
        free one); ``cloudformation_responses``: it also accepts custom resources' responses
        (``newsdesk_local.moto_process``); ``containers``: the functions will run here, and the
        fork server their containers come from (``newsdesk_local.pool``) starts first, its
        preload running while PostgreSQL and moto start."""
        self.settings = settings
        self.data_dir = settings.data_dir
        self.infrastructure = infrastructure or Infrastructure.packaged()
        self._environ = dict(environ)
        self._stack = contextlib.ExitStack()
        self._postgres_server: Any = None  # pgserver's, when embedded
        self._moto: MotoProcess | None = None  # when embedded
        self._aws_listen = aws_listen
        self._cloudformation_responses = cloudformation_responses
        self._containers = containers
        self.migrations_applied: list[str] = []  # by this start
        self._clients: dict[str, Any] = {}
        self.queues: dict[str, QueueAddress] = {}  # by logical id, once created
        self.env: dict[str, str] = {}

    @property
    def log_path(self) -> Path:
        return self.data_dir / LOG_FILE

    @property
    def embedded_aws(self) -> bool:
        return "AWS_ENDPOINT_URL" not in self._environ

    @property
    def endpoint(self) -> str:
        return self.env["AWS_ENDPOINT_URL"]

    @property
    def moto(self) -> MotoProcess | None:
        """The embedded AWS emulator's process, if it is embedded."""
        return self._moto

    @property
    def postgres_socket(self) -> Path | None:
        """The embedded PostgreSQL's Unix socket, if it is embedded."""
        if self._postgres_server is None:
            return None
        path: Path | None = self._postgres_server.get_postmaster_info().socket_path
        return path

    def __enter__(self) -> LocalServices:
        writable(self.data_dir)
        if self._containers:
            start_fork_server()
        try:
            with ThreadPoolExecutor(1) as background:  # PostgreSQL starts meanwhile
                database_url = background.submit(self._postgres)
                aws = self._start_moto() if self.embedded_aws else self._given_aws()
                self.env = {**self._environ, **aws}
                for service in ("sqs", "s3", "dynamodb"):  # built while moto starts
                    self.client(service)
                if self._moto is not None:
                    self._moto.wait_ready()
                try:
                    self._create_resources()
                except (BotoCoreError, ClientError) as e:
                    raise InfrastructureError(f"AWS at {self.endpoint}: {e}") from None
                self.env["DATABASE_URL"] = database_url.result()
            self._stack.callback(self._shut_down)
        except BaseException:  # a failed start, or one stopped (Ctrl-C, SIGTERM): nothing saved
            self._stack.close()
            getattr(self._postgres_server, "cleanup", lambda: None)()
            raise
        return self

    def _shut_down(self) -> None:
        """PostgreSQL stops (it checkpoints) while the emulated AWS state is saved."""
        with ThreadPoolExecutor(1) as background:
            stopped = background.submit(getattr(self._postgres_server, "cleanup", lambda: None))
            if self.embedded_aws:
                self._save_state()
            stopped.result()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stack.close()

    def client(self, service: str) -> Any:
        """The services' client of ``service`` (one each; boto3 clients are thread-safe); one
        to a given AWS_ENDPOINT_URL waits as the operator's do (``operator_client``: bounded
        timeouts and attempts), one to the embedded emulator as boto3's defaults say."""
        if service not in self._clients:
            make = boto3.client if self.embedded_aws else operator_client
            try:
                self._clients[service] = make(
                    service,  # type: ignore[call-overload]
                    endpoint_url=self.endpoint,
                    region_name=self.env["AWS_DEFAULT_REGION"],
                    aws_access_key_id=self.env["AWS_ACCESS_KEY_ID"],
                    aws_secret_access_key=self.env["AWS_SECRET_ACCESS_KEY"],
                )
            except ValueError as e:  # botocore's "Invalid endpoint: …"
                raise ConfigError(f"AWS_ENDPOINT_URL: {e}") from None
        return self._clients[service]

    def database(self) -> Database:
        url = self.env["DATABASE_URL"]
        return Database(lambda: url)

    def function_env(self, function: str) -> dict[str, str]:
        """What ``function``'s containers get: the template's settings, overridden by the
        caller's environment; then the names and addresses of the emulated resources it uses
        and of the services, which nothing overrides."""
        settings, resources = self.infrastructure.environment(function, self.queues)
        return {"POWERTOOLS_SERVICE_NAME": "newsdesk", **settings, **self.env, **resources}

    def queue_url(self, logical_id: str) -> str:
        return self.queues[logical_id].url

    # --- starting ---------------------------------------------------------------------------

    def _postgres(self) -> str:
        given = self.settings.database_url
        url = checked_url(given) if given else self._embedded_postgres()
        database = Database(lambda: url)
        self.migrations_applied = migrate(database)
        database.close()
        return url

    def _embedded_postgres(self) -> str:
        self._postgres_server = pgserver_at(self.data_dir)
        return str(self._postgres_server.get_uri())

    def _given_aws(self) -> dict[str, str]:
        return {
            "AWS_ENDPOINT_URL": self._environ["AWS_ENDPOINT_URL"],
            "AWS_DEFAULT_REGION": self._environ.get("AWS_DEFAULT_REGION", REGION),
            **{key: self._environ.get(key, value) for key, value in FAKE_CREDENTIALS.items()},
        }

    def _start_moto(self) -> dict[str, str]:
        self._moto = self._stack.enter_context(
            moto_server(*self._aws_listen, cloudformation_responses=self._cloudformation_responses)
        )
        for name in REAL_CREDENTIALS:
            self._environ.pop(name, None)
        return {"AWS_ENDPOINT_URL": self._moto.url, "AWS_DEFAULT_REGION": REGION} | (
            FAKE_CREDENTIALS
        )

    def _create_resources(self) -> None:
        """Every queue, bucket and table, one service per thread (each service's first call
        is slow in moto); then, into new tables, what the last run saved."""
        with ThreadPoolExecutor(3) as pool:
            queues = pool.submit(self._create_queues)
            buckets = pool.submit(self._create_buckets)
            tables_created = self._create_tables()
            self._create_buses()
            queues.result()
            buckets.result()
        if tables_created and self.embedded_aws:
            self._move_old_raw_bodies()
            self._restore_state()

    def _create_queues(self) -> None:
        for queue in self.infrastructure.queues:
            self._create_queue(queue.logical_id)

    def _create_queue(self, logical_id: str) -> QueueAddress:
        """The queue, after its dead-letter queue: a redrive policy names an existing ARN."""
        if logical_id in self.queues:
            return self.queues[logical_id]
        queue = self.infrastructure.queue(logical_id)
        attributes = dict(queue.attributes)
        if queue.dead_letter_queue is not None:
            dead_letters = self._create_queue(queue.dead_letter_queue)
            attributes["RedrivePolicy"] = queue.redrive_policy(dead_letters.arn)
        sqs = self.client("sqs")
        url = sqs.create_queue(QueueName=queue.name, Attributes=attributes)["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
        self.queues[logical_id] = QueueAddress(url, arn["Attributes"]["QueueArn"])
        return self.queues[logical_id]

    def _create_buckets(self) -> None:
        s3 = self.client("s3")
        existing = {b["Name"] for b in s3.list_buckets().get("Buckets", [])}
        for bucket in self.infrastructure.buckets:
            if bucket.name not in existing:
                s3.create_bucket(
                    Bucket=bucket.name,
                    CreateBucketConfiguration={
                        "LocationConstraint": self.env["AWS_DEFAULT_REGION"]
                    },
                )

    def _create_buses(self) -> None:
        events = self.client("events")
        existing = {b["Name"] for b in events.list_event_buses().get("EventBuses", [])}
        for bus in self.infrastructure.buses:
            if bus.name not in existing:
                events.create_event_bus(Name=bus.name)

    def _create_tables(self) -> bool:
        """Whether any table was created (and so is empty)."""
        dynamodb = self.client("dynamodb")
        existing = set(dynamodb.list_tables()["TableNames"])
        missing = [t for t in self.infrastructure.tables if t.name not in existing]
        for table in missing:
            dynamodb.create_table(TableName=table.name, **table.definition)
        return bool(missing)

    # --- keeping state between runs -----------------------------------------------------------

    def _restore_state(self) -> None:
        sqs = self.client("sqs")
        for logical_id, queued in load_queues(self.data_dir).items():
            for message in queued:
                target, attributes = self._requeued(logical_id, message)
                fifo = {}
                if message.get("group"):  # a FIFO queue's: in its group, under its own id
                    fifo = {
                        "MessageGroupId": message["group"],
                        "MessageDeduplicationId": message["deduplication_id"],
                    }
                sqs.send_message(
                    QueueUrl=self.queue_url(target),
                    MessageBody=message["body"],
                    **message_attributes(attributes),
                    **fifo,
                )
        dynamodb = self.client("dynamodb")
        for logical_id, items in load_tables(self.data_dir).items():
            name = self.infrastructure.table(logical_id).name
            for item in items:
                dynamodb.put_item(TableName=name, Item=item)
        s3 = self.client("s3")
        for kept in self.infrastructure.buckets:
            folder, bucket = self.data_dir / BUCKETS_FOLDER / kept.logical_id, kept.name

            def put(meta_path: Path, bucket: str = bucket) -> None:
                saved = json.loads(meta_path.read_text(encoding="utf-8"))
                body = meta_path.with_name(meta_path.name.removesuffix(META))
                s3.put_object(
                    Bucket=bucket,
                    Key=saved["key"],
                    Body=body.read_bytes(),
                    ContentType=saved.get("content_type", "application/gzip"),
                    Metadata=saved["metadata"],
                )

            each(put, sorted(folder.rglob(f"*{META}")))

    def _requeued(
        self, logical_id: str, message: dict[str, Any]
    ) -> tuple[str, dict[str, Any] | None]:
        """Where a saved message goes back, and its attributes: a queue cannot be given a
        receive count, so the receives of earlier runs ride along in an attribute, and a message
        received maxReceiveCount times in all goes to the dead-letter queue, as SQS would."""
        receives = int(message.get("receives", 0))
        attributes = dict(message.get("attributes") or {})
        queue = self.infrastructure.queue(logical_id)
        limit = queue.max_receive_count
        if queue.dead_letter_queue and limit and receives >= limit:
            return queue.dead_letter_queue, attributes or None
        if receives:
            attributes[RECEIVES] = {"DataType": "Number", "StringValue": str(receives)}
        return logical_id, attributes or None

    def _move_old_raw_bodies(self) -> None:
        """An earlier release kept the raw bodies in raw-bodies/: they move, once."""
        old, new = self.data_dir / OLD_RAW_FOLDER, self.data_dir / BUCKETS_FOLDER / OLD_RAW_BUCKET
        if old.is_dir() and not new.exists():
            new.parent.mkdir(parents=True, exist_ok=True)
            old.rename(new)

    def _save_state(self) -> None:
        dynamodb = self.client("dynamodb")
        tables: dict[str, list[dict[str, Any]]] = {}
        for table in self.infrastructure.tables:
            tables[table.logical_id] = [
                item
                for page in dynamodb.get_paginator("scan").paginate(TableName=table.name)
                for item in page["Items"]
            ]
        sqs = self.client("sqs")
        queues = {
            logical_id: [saved_message(m) for m in taken_messages(sqs, self.queue_url(logical_id))]
            for logical_id in self.queues
        }
        store_tables(self.data_dir, tables, queues)
        for bucket in self.infrastructure.buckets:
            self._save_bucket(bucket.name, self.data_dir / BUCKETS_FOLDER / bucket.logical_id)

    def _save_bucket(self, bucket: str, folder: Path) -> None:
        """The bucket's objects not yet in ``folder`` saved there: by the embedded emulator's
        process itself, from its own store rather than a GetObject each; else through S3."""
        if self._moto is not None:
            self._moto.save_bucket(bucket, folder)
        else:
            fetch_bucket(self.client("s3"), bucket, folder)
