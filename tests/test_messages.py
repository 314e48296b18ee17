"""The outlet message's JSON: what the fan-out writes, the worker reads it back whole."""

import json
from datetime import UTC, datetime

import pytest

from newsdesk.core.errors import MessageError
from newsdesk.core.messages import OutletMessage
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
