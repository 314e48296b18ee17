"""The clustering job: per category, the articles collected in the last window, grouped by
the seed's greedy pass, each group stored as an issue in its own transaction.

Articles already in an issue stay in the window's vectors (so a re-run sees the same IDF and
finds nothing new: every group it could form was formed the first time) but cannot be gathered
again. A PostgreSQL advisory lock lets one run at a time work; another exits at once.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from aws_lambda_powertools import Logger

from newsdesk.clustering import find_groups
from newsdesk.errors import StoreError
from newsdesk.store import Database

logger = Logger(child=True)

_LOCK_KEY = 0x636C7573  # "clus"


@dataclass(frozen=True)
class IssueRecord:
    id: int
    category: str
    title: str
    article_ids: list[int]

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            "title": self.title,
            "article_ids": self.article_ids,
        }


@dataclass
class ClusterRun:
    issues: list[IssueRecord] = field(default_factory=list)
    articles_considered: int = 0
    locked_out: bool = False

    @property
    def articles_clustered(self) -> int:
        return sum(len(issue.article_ids) for issue in self.issues)

    @property
    def articles_left_single(self) -> int:
        return self.articles_considered - self.articles_clustered

    def as_dict(self) -> dict[str, Any]:
        return {
            "issues_created": len(self.issues),
            "articles_clustered": self.articles_clustered,
            "articles_left_single": self.articles_left_single,
            "locked_out": self.locked_out,
            "issues": [issue.as_dict() for issue in self.issues],
        }


@dataclass(frozen=True)
class _Article:
    id: int
    category_id: int
    category: str
    title: str
    issued: bool
    collected_at: datetime


def _utc_now() -> datetime:
    return datetime.now(UTC)


def run_clustering(
    database: Database,
    threshold: float,
    min_size: int,
    window_hours: float,
    clock: Callable[[], datetime] = _utc_now,
    method: str = "seed",
) -> ClusterRun:
    run = ClusterRun()
    with database.transaction() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", (_LOCK_KEY,))
        row = cursor.fetchone()
    if not row or not row[0]:
        logger.info("another clustering run holds the lock; nothing to do")
        run.locked_out = True
        return run
    try:
        since = clock() - timedelta(hours=window_hours)
        articles = _window(database, since)
        for _, group in itertools.groupby(articles, key=lambda a: a.category_id):
            _cluster_category(database, list(group), threshold, min_size, method, run)
    finally:
        # A broken connection has released the lock already; keep the first error.
        with contextlib.suppress(StoreError), database.transaction() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
    logger.info(
        "clustering run finished",
        extra={
            "issues_created": len(run.issues),
            "articles_clustered": run.articles_clustered,
            "articles_left_single": run.articles_left_single,
        },
    )
    return run


def _window(database: Database, since: datetime) -> list[_Article]:
    with database.transaction() as cursor:
        cursor.execute(
            """
            SELECT a.id, a.category_id, c.name, a.title, a.issue_id IS NOT NULL, a.collected_at
            FROM raw_article a JOIN category c ON c.id = a.category_id
            WHERE a.collected_at >= %s
            ORDER BY a.category_id, a.id
            """,
            (since,),
        )
        return [_Article(*row) for row in cursor.fetchall()]


def _cluster_category(
    database: Database,
    articles: list[_Article],
    threshold: float,
    min_size: int,
    method: str,
    run: ClusterRun,
) -> None:
    taken = [a.issued for a in articles]
    run.articles_considered += taken.count(False)
    groups = find_groups(
        [a.title for a in articles],
        threshold,
        min_size,
        taken=taken,
        method=method,
        times=[a.collected_at.timestamp() for a in articles],
    )
    for group in groups:
        members = [articles[i] for i in group.members]
        representative = articles[group.representative]
        issue_id = _store_issue(database, members, representative)
        run.issues.append(
            IssueRecord(
                issue_id, representative.category, representative.title, [a.id for a in members]
            )
        )
        logger.info(
            "issue created",
            extra={
                "issue_id": issue_id,
                "category": representative.category,
                "size": len(members),
                "title": representative.title,
            },
        )


def _store_issue(database: Database, members: list[_Article], representative: _Article) -> int:
    ids = [a.id for a in members]
    with database.transaction() as cursor:
        cursor.execute(
            "INSERT INTO issue (category_id, title, size) VALUES (%s, %s, %s) RETURNING id",
            (representative.category_id, representative.title, len(members)),
        )
        row = cursor.fetchone()
        assert row is not None
        cursor.execute(
            "UPDATE raw_article SET issue_id = %s WHERE id = ANY(%s) AND issue_id IS NULL",
            (row[0], ids),
        )
        if cursor.rowcount != len(ids):
            # Only a writer outside the lock could do this; roll the issue back with it.
            raise StoreError(f"articles {ids} changed while issue {row[0]} was being stored")
    return int(row[0])


def list_issues(database: Database, limit: int = 50) -> list[dict[str, Any]]:
    """The newest issues with their articles, for `newsdesk issues`."""
    with database.transaction() as cursor:
        cursor.execute(
            """
            SELECT i.id, c.name, i.title, i.size, i.created_at,
                   array_agg(a.id ORDER BY a.id), array_agg(a.source ORDER BY a.id),
                   array_agg(a.title ORDER BY a.id)
            FROM issue i
            JOIN category c ON c.id = i.category_id
            JOIN raw_article a ON a.issue_id = i.id
            GROUP BY i.id, c.name
            ORDER BY i.id DESC
            LIMIT %s
            """,
            (limit,),
        )
        rows = cursor.fetchall()
    return [
        {
            "id": r[0],
            "category": r[1],
            "title": r[2],
            "size": r[3],
            "created_at": r[4].astimezone(UTC).isoformat(timespec="seconds"),
            "article_ids": list(r[5]),
            "articles": [{"source": s, "title": t} for s, t in zip(r[6], r[7], strict=True)],
        }
        for r in rows
    ]
