"""What a running stack holds when `sam deploy` replaces its code: state items and queued
messages written by the release before the stage packages (tests/compatibility/, produced by
that release's own code) decode, and the state items encode back to the same items."""

import json
from datetime import UTC, datetime

import pytest

from newsdesk.aws.state_table import from_item, to_item
from newsdesk.core.breaker import BREAKER_OPEN
from newsdesk.core.messages import OutletMessage
from newsdesk.core.schedule import STATUS_FAILED, STATUS_OK, FeedState, OutletState
from tests.conftest import ROOT

RELEASE = json.loads((ROOT / "tests/compatibility/release-0.1.0.json").read_text(encoding="utf-8"))
AT = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.mark.parametrize("item", RELEASE["state_items"], ids=lambda item: item["sk"]["S"])
def test_state_items_decode_and_encode_back_the_same(item):
    if item["sk"]["S"] == "outlet":
        assert to_item(from_item(OutletState, item)) == item
    else:
        assert to_item(from_item(FeedState, item)) == item


def test_state_items_keep_their_meaning():
    ok, failed, outlet = RELEASE["state_items"]
    feed = from_item(FeedState, ok)
    assert (feed.last_status, feed.entries_seen, feed.etag) == (STATUS_OK, 12, '"abc"')
    assert feed.next_check_at == AT.replace(minute=30)
    assert from_item(FeedState, failed).last_status == STATUS_FAILED
    breaker = from_item(OutletState, outlet).breaker
    assert breaker.state_at(AT) == BREAKER_OPEN


def test_queued_messages_decode():
    on_demand, scheduled = (OutletMessage.from_json(m) for m in RELEASE["outlet_messages"])
    assert on_demand.outlet.name == "연합뉴스"
    assert [f.category for f in on_demand.outlet.feeds] == ["정치", "경제"]
    assert [f.user_agent for f in on_demand.outlet.feeds] == [None, None]  # the default's
    assert (on_demand.scheduled_at, on_demand.ignore_schedule) == (AT, True)
    assert (scheduled.outlet.name, scheduled.ignore_schedule) == ("뉴시스", False)
