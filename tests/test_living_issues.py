"""Issues that live across clustering runs (issue 15), on a real PostgreSQL: later articles join
an open issue, an idle issue closes, a re-run creates and changes nothing, and every version's
event goes through the outbox to an EventBridge bus (moto's) exactly as often as it should."""

import json
from datetime import timedelta
from pathlib import Path

import jsonschema
import pytest

from newsdesk.cluster.job import ClusterPolicy, run_clustering
from newsdesk.cluster.methods import DEFAULT_THRESHOLDS
from newsdesk.storage.issue_events import IssueEventStore, as_published, kept_dossier
from tests.conftest import container, load_event
from tests.test_cluster_job import NOW, STORIES, cluster, store

SCHEMA = json.loads(
    (Path(__file__).parents[1] / "schemas" / "issue-event-detail.schema.json").read_text("utf-8")
)
SNOW = STORIES["사회"][:3]
LATER_SNOW = ["수도권 첫 폭설 출근길 교통 혼잡 계속", "수도권 첫 폭설 출근길 교통 혼잡 심해"]
METHODS = DEFAULT_THRESHOLDS


def issues(database):
    with database.transaction() as cursor:
        cursor.execute(
            "SELECT id, state, version, size, first_article_at, last_article_at, closed_at "
            "FROM issue ORDER BY id"
        )
        return cursor.fetchall()


def snapshot(database):
    """Everything a run may change: issues, memberships and events."""
    with database.transaction() as cursor:
        cursor.execute("SELECT id, issue_id FROM raw_article ORDER BY id")
        members = cursor.fetchall()
        cursor.execute("SELECT issue_id, version, type, detail FROM issue_event ORDER BY 1, 2")
        events = cursor.fetchall()
    return issues(database), members, events


def events(database):
    return [(e.issue_id, e.version, e.type) for e in IssueEventStore(database).events()]


@pytest.mark.parametrize("method", METHODS)
def test_an_article_joins_the_open_issue_of_an_earlier_run(database, method):
    at = {"method": method, "threshold": METHODS[method]}
    store(database, "사회", SNOW)
    (created,) = cluster(database, **at).issues
    # WHEN a later round brings one more report of the story and the job runs again
    store(database, "사회", LATER_SNOW[:1], collected_at=NOW + timedelta(minutes=30), start=10)
    later = cluster(database, clock=lambda: NOW + timedelta(minutes=30), **at)
    # THEN it joins the open issue (version 2) rather than waiting for two more
    assert later.issues == []
    (grown,) = later.updated
    assert (grown.id, grown.version, len(grown.article_ids)) == (created.id, 2, 1)
    ((_, state, version, size, first, last, closed),) = issues(database)
    assert (state, version, size, closed) == ("open", 2, 4, None)
    assert (first, last) == (NOW, NOW + timedelta(minutes=30))
    assert events(database) == [(created.id, 1, "IssueCreated"), (created.id, 2, "IssueUpdated")]


@pytest.mark.parametrize("method", METHODS)
def test_an_idle_issue_closes_and_takes_no_more(database, method):
    at = {"method": method, "threshold": METHODS[method]}
    store(database, "사회", SNOW)
    (created,) = cluster(database, **at).issues
    # an hour short of idle: still open
    eleven = NOW + timedelta(hours=11)
    assert cluster(database, clock=lambda: eleven, **at).closed == []
    # WHEN the job runs 12 hours and a minute after the story's last article
    idle = NOW + timedelta(hours=12, minutes=1)
    assert cluster(database, clock=lambda: idle, **at).closed == [created.id]
    ((_, state, version, size, _, _, closed),) = issues(database)
    assert (state, version, size, closed) == ("closed", 2, 3, idle)
    # THEN a later report of the story does not join it
    store(database, "사회", LATER_SNOW[:1], collected_at=idle, start=10)
    later = cluster(database, clock=lambda: idle + timedelta(minutes=30), **at)
    assert later.updated == []
    assert later.closed == []
    assert issues(database)[0][2:4] == (2, 3)
    assert events(database)[-1] == (created.id, 2, "IssueClosed")


@pytest.mark.parametrize("method", METHODS)
def test_a_rerun_creates_and_changes_nothing(database, method):
    at = {"method": method, "threshold": METHODS[method]}
    # GIVEN a day of runs: two stories, one growing, then both idle
    for category, titles in STORIES.items():
        store(database, category, titles)
    times = [NOW, NOW + timedelta(minutes=30), NOW + timedelta(hours=13)]
    store(database, "사회", LATER_SNOW, collected_at=times[1], start=20)
    for time in times:
        first = cluster(database, clock=lambda t=time: t, **at)
        before = snapshot(database)
        # WHEN each run is run again (a redelivered event, a replay of the same time)
        again = cluster(database, clock=lambda t=time: t, **at)
        # THEN it finds nothing to do and the tables are as they were
        assert (again.issues, again.updated, again.closed) == ([], [], [])
        assert snapshot(database) == before
        assert first.issues or first.updated or first.closed  # each run did something
    assert [row[1:3] for row in issues(database)] == [("closed", 2), ("closed", 3)]


def test_the_seed_method_keeps_its_groups_within_a_run_with_issues_open(database):
    # GIVEN an open issue on the snow story
    store(database, "사회", SNOW)
    (_snow,) = cluster(database).issues
    # WHEN a later round brings three reports of another event (and nothing on the snow)
    exam = [
        "수능 성적 오늘 발표 만점자 3명",
        "수능 성적 오늘 발표 만점자 3명 나와",
        "수능 성적 발표 만점자 3명",
    ]
    store(database, "사회", exam, collected_at=NOW + timedelta(hours=1), start=10)
    later = cluster(database, clock=lambda: NOW + timedelta(hours=1))
    # THEN they form their own issue, as the seed's pass would, and the snow issue is untouched
    assert [len(i.article_ids) for i in later.issues] == [3]
    assert later.updated == []
    assert issues(database)[0][2] == 1


