"""Real parts for the tests: PostgreSQL (DATABASE_URL, or pgserver in a temporary folder), moto's
server on 127.0.0.1 for SQS and DynamoDB, and a feed server on 127.0.0.1."""

from __future__ import annotations

import contextlib
import http.server
import importlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import boto3
import psycopg2.extensions
import pytest
import requests

from newsdesk.aws.clients import dynamodb_client
from newsdesk.aws.dossiers import DossierBucket
from newsdesk.aws.state_table import StateTable
from newsdesk.collect.collector import CollectPolicy, OutletCollector
from newsdesk.core.messages import OutletMessage
from newsdesk.core.report import FeedReport
from newsdesk.core.settings import Settings, user_agent_for
from newsdesk.core.sources import Feed, Outlet
from newsdesk.core.times import format_time
from newsdesk.storage.articles import ArticleStore
from newsdesk.storage.database import Database, database_from
from newsdesk.storage.migrate import migrate
from newsdesk.storage.roles import CLUSTER, EXTRACTOR, READER, WORKER
from newsdesk_local.demo import dated_recently
from newsdesk_local.emulator import moto_server
from newsdesk_local.feedserver import FeedServer, Route, unreachable_port
from newsdesk_local.infrastructure import REGION, Infrastructure
from newsdesk_local.pool import context_of
from newsdesk_local.services import LocalServices

ROOT = Path(__file__).resolve().parent.parent
# A test that asks for one of these runs against real services (PostgreSQL, moto, a loopback
# server, the command line's data folder): integration. Every other test is a unit test, which
# may not connect anywhere nor start a process (a guard below refuses both); a test that starts
# its own servers says `pytestmark = pytest.mark.integration`. `make test-unit` runs the units.
INTEGRATION_FIXTURES = frozenset(
    {
        "postgres_url",
        "database",
        "moto_endpoint",
        "aws_env",
        "feed_server",
        "serve",
        "data_dir",
        "outside_tmp",
        "stack",
    }
)
EVENTS = ROOT / "events"
FEEDS = Path(__file__).resolve().parent / "feeds"

# The entry points (functions/ installs as newsdesk_functions, which mypy cannot map).
fanout = importlib.import_module("newsdesk_functions.collect.fanout")
worker = importlib.import_module("newsdesk_functions.collect.worker")
migrate_app = importlib.import_module("newsdesk_functions.migrate.app")
extract_app = importlib.import_module("newsdesk_functions.extract.app")

INFRASTRUCTURE = Infrastructure.packaged()
FUNCTIONS = {
    "fanout": "FanOutFunction",
    "worker": "WorkerFunction",
    "extract": "ExtractorFunction",
    "cluster": "ClusterFunction",
    "migrate": "MigrateFunction",
    "read": "ReadFunction",
}

# Whom the tests' requests name (OPERATOR_CONTACT): an address at a domain reserved for
# documentation, never written to.
CONTACT = "newsdesk-tests@example.org"
USER_AGENT = user_agent_for(CONTACT)

# Every test runs with these; none of them names an address but 127.0.0.1.
BASE_ENV = {
    "OPERATOR_CONTACT": CONTACT,
    "AWS_DEFAULT_REGION": REGION,
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "POWERTOOLS_SERVICE_NAME": "newsdesk-test",
    "POWERTOOLS_METRICS_NAMESPACE": "newsdesk-test",
    "FETCH_ALLOW_PRIVATE_NETWORKS": "true",
    "FETCH_INTERVAL_SECONDS": "0",
    "FETCH_TIMEOUT_SECONDS": "2",
    # Most tests' feeds link to pages nowhere (example.test): the article pages are fetched
    # only where a test serves them and switches extraction on (tests/test_extraction.py).
    "EXTRACT_ENABLED": "false",
}


def load_event(name: str) -> dict[str, Any]:
    """The same files `sam local invoke -e events/NAME.json` uses."""
    event: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text(encoding="utf-8"))
    return event


