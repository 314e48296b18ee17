"""Each deploy unit as it ships, started as `sam local invoke` would start it, without Docker.

Every function of the template (infra/artifacts.py) runs in a new interpreter that has no
site-packages and no PYTHONPATH (`python -I -S`), whose import path is its artifact and
nothing else: its built code folder (/var/task), its built layers' own packages beside their
locks' packages (/opt/python; SAM's build holds arm64 wheels, so the same locks installed for
this machine by `make` stand in for them, `<venv>/lambda/`), the runtime's boto3
(/var/runtime), the standard library; an image's task root as its Dockerfile copies it. Its
environment is exactly what SAM CLI's code gives its container (build/sam-env.json, `make
sam-env`: the built template plus infra/env.example.json), and its event is shaped like its
events/ file, pointed at `newsdesk stack` (the embedded PostgreSQL and moto) and at loopback
servers for feeds and pages; what the event names is created first. Each test asserts what the
function did. A function added to the template is tested here, and fails until it has a
scenario; a function whose artifact lacks a module fails in one line naming both.

What stands in for Docker: host.docker.internal (and the stack's default ports, which
env.example.json names) is mapped to the stack's address on 127.0.0.1; the Lambda runtime's
own variables (_HANDLER, LAMBDA_TASK_ROOT, TZ) are added. The feeds and pages the events name
are replaced by the loopback server's, which FETCH_ALLOW_PRIVATE_NETWORKS=true (a variable the
template declares, so an env.json could set it) lets the functions fetch. Nothing but
127.0.0.1 is reached.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3
import pytest

from infra.artifacts import Unit, pins, units
from infra.sam_env import digests
from newsdesk.collect.urls import canonical_url
from newsdesk.core.entry import Entry
from newsdesk.core.sources import load_sources
from newsdesk.storage.articles import Article, ArticleStore, Outbox
from newsdesk.storage.database import Database
from newsdesk.storage.migrate import available
from newsdesk_local.feedserver import FeedServer, Route
from newsdesk_local.infrastructure import LAMBDA_ROOT
from newsdesk_local.stack import AWS_PORT, CONTAINER_HOST, POSTGRES_PORT
from tests.conftest import ROOT, article_page, load_event, served_bytes
from tests.test_meaning import SUMMIT

# its tests start servers or processes of their own (tests/conftest.py)
pytestmark = pytest.mark.integration

RESOLVED = ROOT / "build" / "sam-env.json"
BUILT = ROOT / "infra" / ".aws-sam" / "build"
NEWSDESK = Path(sys.executable).parent / "newsdesk"
RESULT = "lambda-result "
IMPORT_FAILED = 3  # the runtime's exit status when the handler's module does not import
STARTUP_SECONDS = 120  # the stack's first start initialises a database
UNITS = {unit.name: unit for unit in units()}

# The Lambda runtime's bootstrap, reduced: the artifact's folders on the path (argv[1]), the
# handler's module imported (a fresh process, as a cold container), called once with the
# event on stdin, the result printed on one line.
RUNTIME = f"""
import sys
sys.path[:0] = sys.argv[1].split(":")
import importlib, json, os, time, uuid
module_name, function = os.environ["_HANDLER"].rsplit(".", 1)
started = time.monotonic()
try:
    module = importlib.import_module(module_name)
