"""Issue events under hostile input (issue 22, point 3), on a real PostgreSQL and moto's
EventBridge behind a stand-in that refuses what PutEvents refuses (newsdesk_local.aws_limits:
moto takes any size): every detail is bounded under PutEvents' limits, an entry the bus
refuses is isolated (the rest of its call and the outbox behind it go on), and a replay's
time that cannot be one is refused in words."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import jsonschema
import pytest

from newsdesk.aws.issue_bus import IssueBus
from newsdesk.aws.state_table import StateTable
from newsdesk.cluster import events as events_module
from newsdesk.cluster.events import relay_events
from newsdesk.core.breaker import BREAKER_CLOSED
from newsdesk.core.errors import MessageError
from newsdesk.core.times import ahead_of_clock, format_time
from newsdesk.storage.issue_events import (
    CREATED,
    MAX_REFUSALS,
    SOURCE,
    IssueEvent,
    IssueEventStore,
    as_published,
)
from newsdesk.storage.issue_versions import write_event
from newsdesk_local.aws_limits import PUT_EVENTS_MAX_BYTES, enforce_limits, entry_size, refused
from newsdesk_local.cli import main
from tests.conftest import LogLines, container, invoke, load_event, worker_event
from tests.test_cluster_job import NOW, STORIES, store
from tests.test_hostile_store import incompressible

SCHEMA = json.loads(
    (Path(__file__).parents[1] / "schemas" / "issue-event-detail.schema.json").read_text("utf-8")
)
BUS = "newsdesk-issues"


def an_issue(database: Any, articles: int, title_chars: int, url_chars: int) -> int:
    """An issue of ``articles`` articles stored as an earlier release could store them (no
    bound on their titles and links); its id."""
    with database.transaction() as cursor:
        cursor.execute("INSERT INTO category (name) VALUES ('정치') RETURNING id")
        (category,) = cursor.fetchone()
        cursor.execute(
            "INSERT INTO issue (category_id, title, size) VALUES (%s, %s, %s) RETURNING id",
            (category, "국" * title_chars, articles),
        )
        (issue,) = cursor.fetchone()
        for n in range(articles):
            link = f"https://news.example/{n}?{incompressible(url_chars)}"
            cursor.execute(
                "INSERT INTO raw_article (origin_url, canonical_url, source, title,"
                " category_id, issue_id) VALUES (%s, %s, %s, %s, %s, %s)",
                (link, link, "연" * 300, f"{n} " + "가" * title_chars, category, issue),
            )
    return int(issue)


def written(database: Any, issue: int, added: list[int]) -> dict[str, Any]:
    with database.transaction() as cursor:
        write_event(cursor, issue, CREATED, added, NOW)
    (event,) = IssueEventStore(database).events()
    return event.detail


def detail_bytes(detail: dict[str, Any]) -> int:
    return len(json.dumps(detail, ensure_ascii=False).encode())


def test_an_event_of_long_titles_and_links_is_bounded_and_keeps_the_count(database):
    # GIVEN an issue of 300 articles, each with a 3,000-character title and a 1,900-byte link
    # (the detail used to reach megabytes: PutEvents takes 256 KB a call)
    issue = an_issue(database, 300, 3_000, 1_900)
    # WHEN its event is written
    detail = written(database, issue, list(range(1, 301)))
    # THEN it is valid, under its bound, each string cut to its maxLength, fewer articles
    # listed and the total kept
    jsonschema.validate(as_published(detail, "b"), SCHEMA)
    assert detail_bytes(detail) <= 128 * 1024
    assert 0 < len(detail["articles"]) < 200
    assert detail["article_count"] == 300
    assert len(detail["title"]) == 500
    assert {len(a["title"]) for a in detail["articles"]} == {500}
    assert {len(a["source"]) for a in detail["articles"]} == {200}


def test_an_event_that_adds_thousands_of_articles_lists_a_thousand_and_counts_all(database):
    issue = an_issue(database, 3, 10, 10)
    detail = written(database, issue, list(range(1, 5_001)))
    jsonschema.validate(as_published(detail, "b"), SCHEMA)
    assert (len(detail["added_article_ids"]), detail["added_count"]) == (1000, 5000)


def test_the_schema_bounds_every_string():
    def strings(node: Any) -> list[dict[str, Any]]:
        if isinstance(node, dict):
            found = [node] if node.get("type") == "string" and "pattern" not in node else []
            return found + [s for value in node.values() for s in strings(value)]
        return [s for value in node for s in strings(value)] if isinstance(node, list) else []

    assert all("maxLength" in s for s in strings(SCHEMA))


@pytest.fixture
def bus(aws_env: Any) -> tuple[Any, Any]:
    """moto's bus, through a client that refuses what PutEvents refuses, and what a
    consumer's rule received; (client, receive)."""
    events_client = enforce_limits(boto3.client("events"))
    sqs = boto3.client("sqs")
    queue = sqs.create_queue(QueueName="issue-consumer")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    events_client.put_rule(
        Name="all", EventBusName=BUS, EventPattern=json.dumps({"source": [SOURCE]})
    )
    events_client.put_targets(Rule="all", EventBusName=BUS, Targets=[{"Id": "q", "Arn": arn}])

    def receive() -> list[str]:
        got: list[str] = []
        while batch := sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get(
            "Messages", []
        ):
            got += [json.loads(m["Body"])["detail"]["event_id"] for m in batch]
            sqs.delete_message_batch(
                QueueUrl=queue,
                Entries=[
                    {"Id": m["MessageId"], "ReceiptHandle": m["ReceiptHandle"]} for m in batch
                ],
            )
        return sorted(got)

    return events_client, receive


