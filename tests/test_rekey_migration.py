"""Migrations 0010 and 0012 (issue 23): the rows stored under the keys the earlier canonical-URL
rule gave (a default port dropped whatever the scheme, every key https, IPv6 addresses as
spelled) are re-keyed to the rule's new keys, so that an article that comes back finds its row
(0010, raw_article.canonical_url) and a copy of a page finds its original (0012,
article_extraction.page_key)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from newsdesk.core.entry import Entry
from newsdesk.extract.page import sane_canonical
from newsdesk.storage.articles import Article, ArticleStore
from newsdesk.storage.database import Database
from newsdesk.storage.extractions import ExtractionStore
from newsdesk.storage.migrate import available
from newsdesk.urls import canonical_url

NOW = datetime(2026, 12, 1, tzinfo=UTC)
MIGRATION = dict(available())["0010_canonical_ports_ipv6"]
PAGE_KEYS = dict(available())["0012_page_keys_event_refusals"]

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


# --- page keys (0012) ----------------------------------------------------------------------

# (the page's final URL, its <link rel="canonical">, the page key the earlier rule gave the
# canonical when it was kept, else the final URL: newsdesk.collect.urls at 619ecd6, run on each)
PAGES = [
    ("https://h.test:80/view/1", None, "https://h.test/view/1"),
    ("http://h.test:443/view/2", None, "https://h.test/view/2"),
    ("http://h.test:8080/view/3?x=1", None, "https://h.test:8080/view/3?x=1"),
    ("http://[2001:DB8:0:0::1]/view/4", None, "https://[2001:db8:0:0::1]/view/4"),
    ("https://h.test/view/5", "http://h.test:8080/story/5", "https://h.test:8080/story/5"),
    ("http://h.test:8080/view/6", "/story/6", "https://h.test:8080/story/6"),
    ("http://h.test/view/7", "//h.test:443/story/7", "https://h.test/story/7"),
    ("https://h.test:80/view/8", "https://h.test/", "https://h.test/view/8"),  # a site root
    ("https://[2001:db8:0:0::1]:80/view/9", " /story/9 ", "https://[2001:db8:0:0::1]/story/9"),
    # keys the new rule gives alike
    ("https://h.test:443/view/10", None, "https://h.test/view/10"),
    ("https://plain.test/view/11", "https://plain.test/story/11", "https://plain.test/story/11"),
    ("http://h.test:8080/view/12", "https://h.test/story/12", "https://h.test/story/12"),
]


def new_page_key(final_url: str, canonical: str | None) -> str:
    """The key the extractor gives the page now (newsdesk.extract.extractor)."""
    kept, _ = sane_canonical(canonical, final_url)
    return canonical_url(kept or final_url)


def store_pages(database: Database, pages: list[tuple[str, str | None, str]]) -> list[int]:
    """One article (linked to another address) a page, extracted under the earlier rule."""
    store(
        database,
        [(f"https://feed.test/a/{n}", f"https://feed.test/a/{n}") for n in range(len(pages))],
    )
    with database.transaction() as cursor:
        cursor.execute("SELECT id FROM raw_article ORDER BY id")
        ids = [int(row[0]) for row in cursor.fetchall()]
        for article_id, (final_url, canonical, key) in zip(ids, pages, strict=True):
            cursor.execute(
                "INSERT INTO article_extraction (article_id, revision, status, final_url,"
                " page_canonical, canonical_ignored, page_key, extracted_at)"
                " VALUES (%s, 0, 'extract_ok', %s, %s, %s, %s, %s)",
                (
                    article_id,
                    final_url,
                    canonical,
                    sane_canonical(canonical, final_url)[1],
                    key,
                    NOW,
                ),
            )
    return ids


def page_keys(database: Database) -> list[str]:
    with database.transaction() as cursor:
        cursor.execute("SELECT page_key FROM article_extraction ORDER BY article_id")
        return [row[0] for row in cursor.fetchall()]


def rekey_pages(database: Database) -> None:
    with database.transaction() as cursor:
        cursor.execute(PAGE_KEYS)


def test_page_keys_are_rekeyed_to_the_new_rule(database):
    # GIVEN pages extracted under the earlier rule: nine of their keys the new rule makes otherwise
    store_pages(database, PAGES)
    expected = [new_page_key(final_url, canonical) for final_url, canonical, _ in PAGES]
    assert [key for *_, key in PAGES] != expected
    assert sum(old != new for (*_, old), new in zip(PAGES, expected, strict=True)) == 9
    # WHEN the migration runs THEN every page key is the one the extractor gives that page now
    rekey_pages(database)
    assert page_keys(database) == expected
    # AND again, nothing changes
    rekey_pages(database)
    assert page_keys(database) == expected


def test_a_copy_on_an_explicit_port_finds_its_original_after_the_rekey(database):
    # GIVEN an original whose page (on :80 of an https host) was extracted under the earlier rule
    (original,) = store_pages(database, [PAGES[0]])
    extractions = ExtractionStore(database)
    copy_key = new_page_key(PAGES[0][0], None)  # a copy of that page, extracted now
    assert extractions.by_key(0, copy_key) == set()  # before: the copy went unrecognised
    # WHEN the page keys are re-keyed THEN the copy's key finds the original
    rekey_pages(database)
    assert extractions.by_key(0, copy_key) == {original}
