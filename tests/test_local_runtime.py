"""The local runtime follows the template: the packaged copy of its facts is current, the
emulated resources and the containers get the template's settings, and the event-source driver
feeds a queue as the event source mapping would (batch size, partial failures, redrive)."""

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from infra.local_resources import extract
from infra.transform import load
from newsdesk.core.errors import InfrastructureError
from newsdesk.core.messages import ArticleMessage
from newsdesk.core.settings import Settings
from newsdesk_local import moto_process
from newsdesk_local.emulator import (
    RESPONSE_LINE,
    RESPONSE_PATH,
    SAVE_COMMAND,
    SAVED_LINE,
    listen,
)
from newsdesk_local.infrastructure import LAMBDA_ROOT, Infrastructure
from newsdesk_local.invocations import WORKER, drain, pool_of
from newsdesk_local.pool import context_of
from newsdesk_local.saved_state import META, fetch_bucket, keep_object, object_path
from newsdesk_local.services import LocalServices
from tests.conftest import ROOT

# its tests start servers or processes of their own (tests/conftest.py)
pytestmark = pytest.mark.integration


TEMPLATE = ROOT / "infra" / "template.yaml"


def test_the_packaged_resources_are_the_templates():
    packaged = json.loads((ROOT / "local/newsdesk_local/resources.json").read_text("utf-8"))
    assert packaged == extract(load(TEMPLATE)), "run `make local-resources`"


def test_queues_and_containers_get_the_templates_settings(aws_env):
    template = load(TEMPLATE)["Resources"]
    sqs = aws_env.client("sqs")
    attributes = sqs.get_queue_attributes(
        QueueUrl=aws_env.queue_url("OutletQueue"), AttributeNames=["All"]
    )["Attributes"]
    outlet_queue = template["OutletQueue"]["Properties"]
    assert int(attributes["VisibilityTimeout"]) == outlet_queue["VisibilityTimeout"] == 1080
    redrive = json.loads(attributes["RedrivePolicy"])
    assert redrive["maxReceiveCount"] == outlet_queue["RedrivePolicy"]["maxReceiveCount"]
    assert redrive["deadLetterTargetArn"].endswith(":newsdesk-outlets-dlq")
    worker = aws_env.infrastructure.functions[WORKER]
    assert context_of(worker).timeout_seconds == template[WORKER]["Properties"]["Timeout"]
    env = aws_env.function_env(WORKER)
    assert env["STATE_TABLE_NAME"] == "newsdesk-state"
    assert env["RAW_BUCKET"] in {b["Name"] for b in aws_env.client("s3").list_buckets()["Buckets"]}
    assert "DB_SECRET_ARN" not in env  # not emulated: DATABASE_URL stands in


def echo_infrastructure(partial_failures: bool) -> Infrastructure:
    """A queue with a dead-letter queue after two receives, fed two at a time to tests.sqs_echo."""
    return Infrastructure(
        {
            "parameters": {},
            "resources": {
                "EchoQueue": {
                    "Type": "AWS::SQS::Queue",
                    "Properties": {
                        "QueueName": {"Fn::Sub": "${AWS::StackName}-echo"},
                        "VisibilityTimeout": 0,  # a failed message is back at once
                        "RedrivePolicy": {
                            "deadLetterTargetArn": {"Fn::GetAtt": ["EchoDeadLetters", "Arn"]},
                            "maxReceiveCount": 2,
                        },
                    },
                },
                "EchoDeadLetters": {"Type": "AWS::SQS::Queue", "Properties": {}},
            },
            "functions": {
                "EchoFunction": {
                    "Module": "tests.sqs_echo",
                    "Timeout": 10,
                    "MemorySize": 128,
                    "Variables": {},
                    "SqsEvents": [
                        {
                            "Queue": {"Fn::GetAtt": ["EchoQueue", "Arn"]},
                            "BatchSize": 2,
                            "FunctionResponseTypes": (
                                ["ReportBatchItemFailures"] if partial_failures else []
                            ),
                        }
                    ],
                }
            },
            # its container's path: tests/ (its code) and the runtime's boto3, nothing else
            "artifacts": {
                "EchoFunction": {
                    "Handler": "sqs_echo.lambda_handler",
                    "Image": False,
                    "Sources": ["tests"],
                    "Installed": ["runtime"],
                }
            },
        }
    )


