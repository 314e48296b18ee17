"""Faults injected into the worker while it works: PostgreSQL stopped, or its connection cut, in
the middle of a batch; DynamoDB throttling and errors; the same batch delivered twice; two
workers on one outlet at once. Each fault happens at a chosen point of the round (a feed
server hook, a trigger, a botocore hook), never after a wait."""

from __future__ import annotations

import json
import threading
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import botocore.retries.standard
import pytest
from botocore.awsrequest import AWSResponse
from botocore.compat import HTTPHeaders

from newsdesk.aws.clients import dynamodb_client
from newsdesk.aws.state_table import StateTable
from newsdesk.collect.collector import CollectPolicy, OutletCollector
from newsdesk.core.messages import OutletMessage
from newsdesk.core.schedule import STATUS_OK
from newsdesk.core.settings import Settings
from newsdesk.storage.articles import ArticleStore
from newsdesk.storage.database import Database
from newsdesk.storage.migrate import migrate
from newsdesk_local.feedserver import FeedServer, Route
from tests.conftest import container, served_bytes, worker_event

# ---------------------------------------------------------------------------------------------
# helpers


def once(action: Callable[[], None]) -> Callable[[], None]:
    """``action`` the first time only: a redelivery finds the fault gone."""
    done = threading.Event()

    def run() -> None:
        if not done.is_set():
            done.set()
            action()

    return run


def rows(database: Database) -> list[tuple[str, str, str]]:
    with database.transaction() as cursor:
        cursor.execute(
            """
            SELECT c.name, a.canonical_url, a.title FROM raw_article a
            JOIN category c ON c.id = a.category_id ORDER BY a.canonical_url
            """
        )
        return cursor.fetchall()


def categories(database: Database) -> Counter[str]:
    return Counter(category for category, _, _ in rows(database))


def failed_ids(response: dict[str, Any]) -> list[str]:
    return [failure["itemIdentifier"] for failure in response["batchItemFailures"]]


def feed_states(source: str = "연합뉴스") -> dict[str, Any]:
    return StateTable(dynamodb_client(), "newsdesk-state").outlet(source)[1]


def outlet_feeds(
    feed_server: FeedServer, before_second: Callable[[], None] | None = None
) -> list[tuple[str, str]]:
    """Three feeds of one outlet; ``before_second`` runs as the second one is requested."""
    feeds = [
        feed_server.add("/one.xml", Route(body=served_bytes("good.xml"))),
        feed_server.add(
            "/two.xml",
            Route(
                body=served_bytes("atom.xml"),
                content_type="application/atom+xml",
                before=before_second,
            ),
        ),
        feed_server.add(
            "/three.xml",
            Route(
                body=served_bytes("cp949-labelled-euc-kr.xml"),
                content_type="application/rss+xml; charset=euc-kr",
            ),
        ),
    ]
    return list(zip(feeds, ("정치", "경제", "사회"), strict=True))


# ---------------------------------------------------------------------------------------------
# PostgreSQL


class StoppablePostgres:
    """A PostgreSQL of its own (the session's serves the other tests), stopped and started
    with pg_ctl as an operator or a failover would."""

    def __init__(self, folder: Path) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
            import pgserver

        self._server = pgserver.get_server(folder, cleanup_mode="stop")
        self.url = str(self._server.get_uri())
        self.stops = 0

    def stop(self) -> None:
        from pgserver._commands import pg_ctl

        pg_ctl(
            ["-w", "-m", "fast", "stop"], pgdata=self._server.pgdata, user=self._server.system_user
        )
        self.stops += 1

    def start(self) -> None:
        with self._server._lock:
            self._server.ensure_postgres_running()


@pytest.fixture(scope="module")
def stoppable_postgres(outside_tmp: Path) -> StoppablePostgres:
    return StoppablePostgres(outside_tmp / "pg-stoppable")


@pytest.fixture
def stoppable_database(stoppable_postgres: StoppablePostgres) -> Iterator[Database]:
    database = Database(lambda: stoppable_postgres.url)
    migrate(database)
    with database.transaction() as cursor:
        cursor.execute("TRUNCATE raw_article, issue, category RESTART IDENTITY CASCADE")
    yield database
    database.close()


