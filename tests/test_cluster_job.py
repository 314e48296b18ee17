"""The clustering job on a real PostgreSQL, over articles stored through the collect path."""

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from newsdesk.cluster.job import ClusterPolicy, run_clustering
from newsdesk.cluster.methods import DEFAULT_THRESHOLDS
from newsdesk.core.entry import Entry
from newsdesk.core.errors import MessageError
from newsdesk.core.times import format_time
from newsdesk.storage.articles import Article, ArticleStore
from newsdesk.storage.database import Database
from newsdesk.storage.issue_lists import list_issues
from tests.conftest import container, invoke, load_event, worker_event

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)

STORIES = {
    "경제": [
        "한국은행 기준금리 연 2.50% 동결 물가 안정 우선",
        "한국은행 기준금리 연 2.50% 동결 물가 안정 우선 판단",
        "한국은행 기준금리 동결 연 2.50% 유지 물가 안정 우선",
        "코스피 외국인 매수에 2,700선 회복",
        "원·달러 환율 1,380원대 마감",
    ],
    "사회": [
        "수도권 첫 폭설 출근길 교통 혼잡",
        "수도권 첫 폭설 출근길 교통 혼잡 이어져",
        "수도권 첫 폭설로 출근길 교통 혼잡",
        "수능 성적 오늘 발표",
    ],
}


def store(database, category, titles, collected_at=NOW, start=0):
    articles = []
    for n, title in enumerate(titles):
        link = f"https://example.test/{category}/{start + n}"
        articles.append(Article(Entry(title, link, "", None, None), link))
    ArticleStore(database).insert_articles("테스트", category, articles, collected_at)


def cluster(database, clock=lambda: NOW, **overrides):
    options: dict[str, Any] = {
        "method": "seed",
        "threshold": 0.6,
        "min_size": 3,
        "window_hours": 24,
    }
    return run_clustering(database, ClusterPolicy(**(options | overrides)), clock=clock)


def issued(database):
    with database.transaction() as cursor:
        cursor.execute("SELECT id, issue_id FROM raw_article ORDER BY id")
        return cursor.fetchall()


def test_stories_become_issues_once(database):
    for category, titles in STORIES.items():
        store(database, category, titles)
    first = cluster(database)
    assert [(i.category, len(i.article_ids)) for i in first.issues] == [("경제", 3), ("사회", 3)]
    assert first.articles_clustered == 6
    assert first.articles_left_single == 3
    with database.transaction() as cursor:
        cursor.execute("SELECT category_id, title, size FROM issue ORDER BY id")
        rows = cursor.fetchall()
    assert [r[2] for r in rows] == [3, 3]
    assert rows[0][1] in STORIES["경제"][:3]
    # WHEN it runs again THEN nothing new
    before = issued(database)
    second = cluster(database)
    assert second.issues == []
    assert issued(database) == before


def test_unissued_articles_join_a_later_group(database):
    store(database, "사회", STORIES["사회"][:2])
    assert cluster(database).issues == []
    store(database, "사회", STORIES["사회"][2:3], start=10)
    (issue,) = cluster(database).issues
    assert len(issue.article_ids) == 3


def test_only_the_window_is_read(database):
    store(database, "경제", STORIES["경제"][:3], collected_at=NOW - timedelta(hours=30))
    assert cluster(database).issues == []
    assert len(cluster(database, window_hours=48).issues) == 1


def test_two_runs_started_together_create_each_issue_once(database, postgres_url):
    for category, titles in STORIES.items():
        store(database, category, titles)
    results = []
    barrier = threading.Barrier(2)

    def run():
        own = Database(lambda: postgres_url)
        barrier.wait()
        results.append(cluster(own))
        own.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(len(r.issues) for r in results) == 2
    with database.transaction() as cursor:
        cursor.execute("SELECT count(*) FROM issue")
        assert cursor.fetchone()[0] == 2