def drained(aws_env, partial_failures, bodies):
    """Send ``bodies`` to the echo queue and drain it; (invocations' bodies, what is left on
    the queue and on its dead-letter queue)."""
    infra = echo_infrastructure(partial_failures)
    services = LocalServices(aws_env.settings, dict(os.environ), infra)
    with services:
        sqs = services.client("sqs")
        for body in bodies:
            sqs.send_message(QueueUrl=services.queue_url("EchoQueue"), MessageBody=body)
        (source,) = infra.functions["EchoFunction"].event_sources
        # one container: with no visibility timeout a batch in flight would be received again
        with pool_of(services, "EchoFunction") as pool:
            deliveries = drain(services, source, pool)
        left = {}
        for queue in ("EchoQueue", "EchoDeadLetters"):
            messages = sqs.receive_message(
                QueueUrl=services.queue_url(queue), MaxNumberOfMessages=10
            ).get("Messages", [])
            left[queue] = sorted(m["Body"] for m in messages)
    invoked = sorted(sorted(m["Body"] for m in d.messages) for d in deliveries)
    return invoked, left, deliveries


def test_reported_failures_stay_queued_until_redriven_to_the_dead_letter_queue(aws_env):
    # GIVEN five messages, one that the function reports failed every time
    invoked, left, _ = drained(aws_env, True, ["a", "b", "fail", "c", "d"])
    # THEN batches of at most two; the failed record came back and went to the
    # dead-letter queue after its second receive; the others were deleted once
    assert all(len(batch) <= 2 for batch in invoked)
    assert sorted(b for batch in invoked for b in batch) == ["a", "b", "c", "d", "fail", "fail"]
    assert left == {"EchoQueue": [], "EchoDeadLetters": ["fail"]}


def test_without_partial_failures_a_crashed_batch_stays_whole(aws_env):
    invoked, left, _ = drained(aws_env, False, ["crash", "x"])
    # the batch of two crashed twice and was redriven whole
    assert invoked == [["crash", "x"], ["crash", "x"]]
    assert left == {"EchoQueue": [], "EchoDeadLetters": ["crash", "x"]}


def test_without_partial_failures_a_returned_batch_is_deleted_whatever_it_reports(aws_env):
    # the mapping does not read batchItemFailures unless ReportBatchItemFailures is on
    invoked, left, _ = drained(aws_env, False, ["fail", "y"])
    assert invoked == [["fail", "y"]]
    assert left == {"EchoQueue": [], "EchoDeadLetters": []}


def test_a_handler_that_returns_nothing_has_its_batch_deleted(aws_env):
    invoked, left, _ = drained(aws_env, True, ["none"])
    assert invoked == [["none"]]
    assert left == {"EchoQueue": [], "EchoDeadLetters": []}


def test_a_container_that_dies_fails_its_batch_and_ends_the_drain(aws_env):
    # GIVEN a batch whose invocation kills its container (the pool breaks)
    _, left, deliveries = drained(aws_env, True, ["die", "a"])
    # THEN the drain returns, every delivery failed with the broken pool named, none deleted
    assert deliveries
    assert all(d.error and "Broken" in d.error for d in deliveries)
    assert sorted(left["EchoQueue"] + left["EchoDeadLetters"]) == ["a", "die"]


def test_an_earlier_releases_data_folder_is_taken_over(postgres_url, tmp_path):
    # GIVEN a data folder as the release before the stage packages left it: the state table's
    # items as {"items": [...]}, a raw body under raw-bodies/
    release = json.loads((ROOT / "tests/compatibility/release-0.1.0.json").read_text("utf-8"))
    (tmp_path / "aws-state.json").write_text(json.dumps({"items": release["state_items"]}))
    key = "yna/abc/2026-12-01/body.xml.gz"
    body = tmp_path / "raw-bodies" / key
    body.parent.mkdir(parents=True)
    body.write_bytes(b"gzip bytes")
    meta = {"key": key, "metadata": {"source": "yna"}}
    body.with_name(body.name + ".meta.json").write_text(json.dumps(meta))
    environ = {k: v for k, v in os.environ.items() if k != "AWS_ENDPOINT_URL"}
    # WHEN the local runtime starts on it (its own moto) and stops
    with LocalServices(Settings(data_dir=tmp_path, database_url=postgres_url), environ) as s:
        items = s.client("dynamodb").scan(TableName="newsdesk-state")["Items"]
        bucket = s.function_env(WORKER)["RAW_BUCKET"]
        stored = s.client("s3").get_object(Bucket=bucket, Key=key)
    # THEN the items and the body are there, and the folder moved to where this release keeps it
    assert sorted(i["sk"]["S"] for i in items) == sorted(
        i["sk"]["S"] for i in release["state_items"]
    )
    assert (stored["Body"].read(), stored["Metadata"]) == (b"gzip bytes", {"source": "yna"})
    assert not (tmp_path / "raw-bodies").exists()
    assert (tmp_path / "buckets/RawBucket" / key).read_bytes() == b"gzip bytes"
    saved = json.loads((tmp_path / "aws-state.json").read_text())
    assert len(saved["tables"]["StateTable"]) == len(release["state_items"])


