"""The outlet message's JSON: what the fan-out writes, the worker reads it back whole."""

import json
from datetime import UTC, datetime

import pytest

from newsdesk.core.errors import MessageError, MessageRefusedError
from newsdesk.core.messages import ArticleMessage, ClusterMessage, OutletMessage
from newsdesk.core.sources import Feed, Outlet
from tests.conftest import EXTRACT_ON, invoke, load_event, worker_event

AT = datetime(2026, 12, 1, tzinfo=UTC)
BROWSER = "Mozilla/5.0 (X11; Linux x86_64)"


def test_a_feeds_user_agent_travels_with_it():
    outlet = Outlet(
        "A", (Feed("A", "https://a.test/1", "정치"), Feed("A", "https://a.test/2", "경제", BROWSER))
    )
    message = OutletMessage(outlet, AT, ignore_schedule=True)
    assert OutletMessage.from_json(message.to_json()) == message


def test_a_feed_without_one_is_written_as_before():
    # an earlier release's worker, still draining the queue during a deploy, reads it alike
    body = json.loads(
        OutletMessage(Outlet("A", (Feed("A", "https://a.test/1", "정치"),)), AT).to_json()
    )
    assert body["feeds"] == [{"url": "https://a.test/1", "category": "정치"}]


@pytest.mark.parametrize("user_agent", [5, "", ["Mozilla"]])
def test_a_user_agent_that_is_no_name_is_not_an_outlet_message(user_agent):
    body = {
        "version": 1,
        "source": "A",
        "feeds": [{"url": "https://a.test/1", "category": "정치", "user_agent": user_agent}],
        "scheduled_at": "2026-12-01T00:00:00Z",
    }
    with pytest.raises(MessageError, match="user_agent"):
        OutletMessage.from_json(json.dumps(body))


def test_an_outlets_extraction_settings_travel_with_its_feeds():
    feeds = (
        Feed("A", "https://a.test/1", "정치", extract=False),
        Feed("A", "https://a.test/2", "경제", extract_min_chars=80),
    )
    message = OutletMessage(Outlet("A", feeds), AT)
    assert OutletMessage.from_json(message.to_json()) == message
    written = json.loads(message.to_json())["feeds"]
    assert written[0]["extract"] is False
    assert "extract" not in written[1]


def test_an_article_message_reads_back_and_is_keyed_by_its_host():
    message = ArticleMessage(7, 1, "https://www.한겨레.test/view/7?x=1", send=2)
    assert ArticleMessage.from_json(message.to_json()) == message
    assert message.host == "www.xn--h89at9srwx.test"
    assert message.deduplication_id == "7-r1-s2"


@pytest.mark.parametrize(
    "body", ["{}", '{"article_id": "7", "revision": 0, "url": "u"}', "not json"]
)
def test_anything_else_is_not_an_article_message(body):
    with pytest.raises(MessageError, match="not an article message"):
        ArticleMessage.from_json(body)


# --- versions (issue 39, point 4) ---------------------------------------------------------------

OTHER_VERSIONS = [2, 99, "1", None, True, 1.0]


def outlet_body(**changes: object) -> dict[str, object]:
    body = json.loads(
        OutletMessage(Outlet("A", (Feed("A", "https://a.test/1", "정치"),)), AT).to_json()
    )
    return {**body, **changes}


@pytest.mark.parametrize("version", OTHER_VERSIONS)
def test_an_outlet_message_of_another_version_is_refused(version):
    """The attack: an outlet message whose ``version`` is 2, 99, "1", null, true or 1.0 was read
    as version 1, whatever that version promises; only version 1, the integer, is."""
    with pytest.raises(MessageError, match="version") as caught:
        OutletMessage.from_json(json.dumps(outlet_body(version=version)))
    assert isinstance(caught.value, MessageRefusedError)
    assert caught.value.reason == "unknown_version"


def test_an_outlet_message_without_a_version_is_not_one():
    """The attack: an outlet message with no ``version`` at all (no release wrote one: every
    outlet message since the first carries ``"version": 1``) was read as version 1; it is no
    outlet message, as one without ``source`` is not (a failed record, then the DLQ)."""
    body = outlet_body()
    del body["version"]
    with pytest.raises(MessageError, match="not an outlet message: no 'version'") as caught:
        OutletMessage.from_json(json.dumps(body))
    assert not isinstance(caught.value, MessageRefusedError)


@pytest.mark.parametrize("version", [True, 1.0, "1", None, 2])
def test_a_cluster_message_of_another_version_fails_its_record(version):
    """The attack: a cluster message whose ``version`` is ``true`` or ``1.0`` passed the
    cluster function's ``!= 1`` as version 1; only the integer 1 is (its own rule, issue 24:
    a MessageError, the record failed)."""
    body = {"version": version, "category_id": 1, "category": "정치", "at": "2026-12-01T00:00:00Z"}
    with pytest.raises(MessageError, match="not a cluster message"):
        ClusterMessage.from_json(json.dumps(body))
    assert ClusterMessage.from_json(json.dumps({**body, "version": 1})).category_id == 1


@pytest.mark.parametrize("version", [*OTHER_VERSIONS, "absent"])
def test_an_article_message_of_another_version_is_refused(version):
    """The attack: an article message whose ``version`` is 2, 99, "1", null, true, 1.0 or
    absent was read as version 1; absent, it is no article message (a failed record)."""
    body = json.loads(ArticleMessage(7, 1, "https://a.test/view/7").to_json())
    if version == "absent":
        del body["version"]
    else:
        body["version"] = version
    with pytest.raises(MessageError, match="version") as caught:
        ArticleMessage.from_json(json.dumps(body))
    assert isinstance(caught.value, MessageRefusedError) is (version != "absent")


def test_the_worker_refuses_an_outlet_message_of_another_version(
    aws_env, database, serve, feed_server
):
    """The attack: an outlet message of version 2 reached the worker, which collected its feeds
    as version 1's; it is refused instead: nothing fetched, listed with its reason, and not a
    failed record (SQS would deliver it again, to be refused again)."""
    event = worker_event([(serve("/p.xml", "good.xml"), "정치")])
    record = event["Records"][0]
    record["body"] = json.dumps({**json.loads(record["body"]), "version": 2}, ensure_ascii=False)
    response = invoke("worker", event)
    assert feed_server.requests["/p.xml"] == 0
    assert (response["batchItemFailures"], response["outlets"]) == ([], [])
    assert response["refused"] == [{"message_id": record["messageId"], "reason": "unknown_version"}]


def test_the_extractor_refuses_an_article_message_of_another_version(aws_env, database):
    """The attack: an article message of version 99 reached the extractor, which read it as
    version 1's; it is refused, listed with its reason, and not a failed record."""
    event = load_event("extractor")
    record = event["Records"][0]
    record["body"] = json.dumps({**json.loads(record["body"]), "version": 99})
    response = invoke("extract", event, **EXTRACT_ON)
    assert (response["batchItemFailures"], response["articles"]) == ([], [])
    assert response["refused"] == [{"message_id": record["messageId"], "reason": "unknown_version"}]
