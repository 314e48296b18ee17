"""The article store: feed entries in, ``raw_article`` rows out, each stored once by its
canonical URL (and, within an outlet, its guid). A stored article whose entry comes back with
another title, or a time moved later by ``REVISION_MIN_MOVE`` or more, is revised: its earlier
title kept in ``article_revision``, ``revision`` and ``last_changed_at`` set. With an
``Outbox``, each new or revised article gets an ``extraction_outbox`` row in the same
transaction (newsdesk.storage.extractions relays them to the article queue).

What is stored is bounded (``newsdesk.core.bounds``): an entry whose link or canonical URL is
over a key's bound is refused, a guid over it left out, a title or summary over its bound cut
(counted ``truncated``), NUL and lone surrogates removed. An entry PostgreSQL still refuses
for its data (a limit, a value it cannot hold) is refused alone, the rest stored: the batch is
stored again one entry a transaction, and each refused one counted ``unstorable`` and logged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import psycopg2.extensions
import psycopg2.extras
from aws_lambda_powertools import Logger

from newsdesk.core.bounds import (
    MAX_KEY_BYTES,
    SUMMARY_MAX_CHARS,
    TITLE_MAX_CHARS,
    capped,
    fits_a_key,
    storable,
)
from newsdesk.core.entry import Entry
from newsdesk.core.errors import StoreDataError
from newsdesk.storage.database import Database

logger = Logger(child=True)


@dataclass(frozen=True)
class Article:
    entry: Entry
    canonical_url: str


REVISION_MIN_MOVE = timedelta(minutes=10)  # a smaller move of an entry's time is noise


@dataclass(frozen=True)
class Outbox:
    """Queue new and revised articles for extraction (the outlet's minimum text, if it has
    one)."""

    min_chars: int | None = None


@dataclass(frozen=True)
class InsertResult:
    inserted: int
    duplicate_url: int = 0  # an article with the same canonical URL is stored
    duplicate_guid: int = 0  # the same outlet's article with the same guid is stored
    revised: int = 0  # of the duplicates, those whose title or time changed
    truncated: int = 0  # entries whose title or summary was cut to its bound
    unstorable: int = 0  # entries refused: a key over its bound, or data PostgreSQL refused

    @property
    def skipped(self) -> int:
        return self.duplicate_url + self.duplicate_guid

    def __add__(self, other: InsertResult) -> InsertResult:
        return InsertResult(
            *(getattr(self, f) + getattr(other, f) for f in self.__dataclass_fields__)
        )


class ArticleStore:
    def __init__(self, database: Database) -> None:
        self._db = database

    def insert_articles(
        self,
        source: str,
        category: str,
        articles: Sequence[Article],
        seen_at: datetime,
        outbox: Outbox | None = None,
        revise: bool = True,
    ) -> InsertResult:
        """Store what is new, in one transaction; for what is stored already, note that it was
        seen again, say by which key it matched, and revise what changed. ``articles`` have
        distinct canonical URLs."""
        bounded, truncated, refused = _bounded(articles)
        if refused:
            logger.warning(
                "entry refused by the store",
                extra={
                    "outlet": source,
                    "entries": refused,
                    "error": f"a link or canonical URL over {MAX_KEY_BYTES} bytes",
                },
            )
        if not bounded:
            return InsertResult(0, truncated=truncated, unstorable=refused)
        try:
            stored = self._insert(source, category, bounded, seen_at, outbox, revise)
        except StoreDataError as e:
            if len(bounded) == 1:
                logger.warning(
                    "entry refused by the store",
                    extra={"outlet": source, "error": str(e), "title": bounded[0].entry.title},
                )
                stored = InsertResult(0, unstorable=1)
            else:  # which one: each alone (bounded already), the others stored
                stored = InsertResult(0)
                for article in bounded:
                    stored += self.insert_articles(
                        source, category, [article], seen_at, outbox, revise
                    )
        return stored + InsertResult(0, truncated=truncated, unstorable=refused)

    def _insert(
        self,
        source: str,
        category: str,
        articles: Sequence[Article],
        seen_at: datetime,
        outbox: Outbox | None,
        revise: bool,
    ) -> InsertResult:
        with self._db.transaction() as cursor:
            category_id = _category_id(cursor, category)
            by_url, by_guid, fresh, stored = _split_stored(cursor, source, articles)
            _mark_seen(cursor, source, by_url, by_guid, seen_at)
            revised = _revise(cursor, stored, seen_at) if revise else []
            inserted = _insert(cursor, source, category_id, fresh, seen_at)
            if outbox is not None:
                _enqueue(cursor, inserted + revised, outbox, seen_at)
        # A fresh row that still conflicted was stored by a concurrent worker meanwhile.
        raced = len(fresh) - len(inserted)
        return InsertResult(len(inserted), len(by_url) + raced, len(by_guid), len(revised))


Cursor = psycopg2.extensions.cursor


def _bounded(articles: Sequence[Article]) -> tuple[list[Article], int, int]:
    """The articles as they can be stored, how many had a text cut, how many were refused
    (a link or canonical URL over a key's bound)."""
    kept: list[Article] = []
    truncated = refused = 0
    for article in articles:
        entry = article.entry
        link, canonical = storable(entry.link), storable(article.canonical_url)
        if not (fits_a_key(link) and fits_a_key(canonical)):
            refused += 1
            continue
        guid = storable(entry.guid) if entry.guid else None
        title, summary = storable(entry.title), storable(entry.summary)
        cut_title, cut_summary = capped(title, TITLE_MAX_CHARS), capped(summary, SUMMARY_MAX_CHARS)
        truncated += cut_title != title or cut_summary != summary
        bounded = replace(
            entry,
            title=cut_title,
            link=link,
            summary=cut_summary,
            guid=guid if guid and fits_a_key(guid) else None,
        )
        kept.append(Article(bounded, canonical))
    return kept, truncated, refused


@dataclass(frozen=True)
class _Stored:
    """A stored row an entry matched, as it was, and the entry."""

    id: int
    url: str
    title: str
    published_at: datetime | None
    entry: Entry

    @property
    def changed(self) -> bool:
        if self.entry.title != self.title:
            return True
        new, old = self.entry.published_at, self.published_at
        return new is not None and old is not None and new - old >= REVISION_MIN_MOVE


def _split_stored(
    cursor: Cursor, source: str, articles: Sequence[Article]
) -> tuple[list[Article], list[Article], list[Article], list[_Stored]]:
    """(stored under the same canonical URL, stored under the outlet's same guid, fresh, and
    the stored rows the first two matched)."""
    cursor.execute(
        """
        SELECT canonical_url, id, origin_url, title, published_at
        FROM raw_article WHERE canonical_url = ANY(%s)
        """,
        ([a.canonical_url for a in articles],),
    )
    stored_urls = {row[0]: row[1:] for row in cursor.fetchall()}
    cursor.execute(
        """
        SELECT guid, id, origin_url, title, published_at
        FROM raw_article WHERE source = %s AND guid = ANY(%s)
        """,
        (source, [a.entry.guid for a in articles if a.entry.guid]),
    )
    stored_guids = {row[0]: row[1:] for row in cursor.fetchall()}
    by_url: list[Article] = []
    by_guid: list[Article] = []
    fresh: list[Article] = []
    stored: dict[int, _Stored] = {}
    for article in articles:
        if article.canonical_url in stored_urls:
            by_url.append(article)
            row = stored_urls[article.canonical_url]
        elif article.entry.guid and article.entry.guid in stored_guids:
            by_guid.append(article)
            row = stored_guids[article.entry.guid]
        else:
            fresh.append(article)
            continue
        stored.setdefault(row[0], _Stored(row[0], row[1], row[2], row[3], article.entry))
    return by_url, by_guid, fresh, list(stored.values())


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


def _revise(cursor: Cursor, stored: list[_Stored], seen_at: datetime) -> list[_Queued]:
    """Revise the rows whose entry changed: the new title and time stored, the old kept in
    article_revision, what was queued of an earlier revision dropped."""
    revised: list[_Queued] = []
    for row in (row for row in stored if row.changed):
        cursor.execute(
            """
            UPDATE raw_article
            SET title = %s, published_at = COALESCE(%s, published_at),
                revision = revision + 1, last_changed_at = %s
            WHERE id = %s
            RETURNING revision
            """,
            (row.entry.title, row.entry.published_at, seen_at, row.id),
        )
        revision = int(cursor.fetchone()[0])  # type: ignore[index]
        cursor.execute(
            """
            INSERT INTO article_revision (article_id, revision, title, published_at, changed_at)
            VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING
            """,
            (row.id, revision, row.title, row.published_at, seen_at),
        )
        cursor.execute(
            "DELETE FROM extraction_outbox WHERE article_id = %s AND revision < %s",
            (row.id, revision),
        )
        revised.append((row.id, revision, row.url))
    return revised


_Queued = tuple[int, int, str]  # (article id, revision, link)


def _enqueue(cursor: Cursor, rows: list[_Queued], outbox: Outbox, at: datetime) -> None:
    if not rows:
        return
    psycopg2.extras.execute_values(
        cursor,
        """
        INSERT INTO extraction_outbox (article_id, revision, url, min_chars, not_before,
                                       enqueued_at)
        VALUES %s ON CONFLICT DO NOTHING
        """,
        [
            (article_id, revision, url, outbox.min_chars, at, at)
            for article_id, revision, url in rows
        ],
    )


def _insert(
    cursor: Cursor, source: str, category_id: int, fresh: list[Article], seen_at: datetime
) -> list[_Queued]:
    """Insert ``fresh``; return the rows that went in (a conflict inserts nothing)."""
    if not fresh:
        return []
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
        RETURNING id, revision, origin_url
        """,
        rows,
        template=f"(%s, %s, %s, %s, %s, %s, %s, {seen}, {seen}, {seen}, {int(category_id)})",
        page_size=500,
        fetch=True,
    )
    return [(int(i), int(r), str(u)) for i, r, u in inserted]


def _category_id(cursor: Cursor, name: str) -> int:
    cursor.execute("INSERT INTO category (name) VALUES (%s) ON CONFLICT (name) DO NOTHING", (name,))
    cursor.execute("SELECT id FROM category WHERE name = %s", (name,))
    row = cursor.fetchone()
    assert row is not None
    return int(row[0])
