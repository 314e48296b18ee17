"""The issues as `newsdesk issues` lists them, newest first or by importance (issue 40), from
PostgreSQL: what the read function and the local command read, apart from what writes issues
(``storage.issues``), so that reading them loads no numeric stack."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from newsdesk.core.importance import importance
from newsdesk.core.times import format_time
from newsdesk.storage.database import Database

# The newest issues (list_issues()), each with its articles as JSON.
_NEWEST_ISSUES = """
    SELECT i.id, c.name, i.title, i.size, i.created_at, i.state, i.version,
           i.first_article_at, i.last_article_at,
           json_agg(json_build_object(
               'id', a.id, 'source', a.source, 'title', a.title,
               'chars', CASE WHEN e.status = 'extract_ok' THEN e.chars END,
               'copy_of', CASE WHEN e.copy_of IS NULL THEN NULL ELSE
                   json_build_object('id', e.copy_of, 'reason', e.copy_reason) END
           ) ORDER BY a.id)
    FROM issue i
    JOIN category c ON c.id = i.category_id
    JOIN raw_article a ON a.issue_id = i.id
    LEFT JOIN article_extraction e ON e.article_id = a.id
    WHERE {which}
    GROUP BY i.id, c.name
    ORDER BY i.id DESC
    LIMIT %s
    """


# The open issues' counts an importance reads (top_issues()), at a time.
_OPEN_COUNTS = """
    SELECT i.id, count(DISTINCT a.source),
           count(*) FILTER (WHERE a.collected_at >= %(at)s - interval '6 hours'),
           count(*) FILTER (WHERE a.collected_at >= %(at)s - interval '1 hour')
    FROM issue i JOIN raw_article a ON a.issue_id = i.id
    WHERE i.state = 'open' AND a.collected_at <= %(at)s
    GROUP BY i.id
"""


def list_issues(
    database: Database, limit: int = 50, before: int | None = None
) -> list[dict[str, Any]]:
    """The newest issues (older than issue ``before``: the page after one that ended there)
    with their articles (each with its text's length, and the article it copies, if it is a
    copy), for `newsdesk issues`."""
    with database.transaction() as cursor:
        which = "%s::bigint IS NULL OR i.id < %s"
        cursor.execute(_NEWEST_ISSUES.format(which=which), (before, before, limit))
        rows = cursor.fetchall()
    return [_listed(row) for row in rows]


def top_issues(database: Database, limit: int, at: datetime) -> list[dict[str, Any]]:
    """The open issues of the highest importance at ``at`` (core.importance; the newest
    first among equals), each as ``list_issues`` gives it with its ``importance``."""
    with database.transaction() as cursor:
        cursor.execute(_OPEN_COUNTS, {"at": at})
        scored = sorted(
            ((importance(*counts), issue_id) for issue_id, *counts in cursor.fetchall()),
            reverse=True,
        )[:limit]
        chosen = [issue_id for _, issue_id in scored]
        cursor.execute(_NEWEST_ISSUES.format(which="i.id = ANY(%s)"), (chosen, limit))
        listed = {row[0]: _listed(row) for row in cursor.fetchall()}
    return [listed[i] | {"importance": score} for score, i in scored if i in listed]


def _listed(row: tuple[Any, ...]) -> dict[str, Any]:
    """An issue as `newsdesk issues` shows it, from a row of ``_NEWEST_ISSUES``."""
    return {
        "id": row[0],
        "category": row[1],
        "title": row[2],
        "size": row[3],
        "created_at": format_time(row[4]),
        "state": row[5],
        "version": row[6],
        "first_article_at": format_time(row[7]),
        "last_article_at": format_time(row[8]),
        "article_ids": [a["id"] for a in row[9]],
        "articles": row[9],
    }