def test_the_emulators_process_saves_a_bucket_as_get_object_did_and_it_comes_back(
    postgres_url, tmp_path
):
    # GIVEN the embedded moto's raw bucket with objects as the worker stores them, and others
    environ = {k: v for k, v in os.environ.items() if k != "AWS_ENDPOINT_URL"}
    settings = Settings(data_dir=tmp_path / "data", database_url=postgres_url)
    metadata = {"source": "yna", "final-url": "https%3A%2F%2Fx.test%2Ff", "Upper": "a b"}
    with LocalServices(settings, environ, containers=False) as services:
        assert services.moto is not None
        bucket = services.function_env(WORKER)["RAW_BUCKET"]
        s3 = services.client("s3")
        s3.put_object(
            Bucket=bucket,
            Key="yna/abc/2026-12-01/body.xml.gz",
            Body=b"gzip bytes",
            ContentType="application/gzip",
            Metadata=metadata,
        )
        s3.put_object(Bucket=bucket, Key="plain", Body=b"")
        s3.put_object(Bucket=bucket, Key="한국/기사 1+2.xml", Body=b"\x00\xff")
        s3.put_object(Bucket=bucket, Key="gone", Body=b"x")
        s3.delete_object(Bucket=bucket, Key="gone")
        # WHEN its process writes them, and the GetObject path writes them elsewhere
        fetch_bucket(s3, bucket, tmp_path / "fetched")
        saved = services.moto.save_bucket(bucket, tmp_path / "saved")
        # THEN the same files, byte for byte; a second time, nothing (they are there already)
        assert saved == 3
        assert files(tmp_path / "saved") == files(tmp_path / "fetched")
        assert len(files(tmp_path / "saved")) == 6
        assert services.moto.save_bucket(bucket, tmp_path / "saved") == 0
        with pytest.raises(InfrastructureError, match="cannot save no-such-bucket: LookupError"):
            services.moto.save_bucket("no-such-bucket", tmp_path / "saved")
    # AND once the runtime has stopped (saving them) and started again, they are there again
    assert files(settings.data_dir / "buckets/RawBucket") == files(tmp_path / "saved")
    with LocalServices(settings, environ, containers=False) as services:
        stored = services.client("s3").get_object(
            Bucket=bucket, Key="yna/abc/2026-12-01/body.xml.gz"
        )
        keys = services.client("s3").list_objects_v2(Bucket=bucket)["Contents"]
    assert stored["Body"].read() == b"gzip bytes"
    assert stored["ContentType"] == "application/gzip"
    assert stored["Metadata"] == {k.lower(): v for k, v in metadata.items()}
    assert sorted(k["Key"] for k in keys) == sorted(
        ["yna/abc/2026-12-01/body.xml.gz", "plain", "한국/기사 1+2.xml"]
    )


def test_a_kept_object_stays_in_its_folder_and_is_kept_once(tmp_path):
    # a key that would leave the bucket's folder has no place in it
    assert object_path(tmp_path, "../outside") is None
    assert object_path(tmp_path, "/etc/passwd") is None
    assert object_path(tmp_path, "a/../../outside") is None
    # an object is kept when its meta file is written (last): a body alone is saved again
    target = tmp_path / "a/b.xml.gz"
    assert object_path(tmp_path, "a/b.xml.gz") == target
    target.parent.mkdir()
    target.write_bytes(b"cut short")
    assert object_path(tmp_path, "a/b.xml.gz") == target
    keep_object(target, "a/b.xml.gz", b"whole", {"source": "yna"}, "application/gzip")
    assert object_path(tmp_path, "a/b.xml.gz") is None
    assert files(tmp_path) == {
        Path("a/b.xml.gz"): b"whole",
        Path("a/b.xml.gz" + META): json.dumps(
            {"key": "a/b.xml.gz", "metadata": {"source": "yna"}, "content_type": "application/gzip"}
        ).encode(),
    }