def test_postgres_stopped_mid_batch_fails_the_record_and_the_redelivery_completes_it(
    aws_env, feed_server, stoppable_postgres, stoppable_database
):
    # GIVEN an outlet of three feeds, and PostgreSQL stopping as the second feed is requested
    pg = stoppable_postgres
    event = worker_event(outlet_feeds(feed_server, before_second=once(pg.stop)))
    handler = container("worker", DATABASE_URL=pg.url)
    # WHEN the worker processes the message
    first = handler(event)
    # THEN the record is reported failed, for SQS to deliver again
    assert pg.stops == 1
    assert failed_ids(first) == [event["Records"][0]["messageId"]]
    pg.start()
    stoppable_database.close()  # the test's own connection went down with the server
    # AND what is stored is the first feed's articles, whole, and nothing of the others
    after_fault = categories(stoppable_database)
    assert set(after_fault) == {"정치"}
    assert after_fault["정치"] > 0
    # AND only the first feed's state moved on: the others will be fetched again
    assert set(feed_states()) == {event_feed_url(event, 0)}
    # WHEN SQS delivers the message again
    second = handler(event)
    # THEN it completes the work: the first feed is not fetched again, the others are stored
    assert failed_ids(second) == []
    assert feed_server.requests == {"/one.xml": 1, "/two.xml": 2, "/three.xml": 1}
    stored = categories(stoppable_database)
    assert set(stored) == {"정치", "경제", "사회"}
    assert stored["정치"] == after_fault["정치"]
    (outlet,) = second["outlets"]
    assert outlet["new"] == stored["경제"] + stored["사회"]
    # AND no article is there twice
    urls = [url for _, url, _ in rows(stoppable_database)]
    assert len(urls) == len(set(urls))
    assert {state.last_status for state in feed_states().values()} == {STATUS_OK}


def event_feed_url(event: dict[str, Any], index: int) -> str:
    url: str = json.loads(event["Records"][0]["body"])["feeds"][index]["url"]
    return url


CUT_MARKER = "connection-cut-here"


@pytest.fixture
def cut_connection_on_marker(database: Database) -> Iterator[Callable[[], None]]:
    """A trigger that kills its own backend when a row titled with the marker is inserted: the
    connection drops in the middle of a multi-row INSERT. Yields the trigger's removal."""
    with database.transaction() as cursor:
        cursor.execute(
            f"""
            CREATE FUNCTION newsdesk_test_cut() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_terminate_backend(pg_backend_pid());
                RETURN NEW;
            END $$;
            CREATE TRIGGER newsdesk_test_cut AFTER INSERT ON raw_article FOR EACH ROW
                WHEN (NEW.title LIKE '%{CUT_MARKER}%') EXECUTE FUNCTION newsdesk_test_cut();
            """
        )

    def remove() -> None:
        with database.transaction() as cursor:
            cursor.execute("DROP TRIGGER IF EXISTS newsdesk_test_cut ON raw_article")
            cursor.execute("DROP FUNCTION IF EXISTS newsdesk_test_cut()")

    yield remove
    remove()


def rss(*titles: str, base: str = "https://news.example/a/") -> bytes:
    items = "".join(
        f"<item><title>{title}</title><link>{base}{index}</link></item>"
        for index, title in enumerate(titles)
    )
    return (
        f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>t</title>'
        f"{items}</channel></rss>"
    ).encode()


def test_a_connection_cut_inside_an_insert_leaves_none_of_the_feed(
    aws_env, serve, database, postgres_url, cut_connection_on_marker
):
    # GIVEN a feed whose third of five articles makes PostgreSQL drop the connection mid-INSERT
    titles = [f"기사 {n}" for n in range(5)]
    titles[2] = f"기사 2 {CUT_MARKER}"
    event = worker_event([(serve("/cut.xml", body=rss(*titles)), "정치")])
    handler = container("worker")
    # WHEN the worker stores it THEN the record fails and the rows before the cut are gone too
    assert len(failed_ids(handler(event))) == 1
    assert rows(database) == []
    # AND the redelivery, the fault gone, stores all five once
    cut_connection_on_marker()
    again = handler(event)
    assert failed_ids(again) == []
    assert again["outlets"][0]["new"] == 5
    assert len(rows(database)) == 5


