"""The extraction stage's tables: the outbox the worker writes and the relay sends, each
article's extraction with its copy key, and the near-duplicate index (migration 0004).

An outbox row is the truth of "to be extracted": the extractor works on a message only while
its row exists and is due, and deletes the row in the transaction that records the outcome,
so a message delivered twice, or sent twice by the relay, records nothing twice. A failure to
fetch a page never replaces an extraction that gave text (a revision's page that timed out
leaves the earlier revision's text, copy key and sketch as they were).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, fields, replace
from datetime import datetime, timedelta

import psycopg2.extensions
import psycopg2.extras
from psycopg2 import sql

from newsdesk.core.bounds import TITLE_MAX_CHARS, capped, fits_a_key, storable
from newsdesk.storage.database import Database
from newsdesk.storage.outbox import Batch, Sent, relay_batch

Cursor = psycopg2.extensions.cursor

# Copy reasons (the article's ``copy_of`` says of which).
BY_CANONICAL_URL = "duplicate_by_canonical_url"
BY_CONTENT_HASH = "duplicate_by_content_hash"
BY_NEAR_DUPLICATE = "duplicate_by_near_duplicate"

_COPIES_LOCK_KEY = 0x636F7079  # "copy"
# What a page says of itself, cut to a title's bound (a 2 MB <title> is still a title).
_TITLE_LIKE = ("page_title", "og_title", "page_published", "author", "language", "reason")
_MAX_CHAIN = 8
RESEND_AFTER = timedelta(hours=3)  # longer than a message can wait and be received 3 times
MAX_SENDS = 5


@dataclass(frozen=True)
class OutboxRow:
    article_id: int
    revision: int
    url: str
    min_chars: int | None
    attempts: int
    sends: int


@dataclass(frozen=True)
class PendingArticle:
    """An article whose extraction (of ``revision``) is due, as the extractor needs it."""

    id: int
    revision: int
    url: str  # the link as the feed gave it
    canonical_url: str
    source: str
    title: str
    min_chars: int | None
    attempts: int


@dataclass(frozen=True)
class Extraction:
    """What one page gave; the row of ``article_extraction``."""

    article_id: int
    revision: int
    status: str
    reason: str | None
    chars: int
    extracted_at: datetime
    text: str | None = None
    content_hash: str | None = None
    http_status: int | None = None
    final_url: str | None = None
    page_canonical: str | None = None
    canonical_ignored: str | None = None
    page_key: str | None = None
    page_title: str | None = None
    og_title: str | None = None
    page_published: str | None = None
    author: str | None = None
    language: str | None = None
    raw_key: str | None = None
    min_chars: int | None = None
    copy_of: int | None = None
    copy_reason: str | None = None


_COLUMNS = tuple(f.name for f in fields(Extraction))
_UPSERT = sql.SQL(
    """
    INSERT INTO article_extraction ({columns}) VALUES ({values})
    ON CONFLICT (article_id) DO UPDATE SET {updates}, text_removed_at = NULL
    WHERE article_extraction.status <> 'extract_ok' OR EXCLUDED.status <> 'extract_error'
    """
).format(
    columns=sql.SQL(", ").join(map(sql.Identifier, _COLUMNS)),
    values=sql.SQL(", ").join(sql.Placeholder() * len(_COLUMNS)),
    updates=sql.SQL(", ").join(
        sql.SQL("{0} = EXCLUDED.{0}").format(sql.Identifier(c)) for c in _COLUMNS[1:]
    ),
)


@dataclass(frozen=True)
class Copies:
    """The other articles a copy key found, and which key."""

    found: set[int]
    reason: str


@dataclass(frozen=True)
class Retry:
    """Try the page again after ``not_before`` (a passing failure: ``attempts`` so far)."""

    not_before: datetime
    attempts: int | None = None  # None: as they were


@dataclass(frozen=True)
class ArticleRow:
    """An article for `newsdesk articles`: where it came from and what its page gave."""

    id: int
    source: str
    category: str
    title: str
    url: str
    collected_at: datetime
    revision: int
    status: str | None  # None: pending (or extraction off)
    reason: str | None
    chars: int | None
    copy_of: int | None
    copy_reason: str | None
    issue_id: int | None
    queued: bool  # an outbox row waits: extraction pending (or to be tried again)


class ExtractionStore:
    def __init__(self, database: Database, wire_agencies: Collection[str] = ()) -> None:
        """``wire_agencies``: the outlets (``raw_article.source``) that are news agencies
        (sources.yaml's ``wire: true``), whose article is the original of a copy published at
        the same time."""
        self._db = database
        self._wire = sorted(wire_agencies)

    def relay(
        self,
        send: Callable[[list[OutboxRow]], Sequence[OutboxRow]],
        at: datetime,
        limit: int,
        after: OutboxRow | None = None,
    ) -> Batch[OutboxRow]:
        """Offer ``send`` the unsent rows due at ``at`` (up to ``limit``, none that another
        relay holds) and mark those it returns, the ones it sent (``storage.outbox``). Rows
        sent ``RESEND_AFTER`` ago and still here (their message lost, or dead-lettered) are
        offered again first, up to ``MAX_SENDS`` sends; each send is counted, for a
        deduplication id of its own (a refused row's too: it is offered again by the next
        relay). ``after`` changes nothing: what went is no longer due."""

        def sent(rows: list[OutboxRow]) -> Sent:
            went = set(send(rows))
            return Sent([None if row in went else "refused" for row in rows])

        return relay_batch(self._db, _OUTBOX, sent, at, limit, after)

    def pending(self, article_id: int, revision: int, at: datetime) -> PendingArticle | None:
        """The article if its extraction of ``revision`` is due at ``at`` (its outbox row is
        there, its ``not_before`` passed); None for a message repeated, early (the row waits
        for a retry) or superseded by a newer revision (whose row, if any, is the one to do:
        this one is dropped). Whether the row was marked sent does not matter: a message can
        arrive before the relay's transaction commits."""
        with self._db.transaction() as cursor:
            cursor.execute(
                """
                SELECT a.id, o.revision, a.origin_url, a.canonical_url, a.source, a.title,
                       o.min_chars, o.attempts, a.revision, o.not_before <= %s
                FROM extraction_outbox o JOIN raw_article a ON a.id = o.article_id
                WHERE o.article_id = %s AND o.revision = %s
                """,
                (at, article_id, revision),
            )
            row = cursor.fetchone()
            if row is None or not row[9]:
                return None
            if row[8] != row[1]:
                cursor.execute(
                    "DELETE FROM extraction_outbox WHERE article_id = %s AND revision = %s",
                    (article_id, revision),
                )
                return None
        return PendingArticle(*row[:8])

    def defer(self, article_id: int, revision: int, not_before: datetime) -> None:
        """Send the message again after ``not_before`` (a host cooling down; extraction
        switched off: then ``not_before`` is now), its attempts as they were."""
        with self._db.transaction() as cursor:
            _defer(cursor, article_id, revision, Retry(not_before))

    def record(
        self,
        extraction: Extraction,
        sketch: Sequence[int] = (),
        retry: Retry | None = None,
        copies: Copies | None = None,
    ) -> tuple[Extraction, list[int]]:
        """Store ``extraction`` (replacing an earlier revision's) with its sketch, and close its
        outbox row — or, with ``retry``, leave it to be sent again — in one transaction. With
        ``copies`` (the articles a key found), the one published first of them and this one is
        the original: this one is recorded as its copy, or, published first itself, becomes
        the original of the others and of their copies. Returns what was stored, and the
        articles that became its copies."""
        adopted: list[int] = []
        extraction = _bounded(extraction)
        with self._db.transaction() as cursor:
            if copies is not None and copies.found:
                extraction, adopted = _adopt(cursor, extraction, copies, self._wire)
            cursor.execute(_UPSERT, [getattr(extraction, name) for name in _COLUMNS])
            replaced = cursor.rowcount > 0  # not an error over a good extraction
            if replaced:
                cursor.execute(
                    "DELETE FROM article_sketch WHERE article_id = %s", (extraction.article_id,)
                )
            if sketch and replaced:
                psycopg2.extras.execute_values(
                    cursor,
                    "INSERT INTO article_sketch (value, article_id) VALUES %s "
                    "ON CONFLICT DO NOTHING",
                    [(value, extraction.article_id) for value in sorted(set(sketch))],
                )
            if retry is not None:
                _defer(cursor, extraction.article_id, extraction.revision, retry)
            else:
                cursor.execute(
                    "DELETE FROM extraction_outbox WHERE article_id = %s AND revision <= %s",
                    (extraction.article_id, extraction.revision),
                )
        return extraction, adopted

    def by_key(self, article_id: int, page_key: str) -> set[int]:
        """Other articles, their page extracted, stored under ``page_key`` or whose page named
        it too (a thin or empty page is no original to hide a good one behind)."""
        with self._db.transaction() as cursor:
            cursor.execute(
                """
                SELECT a.id FROM raw_article a JOIN article_extraction e ON e.article_id = a.id
                WHERE a.canonical_url = %(key)s AND a.id <> %(id)s AND e.status = 'extract_ok'
                UNION
                SELECT article_id FROM article_extraction
                WHERE page_key = %(key)s AND article_id <> %(id)s AND status = 'extract_ok'
                """,
                {"key": page_key, "id": article_id},
            )
            return {int(row[0]) for row in cursor.fetchall()}

    def by_hash(self, article_id: int, content_hash: str) -> set[int]:
        """Other articles whose text is the same (``similar.content_hash``)."""
        with self._db.transaction() as cursor:
            cursor.execute(
                "SELECT article_id FROM article_extraction"
                " WHERE content_hash = %s AND article_id <> %s",
                (content_hash, article_id),
            )
            return {int(row[0]) for row in cursor.fetchall()}

    def near_candidates(
        self, article_id: int, sketch: Sequence[int], min_shared: int
    ) -> dict[int, list[int]]:
        """Other articles sharing at least ``min_shared`` sketch values, with their sketches."""
        if not sketch:
            return {}
        with self._db.transaction() as cursor:
            cursor.execute(
                """
                SELECT s.article_id, array_agg(s.value)
                FROM article_sketch s
                WHERE s.article_id IN (
                    SELECT article_id FROM article_sketch
                    WHERE value = ANY(%s) AND article_id <> %s
                    GROUP BY article_id HAVING count(*) >= %s
                )
                GROUP BY s.article_id
                """,
                (list(sketch), article_id, min_shared),
            )
            return {int(i): [int(v) for v in values] for i, values in cursor.fetchall()}

    def remove_text(self, before: datetime, at: datetime) -> int:
        """ARTICLE_TEXT_RETENTION_DAYS: the text of extractions older than ``before`` removed
        (the outcome, length and keys stay)."""
        with self._db.transaction() as cursor:
            cursor.execute(
                """
                UPDATE article_extraction SET text = NULL, text_removed_at = %s
                WHERE extracted_at < %s AND text IS NOT NULL
                """,
                (at, before),
            )
            return int(cursor.rowcount)

    def raw_pages(self, since: datetime) -> list[tuple[PendingArticle, str, Extraction]]:
        """Articles extracted at or after ``since`` whose page is in the raw layer, for
        `newsdesk reextract`: the article (as that page's revision), the raw key, the
        extraction as it stands. An article waiting in the outbox (a newer revision, a retry)
        is left to the extractor."""
        with self._db.transaction() as cursor:
            query = sql.SQL(
                """
                SELECT a.id, e.revision, a.origin_url, a.canonical_url, a.source, a.title,
                       e.min_chars, 0, {columns}
                FROM article_extraction e JOIN raw_article a ON a.id = e.article_id
                WHERE e.extracted_at >= %s AND e.raw_key IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM extraction_outbox o WHERE o.article_id = a.id)
                ORDER BY a.id
                """
            ).format(columns=sql.SQL(", ").join(sql.Identifier("e", c) for c in _COLUMNS))
            cursor.execute(query, (since,))
            found = []
            for row in cursor.fetchall():
                extraction = Extraction(**dict(zip(_COLUMNS, row[8:], strict=True)))
                found.append((PendingArticle(*row[:8]), str(extraction.raw_key), extraction))
            return found

    def articles(
        self, since: datetime, after: int | None = None, limit: int | None = None
    ) -> list[ArticleRow]:
        """The articles collected since ``since``, by id (after ``after``; at most ``limit``)."""
        with self._db.transaction() as cursor:
            cursor.execute(
                """
                SELECT a.id, a.source, c.name, a.title, a.origin_url, a.collected_at, a.revision,
                       e.status, e.reason, e.chars, e.copy_of, e.copy_reason, a.issue_id,
                       EXISTS (SELECT 1 FROM extraction_outbox o WHERE o.article_id = a.id)
                FROM raw_article a
                JOIN category c ON c.id = a.category_id
                LEFT JOIN article_extraction e ON e.article_id = a.id
                WHERE a.collected_at >= %s AND (%s::bigint IS NULL OR a.id > %s)
                ORDER BY a.id
                LIMIT %s
                """,
                (since, after, after, limit),
            )
            return [ArticleRow(*row) for row in cursor.fetchall()]


class _Outbox:
    """The extraction outbox as ``storage.outbox`` relays it."""

    def due(
        self, cursor: Cursor, at: datetime, limit: int, after: OutboxRow | None
    ) -> list[OutboxRow]:
        cursor.execute(
            "UPDATE extraction_outbox SET sent_at = NULL WHERE sent_at < %s AND sends < %s",
            (at - RESEND_AFTER, MAX_SENDS),
        )
        cursor.execute(
            """
            UPDATE extraction_outbox SET sends = sends + 1
            WHERE (article_id, revision) IN (
                SELECT article_id, revision FROM extraction_outbox
                WHERE sent_at IS NULL AND not_before <= %s
                ORDER BY not_before, article_id
                LIMIT %s
                FOR UPDATE SKIP LOCKED
            )
            RETURNING article_id, revision, url, min_chars, attempts, sends
            """,
            (at, limit),
        )
        return [OutboxRow(*row) for row in cursor.fetchall()]

    def mark(
        self,
        cursor: Cursor,
        at: datetime,
        sent: list[OutboxRow],
        refused: list[tuple[OutboxRow, str]],
    ) -> None:
        """The rows sent; a refused one stays unsent, its send counted."""
        cursor.execute(
            """
            UPDATE extraction_outbox SET sent_at = %s
            WHERE (article_id, revision) IN (
                SELECT * FROM unnest(%s::bigint[], %s::integer[])
            )
            """,
            (at, [r.article_id for r in sent], [r.revision for r in sent]),
        )


_OUTBOX = _Outbox()


def _bounded(extraction: Extraction) -> Extraction:
    """``extraction`` as it can be stored (``newsdesk.core.bounds``): no NUL or lone surrogate
    in its texts, the page's title-like fields cut to a title's bound, and no page key over a
    key's bound (its index cannot hold it)."""
    changes: dict[str, object] = {}
    for name in _COLUMNS:
        value = getattr(extraction, name)
        if isinstance(value, str):
            value = storable(value)
            if name in _TITLE_LIKE:
                value = capped(value, TITLE_MAX_CHARS)
            if value is not getattr(extraction, name):
                changes[name] = value
    key = changes.get("page_key", extraction.page_key)
    if isinstance(key, str) and not fits_a_key(key):
        changes["page_key"] = None
    return replace(extraction, **changes) if changes else extraction  # type: ignore[arg-type]


def _defer(cursor: Cursor, article_id: int, revision: int, retry: Retry) -> None:
    cursor.execute(
        """
        UPDATE extraction_outbox
        SET sent_at = NULL, not_before = %s, attempts = COALESCE(%s, attempts)
        WHERE article_id = %s AND revision = %s
        """,
        (retry.not_before, retry.attempts, article_id, revision),
    )


def _adopt(
    cursor: Cursor, extraction: Extraction, copies: Copies, wire: list[str]
) -> tuple[Extraction, list[int]]:
    """``extraction`` as a copy of the first published of ``copies``' originals, or, first
    itself, with them (and their copies) re-pointed to it: those it adopted."""
    me = extraction.article_id
    # one adoption at a time: two extractors re-pointing the same copies must not cross
    cursor.execute("SELECT pg_advisory_xact_lock(%s)", (_COPIES_LOCK_KEY,))
    roots = (_original(cursor, found) for found in copies.found)
    originals = {root for root in roots if root is not None and root != me}
    if not originals:
        return replace(extraction, copy_of=None, copy_reason=None), []
    first = _first_published(cursor, [*originals, me], wire)
    if first != me:  # a copy: and so are its own copies, of the same original
        cursor.execute("UPDATE article_extraction SET copy_of = %s WHERE copy_of = %s", (first, me))
        return replace(extraction, copy_of=first, copy_reason=copies.reason), []
    _made_original(cursor, me, sorted(originals), copies.reason)
    return replace(extraction, copy_of=None, copy_reason=None), sorted(originals)


def _first_published(cursor: Cursor, ids: list[int], wire: list[str]) -> int | None:
    """The original of ``ids``: the first published (the feed's time, else the collected time);
    on a tie (a wire story republished with the agency's own timestamp) a news agency's article
    (a source in ``wire``) before a republisher's, then the one stored first. The same articles
    give the same original whichever of them is extracted first."""
    cursor.execute(
        """
        SELECT id FROM raw_article WHERE id = ANY(%s)
        ORDER BY COALESCE(published_at, collected_at), source = ANY(%s::text[]) DESC, id
        LIMIT 1
        """,
        (ids, wire),
    )
    return _first(cursor)


def _made_original(cursor: Cursor, me: int, originals: list[int], reason: str) -> None:
    """``me`` the original of the articles once ``originals`` and of their copies; and of the
    issue one of them is in, if ``me`` is in none (made of a copy before its original came)."""
    cursor.execute(
        "UPDATE article_extraction SET copy_of = %s WHERE copy_of = ANY(%s)", (me, originals)
    )
    cursor.execute(
        "UPDATE article_extraction SET copy_of = %s, copy_reason = %s WHERE article_id = ANY(%s)",
        (me, reason, originals),
    )
    cursor.execute(
        """
        UPDATE raw_article SET issue_id = (
            SELECT min(issue_id) FROM raw_article WHERE id = ANY(%s) AND issue_id IS NOT NULL
        )
        WHERE id = %s AND issue_id IS NULL
        """,
        (originals, me),
    )


def _first(cursor: Cursor) -> int | None:
    row = cursor.fetchone()
    return int(row[0]) if row and row[0] is not None else None


def _original(cursor: Cursor, article_id: int | None) -> int | None:
    """The article a copy copies, followed to the one that copies none (a copy's original is
    never a copy: ``_adopt`` keeps chains one long; the walk is bounded all the same)."""
    for _ in range(_MAX_CHAIN):
        if article_id is None:
            return None
        cursor.execute(
            "SELECT copy_of FROM article_extraction WHERE article_id = %s", (article_id,)
        )
        found = _first(cursor)
        if found is None:
            return article_id
        article_id = found
    return article_id
