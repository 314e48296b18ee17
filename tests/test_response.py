from datetime import UTC, datetime, timedelta

import pytest

from newsdesk.collect.response import (
    body_hash,
    is_modified,
    max_age_seconds,
    retry_after_seconds,
    ttl_seconds,
    validators,
)
from newsdesk.core.schedule import MAX_FLOOR, SchedulePolicy
from newsdesk.core.times import delta_seconds

NOW = datetime(2026, 12, 1, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        (
            {"ETag": '"abc"', "Last-Modified": "Tue, 01 Dec 2026 00:00:00 GMT"},
            ('"abc"', "Tue, 01 Dec 2026 00:00:00 GMT"),
        ),
        ({"etag": 'W/"weak"'}, ('W/"weak"', None)),
        ({"ETag": '"abc"', "Expires": "0"}, (None, None)),
        ({}, (None, None)),
    ],
)
def test_validators(headers, expected):
    assert validators(headers) == expected


@pytest.mark.parametrize(
    ("status", "content", "last", "modified"),
    [
        (304, None, None, False),
        (304, None, "h", False),
        (200, "h", "h", False),  # the same body again
        (200, "h2", "h", True),
        (200, "h", None, True),
    ],
)
def test_is_modified(status, content, last, modified):
    assert is_modified(status, content, last) is modified


def test_body_hash_is_stable():
    assert body_hash(b"<rss/>") == body_hash(b"<rss/>") != body_hash(b"<rss />")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("120", 120.0),
        ("0", 0.0),
        ("Tue, 01 Dec 2026 00:10:00 GMT", 600.0),
        ("Mon, 30 Nov 2026 23:00:00 GMT", 0.0),  # in the past: no wait
        ("soon", None),
        ("", None),
        ("-5", None),
        ("\xb2", None),  # "²": str.isdigit() takes it, int() refuses it
        ("1" * 400, float(2**31)),  # past 2^31: 2^31 (RFC 9111 1.2.2)
        ("Sat, 01 Jan 10000 00:00:00 GMT", None),  # no year Python holds
    ],
)
def test_retry_after_both_forms(value, expected):
    assert retry_after_seconds(value, NOW) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("max-age=600", 600.0),
        ("public, max-age=300, must-revalidate", 300.0),
        ('max-age="60"', 60.0),
        ("s-maxage=900", None),
        ("no-cache, max-age=600", None),
        ("no-store", None),
        ("", None),
        ("max-age=\u0663\u0660\u0660", None),  # Arabic-Indic digits: no delta-seconds
        ("max-age=60s", None),
        ("max-age=" + "9" * 400, float(2**31)),
    ],
)
def test_cache_control_max_age(value, expected):
    assert max_age_seconds(value) == expected


@pytest.mark.parametrize(
    ("ttl", "expected"),
    [
        ("30", 1800.0),
        (" 60 ", 3600.0),
        ("x", None),
        (None, None),
        ("", None),
        ("\xb2", None),
        ("1.5", None),
        ("9" * 400, 2**31 * 60.0),
    ],
)
def test_rss_ttl_is_minutes(ttl, expected):
    assert ttl_seconds(ttl) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0", 0),
        ("120", 120),
        ("007", 7),
        (" 42 ", 42),
        (str(2**31), 2**31),
        (str(2**31 + 1), 2**31),
        ("1" * 20, 2**31),
        ("0" * 30 + "5", 5),
        ("\xb2", None),
        ("\u0663", None),
        ("+5", None),
        ("-5", None),
        ("1e3", None),
        ("1_000", None),
        ("", None),
    ],
)
def test_delta_seconds_are_ascii_digits_at_most_two_to_the_31(value, expected):
    assert delta_seconds(value) == expected


@pytest.mark.parametrize(
    ("floor", "expected"),
    [
        (0.0, timedelta(minutes=30)),
        (86_400.0, timedelta(days=1)),
        (float(2**31) * 60, MAX_FLOOR),
        (float("inf"), MAX_FLOOR),
    ],
)
def test_a_servers_floor_is_capped_at_seven_days(floor, expected):
    assert SchedulePolicy().interval(0, floor) == expected
    assert timedelta(days=7) == MAX_FLOOR  # docs/operating.md and docs/extraction.md say so
