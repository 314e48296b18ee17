"""The article store: feed entries in, ``raw_article`` rows out, each stored once by its
canonical URL (and, within an outlet, its guid)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import psycopg2.extensions
import psycopg2.extras

from newsdesk.core.entry import Entry
from newsdesk.storage.database import Database


@dataclass(frozen=True)
class Article:
    entry: Entry
    canonical_url: str


@dataclass(frozen=True)
class InsertResult:
    inserted: int
    duplicate_url: int = 0  # an article with the same canonical URL is stored
    duplicate_guid: int = 0  # the same outlet's article with the same guid is stored

    @property
    def skipped(self) -> int:
        return self.duplicate_url + self.duplicate_guid


class ArticleStore:
    def __init__(self, database: Database) -> None:
        self._db = database

    def insert_articles(
        self, source: str, category: str, articles: Sequence[Article], seen_at: datetime
    ) -> InsertResult:
        """Store what is new, in one transaction; for what is stored already, note that it was
        seen again and say by which key it matched. ``articles`` have distinct canonical URLs."""
        if not articles:
            return InsertResult(0)
        with self._db.transaction() as cursor:
            category_id = _category_id(cursor, category)
            by_url, by_guid, fresh = _split_stored(cursor, source, articles)
            _mark_seen(cursor, source, by_url, by_guid, seen_at)
            inserted = _insert(cursor, source, category_id, fresh, seen_at)
        # A fresh row that still conflicted was stored by a concurrent worker meanwhile.
        raced = len(fresh) - inserted
        return InsertResult(inserted, len(by_url) + raced, len(by_guid))


Cursor = psycopg2.extensions.cursor


def _split_stored(
    cursor: Cursor, source: str, articles: Sequence[Article]
) -> tuple[list[Article], list[Article], list[Article]]:
    """(stored under the same canonical URL, stored under the outlet's same guid, fresh)."""
    cursor.execute(
        "SELECT canonical_url FROM raw_article WHERE canonical_url = ANY(%s)",
        ([a.canonical_url for a in articles],),
    )
    stored_urls = {row[0] for row in cursor.fetchall()}
    cursor.execute(
        "SELECT guid FROM raw_article WHERE source = %s AND guid = ANY(%s)",
        (source, [a.entry.guid for a in articles if a.entry.guid]),
    )
    stored_guids = {row[0] for row in cursor.fetchall()}
    by_url: list[Article] = []
    by_guid: list[Article] = []
    fresh: list[Article] = []
    for article in articles:
        if article.canonical_url in stored_urls:
            by_url.append(article)
        elif article.entry.guid and article.entry.guid in stored_guids:
            by_guid.append(article)
        else:
            fresh.append(article)
    return by_url, by_guid, fresh


def _mark_seen(
    cursor: Cursor,
    source: str,
    by_url: list[Article],
    by_guid: list[Article],
    seen_at: datetime,
) -> None:
    cursor.execute(
        """
        UPDATE raw_article SET last_seen_at = %s
        WHERE canonical_url = ANY(%s) OR (source = %s AND guid = ANY(%s))
        """,
        (seen_at, [a.canonical_url for a in by_url], source, [a.entry.guid for a in by_guid]),
    )


def _insert(
    cursor: Cursor, source: str, category_id: int, fresh: list[Article], seen_at: datetime
) -> int:
    """Insert ``fresh``; return how many rows went in (a conflict inserts nothing)."""
    if not fresh:
        return 0
    rows = [
        (
            a.entry.link,
            a.canonical_url,
            source,
            a.entry.title,
            a.entry.summary,
            a.entry.guid,
            a.entry.published_at,
        )
        for a in fresh
    ]
    # the same for every row: adapted once (a third of the client's time went to datetimes)
    seen = cursor.mogrify("%s", (seen_at,)).decode()
    inserted = psycopg2.extras.execute_values(
        cursor,
        """
        INSERT INTO raw_article
            (origin_url, canonical_url, source, title, summary, guid, published_at,
             collected_at, first_seen_at, last_seen_at, category_id)
        VALUES %s
        ON CONFLICT DO NOTHING
        RETURNING id
        """,
        rows,
        template=f"(%s, %s, %s, %s, %s, %s, %s, {seen}, {seen}, {seen}, {int(category_id)})",
        page_size=500,
        fetch=True,
    )
    return len(inserted)


def _category_id(cursor: Cursor, name: str) -> int:
    cursor.execute("INSERT INTO category (name) VALUES (%s) ON CONFLICT (name) DO NOTHING", (name,))
    cursor.execute("SELECT id FROM category WHERE name = %s", (name,))
    row = cursor.fetchone()
    assert row is not None
    return int(row[0])
