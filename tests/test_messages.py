"""The outlet message's JSON: what the fan-out writes, the worker reads it back whole."""

import json
from datetime import UTC, datetime

import pytest

from newsdesk.core.errors import MessageError
from newsdesk.core.messages import ArticleMessage, OutletMessage
from newsdesk.core.sources import Feed, Outlet

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