# ---------------------------------------------------------------------------------------------
# DynamoDB


class _Body:
    def __init__(self, data: bytes) -> None:
        self._data = data

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._data


class DynamoFaults:
    """Answers chosen DynamoDB calls with an error instead of sending them to moto. Registered
    on ``before-send``, which botocore emits for every attempt, so its retries meet it too."""

    def __init__(self, code: str, status: int, operations: set[str], fail: Callable[[int], bool]):
        self.code, self.status, self.operations, self.fail = code, status, operations, fail
        self.attempts: Counter[str] = Counter()
        self.injected: Counter[str] = Counter()
        self.client: Any = None

    def __call__(self, request: Any, **_: Any) -> AWSResponse | None:
        target = request.headers.get("X-Amz-Target", b"")
        operation = (target.decode() if isinstance(target, bytes) else target).split(".")[-1]
        if operation not in self.operations:
            return None
        self.attempts[operation] += 1
        if not self.fail(self.attempts[operation]):
            return None
        self.injected[operation] += 1
        body = json.dumps(
            {"__type": f"com.amazonaws.dynamodb.v20120810#{self.code}", "message": "injected"}
        ).encode()
        headers = HTTPHeaders()
        headers["x-amzn-RequestId"] = "injected"
        return AWSResponse(request.url, self.status, headers, _Body(body))


@pytest.fixture
def dynamo_faults(
    aws_env, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., DynamoFaults]]:
    # botocore backs off for up to seconds between attempts; here the retries run at once
    monkeypatch.setattr(
        botocore.retries.standard.ExponentialBackoff, "delay_amount", lambda self, context: 0.0
    )
    client = dynamodb_client()
    registered: list[DynamoFaults] = []

    def inject(
        code: str, status: int, operations: set[str], fail: Callable[[int], bool]
    ) -> DynamoFaults:
        faults = DynamoFaults(code, status, operations, fail)
        faults.client = client  # the worker under test must use this one
        client.meta.events.register("before-send.dynamodb", cast(Any, faults))
        registered.append(faults)
        return faults

    yield inject
    for faults in registered:
        client.meta.events.unregister("before-send.dynamodb", cast(Any, faults))


STATE_CALLS = {"Query", "PutItem"}


def test_throttling_is_retried_and_the_round_completes(
    dynamo_faults, feed_server, database, postgres_url
):
    # GIVEN DynamoDB throttling three attempts out of every four
    faults = dynamo_faults(
        "ProvisionedThroughputExceededException", 400, STATE_CALLS, lambda n: n % 4 != 0
    )
    event = worker_event(outlet_feeds(feed_server))
    handler = container("worker", faults.client)
    # WHEN the worker runs THEN every call succeeds on its fourth attempt and the record too
    response = handler(event)
    assert failed_ids(response) == []
    assert faults.injected == {"Query": 3, "PutItem": 9}  # one read, three feeds' states
    assert set(categories(database)) == {"정치", "경제", "사회"}
    assert len(feed_states()) == 3


def test_state_that_cannot_be_saved_fails_the_record_and_nothing_is_stored_twice(
    dynamo_faults, feed_server, database, postgres_url
):
    # GIVEN DynamoDB refusing every write
    faults = dynamo_faults("InternalServerError", 500, {"PutItem"}, lambda n: True)
    event = worker_event(outlet_feeds(feed_server)[:1])
    handler = container("worker", faults.client)
    # WHEN the worker runs THEN the write is tried five times (max_attempts 4 counts retries)
    # and the record fails
    assert len(failed_ids(handler(event))) == 1
    assert faults.injected == {"PutItem": 5}
    stored = rows(database)
    assert stored
    assert feed_states() == {}
    # AND the redelivery, DynamoDB back, fetches the feed again and stores nothing twice
    faults.operations = set()
    again = handler(event)
    assert failed_ids(again) == []
    (outlet,) = again["outlets"]
    assert (outlet["new"], outlet["duplicate"]) == (0, len(stored))
    assert rows(database) == stored
    assert len(feed_states()) == 1