def worker_event(
    feeds: list[tuple[str, str]], source: str = "연합뉴스", ignore_schedule: bool = False
) -> dict[str, Any]:
    """events/worker.json with its outlet's feeds replaced by ``(url, category)`` pairs on the
    loopback server (the file's own feeds are real outlets' and are never fetched here), and
    scheduled now, so that the message is not stale. ``ignore_schedule``: a round on demand,
    in which a redelivery fetches again rather than finding its feeds not due."""
    event = load_event("worker")
    body = json.loads(event["Records"][0]["body"])
    assert body["source"] == source
    body["feeds"] = [{"url": url, "category": category} for url, category in feeds]
    body["scheduled_at"] = format_time(datetime.now(UTC))
    body["ignore_schedule"] = ignore_schedule
    event["Records"][0]["body"] = json.dumps(body, ensure_ascii=False)
    return event


def feed_bytes(name: str) -> bytes:
    return (FEEDS / name).read_bytes()


def served_bytes(name: str) -> bytes:
    """A test feed as the feed server gives it: dated as recently as a live feed."""
    return dated_recently(feed_bytes(name))


def rows(database: Database) -> list[tuple[Any, ...]]:
    """Every stored article and issue, to compare before and after a redelivery."""
    with database.transaction() as cursor:
        cursor.execute(
            "SELECT id, origin_url, canonical_url, source, title, guid, issue_id"
            " FROM raw_article ORDER BY id"
        )
        articles = cursor.fetchall()
        cursor.execute("SELECT id, title, size FROM issue ORDER BY id")
        return [*articles, *cursor.fetchall()]


@pytest.fixture(scope="session")
def outside_tmp() -> Path:
    """Folders for pgserver. Run as root, pgserver runs PostgreSQL as its own user, which
    cannot enter pytest's basetemp once another pytest session has made it private again."""
    return Path(tempfile.mkdtemp(prefix="newsdesk-tests-"))


@pytest.fixture
def data_dir(outside_tmp: Path, request: pytest.FixtureRequest) -> Path:
    """NEWSDESK_DATA_DIR for one test."""
    name: str = request.node.name
    return outside_tmp / name


@pytest.fixture(scope="session")
def postgres_url(outside_tmp: Path) -> Iterator[str]:
    if os.environ.get("DATABASE_URL"):
        yield os.environ["DATABASE_URL"]
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
        import pgserver

        server = pgserver.get_server(outside_tmp / "pg", cleanup_mode="stop")
    database = Database(lambda: str(server.get_uri()))
    migrate(database)
    database.close()
    yield str(server.get_uri())