def test_the_stand_in_refuses_a_call_over_256_kb(bus):
    client, _ = bus
    entry = {"EventBusName": BUS, "Source": SOURCE, "DetailType": CREATED}
    big = {**entry, "Detail": json.dumps({"x": "a" * 140_000})}
    assert entry_size(big) * 2 > PUT_EVENTS_MAX_BYTES
    with pytest.raises(client.exceptions.ClientError, match="over the limit"):
        client.put_events(Entries=[big, big])
    assert client.put_events(Entries=[big])["FailedEntryCount"] == 0


def event(n: int, chars: int = 10) -> IssueEvent:
    detail = {"event_id": f"issue:{n}:v1", "text": "가" * chars}
    return IssueEvent(n, 1, CREATED, detail, NOW, None, 0, None)


def test_an_entry_the_bus_refuses_is_isolated_from_the_rest_of_its_call(bus):
    # GIVEN three events for one call, the second over PutEvents' limit by itself
    client, receive = bus
    events = [event(1), event(2, 100_000), event(3)]
    # WHEN they are published
    errors = IssueBus(client, BUS, SOURCE).publish(events)
    # THEN the call refused is sent again an entry a call: the first and third published,
    # the second's error its own
    assert errors["issue:1:v1"] is None
    assert errors["issue:3:v1"] is None
    assert (errors["issue:2:v1"] or "").startswith("ValidationException")
    assert receive() == ["issue:1:v1", "issue:3:v1"]


def an_outbox(database: Any, count: int, refused: set[int], chars: int = 10) -> None:
    """``count`` issues' events in the outbox, oldest first; those in ``refused`` too large
    for PutEvents however they are cut (as a detail the bus cannot take would be)."""
    with database.transaction() as cursor:
        cursor.execute("INSERT INTO category (name) VALUES ('정치') RETURNING id")
        (category,) = cursor.fetchone()
        for n in range(1, count + 1):
            cursor.execute(
                "INSERT INTO issue (category_id, title, size) VALUES (%s, 't', 3)", (category,)
            )
            detail = {
                "event_id": f"issue:{n}:v1",
                "category": "정치",
                "title": "t",
                "added_article_ids": [],
                "articles": [],
                "padding": "가" * (100_000 if n in refused else chars),
            }
            cursor.execute(
                "INSERT INTO issue_event (issue_id, version, type, detail, created_at)"
                " VALUES (%s, 1, %s, %s, %s)",
                (n, CREATED, json.dumps(detail), NOW + timedelta(seconds=n)),
            )