def test_state_that_cannot_be_read_fails_the_record_before_any_fetch(
    dynamo_faults, feed_server, database, postgres_url
):
    faults = dynamo_faults("InternalServerError", 500, {"Query"}, lambda n: True)
    event = worker_event(outlet_feeds(feed_server))
    handler = container("worker", faults.client)
    assert len(failed_ids(handler(event))) == 1
    assert feed_server.requests == {}
    assert rows(database) == []


# ---------------------------------------------------------------------------------------------
# the same work twice


def two_outlet_batch(feed_server: FeedServer) -> dict[str, Any]:
    """Two outlets' on-demand messages in one batch: every feed is due on each delivery."""
    event = worker_event(outlet_feeds(feed_server)[:2], ignore_schedule=True)
    other = worker_event(outlet_feeds(feed_server)[2:], ignore_schedule=True)
    body = json.loads(other["Records"][0]["body"])
    body["source"] = "뉴시스"
    record = dict(other["Records"][0], messageId="second", body=json.dumps(body))
    event["Records"].append(record)
    return event


def test_the_same_batch_delivered_twice_leaves_the_same_rows(aws_env, feed_server, database):
    # GIVEN a batch of two outlets processed once
    event = two_outlet_batch(feed_server)
    handler = container("worker")
    first = handler(event)
    stored = rows(database)
    # WHEN SQS delivers it again, every body a byte longer so that each feed is parsed and
    # stored again rather than found not modified
    for path, route in list(feed_server.routes.items()):
        feed_server.routes[path] = replace(route, body=route.body + b"\n")
    second = handler(event)
    # THEN the store met every article again and wrote none twice
    assert failed_ids(first) == failed_ids(second) == []
    assert len(stored) == sum(o["new"] for o in first["outlets"]) > 0
    assert [o["new"] for o in second["outlets"]] == [0, 0]
    assert [o["duplicate"] for o in second["outlets"]] == [o["new"] for o in first["outlets"]]
    assert rows(database) == stored
    states = [s for o in ("연합뉴스", "뉴시스") for s in feed_states(o).values()]
    assert [s.last_status for s in states] == [STATUS_OK] * 3


def test_two_workers_on_one_outlet_at_once_store_each_article_once(
    aws_env, feed_server, database, postgres_url
):
    # GIVEN a server that answers each feed only once both workers are waiting for it, so that
    # they fetch, parse and insert every feed at the same time
    both = threading.Barrier(2, timeout=30)

    def meet() -> None:
        both.wait()

    feeds = outlet_feeds(feed_server)
    for path, route in list(feed_server.routes.items()):
        feed_server.routes[path] = Route(
            body=route.body, content_type=route.content_type, before=meet
        )
    policy = CollectPolicy.from_settings(
        Settings(fetch_allow_private_networks=True, fetch_timeout_seconds=30)
    )
    msg = OutletMessage.from_json(worker_event(feeds)["Records"][0]["body"])

    def worker() -> dict[str, Any]:
        database = Database(lambda: postgres_url)  # each worker its own connection
        try:
            collector = OutletCollector(
                policy,
                ArticleStore(database),
                StateTable(dynamodb_client(), "newsdesk-state"),
                clock=lambda: msg.scheduled_at + timedelta(minutes=1),
            )
            return collector.collect(msg).as_dict()
        finally:
            database.close()

    # WHEN two workers process the same message at once
    with ThreadPoolExecutor(2) as pool:
        reports = list(pool.map(lambda _: worker(), range(2)))
    # THEN each article is stored once, counted new by one worker and duplicate by the other
    stored = rows(database)
    assert len(stored) == len({url for _, url, _ in stored}) > 0
    assert sum(r["new"] for r in reports) == len(stored)
    assert sum(r["new"] + r["duplicate"] for r in reports) == 2 * len(stored)
    assert feed_server.requests == {"/one.xml": 2, "/two.xml": 2, "/three.xml": 2}
    # AND every feed's state is one worker's whole outcome: fetched this round, succeeded
    states = feed_states()
    assert len(states) == 3
    for state in states.values():
        assert state.last_status == STATUS_OK
        assert state.next_check_at in (
            msg.scheduled_at + timedelta(minutes=30),
            msg.scheduled_at + timedelta(hours=1),
        )
