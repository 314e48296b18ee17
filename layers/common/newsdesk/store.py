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
class InsertResult:
    inserted: int
    skipped: int


class ArticleStore:
    def __init__(self, database: Database) -> None:
        self._db = database

    def insert_articles(
        self, source: str, category: str, entries: Sequence[Entry], collected_at: datetime
    ) -> InsertResult:
        """Insert in one statement; a link already stored, or twice in ``entries``, is skipped."""
        if not entries:
            return InsertResult(0, 0)
        rows = [
            (e.link, source, e.title, e.summary, e.guid, e.published_at, collected_at)
            for e in entries
        ]
        with self._db.transaction() as cursor:
            category_id = _category_id(cursor, category)
            inserted = psycopg2.extras.execute_values(
                cursor,
                """
                INSERT INTO raw_article
                    (origin_url, source, title, summary, guid, published_at, collected_at,
                     category_id)
                VALUES %s
                ON CONFLICT (origin_url) DO NOTHING
                RETURNING id
                """,
                rows,
                template=f"(%s, %s, %s, %s, %s, %s, %s, {int(category_id)})",
                page_size=500,
                fetch=True,
            )
        return InsertResult(inserted=len(inserted), skipped=len(rows) - len(inserted))


def _category_id(cursor: psycopg2.extensions.cursor, name: str) -> int:
    cursor.execute("INSERT INTO category (name) VALUES (%s) ON CONFLICT (name) DO NOTHING", (name,))
    cursor.execute("SELECT id FROM category WHERE name = %s", (name,))
    row = cursor.fetchone()
    assert row is not None
    return int(row[0])
