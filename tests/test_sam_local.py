"""`sam local invoke` without Docker: every function run in a process of its own with exactly
the environment SAM CLI's code gives its container (build/sam-env.json, `make sam-env`: the
built template plus infra/env.example.json), its handler imported fresh from the built code,
and its events/ file, against `newsdesk stack`; each succeeds, the migrate event's
CloudFormation response received by the stack.

What stands in for Docker: host.docker.internal (and the stack's default ports, which
env.example.json names) is mapped to the stack's address on 127.0.0.1; the Lambda runtime's
own variables (_HANDLER, LAMBDA_TASK_ROOT, PYTHONPATH, TZ) are added; the layer's own package
comes from the build and its dependencies from this environment (the build's are arm64
wheels); the cluster image is not built, so its task root is what its Dockerfile copies from
the sources. The worker's event names real outlets' feeds: its URLs are replaced by the
loopback feed server's, which FETCH_ALLOW_PRIVATE_NETWORKS=true (a variable the template
declares, so an env.json could set it) lets it fetch. Nothing but 127.0.0.1 is reached.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3
import pytest

from infra.transform import load
from newsdesk_local.feedserver import FeedServer, Route
from newsdesk_local.stack import AWS_PORT, CONTAINER_HOST, POSTGRES_PORT
from tests.conftest import ROOT, article_page, load_event, served_bytes

RESOLVED = ROOT / "build" / "sam-env.json"
SOURCE_TEMPLATE = ROOT / "infra" / "template.yaml"
NEWSDESK = Path(sys.executable).parent / "newsdesk"
RESULT = "lambda-result "
STARTUP_SECONDS = 120  # the stack's first start initialises a database

# The Lambda runtime's bootstrap, reduced: import the handler's module (a fresh process, as a
# cold container), call it once with the event on stdin, print the result on one line.
RUNTIME = f"""
import importlib, json, os, sys, time, uuid
module_name, function = os.environ["_HANDLER"].rsplit(".", 1)
started = time.monotonic()
class Context:
    function_name = os.environ["AWS_LAMBDA_FUNCTION_NAME"]
    memory_limit_in_mb = int(os.environ["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"])
    aws_request_id = str(uuid.uuid4())
    invoked_function_arn = (
        f"arn:aws:lambda:{{os.environ['AWS_REGION']}}:123456789012:function:{{function_name}}"
    )
    def get_remaining_time_in_millis(self):
        timeout = int(os.environ["AWS_LAMBDA_FUNCTION_TIMEOUT"])
        return max(0, int((timeout - (time.monotonic() - started)) * 1000))
handler = getattr(importlib.import_module(module_name), function)
import newsdesk
print("newsdesk from", newsdesk.__file__, file=sys.stderr)
result = handler(json.loads(sys.stdin.read()), Context())
print({RESULT!r} + json.dumps(result, ensure_ascii=False), flush=True)
"""


def resolved() -> dict[str, Any]:
    """build/sam-env.json, current with its inputs; skipped if absent, but not in CI."""
    if not RESOLVED.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{RESOLVED} is missing: run `make sam-env` (sam build, then SAM's env)")
        pytest.skip(f"{RESOLVED} is not there: run `make sam-env`")
    document: dict[str, Any] = json.loads(RESOLVED.read_text(encoding="utf-8"))
    for name, digest in document["inputs"].items():
        current = hashlib.sha256((ROOT / name).read_bytes()).hexdigest()
        assert current == digest, f"{RESOLVED} predates {name}: run `make sam-env`"
    return document


@dataclass
class Stack:
    process: subprocess.Popen[str]
    lines: queue.Queue[str]
    env_json: dict[str, Any]
    aws_port: int
    postgres_port: int

    @property
    def aws_url(self) -> str:
        return f"http://127.0.0.1:{self.aws_port}"

    def to_stack(self, value: str) -> str:
        """A container's address of the stack (env.example.json's) as this machine's."""
        for port, actual in ((AWS_PORT, self.aws_port), (POSTGRES_PORT, self.postgres_port)):
            value = value.replace(f"{CONTAINER_HOST}:{port}", f"127.0.0.1:{actual}")
        return value

    def line(self, pattern: str) -> str:
        """The next line of its output that matches ``pattern`` (bounded wait)."""
        while True:
            try:
                line = self.lines.get(timeout=STARTUP_SECONDS)
            except queue.Empty:
                pytest.fail(f"newsdesk stack printed no line matching {pattern!r}")
            if re.search(pattern, line):
                return line