def test_a_refused_event_does_not_stop_the_outbox_behind_it(
    database, bus, monkeypatch, dossier_bucket
):
    # GIVEN 12 events waiting, more than a relay's transaction takes (5 here), the first one
    # too large for PutEvents however it is cut
    monkeypatch.setattr(events_module, "RELAY_LIMIT", 5)
    client, receive = bus
    an_outbox(database, 12, refused={1})
    # WHEN the relay runs
    published, failed = relay_events(
        IssueEventStore(database), IssueBus(client, BUS, SOURCE), dossier_bucket, NOW
    )
    # THEN every other event is published once, the refused one keeps its error for later
    assert (published, failed) == (11, 1)
    assert receive() == sorted(f"issue:{n}:v1" for n in range(2, 13))
    waiting = [e for e in IssueEventStore(database).events() if e.published_at is None]
    assert [(e.issue_id, e.attempts) for e in waiting] == [(1, 1)]
    assert (waiting[0].last_error or "").startswith("ValidationException")
    # AND the next relay offers it once more, nothing else
    assert relay_events(
        IssueEventStore(database), IssueBus(client, BUS, SOURCE), dossier_bucket, NOW
    ) == (0, 1)
    assert receive() == []


def test_an_event_the_bus_always_refuses_is_given_up_after_five_refusals(
    database, bus, caplog, dossier_bucket
):
    # GIVEN two events, the first too large for PutEvents however it is cut: the same detail
    # is refused the same way every run
    client, receive = bus
    an_outbox(database, 2, refused={1})
    store, issue_bus = IssueEventStore(database), IssueBus(client, BUS, SOURCE)
    # WHEN the relay runs MAX_REFUSALS times THEN it is refused each time, the other published
    runs = [relay_events(store, issue_bus, dossier_bucket, NOW) for _ in range(MAX_REFUSALS)]
    assert runs == [(1, 1)] + [(0, 1)] * (MAX_REFUSALS - 1)
    assert receive() == ["issue:2:v1"]
    # AND then it is given up, logged once with its error
    given_up = [r for r in caplog.records if r.getMessage().startswith("issue event given up")]
    assert [(r.event_id, r.refusals) for r in given_up] == [("issue:1:v1", MAX_REFUSALS)]
    assert given_up[0].error.startswith("ValidationException")
    # AND the next runs do not offer it again (before: tried every run, for ever)
    calls: list[int] = []
    client.meta.events.register_first(
        "before-call.eventbridge.PutEvents", lambda **_: calls.append(1)
    )
    assert relay_events(store, issue_bus, dossier_bucket, NOW) == (0, 0)
    assert calls == []
    # AND it is kept, with its error and its attempts, for `newsdesk events`
    (kept,) = [e for e in store.events() if e.published_at is None]
    assert (kept.id, kept.attempts) == ("issue:1:v1", MAX_REFUSALS)
    assert (kept.last_error or "").startswith("ValidationException")


def test_a_bus_that_fails_its_calls_gives_no_event_up(database, bus, dossier_bucket):
    # GIVEN an event, and a bus that throttles every call (its fault, not the event's)
    client, receive = bus
    an_outbox(database, 1, refused=set())
    throttling = [True]

    def throttle(**_: Any) -> Any:
        return refused("ThrottlingException", "Rate exceeded") if throttling[0] else None

    client.meta.events.register_first("before-call.eventbridge.PutEvents", throttle)
    store, issue_bus = IssueEventStore(database), IssueBus(client, BUS, SOURCE)
    # WHEN the relay runs more than MAX_REFUSALS times THEN the event waits every time
    for _ in range(MAX_REFUSALS + 1):
        assert relay_events(store, issue_bus, dossier_bucket, NOW) == (0, 1)
    # AND once the bus takes calls again it is published
    throttling[0] = False
    assert relay_events(store, issue_bus, dossier_bucket, NOW) == (1, 0)
    assert receive() == ["issue:1:v1"]