def test_each_version_has_one_event_with_the_documented_detail(database):
    store(database, "사회", SNOW)
    (created,) = cluster(database).issues
    store(database, "사회", LATER_SNOW[:1], collected_at=NOW + timedelta(minutes=30), start=10)
    cluster(database, clock=lambda: NOW + timedelta(minutes=30))
    cluster(database, clock=lambda: NOW + timedelta(hours=13))
    written = IssueEventStore(database).events()
    assert [(e.version, e.type) for e in written] == [
        (1, "IssueCreated"),
        (2, "IssueUpdated"),
        (3, "IssueClosed"),
    ]
    for event in written:
        jsonschema.validate(as_published(event.detail, "b"), SCHEMA)
        assert event.detail["event_id"] == f"issue:{created.id}:v{event.version}"
    created_detail, updated, closed = (e.detail for e in written)
    assert created_detail["added_article_ids"] == created.article_ids
    assert updated["added_article_ids"] == [4]
    assert updated["size"] == 4
    assert [a["id"] for a in updated["articles"]] == [*created.article_ids, 4]
    assert closed["state"] == "closed"
    assert closed["added_article_ids"] == []
    # each version but the close names its own dossier; the close names the last one's
    assert created_detail["dossier"]["key"] == f"issues/{created.id}/v1.json"
    assert closed["dossier"] == updated["dossier"]
    assert updated["dossier"]["key"] == f"issues/{created.id}/v2.json"
    assert [kept_dossier(database, created.id, v) is None for v in (1, 2, 3)] == [
        False,
        False,
        True,
    ]


def test_a_detail_that_breaks_the_schema_is_refused():
    """The schema test above can fail: a detail missing a field or with a bad id is refused."""
    detail = {"event_id": "issue:1"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(as_published(detail, "b"), SCHEMA)


# --- publishing, through moto's EventBridge to an SQS queue, as a consumer's rule would ---------


def test_a_crash_before_publishing_loses_no_event_and_redelivery_sends_each_once(
    database, postgres_url, issue_consumer, dossier_bucket
):
    name, receive = issue_consumer
    store(database, "사회", SNOW)
    # GIVEN a run whose changes were committed but whose process died before the relay
    run_clustering(database, ClusterPolicy(threshold=0.6), clock=lambda: NOW)
    assert [e.published_at for e in IssueEventStore(database).events()] == [None]
    assert receive() == []
    # WHEN the schedule's event is delivered again (the retry of the failed invocation)
    event = load_event("cluster") | {"at": "2026-12-01T09:00:00Z"}
    function = container(
        "cluster",
        DATABASE_URL=postgres_url,
        EVENT_BUS_NAME=name,
        DOSSIER_BUCKET=dossier_bucket.name,
    )
    rerun = function(event)
    # THEN the re-run changes nothing and publishes the waiting event, once
    assert (rerun["issues_created"], rerun["events_published"]) == (0, 1)
    (delivered,) = receive()
    assert (delivered["source"], delivered["detail-type"]) == ("newsdesk.issue", "IssueCreated")
    assert delivered["detail"]["event_id"] == "issue:1:v1"
    # AND a third delivery sends nothing more
    assert function(event)["events_published"] == 0
    assert receive() == []
    # a growing issue: one event for its new version
    store(database, "사회", LATER_SNOW[:1], collected_at=NOW + timedelta(minutes=30), start=10)
    grown = function(event | {"at": "2026-12-01T09:30:00Z"})
    assert (grown["issues_updated"], grown["events_published"]) == (1, 1)
    assert [m["detail"]["event_id"] for m in receive()] == ["issue:1:v2"]


def test_a_bus_that_refuses_keeps_the_events_for_the_next_run(
    database, postgres_url, issue_consumer, dossier_bucket
):
    name, receive = issue_consumer
    store(database, "사회", SNOW)
    event = load_event("cluster") | {"at": "2026-12-01T09:00:00Z"}
    # WHEN the bus named does not exist
    refused = container(
        "cluster",
        DATABASE_URL=postgres_url,
        EVENT_BUS_NAME="no-such-bus",
        DOSSIER_BUCKET=dossier_bucket.name,
    )(event)
    # THEN the issue is stored, its event kept with the error, and the run does not fail
    assert (refused["issues_created"], refused["events_published"]) == (1, 0)
    assert refused["events_failed"] == 1
    (kept,) = IssueEventStore(database).events()
    assert kept.published_at is None
    assert kept.attempts == 1
    assert kept.last_error
    # AND the next run on the right bus publishes it
    later = container(
        "cluster",
        DATABASE_URL=postgres_url,
        EVENT_BUS_NAME=name,
        DOSSIER_BUCKET=dossier_bucket.name,
    )(event)
    assert later["events_published"] == 1
    assert [m["detail"]["event_id"] for m in receive()] == ["issue:1:v1"]


def test_events_go_out_ten_a_call_and_under_putevents_size_limit():
    from newsdesk.aws.issue_bus import BATCH_BYTES, _batches

    class Event:
        def __init__(self, n, size):
            self.id, self.type, self.detail = f"issue:{n}:v1", "IssueCreated", {"t": "가" * size}

    assert [len(b) for b in _batches([Event(n, 10) for n in range(25)])] == [10, 10, 5]
    # three details of 40 % of the limit each (in UTF-8): two calls
    big = [Event(n, int(BATCH_BYTES * 0.4 / 3)) for n in range(3)]
    assert [len(b) for b in _batches(big)] == [2, 1]