@pytest.fixture
def database(postgres_url: str) -> Iterator[Database]:
    database = Database(lambda: postgres_url)
    migrate(database)
    with database.transaction() as cursor:
        cursor.execute("TRUNCATE raw_article, issue, category RESTART IDENTITY CASCADE")
    yield database
    database.close()


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """moto's server as the local runtime runs it, in a process of its own."""
    with moto_server() as moto:
        moto.wait_ready()
        yield moto.url


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("DATABASE_URL", "AWS_ENDPOINT_URL", "AWS_PROFILE", "SOURCES_PATH"):
        monkeypatch.delenv(key, raising=False)
    for key, value in BASE_ENV.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def aws_env(
    moto_endpoint: str, postgres_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[LocalServices]:
    """A clean moto with every queue, table and bucket of the template, as the local runtime
    creates them; the services' ``client`` and ``function_env`` are the tests' handles. The
    worker's variables (OUTLET_QUEUE_URL, STATE_TABLE_NAME, RAW_BUCKET) are set for the test."""
    requests.post(f"{moto_endpoint}/moto-api/reset", timeout=10).raise_for_status()
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    settings = Settings(data_dir=tmp_path / "data", database_url=postgres_url)
    monkeypatch.setenv("DATABASE_URL", postgres_url)
    with LocalServices(settings, dict(os.environ)) as services:
        for function in ("FanOutFunction", "WorkerFunction"):
            for key in ("OUTLET_QUEUE_URL", "ARTICLE_QUEUE_URL", "STATE_TABLE_NAME", "RAW_BUCKET"):
                value = services.function_env(function).get(key)
                if value:
                    monkeypatch.setenv(key, value)
        yield services


@pytest.fixture
def dossier_bucket(aws_env: LocalServices) -> DossierBucket:
    """The template's dossier bucket, as the local runtime creates it (issue 40)."""
    name = aws_env.function_env("ClusterFunction")["DOSSIER_BUCKET"]
    return DossierBucket(aws_env.client("s3"), name)


@pytest.fixture
def issue_consumer(aws_env: LocalServices) -> tuple[str, Callable[[], list[Any]]]:
    """The template's issue bus with a rule sending every newsdesk.issue event to a queue, as
    a consumer would have; (the bus's name, receive: the events the queue got since)."""
    events_client = boto3.client("events")
    sqs = boto3.client("sqs")
    # the local runtime creates the template's bus, as it creates its queues (issue 40)
    queue = sqs.create_queue(QueueName="issue-consumer")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    events_client.put_rule(
        Name="to-consumer",
        EventBusName="newsdesk-issues",
        EventPattern=json.dumps({"source": ["newsdesk.issue"]}),
    )
    events_client.put_targets(
        Rule="to-consumer", EventBusName="newsdesk-issues", Targets=[{"Id": "q", "Arn": arn}]
    )

    def receive() -> list[Any]:
        got: list[Any] = []
        while batch := sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get(
            "Messages", []
        ):
            got += [json.loads(m["Body"]) for m in batch]
            sqs.delete_message_batch(
                QueueUrl=queue,
                Entries=[
                    {"Id": m["MessageId"], "ReceiptHandle": m["ReceiptHandle"]} for m in batch
                ],
            )
        return got

    return "newsdesk-issues", receive


@pytest.fixture
def feed_server() -> Iterator[FeedServer]:
    with FeedServer() as server:
        yield server


@pytest.fixture
def serve(feed_server: FeedServer) -> Callable[..., str]:
    """serve(path, file=None, **route) -> URL on the loopback feed server."""

    def add(path: str, file: str | None = None, **route: Any) -> str:
        if file is not None:
            route.setdefault("body", served_bytes(file))
        return feed_server.add(path, Route(**route))

    return add


# The database role each function connects as in AWS (migration 0007): the tests' functions
# connect as theirs too, so that a right a function's code needs and its role lacks fails here.
DATABASE_ROLES = {"worker": WORKER, "extract": EXTRACTOR, "cluster": CLUSTER, "read": READER}


def as_role(url: str, role: str) -> str:
    """``url`` with ``role`` as its user (the embedded PostgreSQL trusts its local logins)."""
    return str(psycopg2.extensions.make_dsn(url, user=role))


def container(
    name: str, dynamodb: Any = None, **env: str
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """One warm container of the function: its collaborators built once, as a new container
    builds them, from the test's environment plus ``env`` (and ``dynamodb``, a client of the
    test's, for the worker); each call is one invocation. A function that uses the database
    connects as its own role."""
    settings = Settings.from_env({**os.environ, **env})
    if name in DATABASE_ROLES and settings.database_url:
        settings = replace(
            settings, database_url=as_role(settings.database_url, DATABASE_ROLES[name])
        )
    # the template's function, for the context's timeout and memory (the worker's 180 s)
    context = context_of(INFRASTRUCTURE.functions[FUNCTIONS[name]])
    if name == "fanout":
        deps: Any = fanout.FanOut.from_settings(settings)
        handle: Callable[..., dict[str, Any]] = fanout.handle
    elif name == "worker":
        deps, handle = worker.worker_from(settings, dynamodb), worker.handle
    elif name == "extract":
        deps, handle = extract_app.extractor_from(settings, dynamodb), extract_app.handle
    elif name == "cluster":
        cluster_app = importlib.import_module("newsdesk_functions.cluster.app")  # scikit-learn
        deps, handle = cluster_app.Cluster.from_settings(settings), cluster_app.handle
    elif name == "read":
        read_app = importlib.import_module("newsdesk_functions.read.app")
        deps, handle = database_from(settings), read_app.handle
    elif name == "migrate":
        deps, handle = (lambda: database_from(settings)), migrate_app.handle
    else:
        raise ValueError(name)
    return lambda event: handle(event, context, deps)


def invoke(name: str, event: dict[str, Any], **env: str) -> dict[str, Any]:
    """One invocation in a new container."""
    return container(name, **env)(event)


# --- article pages and the extractor (issue 14) ----------------------------------------------

BODY = (
    "국회는 1일 본회의를 열어 내년도 예산안을 재석 의원 과반의 찬성으로 통과시켰다. "
    "법정 처리 시한을 하루 넘긴 것으로, 여야는 막판까지 감액 규모를 두고 협상을 이어갔다. ",
    "예산안은 정부가 제출한 원안보다 4조1천억원 줄어든 규모로 확정됐다. 여당은 민생 예산을 "
    "지켰다고 평가했고, 야당은 불필요한 예산을 덜어냈다고 밝혔다. ",
    "국회의장은 표결 직후 기자들과 만나 국민께 송구하다며 내년에는 법정 시한을 지키겠다고 "
    "말했다. 정부는 이번 주 안에 국무회의를 열어 배정 계획을 의결할 예정이다. ",
)


# Two more outlets' own reports of the same event (one story, three texts: no copies).
OTHER_BODIES = (
    (
        "여야가 1일 밤늦게 내년도 나라 살림 규모에 합의하면서 예산안이 국회 문턱을 넘었다. "
        "표결에는 여야 의원 280여 명이 참여했다. ",
        "합의안에는 지역화폐 발행 지원과 반도체 연구개발 투자 확대가 담겼다. 반면 특수활동비는 "
        "상당 부분 깎였다. 기획재정부는 집행 준비에 곧바로 착수하겠다고 밝혔다. ",
        "정치권 안팎에서는 올해도 법정 기한을 넘긴 데 대한 비판이 나왔다. 시민단체들은 심사 "
        "과정이 밀실에서 이뤄졌다며 제도 개선을 요구했다. ",
        "예산결산특별위원장은 심사 기간이 짧아 충분한 검토가 어려웠다며 상시 심사 체계를 "
        "도입해야 한다는 의견을 내놓았다. ",
    ),
    (
        "이번 예산 처리 과정에서 가장 큰 쟁점은 청년 일자리 사업과 노인 기초연금 증액 문제였다. "
        "양측은 소위원회에서 열흘 넘게 줄다리기를 벌였다. ",
        "결국 청년 일자리 사업 예산은 일부 삭감되고, 기초연금 관련 예산은 정부안대로 유지됐다. "
        "지방자치단체 교부금도 소폭 늘었다. ",
        "경제 전문가들은 세수 결손이 이어지는 상황에서 재정 지출 구조조정이 불가피하다고 "
        "지적했다. 내년 국가채무 비율은 50%를 넘어설 전망이다. ",
        "한편 국회는 다음 주 본회의를 다시 열어 세법 개정안과 예산 부수 법안을 처리할 계획이다. "
        "여야 원내대표는 이번 주말 추가 회동을 갖기로 했다. ",
    ),
)


def article_page(
    title: str, paragraphs: tuple[str, ...] = BODY, canonical: str | None = None
) -> bytes:
    """An article page as Korean outlets build them: navigation, the text, related links,
    comments and a footer."""
    link = f'<link rel="canonical" href="{canonical}">' if canonical else ""
    body = "".join(f"<p>{escape(p)}</p>" for p in paragraphs)
    return f"""<!DOCTYPE html><html lang="ko"><head><meta charset="utf-8">
<title>{escape(title)} | 연합뉴스</title>{link}
<meta property="og:title" content="{escape(title)}"><meta property="og:type" content="article">
</head><body>
<header><a href="/">연합뉴스</a><nav><ul><li><a href="/politics">정치</a></li>
<li><a href="/economy">경제</a></li><li><a href="/society">사회</a></li></ul></nav></header>
<main><article><h1>{escape(title)}</h1><div id="articleBody">{body}
<p>홍길동 기자 hong@example.kr</p></div></article>
<aside><h2>관련 기사</h2><ul><li><a href="/view/9">여야, 예산 협상 결렬 위기</a></li>
<li><a href="/view/8">기재부 "재정 건전성 유지"</a></li></ul></aside>
<section class="comments"><p>댓글 2개</p></section></main>
<footer>서울특별시 종로구 율곡로 2길 25 | 무단 전재 및 재배포 금지</footer></body></html>
""".encode()


class InProcess:
    """A pool of one warm container, invoked in this process (drain's interface)."""

    concurrency = 1

    def __init__(self, handler: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        self.handler = handler

    def invoke(self, event: dict[str, Any]) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(self.handler(event))
        except Exception as e:  # an invocation that crashed, as Lambda's would
            future.set_exception(e)
        return future


EXTRACT_ON = {"EXTRACT_ENABLED": "true", "EXTRACT_HOST_INTERVAL_SECONDS": "0"}


def extract_all(services: LocalServices, **env: str) -> list[dict[str, Any]]:
    """The article queue drained through one warm extractor container (extraction on, no
    pacing unless ``env`` sets it); every article's report."""
    from newsdesk_local.invocations import drain

    handler = container("extract", **{**EXTRACT_ON, **env})
    deliveries = [
        d
        for source in INFRASTRUCTURE.functions["ExtractorFunction"].event_sources
        for d in drain(services, source, InProcess(handler))
    ]
    return [a for d in deliveries if isinstance(d.response, dict) for a in d.response["articles"]]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        uses = set(getattr(item, "fixturenames", ()))
        if item.get_closest_marker("integration") is None and not uses & INTEGRATION_FIXTURES:
            item.add_marker(pytest.mark.unit)
        elif item.get_closest_marker("integration") is None:
            item.add_marker(pytest.mark.integration)


@pytest.fixture(autouse=True)
def unit_tests_stay_in_process(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A unit test that connects or starts a process fails, naming what it did."""
    if request.node.get_closest_marker("unit") is None:
        return

    def refused(what: str) -> Callable[..., Any]:
        def refuse(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError(f"a unit test {what}: mark it pytest.mark.integration")

        return refuse

    monkeypatch.setattr(socket.socket, "connect", refused("connects"))
    monkeypatch.setattr(socket.socket, "connect_ex", refused("connects"))
    monkeypatch.setattr(subprocess.Popen, "__init__", refused("starts a process"))


AT = datetime(2026, 12, 1, tzinfo=UTC)  # the hostile-input tests' round


@pytest.fixture
def collect_feed(database: Database, aws_env: object) -> Callable[..., FeedReport]:
    """collect_feed(url, **settings) -> the feed's report, after one worker's pass over 연합뉴스
    with it as its one feed, at AT plus a minute (the hostile-input tests)."""

    def collect(url: str, **settings: Any) -> FeedReport:
        settings = {"fetch_allow_private_networks": True, **settings}
        collector = OutletCollector(
            CollectPolicy.from_settings(Settings(**settings)),
            ArticleStore(database),
            StateTable(dynamodb_client(), "newsdesk-state"),
            clock=lambda: AT + timedelta(minutes=1),
        )
        outlet = Outlet("연합뉴스", (Feed("연합뉴스", url, "정치"),))
        (report,) = collector.collect(OutletMessage(outlet, AT)).feeds
        return report

    return collect


class LogLines:
    """The JSON log lines written between ``start()`` and ``read()``: Powertools' handler
    writes to the stdout of the module's import, so it is pointed at the test's (the one
    capsys holds while the test runs), then back."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self._capsys = capsys
        self._handler = worker.logger.registered_handler
        self._original = self._handler.stream

    def start(self) -> None:
        self._handler.stream = sys.stdout
        self._capsys.readouterr()

    def read(self) -> list[dict[str, Any]]:
        out = self._capsys.readouterr().out
        return [json.loads(line) for line in out.splitlines() if line.startswith("{")]

    def stop(self) -> None:
        self._handler.stream = self._original


@pytest.fixture
def log_lines(capsys: pytest.CaptureFixture[str]) -> Iterator[LogLines]:
    lines = LogLines(capsys)
    yield lines
    lines.stop()


@pytest.fixture
def unused_port() -> Iterator[int]:
    """A port on 127.0.0.1, bound (so nobody else takes it) but not listening: refused."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    yield int(holder.getsockname()[1])
    holder.close()


class QuietHandler(http.server.BaseHTTPRequestHandler):
    """A loopback test server's request handler that logs nothing."""

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def serving(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` served on 127.0.0.1 in a thread of its own; its URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def unreachable() -> Iterator[int]:
    """A port on 127.0.0.1 that never completes a handshake: its listener's queue is full."""
    with unreachable_port() as port:
        yield port