def test_an_event_written_before_the_bound_is_published_bounded(database, bus, dossier_bucket):
    # GIVEN an event of 450 kB in the outbox (as an earlier release wrote them)
    client, receive = bus
    issue = an_issue(database, 200, 700, 1_900)
    with database.transaction() as cursor:
        cursor.execute(
            "SELECT json_agg(json_build_object('id', id, 'source', source, 'title', title,"
            " 'url', origin_url, 'published_at', NULL, 'chars', NULL, 'copy_of', NULL))"
            " FROM raw_article"
        )
        (articles,) = cursor.fetchone()
        detail = {
            "detail_version": 1,
            "event_id": f"issue:{issue}:v1",
            "issue_id": issue,
            "version": 1,
            "state": "open",
            "category": "정치",
            "title": "t",
            "size": 200,
            "first_article_at": "2026-12-01T09:00:00Z",
            "last_article_at": "2026-12-01T09:00:00Z",
            "changed_at": "2026-12-01T09:00:00Z",
            "added_article_ids": [a["id"] for a in articles],
            "article_count": 200,
            "articles": articles,
        }
        assert detail_bytes(detail) > 400_000
        cursor.execute(
            "INSERT INTO issue_event (issue_id, version, type, detail) VALUES (%s, 1, %s, %s)",
            (issue, CREATED, json.dumps(detail)),
        )
    # WHEN the relay runs THEN it is published, bounded
    assert relay_events(
        IssueEventStore(database), IssueBus(client, BUS, SOURCE), dossier_bucket, NOW
    ) == (1, 0)
    assert receive() == [f"issue:{issue}:v1"]


# --- a replay's time -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("at", "words"),
    [
        ("0001-01-01T00:00:00Z", "before 1970"),
        ("9999-01-01T00:00:00Z", "in the future"),
        ("yesterday", "not an ISO 8601 time"),
    ],
)
def test_a_replay_time_that_cannot_be_one_is_refused_in_words(database, postgres_url, at, words):
    # GIVEN an open issue
    store(database, "사회", STORIES["사회"][:3])
    function = container("cluster", DATABASE_URL=postgres_url)
    function(load_event("cluster") | {"at": "2026-12-01T09:00:00Z"})
    # WHEN a replay names a time that cannot be one THEN it is refused, in words
    with pytest.raises(MessageError, match=words) as caught:
        function(load_event("cluster") | {"at": at})
    assert "\n" not in str(caught.value)
    # AND the issue stays open (a time in the future would close it for good)
    with database.transaction() as cursor:
        cursor.execute("SELECT state FROM issue")
        assert cursor.fetchall() == [("open",)]


def test_newsdesk_cluster_at_checks_the_time_as_the_function_does(capsys):
    future = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for at in (future, "0001-01-01T00:00:00Z"):
        with pytest.raises(SystemExit) as caught:
            main(["cluster", "--at", at], {})
        assert caught.value.code == 2
    errors = capsys.readouterr().err
    assert f"{future} is in the future" in errors
    assert "0001-01-01T00:00:00Z is before 1970" in errors


def test_events_published_before_a_failed_call_are_not_sent_again(database, bus, dossier_bucket):
    # GIVEN 15 events (two calls) and a bus that throttles the second call
    client, receive = bus
    an_outbox(database, 15, refused=set())
    calls: list[int] = []

    def throttle_second(**_: Any) -> Any:
        calls.append(1)
        if len(calls) != 2:
            return None
        return refused("ThrottlingException", "Rate exceeded")

    client.meta.events.register_first("before-call.eventbridge.PutEvents", throttle_second)
    store, issue_bus = IssueEventStore(database), IssueBus(client, BUS, SOURCE)
    # WHEN the relay runs THEN the first call's ten are recorded published, the rest wait
    assert relay_events(store, issue_bus, dossier_bucket, NOW) == (10, 5)
    # AND the next run publishes the five: every event reaches the consumer once
    assert relay_events(store, issue_bus, dossier_bucket, NOW) == (5, 0)
    assert receive() == sorted(f"issue:{n}:v1" for n in range(1, 16))


# --- a round or an outlet message dated ahead of the clock (issue 39, point 2) ----------------


def future_message(url: str, ahead: timedelta) -> dict[str, Any]:
    """events/worker.json with ``url`` its outlet's one feed, scheduled ``ahead`` of now."""
    event = worker_event([(url, "정치")])
    body = json.loads(event["Records"][0]["body"])
    body["scheduled_at"] = format_time(datetime.now(UTC) + ahead)
    event["Records"][0]["body"] = json.dumps(body, ensure_ascii=False)
    return event