def files(folder: Path) -> dict[Path, bytes]:
    """The files under ``folder`` (relative paths) and their bytes."""
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_chained_dead_letter_queues_are_created_in_order(aws_env):
    def queue(name, dead_letters=None):
        props: dict[str, object] = {"QueueName": f"chain-{name}"}
        if dead_letters:
            arn = {"Fn::GetAtt": [dead_letters, "Arn"]}
            props["RedrivePolicy"] = {"deadLetterTargetArn": arn, "maxReceiveCount": 1}
        return {"Type": "AWS::SQS::Queue", "Properties": props}

    # listed before what they redrive to: A -> B -> C
    resources = {"A": queue("a", "B"), "B": queue("b", "C"), "C": queue("c")}
    infra = Infrastructure({"parameters": {}, "resources": resources, "functions": {}})
    with LocalServices(aws_env.settings, dict(os.environ), infra) as services:
        sqs = services.client("sqs")
        redrives = {
            name: sqs.get_queue_attributes(
                QueueUrl=services.queue_url(name), AttributeNames=["RedrivePolicy"]
            )
            .get("Attributes", {})
            .get("RedrivePolicy")
            for name in "ABC"
        }
    assert json.loads(redrives["A"])["deadLetterTargetArn"] == services.queues["B"].arn
    assert json.loads(redrives["B"])["deadLetterTargetArn"] == services.queues["C"].arn
    assert redrives["C"] is None


def test_a_handler_that_fails_to_import_fails_each_invocation_with_its_error(aws_env):
    infra = echo_infrastructure(True)
    echo = infra.functions["EchoFunction"]
    artifact = replace(echo.artifact, handler="no_such_handler.lambda_handler")
    infra.functions["EchoFunction"] = replace(echo, artifact=artifact)
    with (
        LocalServices(aws_env.settings, dict(os.environ), infra) as services,
        pool_of(services, "EchoFunction") as pool,
    ):
        failures = [pool.invoke({"Records": []}).exception() for _ in range(2)]
    assert all(isinstance(f, ModuleNotFoundError) for f in failures)


def test_a_container_imports_only_what_its_artifact_holds(aws_env):
    # GIVEN the echo function, whose artifact is its code folder and the runtime's boto3
    infra = echo_infrastructure(True)
    with (
        LocalServices(aws_env.settings, dict(os.environ), infra) as services,
        pool_of(services, "EchoFunction") as pool,
    ):
        # WHEN it imports what its artifact holds, and what this environment holds beside it
        # (a library of another layer, the local package, the functions' package)
        imported = {
            name: pool.invoke({"Records": [{"messageId": "1", "body": f"import {name}"}]})
            for name in ("boto3", "json", "trafilatura", "yaml", "newsdesk_local.cli", "newsdesk")
        }
        outcomes: dict[str, Any] = {
            name: f.exception() or f.result()["imported"] for name, f in imported.items()
        }
    # THEN the runtime's boto3 comes from the artifact's folder, the standard library is there,
    # and everything else fails as it would in AWS
    assert outcomes["boto3"].startswith(str(LAMBDA_ROOT / "runtime"))
    assert outcomes["json"].endswith("json/__init__.py")
    for name in ("trafilatura", "yaml", "newsdesk_local.cli", "newsdesk"):
        assert isinstance(outcomes[name], ModuleNotFoundError), (name, outcomes[name])


def test_a_port_in_use_is_named():
    with listen("127.0.0.1", 0) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(InfrastructureError, match=f"cannot listen on 127.0.0.1:{port}: in use"):
            listen("127.0.0.1", port)


def test_moto_process_names_the_response_path_and_commands_the_runtime_does():
    assert (
        moto_process.RESPONSE_PATH,
        moto_process.RESPONSE_LINE,
        moto_process.SAVE_COMMAND,
        moto_process.SAVED_LINE,
    ) == (RESPONSE_PATH, RESPONSE_LINE, SAVE_COMMAND, SAVED_LINE)


def test_a_fifo_queues_messages_are_kept_between_runs_in_their_groups(postgres_url, tmp_path):
    # GIVEN twelve article messages of one host waiting when a run ends (more than one
    # receive's ten: a FIFO queue gives no more of a group while some of it is in flight)
    environ = {k: v for k, v in os.environ.items() if k != "AWS_ENDPOINT_URL"}
    settings = Settings(data_dir=tmp_path, database_url=postgres_url)
    sent = [ArticleMessage(n, 0, f"https://www.yna.co.kr/view/{n}") for n in range(12)]
    with LocalServices(settings, environ) as services:
        for message in sent:
            services.client("sqs").send_message(
                QueueUrl=services.queue_url("ArticleQueue"),
                MessageBody=message.to_json(),
                MessageGroupId=message.host,
                MessageDeduplicationId=message.deduplication_id,
            )
    # WHEN the next run starts THEN all twelve are there, in order, in the host's group
    with LocalServices(settings, environ) as services:
        sqs, url = services.client("sqs"), services.queue_url("ArticleQueue")
        received = []
        while batch := sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["MessageGroupId"]
        ).get("Messages", []):
            received += batch
            for message in batch:
                sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    assert [ArticleMessage.from_json(m["Body"]) for m in received] == sent
    assert {m["Attributes"]["MessageGroupId"] for m in received} == {"www.yna.co.kr"}