except ImportError as e:
    print(f"cannot import {{module_name}}: {{e}}", file=sys.stderr)
    sys.exit({IMPORT_FAILED})
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
result = getattr(module, function)(json.loads(sys.stdin.read()), Context())
origins = {{k: sys.modules[k].__file__ for k in ("boto3", "newsdesk")}}
print(origins, file=sys.stderr)
print({RESULT!r} + json.dumps(result, ensure_ascii=False), flush=True)
"""


def resolved() -> dict[str, Any]:
    """build/sam-env.json, current with its inputs (the template, env.json, the functions' and
    layers' folders, so SAM's build too); skipped if absent, but not in CI."""
    if not RESOLVED.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{RESOLVED} is missing: run `make sam-env` (sam build, then SAM's env)")
        pytest.skip(f"{RESOLVED} is not there: run `make sam-env`")
    document: dict[str, Any] = json.loads(RESOLVED.read_text(encoding="utf-8"))
    current = digests(ROOT)
    for name in sorted(current.keys() ^ document["inputs"].keys()):
        pytest.fail(f"{RESOLVED} predates {name} (added or removed): run `make sam-env`")
    for name, digest in document["inputs"].items():
        assert current[name] == digest, f"{RESOLVED} predates {name}: run `make sam-env`"
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
        # SIGTERM, as a service manager stops it (SIGINT is ignored by a process a
        # non-interactive shell started in the background, as CI may start this suite)
        process.send_signal(signal.SIGTERM)
        try:
            _, stderr = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 143, stderr
    assert stderr.strip().endswith("newsdesk: stopped by SIGTERM")


def test_env_example_is_what_the_stack_gives_containers(stack: Stack) -> None:
    # the stack's env.json on its ports is infra/env.example.json on the default ones
    text = json.dumps(stack.env_json)
    for port, actual in ((AWS_PORT, stack.aws_port), (POSTGRES_PORT, stack.postgres_port)):
        text = text.replace(f"{CONTAINER_HOST}:{actual}", f"{CONTAINER_HOST}:{port}")
    example = json.loads((ROOT / "infra" / "env.example.json").read_text(encoding="utf-8"))
    assert json.loads(text) == example


def artifact_path(unit: Unit, function: dict[str, Any], scratch: Path) -> tuple[Path, list[Path]]:
    """(LAMBDA_TASK_ROOT, the import path) as the unit's container has them."""
    installed = [LAMBDA_ROOT / folder for folder in unit.installed()]
    if not unit.image:
        opt = scratch / "opt" / "python"  # the built layers' own packages, as /opt/python
        opt.mkdir(parents=True)
        for layer in unit.layers:
            for package in layer.packages:
                (opt / package).symlink_to(BUILT / layer.name / "python" / package)
        task = Path(function["code"])
        return task, [task, opt, *installed]
    task = scratch / "task"  # what the Dockerfile copies into the task root
    task.mkdir(parents=True)
    dockerfile = (ROOT / function["metadata"]["Dockerfile"]).read_text(encoding="utf-8")
    for source, target in re.findall(r"^COPY (\S+) \$\{LAMBDA_TASK_ROOT\}/(\S*)", dockerfile, re.M):
        (task / (target or Path(source).name)).symlink_to(ROOT / source)
    return task, [task, *installed]


def run(
    name: str, event: dict[str, Any], stack: Stack, scratch: Path, **settings: str
) -> dict[str, Any]:
    """``name``'s handler in a new process: its artifact, SAM's environment for it (and
    ``settings``), the event on stdin."""
    unit, function = UNITS[name], resolved()["functions"][name]
    task, path = artifact_path(unit, function, scratch / name)
    missing = [p for p in path if not p.exists()]
    assert not missing, f"{name}: {missing[0]} is missing: run make, then make sam-env"
    # SAM gives the image's handler as null (it is the image's CMD): not a variable then
    env = {k: stack.to_stack(v) for k, v in function["environment"].items() if v is not None}
    assert not [v for v in env.values() if CONTAINER_HOST in v]
    env |= settings
    env |= {"_HANDLER": unit.handler, "LAMBDA_TASK_ROOT": str(task), "TZ": ":UTC"}
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", RUNTIME, ":".join(map(str, path))],
        input=json.dumps(event, ensure_ascii=False),
        cwd=task,
        env=env,
        capture_output=True,
        text=True,
        timeout=int(env["AWS_LAMBDA_FUNCTION_TIMEOUT"]),
        check=False,
    )
    if done.returncode == IMPORT_FAILED:
        pytest.fail(f"{name}: {done.stderr.strip().splitlines()[-1]}", pytrace=False)
    assert done.returncode == 0, done.stderr[-3000:]
    # boto3 is the runtime's, newsdesk the artifact's (the layer's or the image's)
    assert f"'boto3': '{LAMBDA_ROOT / 'runtime'}" in done.stderr
    assert f"'newsdesk': '{task if unit.image else path[1]}" in done.stderr
    (result,) = [line for line in done.stdout.splitlines() if line.startswith(RESULT)]
    response: dict[str, Any] = json.loads(result.removeprefix(RESULT))
    return response


def database(stack: Stack) -> Database:
    # the stack's env.json names its actual ports, at the container's name for this machine
    url = stack.env_json["Parameters"]["DATABASE_URL"].replace(CONTAINER_HOST, "127.0.0.1")
    return Database(lambda: url)


def store(
    stack: Stack, category: str, titles: list[str], outbox: Outbox | None, links: Sequence[str] = ()
) -> list[int]:
    """Articles stored as a worker stores them (at ``links``, or at made-up addresses); their
    ids."""
    now = datetime.now(UTC)
    links = list(links) or [f"https://news.example/{category}/{n}" for n in range(len(titles))]
    entries = [Entry(t, link, "", None, now) for t, link in zip(titles, links, strict=True)]
    db = database(stack)
    ArticleStore(db).insert_articles(
        "연합뉴스", category, [Article(e, canonical_url(e.link)) for e in entries], now, outbox
    )
    with db.transaction() as cursor:
        cursor.execute(
            "SELECT id FROM raw_article WHERE canonical_url = ANY(%s) ORDER BY id",
            ([canonical_url(link) for link in links],),
        )
        ids = [row[0] for row in cursor.fetchall()]
    db.close()
    return ids


