"""Issues in PostgreSQL: the window of articles a clustering run reads, an issue created,
grown or closed with its articles and its event in one transaction (the newest issues for
`newsdesk issues` are ``storage.issue_lists``'s), and the advisory lock, one per category,
that lets one clustering run work on a category at a time (issue 24: categories are
clustered apart, in parallel)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from newsdesk.core.errors import StoreError
from newsdesk.storage.database import Database
from newsdesk.storage.issue_events import CLOSED, CREATED, UPDATED
from newsdesk.storage.issue_versions import DossierPolicy, write_event

_CLUSTER_LOCK_KEY = 0x636C7573  # "clus"


@dataclass(frozen=True)
class WindowArticle:
    """An article of the clustering window."""

    id: int
    category_id: int
    category: str
    title: str
    issue_id: int | None
    # the issue takes members in this run: open, or closed by this very run (so that a re-run
    # sees what the run saw)
    issue_open: bool
    leads: bool  # the title that gathered its (seed) issue
    collected_at: datetime

    @property
    def issued(self) -> bool:
        return self.issue_id is not None


def categories(database: Database) -> list[tuple[int, str]]:
    """Every category (id, name), by id: what a clustering run goes through."""
    with database.transaction() as cursor:
        cursor.execute("SELECT id, name FROM category ORDER BY id")
        return [(int(r[0]), str(r[1])) for r in cursor.fetchall()]


@contextlib.contextmanager
def clustering_lock(database: Database, category_id: int) -> Iterator[bool]:
    """Yields whether this run holds the category's lock; releases it after."""
    with database.transaction() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", (_CLUSTER_LOCK_KEY, category_id))
        row = cursor.fetchone()
    held = bool(row and row[0])
    try:
        yield held
    finally:
        if held:
            # A broken connection has released the lock already; keep the first error.
            with contextlib.suppress(StoreError), database.transaction() as cursor:
                cursor.execute(
                    "SELECT pg_advisory_unlock(%s, %s)", (_CLUSTER_LOCK_KEY, category_id)
                )


# The clustering window (window()): its articles, each with its issue's state, but thin pages,
# copies and articles still waiting for their page.
_WINDOW = """
    WITH chosen AS (
        -- two index scans (collected_at; the open issues' articles), not one OR
        SELECT id FROM raw_article
        WHERE collected_at >= %(since)s
          AND (%(until)s::timestamptz IS NULL OR collected_at <= %(until)s)
          AND (%(category)s::int IS NULL OR category_id = %(category)s)
        UNION
        SELECT a.id FROM issue i JOIN raw_article a ON a.issue_id = i.id
        WHERE (i.state = 'open' OR i.closed_at >= %(until)s)
          AND (%(category)s::int IS NULL OR i.category_id = %(category)s)
          AND (%(until)s::timestamptz IS NULL OR a.collected_at <= %(until)s)
    )
    SELECT a.id, a.category_id, c.name, a.title, a.issue_id,
           COALESCE(i.state = 'open' OR i.closed_at >= %(until)s, false),
           COALESCE(i.leader_id = a.id, false), a.collected_at
    FROM chosen
    JOIN raw_article a ON a.id = chosen.id
    JOIN category c ON c.id = a.category_id
    LEFT JOIN issue i ON i.id = a.issue_id
    LEFT JOIN article_extraction e ON e.article_id = a.id
    WHERE (e.status IS NULL OR e.status <> 'filtered_thin')
      AND (%(copies)s OR e.copy_of IS NULL)
      AND (%(pending_before)s::timestamptz IS NULL OR a.collected_at < %(pending_before)s
           OR NOT EXISTS (SELECT 1 FROM extraction_outbox o WHERE o.article_id = a.id))
    ORDER BY a.category_id, a.id
    """


def window(
    database: Database,
    since: datetime,
    pending_before: datetime | None = None,
    copies: bool = False,
    until: datetime | None = None,
    category_id: int | None = None,
) -> list[WindowArticle]:
    """The articles collected since ``since`` (and up to ``until``: a run as if it were then)
    in ``category_id`` (None: every category), with every article of the issues open then, by
    category, in ascending id order, but those
    whose page was too thin to be an article, copies of another (unless ``copies``: they join
    their original's issue, ``attach_copies``), and those still waiting for their extraction
    that were collected after ``pending_before`` (their text may yet show them thin or a copy;
    None: none wait)."""
    with database.transaction() as cursor:
        cursor.execute(
            _WINDOW,
            {
                "since": since,
                "until": until,
                "copies": copies,
                "pending_before": pending_before,
                "category": category_id,
            },
        )
        return [WindowArticle(*row) for row in cursor.fetchall()]