@pytest.fixture(scope="module")
def stack(outside_tmp: Path) -> Iterator[Stack]:
    """`newsdesk stack` on 127.0.0.1 and free ports, in a process of its own."""
    data_dir = outside_tmp / "stack"
    env = {"PATH": os.environ["PATH"], "NEWSDESK_DATA_DIR": str(data_dir)}
    process = subprocess.Popen(
        [str(NEWSDESK), "stack", "--aws-port", "0", "--postgres-port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line.rstrip("\n"))

    threading.Thread(target=read, daemon=True).start()
    try:
        ready = Stack(process, lines, {}, 0, 0)
        ready.line("^Ready")
        ready.env_json = json.loads((data_dir / "env.json").read_text(encoding="utf-8"))
        parameters = ready.env_json["Parameters"]
        ready.aws_port = urlsplit(parameters["AWS_ENDPOINT_URL"]).port or 0
        ready.postgres_port = urlsplit(parameters["DATABASE_URL"]).port or 0
        yield ready
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert stderr.strip().endswith("newsdesk: interrupted")


def test_env_example_is_what_the_stack_gives_containers(stack: Stack) -> None:
    # the stack's env.json on its ports is infra/env.example.json on the default ones
    text = json.dumps(stack.env_json)
    for port, actual in ((AWS_PORT, stack.aws_port), (POSTGRES_PORT, stack.postgres_port)):
        text = text.replace(f"{CONTAINER_HOST}:{actual}", f"{CONTAINER_HOST}:{port}")
    example = json.loads((ROOT / "infra" / "env.example.json").read_text(encoding="utf-8"))
    assert json.loads(text) == example


def task_root(function: dict[str, Any], tmp_path: Path) -> tuple[Path, Path, str]:
    """(LAMBDA_TASK_ROOT, /opt/python, the handler) as the container would have them."""
    opt = tmp_path / "opt" / "python"
    opt.mkdir(parents=True)
    if function["packagetype"] == "Zip":
        layers = load(SOURCE_TEMPLATE)["Resources"]
        for layer in map(Path, function["layers"]):
            # of the built layer, the project's own (what its source folder holds); its
            # dependencies are this environment's
            source = SOURCE_TEMPLATE.parent / layers[layer.name]["Properties"]["ContentUri"]
            for entry in (layer / "python").iterdir():
                if (source.resolve() / entry.name).exists() and entry.name != "requirements.txt":
                    (opt / entry.name).symlink_to(entry)
        return Path(function["code"]), opt, function["handler"]
    # an image: what its Dockerfile copies into the task root, and its CMD
    dockerfile = (ROOT / function["metadata"]["Dockerfile"]).read_text(encoding="utf-8")
    root = tmp_path / "task"
    root.mkdir()
    for source, target in re.findall(r"^COPY (\S+) \$\{LAMBDA_TASK_ROOT\}/(\S*)", dockerfile, re.M):
        (root / (target or Path(source).name)).symlink_to(ROOT / source)
    (handler,) = re.findall(r'^CMD \["([^"]+)"\]', dockerfile, re.M)
    return root, opt, handler


def run(
    name: str, event: dict[str, Any], stack: Stack, tmp_path: Path, **settings: str
) -> dict[str, Any]:
    """``name``'s handler in a new process with SAM's environment for it (and ``settings``)."""
    function = resolved()["functions"][name]
    root, opt, handler = task_root(function, tmp_path / name)
    # SAM gives the image's handler as null (it is the image's CMD): not a variable then
    env = {k: stack.to_stack(v) for k, v in function["environment"].items() if v is not None}
    assert not [v for v in env.values() if CONTAINER_HOST in v]
    env |= settings
    env |= {"_HANDLER": handler, "LAMBDA_TASK_ROOT": str(root), "TZ": ":UTC"}
    env["PYTHONPATH"] = f"{root}{os.pathsep}{opt}"
    done = subprocess.run(
        [sys.executable, "-c", RUNTIME],
        input=json.dumps(event, ensure_ascii=False),
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=int(env["AWS_LAMBDA_FUNCTION_TIMEOUT"]),
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"newsdesk from {opt if function['packagetype'] == 'Zip' else root}" in done.stderr
    (result,) = [line for line in done.stdout.splitlines() if line.startswith(RESULT)]
    response: dict[str, Any] = json.loads(result.removeprefix(RESULT))
    return response


def test_every_function_runs_with_sams_environment_against_the_stack(
    stack: Stack, tmp_path: Path
) -> None:
    functions = resolved()["functions"]
    assert set(functions) == {
        "MigrateFunction",
        "FanOutFunction",
        "WorkerFunction",
        "ExtractorFunction",
        "ClusterFunction",
    }

    # the migrations custom resource, as a deploy runs it first: its response reaches the stack
    event = load_event("migrate")
    event["ResponseURL"] = stack.to_stack(event["ResponseURL"])
    assert run("MigrateFunction", event, stack, tmp_path)["Status"] == "SUCCESS"
    assert "SUCCESS" in stack.line("^CloudFormation response for SchemaMigrations")

    # the fan-out: one message per outlet, in the stack's queue
    sent = run("FanOutFunction", load_event("fanout"), stack, tmp_path)
    assert sent["messages_sent"] > 0
    sqs = boto3.client(
        "sqs",
        endpoint_url=stack.aws_url,
        region_name=resolved()["region"],
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    queue_url = stack.to_stack(functions["FanOutFunction"]["environment"]["OUTLET_QUEUE_URL"])
    attributes = sqs.get_queue_attributes(
        QueueUrl=queue_url, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    assert int(attributes["ApproximateNumberOfMessages"]) == sent["messages_sent"]

    # the worker: events/worker.json, its feeds served on 127.0.0.1
    with FeedServer() as server:
        event = load_event("worker")
        body = json.loads(event["Records"][0]["body"])
        files = ["good.xml", "atom.xml", "good.xml"]
        for n, (feed, file) in enumerate(zip(body["feeds"], files, strict=True)):
            feed["url"] = server.add(f"/{n}{urlsplit(feed['url']).path}", Route(served_bytes(file)))
        event["Records"][0]["body"] = json.dumps(body, ensure_ascii=False)
        collected = run(
            "WorkerFunction", event, stack, tmp_path, FETCH_ALLOW_PRIVATE_NETWORKS="true"
        )
    assert collected["batchItemFailures"] == []
    (outlet,) = collected["outlets"]
    assert (outlet["stale"], outlet["feeds_attempted"], outlet["feeds_failed"]) == (False, 3, 0)
    assert outlet["new"] + outlet["duplicate"] > 0

    # the extractor: events/extractor.json (the first article the worker stored and queued),
    # its page served on 127.0.0.1
    with FeedServer() as server:
        event = load_event("extractor")
        body = json.loads(event["Records"][0]["body"])
        page = Route(article_page("국회 예산안 통과"), content_type="text/html")
        body["url"] = server.add("/view/1", page)
        event["Records"][0]["body"] = json.dumps(body, ensure_ascii=False)
        extracted = run(
            "ExtractorFunction",
            event,
            stack,
            tmp_path,
            FETCH_ALLOW_PRIVATE_NETWORKS="true",
            EXTRACT_HOST_INTERVAL_SECONDS="0",
        )
    assert extracted["batchItemFailures"] == []
    assert [a["status"] for a in extracted["articles"]] == ["extract_ok"]

    # the cluster function (an image), over what the worker stored
    # no bus is emulated: EVENT_BUS_NAME is empty, not SAM's logical id (events stay kept)
    assert functions["ClusterFunction"]["environment"]["EVENT_BUS_NAME"] == ""
    clustered = run("ClusterFunction", load_event("cluster"), stack, tmp_path)
    assert clustered["locked_out"] is False
