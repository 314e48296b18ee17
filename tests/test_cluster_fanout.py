"""Issue 24: the cluster run scales out by category. A schedule's invocation sends one message
per category to the cluster queue (moto's), each message's invocation clusters its category,
and over a day of runs the issues (by their articles), their versions and their events' types
are those of one invocation clustering every category in turn; ids may differ."""

from datetime import timedelta

import boto3
import pytest

from newsdesk.core.messages import ClusterMessage
from newsdesk.core.times import format_time, utc_now
from newsdesk_local.invocations import sqs_event
from tests.conftest import container, load_event
from tests.test_cluster_job import NOW, STORIES, store

LATER_SNOW = ["수도권 첫 폭설 출근길 교통 혼잡 계속", "수도권 첫 폭설 출근길 교통 혼잡 심해"]
RATE_AGAIN = ["한국은행 기준금리 연 2.50% 동결 물가 안정 우선 재확인"]
TICKS = [NOW, NOW + timedelta(minutes=30), NOW + timedelta(hours=13)]
POLICY = {"CLUSTER_METHOD": "headline", "CLUSTER_MIN_SIZE": "3"}


def a_day(database):
    """Two categories' stories, each growing in the second round, both idle by the third."""
    for category, titles in STORIES.items():
        store(database, category, titles)
    store(database, "사회", LATER_SNOW, collected_at=TICKS[1], start=20)
    store(database, "경제", RATE_AGAIN, collected_at=TICKS[1], start=30)


def outcome(database):
    """Each issue as its articles with its state and version, and each issue's events by
    (version, type): what must not depend on how the run was split."""
    with database.transaction() as cursor:
        cursor.execute(
            "SELECT i.id, i.state, i.version, array_agg(a.id ORDER BY a.id) FROM issue i"
            " JOIN raw_article a ON a.issue_id = i.id GROUP BY i.id"
        )
        issues = {row[0]: (tuple(row[3]), row[1], row[2]) for row in cursor.fetchall()}
        cursor.execute("SELECT issue_id, version, type FROM issue_event ORDER BY 1, 2")
        events = [(issues[i][0], v, t) for i, v, t in cursor.fetchall()]
    return sorted(issues.values()), sorted(events)


@pytest.fixture
def queue(aws_env):
    sqs = boto3.client("sqs")
    url = sqs.create_queue(QueueName="cluster-categories-test")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]

    def received():
        got = []
        while batch := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get(
            "Messages", []
        ):
            got += batch
        for message in got:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        return got

    return url, arn, received


def test_per_category_invocations_leave_what_one_invocation_leaves(database, postgres_url, queue):
    url, arn, received = queue
    # GIVEN a day of runs by one invocation over every category
    a_day(database)
    whole = container("cluster", DATABASE_URL=postgres_url, **POLICY)
    for tick in TICKS:
        run = whole(load_event("cluster") | {"at": format_time(tick)})
        assert run["categories_done"] == ["경제", "사회"]
    one_run = outcome(database)
    assert len(one_run[0]) == 2
    assert {state for _, state, _ in one_run[0]} == {"closed"}
    # WHEN the same day is run again from scratch, fanned out by category
    with database.transaction() as cursor:
        cursor.execute("TRUNCATE raw_article, issue, category RESTART IDENTITY CASCADE")
    a_day(database)
    fanned = container("cluster", DATABASE_URL=postgres_url, CLUSTER_QUEUE_URL=url, **POLICY)
    for tick in TICKS:
        sent = fanned(load_event("cluster") | {"at": format_time(tick)})
        assert sent == {"at": format_time(tick), "categories_sent": ["경제", "사회"]}
        messages = received()
        assert [ClusterMessage.from_json(m["Body"]).at for m in messages] == [sent["at"]] * 2
        # each category an invocation of its own, in the other order than the one run's
        for message in reversed(messages):
            answer = fanned(sqs_event([message], arn))
            assert answer["batchItemFailures"] == []
            assert len(answer["runs"][0]["categories_done"]) == 1
    # THEN the issues, their versions and their events are the one run's
    assert outcome(database) == one_run


def test_a_redelivered_category_message_changes_nothing(database, postgres_url, queue):
    url, arn, received = queue
    a_day(database)
    fanned = container("cluster", DATABASE_URL=postgres_url, CLUSTER_QUEUE_URL=url, **POLICY)
    fanned(load_event("cluster") | {"at": format_time(NOW)})
    messages = received()
    first = [fanned(sqs_event([m], arn))["runs"][0]["issues_created"] for m in messages]
    assert first == [1, 1]
    before = outcome(database)
    again = [fanned(sqs_event([m], arn))["runs"][0] for m in messages]
    assert [(r["issues_created"], r["issues_updated"], r["issues_closed"]) for r in again] == [
        (0, 0, 0),
        (0, 0, 0),
    ]
    assert outcome(database) == before


def test_a_message_that_is_not_a_cluster_message_fails_its_record(database, postgres_url, queue):
    url, arn, _ = queue
    fanned = container("cluster", DATABASE_URL=postgres_url, CLUSTER_QUEUE_URL=url)
    bad = {"MessageId": "m1", "ReceiptHandle": "r", "Body": "{}", "MD5OfBody": ""}
    answer = fanned(sqs_event([bad], arn))
    assert answer["batchItemFailures"] == [{"itemIdentifier": "m1"}]
    assert answer["runs"] == []


def test_a_category_message_for_a_future_time_fails_its_record_and_closes_nothing(
    database, postgres_url, queue
):
    # GIVEN open issues, and a category message dated a day ahead (a run then would close
    # every open issue for good, its idle hours passed)
    url, arn, received = queue
    a_day(database)
    fanned = container("cluster", DATABASE_URL=postgres_url, CLUSTER_QUEUE_URL=url, **POLICY)
    fanned(load_event("cluster") | {"at": format_time(NOW)})
    for message in received():
        fanned(sqs_event([message], arn))
    before = outcome(database)
    ahead = ClusterMessage(1, "경제", format_time(utc_now() + timedelta(days=1)))
    record = {"MessageId": "m1", "ReceiptHandle": "r", "Body": ahead.to_json(), "MD5OfBody": ""}
    # WHEN it is delivered
    answer = fanned(sqs_event([record], arn))
    # THEN its record fails (SQS keeps it, then the dead-letter queue) and nothing changed
    assert answer["batchItemFailures"] == [{"itemIdentifier": "m1"}]
    assert outcome(database) == before