def category_id(database, name):
    with database.transaction() as cursor:
        cursor.execute("SELECT id FROM category WHERE name = %s", (name,))
        return cursor.fetchone()[0]


def test_a_held_category_lock_leaves_that_category_alone(database, postgres_url):
    for category, titles in STORIES.items():
        store(database, category, titles)
    held = category_id(database, "경제")
    holder = Database(lambda: postgres_url)
    with holder.transaction() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s, %s)", (0x636C7573, held))
    try:
        run = cluster(database)
    finally:
        # released here, not by closing: a closed connection's backend lets go of its locks
        # only when it has exited, which the next run could beat
        with holder.transaction() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", (0x636C7573, held))
        holder.close()
    # THEN the other category is clustered, the held one left to the run holding it
    assert (run.categories_locked_out, run.categories_done) == (["경제"], ["사회"])
    assert [i.category for i in run.issues] == ["사회"]
    assert not run.locked_out
    again = cluster(database)  # the lock is free again
    assert [i.category for i in again.issues] == ["경제"]


def test_a_run_whose_every_category_is_held_is_locked_out(database, postgres_url):
    store(database, "경제", STORIES["경제"])
    held = category_id(database, "경제")
    holder = Database(lambda: postgres_url)
    with holder.transaction() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s, %s)", (0x636C7573, held))
    try:
        run = cluster(database)
    finally:
        with holder.transaction() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", (0x636C7573, held))
        holder.close()
    assert run.locked_out
    assert run.issues == []
    assert run.metric_counts()["ClusterRunsLockedOut"] == 1


def test_articles_from_the_collect_path_cluster(aws_env, database, serve):
    # GIVEN three outlets' feeds about the same event, stored by the worker function
    feed = """<rss version="2.0"><channel><title>t</title>
    <item><title>{title}</title><link>https://example.test/{outlet}/1</link></item>
    </channel></rss>"""
    titles = STORIES["사회"][:3]
    worker = container("worker")
    for n, title in enumerate(titles):
        url = serve(f"/o{n}.xml", body=feed.format(title=title, outlet=n).encode())
        event = worker_event([(url, "사회")])
        assert worker(event)["batchItemFailures"] == []
    # WHEN the cluster function runs with its event file, not waiting for the pages
    result = invoke("cluster", load_event("cluster"), CLUSTER_PENDING_WAIT_MINUTES="0")
    # THEN the three articles are one issue of 사회
    assert result["issues_created"] == 1
    assert result["issues"][0]["category"] == "사회"
    assert len(result["issues"][0]["article_ids"]) == 3
    (listed,) = list_issues(database)
    assert sorted(a["title"] for a in listed["articles"]) == sorted(titles)


@pytest.mark.parametrize("window", [0.5, 24])
def test_nothing_to_cluster_is_fine(database, window):
    run = cluster(database, window_hours=window)
    assert (run.issues, run.articles_clustered, run.articles_left_single) == ([], 0, 0)


def test_the_job_can_use_the_centroid_method(database):
    titles = [
        "수도권 첫 폭설에 출근길 교통 혼잡",
        "첫 폭설로 수도권 출근길 교통 대란",
        "수도권 폭설 출근길 교통 혼잡 이어져",
        "코스피 외국인 매수에 2,700선 회복",
    ]
    store(database, "사회", titles)
    seed = cluster(database, threshold=0.6)
    assert seed.issues == []  # the seed's word tokens do not see one story here
    centroid = cluster(database, method="centroid", threshold=DEFAULT_THRESHOLDS["centroid"])
    assert [len(i.article_ids) for i in centroid.issues] == [3]
    assert (
        cluster(database, method="centroid", threshold=DEFAULT_THRESHOLDS["centroid"]).issues == []
    )