def test_an_outlet_message_from_the_future_is_refused_and_silences_nothing(
    aws_env, database, serve, feed_server, capsys
):
    """The attack: an outlet message dated 30 days ahead (written to the queue by hand, or by a
    fan-out whose clock is wrong), its feed failing. Processed, it scheduled the feed
    ``not_due`` for 30 days, opened the outlet's breaker until then plus a cool-down and set a
    future ``last_success_at``; it is refused instead: not fetched, nothing written, not a
    failed record (it would come back), counted and logged with the reason."""
    # GIVEN an outlet whose feed answers 503 and a message for it dated 30 days ahead
    url = serve("/p.xml", status=503, body=b"")
    event = future_message(url, timedelta(days=30))
    lines = LogLines(capsys)
    lines.start()
    try:
        # WHEN the worker receives it
        response = invoke("worker", event)
        logged = lines.read()
    finally:
        lines.stop()
    # THEN it is refused: no request, no record of the feed or the outlet, not failed
    assert feed_server.requests["/p.xml"] == 0
    assert response["batchItemFailures"] == []
    assert response["outlets"] == []
    assert response["refused"] == [
        {"message_id": event["Records"][0]["messageId"], "reason": "ahead_of_clock"}
    ]
    outlet, feeds = StateTable(aws_env.client("dynamodb"), "newsdesk-state").outlet("연합뉴스")
    assert (feeds, outlet.breaker.state) == ({}, BREAKER_CLOSED)
    # AND counted and logged with the reason
    (refusal,) = [line for line in logged if line.get("message") == "message refused"]
    assert (refusal["reason"], refusal["outlet"]) == ("ahead_of_clock", "연합뉴스")
    assert refusal["ahead_seconds"] > 29 * 24 * 3600
    (emf,) = [line for line in logged if "_aws" in line]
    assert (emf["MessagesRefused"], emf["MessagesFailed"]) == ([1], [0])
    # AND the next round, dated now, asks the feed
    serve("/p.xml", "good.xml")
    assert invoke("worker", worker_event([(url, "정치")]))["outlets"][0]["new"] == 3
    assert feed_server.requests["/p.xml"] == 1


def test_a_fan_out_invoked_with_a_future_time_sends_nothing(aws_env, tmp_path, capsys):
    """The attack: a fan-out invoked with a ``time`` 30 days ahead (by hand, or a scheduler
    whose clock is wrong) sent every outlet a message from the future; it is refused, counted
    and logged with the reason, and the schedule's event is not failed (it would come back)."""
    sources = tmp_path / "sources.yaml"
    sources.write_text('- {source: A, url: "https://a.test/1.xml", category: 정치}\n', "utf-8")
    at = datetime.now(UTC) + timedelta(days=30)
    lines = LogLines(capsys)
    lines.start()
    try:
        result = invoke(
            "fanout", load_event("fanout") | {"time": format_time(at)}, SOURCES_PATH=str(sources)
        )
        logged = lines.read()
    finally:
        lines.stop()
    queue = aws_env.queue_url("OutletQueue")
    assert aws_env.client("sqs").receive_message(QueueUrl=queue).get("Messages", []) == []
    assert (result["messages_sent"], result["refused"]) == (0, "ahead_of_clock")
    (refusal,) = [line for line in logged if line.get("message") == "round refused"]
    assert refusal["reason"] == "ahead_of_clock"
    (emf,) = [line for line in logged if "_aws" in line]
    assert (emf["RoundsRefused"], emf["MessagesSent"]) == ([1], [0])


T0 = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("ahead", "refused"),
    [
        (timedelta(0), False),
        (timedelta(minutes=5), False),  # MAX_CLOCK_SKEW: a clock a little fast is no attack
        (timedelta(minutes=5, seconds=1), True),
        (timedelta(days=30), True),
        (-timedelta(days=1), False),  # late: the stale rule's, not this one's
    ],
)
def test_a_time_more_than_the_allowed_skew_ahead_is_refused(ahead, refused):
    """The attack: a time a little or a lot ahead of the clock; only the skew two clocks may
    honestly have is let through."""
    assert (ahead_of_clock(T0 + ahead, T0) is not None) is refused
