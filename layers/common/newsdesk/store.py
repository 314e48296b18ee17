"""PostgreSQL: one connection per container, reused and re-opened when it has gone bad, and the
article store on top of it. Every psycopg2 error leaves here as a StoreError."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

import psycopg2
import psycopg2.extensions
import psycopg2.extras

from newsdesk.errors import StoreError
from newsdesk.parse import Entry

CONNECT_TIMEOUT_SECONDS = 5


class Database:
    """Holds the container's connection. ``dsn`` is a callable so that a secret is fetched only
    when a connection is actually opened."""

    def __init__(self, dsn: Callable[[], str]) -> None:
        self._dsn = dsn
        self._conn: psycopg2.extensions.connection | None = None

    def connection(self) -> psycopg2.extensions.connection:
        if self._conn is None or self._conn.closed:
            try:
                self._conn = psycopg2.connect(
                    self._dsn(),
                    connect_timeout=CONNECT_TIMEOUT_SECONDS,
                    application_name="newsdesk",
                )
            except psycopg2.Error as e:
                raise StoreError(f"cannot connect to PostgreSQL: {e}".strip()) from e
        return self._conn

    @contextlib.contextmanager
    def transaction(self) -> Iterator[psycopg2.extensions.cursor]:
        """A cursor in one transaction: committed on success, rolled back on any error. A
        connection-level failure drops the connection so the next call opens a new one."""
        conn = self.connection()
        try:
            with conn, conn.cursor() as cursor:
                yield cursor
        except (psycopg2.OperationalError, psycopg2.InterfaceError) as e:
            self.close()
            raise StoreError(f"PostgreSQL connection failed: {e}".strip()) from e
        except psycopg2.Error as e:
            raise StoreError(f"PostgreSQL error: {e}".strip()) from e

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(psycopg2.Error):
                self._conn.close()
            self._conn = None


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
        canonicals = [a.canonical_url for a in articles]
        guids = [a.entry.guid for a in articles if a.entry.guid]
        with self._db.transaction() as cursor:
            category_id = _category_id(cursor, category)
            cursor.execute(
                "SELECT canonical_url FROM raw_article WHERE canonical_url = ANY(%s)",
                (canonicals,),
            )
            stored_urls = {row[0] for row in cursor.fetchall()}
            cursor.execute(
                "SELECT guid FROM raw_article WHERE source = %s AND guid = ANY(%s)",
                (source, guids),
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
            cursor.execute(
                """
                UPDATE raw_article SET last_seen_at = %s
                WHERE canonical_url = ANY(%s) OR (source = %s AND guid = ANY(%s))
                """,
                (
                    seen_at,
                    [a.canonical_url for a in by_url],
                    source,
                    [a.entry.guid for a in by_guid],
                ),
            )
            inserted = (
                psycopg2.extras.execute_values(
                    cursor,
                    """
                INSERT INTO raw_article
                    (origin_url, canonical_url, source, title, summary, guid, published_at,
                     collected_at, first_seen_at, last_seen_at, category_id)
                VALUES %s
                ON CONFLICT DO NOTHING
                RETURNING id
                """,
                    [
                        (
                            a.entry.link,
                            a.canonical_url,
                            source,
                            a.entry.title,
                            a.entry.summary,
                            a.entry.guid,
                            a.entry.published_at,
                            seen_at,
                            seen_at,
                            seen_at,
                        )
                        for a in fresh
                    ],
                    template=f"(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, {int(category_id)})",
                    page_size=500,
                    fetch=True,
                )
                if fresh
                else []
            )
        # A fresh row that still conflicted was stored by a concurrent worker meanwhile.
        raced = len(fresh) - len(inserted)
        return InsertResult(len(inserted), len(by_url) + raced, len(by_guid))


def _category_id(cursor: psycopg2.extensions.cursor, name: str) -> int:
    cursor.execute("INSERT INTO category (name) VALUES (%s) ON CONFLICT (name) DO NOTHING", (name,))
    cursor.execute("SELECT id FROM category WHERE name = %s", (name,))
    row = cursor.fetchone()
    assert row is not None
    return int(row[0])