def extracted(database, article_id, status="extract_ok", copy_of=None):
    """Record an extraction outcome for a stored article, as the extractor would."""
    with database.transaction() as cursor:
        cursor.execute(
            "INSERT INTO article_extraction (article_id, revision, status, chars, copy_of,"
            " copy_reason, extracted_at) VALUES (%s, 0, %s, 500, %s, %s, now())",
            (article_id, status, copy_of, "duplicate_by_content_hash" if copy_of else None),
        )


def test_thin_pages_and_copies_are_not_counted_and_copies_join_their_original(database):
    # GIVEN four articles of one story: one a thin page, one a copy of the first
    store(database, "사회", [*STORIES["사회"][:3], "수도권 첫 폭설 출근길 교통 혼잡 계속"])
    extracted(database, 1)
    extracted(database, 2, copy_of=1)
    extracted(database, 3, status="filtered_thin")
    # WHEN the job runs THEN only two distinct texts are left: no issue of three
    assert cluster(database).issues == []
    # AND with copies counted (CLUSTER_COPIES_COUNT) the copy makes the third
    run = cluster(database, copies_count=True)
    assert [sorted(i.article_ids) for i in run.issues] == [[1, 2, 4]]


def test_a_copy_joins_the_issue_its_original_is_in(database):
    store(database, "사회", [*STORIES["사회"][:3], "폭설 출근길 혼잡 기사 전재"])
    for article_id in (1, 2, 3):
        extracted(database, article_id)
    extracted(database, 4, copy_of=2)
    run = cluster(database)
    assert [sorted(i.article_ids) for i in run.issues] == [[1, 2, 3]]
    assert run.copies_attached == 1
    assert issued(database)[3] == (4, run.issues[0].id)
    (listed,) = list_issues(database)
    assert listed["size"] == 3
    assert [a["copy_of"] for a in listed["articles"]] == [
        None,
        None,
        None,
        {"id": 2, "reason": "duplicate_by_content_hash"},
    ]


def test_an_article_waiting_for_its_page_waits_a_while_then_is_clustered(database):
    store(database, "사회", STORIES["사회"][:3])
    with database.transaction() as cursor:  # article 3's page not extracted yet
        cursor.execute(
            "INSERT INTO extraction_outbox (article_id, revision, url) VALUES (3, 0, 'u')"
        )
    wait = timedelta(minutes=30)
    assert cluster(database, pending_wait=wait).issues == []
    later = cluster(database, clock=lambda: NOW + timedelta(minutes=31), pending_wait=wait)
    assert [sorted(i.article_ids) for i in later.issues] == [[1, 2, 3]]


def test_a_run_as_if_it_were_earlier_sees_no_later_article(database):
    # GIVEN one story collected two hours ago and another now
    store(database, "사회", STORIES["사회"][:3], collected_at=NOW - timedelta(hours=2))
    store(database, "경제", STORIES["경제"][:3], collected_at=NOW, start=10)
    # WHEN a run is replayed as of an hour ago THEN it sees the first story only
    earlier = cluster(database, clock=lambda: NOW - timedelta(hours=1))
    assert [(i.category, len(i.article_ids)) for i in earlier.issues] == [("사회", 3)]
    # AND the run at now finds the second
    assert [i.category for i in cluster(database).issues] == ["경제"]


def test_the_cluster_function_replays_the_time_its_event_names(database, postgres_url):
    store(database, "사회", STORIES["사회"][:3], collected_at=NOW - timedelta(hours=2))
    store(database, "경제", STORIES["경제"][:3], collected_at=NOW, start=10)
    replay = load_event("cluster") | {"at": format_time(NOW - timedelta(hours=1))}
    run = invoke("cluster", replay, DATABASE_URL=postgres_url)
    assert [i["category"] for i in run["issues"]] == ["사회"]
    with pytest.raises(MessageError, match="'at' is not an ISO 8601 time"):
        invoke("cluster", load_event("cluster") | {"at": "yesterday"}, DATABASE_URL=postgres_url)