def attach_copies(
    database: Database, until: datetime | None = None, category_id: int | None = None
) -> int:
    """Put every copy not in an issue (collected up to ``until``) into its original's issue
    (one of ``category_id``'s; None: any); return how many."""
    with database.transaction() as cursor:
        cursor.execute(
            """
            UPDATE raw_article a SET issue_id = o.issue_id
            FROM article_extraction e JOIN raw_article o ON o.id = e.copy_of
            WHERE a.id = e.article_id AND a.issue_id IS NULL AND o.issue_id IS NOT NULL
              AND (%(until)s::timestamptz IS NULL OR a.collected_at <= %(until)s)
              AND (%(category)s::int IS NULL OR o.category_id = %(category)s)
            """,
            {"until": until, "category": category_id},
        )
        return int(cursor.rowcount)


def create_issue(
    database: Database,
    members: Sequence[WindowArticle],
    title_from: WindowArticle,
    leader: WindowArticle,
    at: datetime,
    dossier: DossierPolicy | None = None,
) -> int:
    """A new open issue (version 1) with ``members``, titled after ``title_from``, and its
    ``IssueCreated`` event with its dossier, in one transaction; its id."""
    ids = [a.id for a in members]
    with database.transaction() as cursor:
        cursor.execute(
            """
            INSERT INTO issue (category_id, title, size, leader_id, first_article_at,
                               last_article_at, created_at, updated_at)
            VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING id
            """,
            (
                title_from.category_id,
                title_from.title,
                len(members),
                leader.id,
                min(a.collected_at for a in members),
                max(a.collected_at for a in members),
                at,
                at,
            ),
        )
        row = cursor.fetchone()
        assert row is not None
        issue_id = int(row[0])
        _take(cursor, issue_id, ids)
        write_event(cursor, issue_id, CREATED, ids, at, dossier)
    return issue_id


def grow_issue(
    database: Database,
    issue_id: int,
    members: Sequence[WindowArticle],
    at: datetime,
    dossier: DossierPolicy | None = None,
) -> tuple[int, str] | None:
    """Add ``members`` to the open issue, raise its version and write its ``IssueUpdated``
    event with its dossier, in one transaction; its new version and its title, or None if it
    is closed."""
    ids = [a.id for a in members]
    with database.transaction() as cursor:
        cursor.execute(
            """
            UPDATE issue SET version = version + 1, size = size + %s, updated_at = %s,
                first_article_at = LEAST(first_article_at, %s),
                last_article_at = GREATEST(last_article_at, %s)
            WHERE id = %s AND state = 'open'
            RETURNING version, title
            """,
            (
                len(ids),
                at,
                min(a.collected_at for a in members),
                max(a.collected_at for a in members),
                issue_id,
            ),
        )
        row = cursor.fetchone()
        if row is None:
            return None
        _take(cursor, issue_id, ids)
        write_event(cursor, issue_id, UPDATED, ids, at, dossier)
    return int(row[0]), str(row[1])


def close_idle(
    database: Database, idle_before: datetime, at: datetime, category_id: int | None = None
) -> list[int]:
    """Close every open issue (of ``category_id``; None: any) whose newest article was
    collected before ``idle_before`` (raising its version, with its ``IssueClosed`` event), in
    one transaction; their ids."""
    with database.transaction() as cursor:
        cursor.execute(
            """
            UPDATE issue SET state = 'closed', closed_at = %s, updated_at = %s,
                version = version + 1
            WHERE state = 'open' AND last_article_at < %s
              AND (%s::int IS NULL OR category_id = %s)
            RETURNING id
            """,
            (at, at, idle_before, category_id, category_id),
        )
        closed = sorted(int(r[0]) for r in cursor.fetchall())
        for issue_id in closed:
            write_event(cursor, issue_id, CLOSED, [], at)
    return closed


def _take(cursor: Any, issue_id: int, ids: list[int]) -> None:
    cursor.execute(
        "UPDATE raw_article SET issue_id = %s WHERE id = ANY(%s) AND issue_id IS NULL",
        (issue_id, ids),
    )
    if cursor.rowcount != len(ids):
        # Only a writer outside the lock could do this; roll the change back with it.
        raise StoreError(f"articles {ids} changed while issue {issue_id} was being stored")