def query(stack: Stack, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    db = database(stack)
    with db.transaction() as cursor:
        cursor.execute(sql, args)
        found = cursor.fetchall() if cursor.description else []
    db.close()
    return found


def sqs(stack: Stack) -> Any:
    return boto3.client(
        "sqs",
        endpoint_url=stack.aws_url,
        region_name=resolved()["region"],
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def queued(stack: Stack, function: str, variable: str) -> int:
    url = stack.to_stack(resolved()["functions"][function]["environment"][variable])
    attributes = sqs(stack).get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"])


def migrations(stack: Stack, scratch: Path) -> None:
    # the custom resource, as a deploy runs it: its response reaches the stack, and every
    # migration is recorded
    event = load_event("migrate")
    event["ResponseURL"] = stack.to_stack(event["ResponseURL"])
    assert run("MigrateFunction", event, stack, scratch)["Status"] == "SUCCESS"
    assert "SUCCESS" in stack.line("^CloudFormation response for SchemaMigrations")
    applied = {row[0] for row in query(stack, "SELECT version FROM schema_migration")}
    assert applied == {version for version, _ in available()}


def fan_out(stack: Stack, scratch: Path) -> None:
    # one message per outlet of the bundled sources.yaml, in the stack's queue
    before = queued(stack, "FanOutFunction", "OUTLET_QUEUE_URL")
    sent = run("FanOutFunction", load_event("fanout"), stack, scratch)
    outlets = {feed.source for feed in load_sources()}
    assert sent["messages_sent"] == len(outlets) > 0
    assert queued(stack, "FanOutFunction", "OUTLET_QUEUE_URL") == before + len(outlets)


def worker(stack: Stack, scratch: Path) -> None:
    # events/worker.json, its feeds served on 127.0.0.1: the articles stored, and queued for
    # their pages through the outbox
    before = queued(stack, "WorkerFunction", "ARTICLE_QUEUE_URL")
    with FeedServer() as server:
        event = load_event("worker")
        body = json.loads(event["Records"][0]["body"])
        files = ["good.xml", "atom.xml", "good.xml"]
        for n, (feed, file) in enumerate(zip(body["feeds"], files, strict=True)):
            feed["url"] = server.add(f"/{n}{urlsplit(feed['url']).path}", Route(served_bytes(file)))
        event["Records"][0]["body"] = json.dumps(body, ensure_ascii=False)
        collected = run(
            "WorkerFunction", event, stack, scratch, FETCH_ALLOW_PRIVATE_NETWORKS="true"
        )
    assert collected["batchItemFailures"] == []
    (outlet,) = collected["outlets"]
    assert (outlet["stale"], outlet["feeds_attempted"], outlet["feeds_failed"]) == (False, 3, 0)
    assert outlet["new"] > 0
    stored = query(stack, "SELECT count(*) FROM raw_article WHERE source = %s", body["source"])
    assert stored == [(outlet["new"],)]
    assert collected["relayed"] == outlet["new"]
    assert queued(stack, "WorkerFunction", "ARTICLE_QUEUE_URL") == before + outlet["new"]


def extractor(stack: Stack, scratch: Path) -> None:
    # events/extractor.json for an article stored first (and its outbox row), its page served
    # on 127.0.0.1: the text extracted and recorded, the outbox row closed
    with FeedServer() as server:
        page = Route(article_page("국회 예산안 통과"), content_type="text/html")
        url = server.add("/view/1", page)
        (article,) = store(stack, "사회", ["국회 예산안 통과"], Outbox(), [url])
        event = load_event("extractor")
        body = json.loads(event["Records"][0]["body"])
        body |= {"article_id": article, "url": url}
        event["Records"][0]["body"] = json.dumps(body, ensure_ascii=False)
        extracted = run(
            "ExtractorFunction",
            event,
            stack,
            scratch,
            FETCH_ALLOW_PRIVATE_NETWORKS="true",
            EXTRACT_HOST_INTERVAL_SECONDS="0",
        )
    assert extracted["batchItemFailures"] == []
    assert [a["status"] for a in extracted["articles"]] == ["extract_ok"]
    recorded = "SELECT status, chars > 0 FROM article_extraction WHERE article_id = %s"
    assert query(stack, recorded, article) == [("extract_ok", True)]
    assert query(stack, "SELECT 1 FROM extraction_outbox WHERE article_id = %s", article) == []


def cluster(stack: Stack, scratch: Path) -> None:
    # the image, over three articles of one event stored first: its schedule's event sends one
    # message per category to its queue, and the invocation its queue's message makes
    # clusters that category into one issue that holds them, by the meaning method: the
    # titles, told three ways, are embedded by the model the image carries (issue 38)
    titles = SUMMIT
    articles = store(stack, "경제", titles, None)
    fanned = run("ClusterFunction", load_event("cluster"), stack, scratch)
    assert "경제" in fanned["categories_sent"]
    url = stack.to_stack(
        resolved()["functions"]["ClusterFunction"]["environment"]["CLUSTER_QUEUE_URL"]
    )
    messages = sqs(stack).receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert len(messages) == len(fanned["categories_sent"])
    (mine,) = [m for m in messages if json.loads(m["Body"])["category"] == "경제"]
    record = {
        "messageId": mine["MessageId"],
        "receiptHandle": mine["ReceiptHandle"],
        "body": mine["Body"],
    }
    record |= {"attributes": {}, "messageAttributes": {}, "eventSource": "aws:sqs"}
    clustered = run(
        "ClusterFunction",
        {"Records": [record]},
        stack,
        scratch / "queued",
        CLUSTER_METHOD="meaning",
    )
    assert clustered["batchItemFailures"] == []
    ((run_,),) = [clustered["runs"]]
    assert run_["issues_created"] >= 1
    issues = query(stack, "SELECT DISTINCT issue_id FROM raw_article WHERE id = ANY(%s)", articles)
    ((issue,),) = issues  # one issue, and not none
    assert issue is not None


def reader(stack: Stack, scratch: Path) -> None:
    # events/read.json, and a page of articles: what `newsdesk … --stack` reads (issue 40)
    (article,) = store(stack, "사회", ["국회 예산안 통과 뒤 여야 공방"], None)
    answered = run("ReadFunction", load_event("read"), stack, scratch)
    assert set(answered) == {"issues", "next"}
    event = {"command": "articles", "since": "1970-01-01T00:00:00Z", "limit": 1000}
    listed = run("ReadFunction", event, stack, scratch / "articles")
    assert article in [a["id"] for a in listed["articles"]]


SCENARIOS: dict[str, Callable[[Stack, Path], None]] = {
    "MigrateFunction": migrations,
    "FanOutFunction": fan_out,
    "WorkerFunction": worker,
    "ExtractorFunction": extractor,
    "ClusterFunction": cluster,
    "ReadFunction": reader,
}


def test_the_template_and_sam_name_the_same_functions():
    assert set(resolved()["functions"]) == set(UNITS)


@pytest.mark.parametrize("name", list(UNITS))
def test_each_deploy_unit_does_its_work_with_its_artifact_alone(
    name: str, stack: Stack, tmp_path: Path
) -> None:
    if name not in SCENARIOS:
        pytest.fail(f"{name}: no scenario in tests/test_deploy_units.py (SCENARIOS)")
    SCENARIOS[name](stack, tmp_path)


def test_a_function_without_its_layer_fails_in_one_line_naming_the_module(
    stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the extractor's artifact without its extract layer (this environment has it all)
    extractor = UNITS["ExtractorFunction"]
    monkeypatch.setitem(UNITS, "ExtractorFunction", replace(extractor, layers=extractor.layers[:1]))
    # WHEN it is started THEN it fails at its import, naming the function and the module
    with pytest.raises(pytest.fail.Exception) as failed:
        run("ExtractorFunction", load_event("extractor"), stack, tmp_path)
    assert str(failed.value) == "ExtractorFunction: cannot import app: No module named 'protego'"


def layers() -> list[Any]:
    found = {layer.name: layer for unit in UNITS.values() for layer in unit.layers if layer.lock}
    return sorted(found.values(), key=lambda layer: layer.name)


@pytest.mark.parametrize("layer", layers(), ids=lambda layer: layer.name)
def test_sams_built_layer_holds_its_lock_and_nothing_else(layer: Any) -> None:
    resolved()  # the build is current with the template
    built = BUILT / layer.name / "python"
    found = {
        re.sub(r"[-_.]+", "-", m.group(1)).lower(): m.group(2)
        for m in (re.match(r"(.+)-([^-]+)\.dist-info$", p.name) for p in built.iterdir())
        if m
    }
    assert found == pins(layer.lock)
