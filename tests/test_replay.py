"""A labelled stream replayed through `newsdesk cluster --at` against the local stack
(newsdesk_local.replay, benchmarks/cluster_quality.py)."""

import os
from datetime import UTC, datetime, timedelta

import pytest

from newsdesk_local.quality import score
from newsdesk_local.replay import StreamArticle, replay, ticks

pytestmark = pytest.mark.slow

START = datetime(2014, 3, 10, 9, 0, 0, 500_000, tzinfo=UTC)
HOUR = timedelta(hours=1)

# (key, story, category, minutes after START, title): ticks an hour apart from the first; story
# a is whole by the second tick, b comes after it, c has two headlines before it, one after
HEADLINES = [
    ("a1", "a", "business", 0, "Central bank holds interest rates steady"),
    ("a2", "a", "business", 10, "Central bank holds interest rates steady again"),
    ("a3", "a", "business", 20, "Central bank keeps interest rates steady"),
    ("c1", "c", "sport", 5, "Marathon record falls in Berlin race"),
    ("c2", "c", "sport", 15, "Berlin marathon record falls in race"),
    ("b1", "b", "business", 70, "Carmaker recalls million cars over faulty airbags"),
    ("b2", "b", "business", 80, "Carmaker recalls a million cars over airbags"),
    ("b3", "b", "business", 90, "Faulty airbags: carmaker recalls million cars"),
    ("c3", "c", "sport", 95, "Marathon record falls in Berlin"),
]
STREAM = [
    StreamArticle(key, title, category, START + timedelta(minutes=minutes))
    for key, _, category, minutes, title in HEADLINES
]
GOLD = {key: story for key, story, *_ in HEADLINES}


def test_ticks_run_from_the_first_article_to_past_the_last():
    # the first rounded up to the second (--at is read to the second); the last after 95 min
    first = START.replace(microsecond=0) + timedelta(seconds=1)
    assert ticks(STREAM, HOUR) == [first, first + HOUR, first + 2 * HOUR]
    assert ticks(STREAM[:1], HOUR) == [first]
    assert ticks(STREAM[:3], timedelta(minutes=10)) == [
        first + k * timedelta(minutes=10) for k in (0, 1, 2)
    ]


def test_a_replay_through_the_command(data_dir, database, postgres_url, moto_endpoint):
    # GIVEN the command's environment over the tests' PostgreSQL and moto
    env = {
        **os.environ,
        "NEWSDESK_DATA_DIR": str(data_dir),
        "DATABASE_URL": postgres_url,
        "AWS_ENDPOINT_URL": moto_endpoint,
        "CLUSTER_METHOD": "seed",
        "CLUSTER_MIN_SIZE": "3",
    }
    # WHEN the stream is replayed every hour
    replayed = replay(STREAM, HOUR, env)
    # THEN each run saw only what was collected by its tick: a1 alone, then a, then b and c
    assert [run["issues_created"] for run in replayed.runs] == [0, 1, 2]
    assert [run["articles_clustered"] for run in replayed.runs] == [0, 3, 6]
    # AND the stored issues are the three stories, by the stream's keys
    assert sorted(map(sorted, replayed.groups)) == [
        ["a1", "a2", "a3"],
        ["b1", "b2", "b3"],
        ["c1", "c2", "c3"],
    ]
    s = score(GOLD, replayed.groups)
    assert (s.pairwise_f1, s.issues_per_story) == (1.0, 1.0)
    # AND every article went in with its category and its time
    with database.transaction() as cursor:
        cursor.execute(
            "SELECT c.name, a.collected_at FROM raw_article a"
            " JOIN category c ON c.id = a.category_id ORDER BY a.collected_at"
        )
        stored = cursor.fetchall()
    assert stored == sorted(((a.category, a.collected_at) for a in STREAM), key=lambda r: r[1])
