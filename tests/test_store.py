from datetime import UTC, datetime

import psycopg2
import pytest

from newsdesk.core.entry import Entry
from newsdesk.core.errors import StoreError
from newsdesk.storage.articles import Article, ArticleStore
from newsdesk.storage.database import Database
from newsdesk.storage.migrate import available, migrate
from newsdesk.urls import canonical_url

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def entry(n: int, title: str = "제목", guid: str | None = None, link: str = "") -> Article:
    link = link or f"https://example.test/a/{n}"
    item = Entry(title=f"{title} {n}", link=link, summary="", guid=guid, published_at=None)
    return Article(item, canonical_url(link))


def rows(database: Database) -> list[tuple[object, ...]]:
    with database.transaction() as cursor:
        cursor.execute(
            "SELECT a.origin_url, a.source, c.name, a.title FROM raw_article a "
            "JOIN category c ON c.id = a.category_id ORDER BY a.id"
        )
        return cursor.fetchall()


def test_migrations_apply_once(database):
    assert migrate(database) == []  # the fixture applied them already
    with database.transaction() as cursor:
        cursor.execute("SELECT version FROM schema_migration ORDER BY version")
        assert [r[0] for r in cursor.fetchall()] == [v for v, _ in available()]


def test_insert_counts_new_and_skipped(database):
    store = ArticleStore(database)
    first = store.insert_articles("연합뉴스", "정치", [entry(1), entry(2)], NOW)
    second = store.insert_articles("연합뉴스", "정치", [entry(2), entry(3)], NOW)
    assert (first.inserted, first.skipped) == (2, 0)
    assert (second.inserted, second.skipped) == (1, 1)
    assert [r[0] for r in rows(database)] == [f"https://example.test/a/{n}" for n in (1, 2, 3)]


def test_the_same_link_twice_in_one_batch_is_stored_once(database):
    result = ArticleStore(database).insert_articles("뉴시스", "경제", [entry(1), entry(1)], NOW)
    assert (result.inserted, result.skipped) == (1, 1)
    assert rows(database) == [("https://example.test/a/1", "뉴시스", "경제", "제목 1")]


def test_bulk_insert_pages_through_many_rows(database):
    entries = [entry(n) for n in range(1234)]
    result = ArticleStore(database).insert_articles("한겨레", "사회", entries, NOW)
    assert result.inserted == 1234
    assert len(rows(database)) == 1234


def test_unreachable_database_is_a_store_error():
    database = Database(lambda: "postgresql://newsdesk@127.0.0.1:9/none")
    with pytest.raises(StoreError, match="cannot connect"):
        ArticleStore(database).insert_articles("A", "정치", [entry(1)], NOW)


def test_a_broken_connection_is_reopened(database):
    store = ArticleStore(database)
    store.insert_articles("A", "정치", [entry(1)], NOW)
    # GIVEN the server ends our session (as a failover or idle timeout would)
    with database.transaction() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    killer = psycopg2.connect(database._dsn())
    with killer, killer.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", (pid,))
    killer.close()
    # WHEN the next insert fails THEN it is a StoreError and nothing half-written stays
    with pytest.raises(StoreError):
        store.insert_articles("A", "정치", [entry(2)], NOW)
    # AND the call after that works on a new connection
    assert store.insert_articles("A", "정치", [entry(2)], NOW).inserted == 1
    assert len(rows(database)) == 2


def test_duplicates_are_told_apart_by_key_and_seen_again(database):
    store = ArticleStore(database)
    later = datetime(2026, 12, 1, 6, tzinfo=UTC)
    store.insert_articles("연합뉴스", "정치", [entry(1, guid="yna-1")], NOW)
    result = store.insert_articles(
        "연합뉴스",
        "정치",
        [
            entry(1, link="http://EXAMPLE.test/a/1/?utm_source=rss"),  # same canonical URL
            entry(2, guid="yna-1", link="https://example.test/moved/1"),  # same guid
            entry(3, guid="yna-3"),
        ],
        later,
    )
    assert (result.inserted, result.duplicate_url, result.duplicate_guid) == (1, 1, 1)
    with database.transaction() as cursor:
        cursor.execute(
            "SELECT origin_url, canonical_url, first_seen_at, last_seen_at FROM raw_article "
            "ORDER BY id"
        )
        rows = cursor.fetchall()
    assert rows[0] == ("https://example.test/a/1", "https://example.test/a/1", NOW, later)
    assert rows[1][1:] == ("https://example.test/a/3", later, later)


def test_a_guid_of_another_outlet_is_no_duplicate(database):
    store = ArticleStore(database)
    store.insert_articles("A", "정치", [entry(1, guid="1")], NOW)
    assert store.insert_articles("B", "정치", [entry(2, guid="1")], NOW).inserted == 1
