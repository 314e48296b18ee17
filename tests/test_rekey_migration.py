"""Migration 0010 (issue 23): the rows stored under the keys the earlier canonical-URL rule gave
(a default port dropped whatever the scheme, every key https, IPv6 addresses as spelled) are
re-keyed to the rule's new keys, so that an article that comes back finds its row."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from newsdesk.core.entry import Entry
from newsdesk.storage.articles import Article, ArticleStore
from newsdesk.storage.database import Database
from newsdesk.storage.migrate import available
from newsdesk.urls import canonical_url

NOW = datetime(2026, 12, 1, tzinfo=UTC)
MIGRATION = dict(available())["0010_canonical_ports_ipv6"]

# (the link as the feed gave it, the key the earlier rule gave it: newsdesk.collect.urls at
# 619ecd6, run on each)
STORED = [
    ("https://h.test:80/a", "https://h.test/a"),
    ("http://h.test:443/b", "https://h.test/b"),
    ("http://h.test:8080/c?x=1", "https://h.test:8080/c?x=1"),
    ("HTTP://user@H.test:0443/d", "https://h.test/d"),
    ("https://h.test:000080/n", "https://h.test/n"),
    ("http://[2001:DB8:0:0::1]/e", "https://[2001:db8:0:0::1]/e"),
    ("https://[2001:db8:0:0::1]:80/f", "https://[2001:db8:0:0::1]/f"),
    ("http://[::ffff:192.0.2.1]:8080/g", "https://[::ffff:192.0.2.1]:8080/g"),
    ("http://[fe80::0:1%25eth0]/h", "https://[fe80::0:1%25eth0]/h"),
    # keys the new rule gives alike
    ("https://h.test:443/i", "https://h.test/i"),
    ("http://h.test:80/j", "https://h.test/j"),
    ("https://h.test:8443/k", "https://h.test:8443/k"),
    ("https://plain.test/l", "https://plain.test/l"),
    ("https://h.test:99999/m", "https://h.test:99999/m"),  # no port that reads: no key made
]


def store(database: Database, rows: list[tuple[str, str]]) -> None:
    with database.transaction() as cursor:
        cursor.execute("INSERT INTO category (name) VALUES ('정치') RETURNING id")
        category = cursor.fetchone()[0]  # type: ignore[index]
        for n, (origin, key) in enumerate(rows):
            cursor.execute(
                "INSERT INTO raw_article (origin_url, canonical_url, source, title, category_id,"
                " collected_at) VALUES (%s, %s, '연합뉴스', %s, %s, %s)",
                (origin, key, f"기사 {n}", category, NOW),
            )


def keys(database: Database) -> dict[str, str]:
    with database.transaction() as cursor:
        cursor.execute("SELECT origin_url, canonical_url FROM raw_article ORDER BY id")
        return dict(cursor.fetchall())


def rekey(database: Database) -> None:
    with database.transaction() as cursor:
        cursor.execute(MIGRATION)


def test_stored_rows_are_rekeyed_to_the_new_rule(database):
    # GIVEN rows stored under the earlier rule's keys
    store(database, STORED)
    assert [canonical_url(origin) == key for origin, key in STORED].count(False) == 9
    # WHEN the migration runs THEN every row's key is the one the rule gives its link now
    rekey(database)
    assert keys(database) == {origin: canonical_url(origin) for origin, _ in STORED}
    # AND again, nothing changes
    rekey(database)
    assert keys(database) == {origin: canonical_url(origin) for origin, _ in STORED}


@pytest.fixture
def collided(database: Database) -> Database:
    # two spellings of one IPv6 address, stored as two articles under the earlier rule
    store(
        database,
        [
            ("http://[2001:db8:0:0::1]/x", "https://[2001:db8:0:0::1]/x"),
            ("http://[2001:db8::1]/x", "https://[2001:db8::1]/x"),
        ],
    )
    return database


def test_a_row_whose_new_key_another_row_has_keeps_its_key(collided):
    rekey(collided)
    assert list(keys(collided).values()) == [
        "https://[2001:db8:0:0::1]/x",
        "https://[2001:db8::1]/x",
    ]


def test_an_article_that_comes_back_finds_its_rekeyed_row(database):
    store(database, STORED)
    rekey(database)
    articles = ArticleStore(database)

    def entry(link: str) -> Article:
        item = Entry(title="제목", link=link, summary="", guid=None, published_at=None)
        return Article(item, canonical_url(link))

    # WHEN the links come back, spelled otherwise, beside two the new rule keeps apart
    again = [entry("HTTPS://H.TEST:80/a#top"), entry("http://H.test:443/b/")]
    again += [entry("http://[2001:db8::1]/e"), entry("https://[2001:db8::1]:80/f")]
    new = [entry("https://h.test/a"), entry("https://h.test/b")]  # were those rows' keys
    result = articles.insert_articles("연합뉴스", "정치", [*again, *new], NOW)
    # THEN the four find their rows by key, and the two are stored
    assert (result.duplicate_url, result.inserted) == (4, 2)
