"""Real parts for the tests: PostgreSQL (DATABASE_URL, or pgserver in a temporary folder), moto's
server on 127.0.0.1 for SQS and DynamoDB, and a feed server on 127.0.0.1."""

from __future__ import annotations

import importlib
import json
import os
import tempfile
import warnings
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import requests

from newsdesk.core.settings import Settings
from newsdesk.core.times import format_time
from newsdesk.storage.database import Database, database_from
from newsdesk.storage.migrate import migrate
from newsdesk_local.demo import dated_recently
from newsdesk_local.feedserver import FeedServer, Route
from newsdesk_local.infrastructure import REGION, Infrastructure
from newsdesk_local.pool import LocalContext
from newsdesk_local.services import LocalServices, moto_server

ROOT = Path(__file__).resolve().parent.parent
EVENTS = ROOT / "events"
FEEDS = Path(__file__).resolve().parent / "feeds"

# The entry points (functions/ installs as newsdesk_functions, which mypy cannot map).
fanout = importlib.import_module("newsdesk_functions.collect.fanout")
worker = importlib.import_module("newsdesk_functions.collect.worker")
migrate_app = importlib.import_module("newsdesk_functions.migrate.app")

INFRASTRUCTURE = Infrastructure.packaged()
FUNCTIONS = {
    "fanout": "FanOutFunction",
    "worker": "WorkerFunction",
    "cluster": "ClusterFunction",
    "migrate": "MigrateFunction",
}

# Every test runs with these; none of them names an address but 127.0.0.1.
BASE_ENV = {
    "AWS_DEFAULT_REGION": REGION,
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "POWERTOOLS_SERVICE_NAME": "newsdesk-test",
    "POWERTOOLS_METRICS_NAMESPACE": "newsdesk-test",
    "FETCH_ALLOW_PRIVATE_NETWORKS": "true",
    "FETCH_INTERVAL_SECONDS": "0",
    "FETCH_TIMEOUT_SECONDS": "2",
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
            for key in ("OUTLET_QUEUE_URL", "STATE_TABLE_NAME", "RAW_BUCKET"):
                value = services.function_env(function).get(key)
                if value:
                    monkeypatch.setenv(key, value)
        yield services


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


def container(
    name: str, dynamodb: Any = None, **env: str
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """One warm container of the function: its collaborators built once, as a new container
    builds them, from the test's environment plus ``env`` (and ``dynamodb``, a client of the
    test's, for the worker); each call is one invocation."""
    settings = Settings.from_env({**os.environ, **env})
    # the template's function, for the context's timeout and memory (the worker's 180 s)
    context = LocalContext.of(INFRASTRUCTURE.functions[FUNCTIONS[name]])
    if name == "fanout":
        deps: Any = fanout.FanOut.from_settings(settings)
        handle: Callable[..., dict[str, Any]] = fanout.handle
    elif name == "worker":
        deps, handle = worker.collector_from(settings, dynamodb), worker.handle
    elif name == "cluster":
        cluster_app = importlib.import_module("newsdesk_functions.cluster.app")  # scikit-learn
        deps, handle = cluster_app.Cluster.from_settings(settings), cluster_app.handle
    elif name == "migrate":
        deps, handle = (lambda: database_from(settings)), migrate_app.handle
    else:
        raise ValueError(name)
    return lambda event: handle(event, context, deps)


def invoke(name: str, event: dict[str, Any], **env: str) -> dict[str, Any]:
    """One invocation in a new container."""
    return container(name, **env)(event)
