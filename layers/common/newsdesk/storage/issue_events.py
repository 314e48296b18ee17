"""The issue event outbox (migration 0005): one row per issue version, written in the
transaction that made the version, so that an event is never lost; a relay publishes the rows
not yet published and marks them. Delivery is at least once: each event carries the id
``issue:<id>:v<version>`` for consumers to drop repeats.

A detail is bounded to what PutEvents takes (``fit_detail``): each string cut to its schema's
``maxLength``, ``added_article_ids`` to ``MAX_ADDED`` (``added_count`` keeps the number), and
the article list shortened until the detail is at most ``DETAIL_MAX_BYTES`` in UTF-8
(``article_count`` keeps the total). The relay (``storage.outbox``) bounds what it reads too,
so an event written before the bound is published as well. An event the bus refuses keeps its
error and is tried again by the next relay; those behind it go on. One it refuses for what it
carries ``MAX_REFUSALS`` times (a refusal in a call the bus did not fail: a call that fails, a
bus that is down, refuses nothing of the event's own) is given up: no longer offered, logged,
counted (``EventBatch.given_up``), kept with its error for ``newsdesk events``."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from aws_lambda_powertools import Logger

from newsdesk.core.bounds import MAX_KEY_BYTES, TITLE_MAX_CHARS, capped
from newsdesk.core.times import format_time
from newsdesk.storage.database import Database
from newsdesk.storage.outbox import Batch, Cursor, Sent, relay_batch

CREATED, UPDATED, CLOSED = "IssueCreated", "IssueUpdated", "IssueClosed"
SOURCE = "newsdesk.issue"
DETAIL_VERSION = 2  # 2 since issue 40: the dossier's reference
# An event lists at most this many of its issue's articles (PutEvents takes 256 KB a call),
# fewer when the detail would pass DETAIL_MAX_BYTES, and at most MAX_ADDED of the added ids.
MAX_ARTICLES = 200
MAX_ADDED = 1000
DETAIL_MAX_BYTES = 128 * 1024  # two such entries and a call's other fields fit in 256 KB
BUCKET_ROOM = 80  # `"bucket":"<at most 63 characters>",`
# The schema's maxLength of each string (schemas/issue-event-detail.schema.json).
NAME_MAX_CHARS = 200  # a category, an outlet
URL_MAX_CHARS = MAX_KEY_BYTES
# Published rows are kept this long for `newsdesk events`.
KEEP_PUBLISHED = timedelta(days=7)
# An event the bus refuses for what it carries this many times is given up (as the article
# outbox sends a row at most five times): the same detail is refused the same way every run.
MAX_REFUSALS = 5

logger = Logger(child=True)


def event_id(issue_id: int, version: int) -> str:
    return f"issue:{issue_id}:v{version}"


@dataclass(frozen=True)
class IssueEvent:
    issue_id: int
    version: int
    type: str
    detail: dict[str, Any]
    created_at: datetime
    published_at: datetime | None
    attempts: int
    last_error: str | None
    dossier: str | None = None  # the dossier's JSON (read by the relay only)

    @property
    def id(self) -> str:
        return event_id(self.issue_id, self.version)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": SOURCE,
            "detail_type": self.type,
            "detail": self.detail,
            "created_at": format_time(self.created_at),
            "published_at": format_time(self.published_at) if self.published_at else None,
            "attempts": self.attempts,
            "last_error": self.last_error,
        }


_ISSUE_AS_SEEN = """
    SELECT i.version, i.state, c.name, i.title, i.size, i.first_article_at,
           i.last_article_at, count(a.id),
           COALESCE(json_agg(json_build_object(
               'id', a.id, 'source', a.source, 'title', a.title, 'url', a.origin_url,
               'published_at', a.published_at,
               'chars', CASE WHEN e.status = 'extract_ok' THEN e.chars END,
               'copy_of', e.copy_of
           ) ORDER BY a.id) FILTER (WHERE a.id IS NOT NULL), '[]')
    FROM issue i
    JOIN category c ON c.id = i.category_id
    LEFT JOIN raw_article a ON a.issue_id = i.id
    LEFT JOIN article_extraction e ON e.article_id = a.id
    WHERE i.id = %s
    GROUP BY i.id, c.name
"""


def as_published(detail: dict[str, Any], bucket: str) -> dict[str, Any]:
    """The detail as the relay publishes it: its dossier's reference names the bucket the
    dossier was written to (an event written before dossiers: as it is)."""
    reference = detail.get("dossier")
    if not isinstance(reference, dict):
        return detail
    return {**detail, "dossier": {**reference, "bucket": bucket}}


def dossier_json(made: Mapping[str, Any]) -> str:
    """A dossier as it is kept and published: compact JSON, keys sorted, UTF-8 text."""
    return json.dumps(made, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def dossier_key(issue_id: int, version: int) -> str:
    """Where a version's dossier is kept in the dossier bucket: derived from its event id."""
    return f"issues/{issue_id}/v{version}.json"


def last_dossier(cursor: Any, issue_id: int, version: int) -> dict[str, Any] | None:
    """The reference the last version's event carries to its dossier: None when that event
    was written before dossiers; its key alone when it was forgotten (KEEP_PUBLISHED after
    its publishing: its dossier was written, unless an earlier release made it)."""
    cursor.execute(
        "SELECT detail -> 'dossier' FROM issue_event WHERE issue_id = %s AND version = %s",
        (issue_id, version),
    )
    row = cursor.fetchone()
    if row is not None:
        return dict(row[0]) if row[0] else None
    return {"key": dossier_key(issue_id, version), "size": None, "sha256": None}


def detail_as_seen(
    cursor: Any, issue_id: int, added: Sequence[int], at: datetime
) -> dict[str, Any]:
    """The detail of the issue's current version, as this transaction sees it (unbounded:
    ``fit_detail`` bounds it)."""
    cursor.execute(_ISSUE_AS_SEEN, (issue_id,))
    return _detail(issue_id, cursor.fetchone(), added, at)


def _detail(
    issue_id: int, row: Sequence[Any], added: Sequence[int], at: datetime
) -> dict[str, Any]:
    """The event's detail (schemas/issue-event-detail.schema.json) from ``_ISSUE_AS_SEEN``."""
    version, state, category, title, size, first_at, last_at, count, articles = row
    return {
        "detail_version": DETAIL_VERSION,
        "event_id": event_id(issue_id, version),
        "issue_id": issue_id,
        "version": version,
        "state": state,
        "category": category,
        "title": title,
        "size": size,
        "first_article_at": format_time(first_at),
        "last_article_at": format_time(last_at),
        "changed_at": format_time(at),
        "added_article_ids": sorted(added),
        "added_count": len(added),
        "article_count": count,
        "articles": [_article(a) for a in articles[:MAX_ARTICLES]],
    }


def fit_detail(detail: dict[str, Any]) -> dict[str, Any]:
    """``detail`` within its bounds (the module's docstring); the same detail when it is."""
    fitted = {
        **detail,
        "category": capped(str(detail["category"]), NAME_MAX_CHARS),
        "title": capped(str(detail["title"]), TITLE_MAX_CHARS),
        "added_article_ids": list(detail["added_article_ids"])[:MAX_ADDED],
        "articles": [
            {
                **a,
                "source": capped(str(a["source"]), NAME_MAX_CHARS),
                "title": capped(str(a["title"]), TITLE_MAX_CHARS),
                "url": capped(str(a["url"]), URL_MAX_CHARS),
            }
            for a in list(detail["articles"])[:MAX_ARTICLES]
        ],
    }
    fitted.setdefault("added_count", len(detail["added_article_ids"]))
    articles: list[dict[str, Any]] = fitted["articles"]
    # room for the bucket the relay names in the dossier's reference
    most = DETAIL_MAX_BYTES - (BUCKET_ROOM if "dossier" in detail else 0)
    # what each article adds to the JSON, its separator included; cut from the end
    overflow = _size(fitted) - most
    while overflow > 0 and articles:
        overflow -= _size(articles.pop()) + 2
    while articles and _size(fitted) > most:  # the estimate's last byte or two
        articles.pop()
    return fitted


def _size(value: object) -> int:
    """``value``'s JSON in UTF-8, as the bus sends it."""
    return len(json.dumps(value, ensure_ascii=False).encode())


def _article(article: dict[str, Any]) -> dict[str, Any]:
    """An article as the detail carries it: times in the project's UTC format."""
    published = article["published_at"]
    if published is not None:  # json_build_object wrote PostgreSQL's own timestamp text
        published = format_time(datetime.fromisoformat(published))
    return article | {"published_at": published}


@dataclass(frozen=True)
class EventBatch(Batch[IssueEvent]):
    """A relay transaction of the issue event outbox: and how many events it gave up."""

    given_up: int = 0


class IssueEventStore:
    def __init__(self, database: Database) -> None:
        self._database = database

    def relay(
        self,
        send: Callable[[list[IssueEvent]], Sent],
        at: datetime,
        limit: int,
        after: IssueEvent | None = None,
    ) -> EventBatch:
        """Offer ``send`` up to ``limit`` unpublished events, oldest first (after ``after``,
        the last a previous call offered), their rows locked, and record what it says
        (``storage.outbox``): each offer counts an attempt, a refused event keeps its error,
        and the next call goes on after it; an event refused ``MAX_REFUSALS`` times in calls
        ``send`` did not fail is given up. A row another relay holds is skipped."""
        outbox = _Outbox()

        def sending(events: list[IssueEvent]) -> Sent:
            sent = send(events)
            outbox.call_failed = sent.stopped
            return sent

        batch = relay_batch(self._database, outbox, sending, at, limit, after)
        return EventBatch(batch.rows, batch.sent, batch.refused, batch.stopped, outbox.given_up)

    def events(
        self,
        since: datetime | None = None,
        limit: int = 100,
        before: tuple[datetime, int, int] | None = None,
    ) -> list[IssueEvent]:
        """The newest events (written since ``since``; older than ``before``, an event's
        ``(created_at, issue_id, version)``: the page after one that ended there), oldest
        first."""
        at, issue, version = before if before is not None else (None, None, None)
        with self._database.transaction() as cursor:
            cursor.execute(
                """
                SELECT * FROM (
                    SELECT issue_id, version, type, detail, created_at, published_at, attempts,
                           last_error
                    FROM issue_event
                    WHERE (%(since)s::timestamptz IS NULL OR created_at >= %(since)s)
                      AND (%(at)s::timestamptz IS NULL
                           OR (created_at, issue_id, version) < (%(at)s, %(issue)s, %(version)s))
                    ORDER BY created_at DESC, issue_id DESC, version DESC
                    LIMIT %(limit)s
                ) newest ORDER BY created_at, issue_id, version
                """,
                {"since": since, "limit": limit, "at": at, "issue": issue, "version": version},
            )
            return [IssueEvent(*row) for row in cursor.fetchall()]


def kept_dossier(database: Database, issue_id: int, version: int | None = None) -> str | None:
    """The dossier kept with the issue's event of ``version`` (None: its newest that has one),
    as it is published; None when there is none (no such issue or version, a closing
    version, an event written before dossiers, or forgotten KEEP_PUBLISHED after
    publishing)."""
    with database.transaction() as cursor:
        cursor.execute(
            """
            SELECT dossier FROM issue_event
            WHERE issue_id = %s AND dossier IS NOT NULL
              AND (%s::int IS NULL OR version = %s)
            ORDER BY version DESC LIMIT 1
            """,
            (issue_id, version, version),
        )
        row = cursor.fetchone()
    return None if row is None else str(row[0])


class _Outbox:
    """The issue event outbox as ``storage.outbox`` relays it, for one relay transaction."""

    def __init__(self) -> None:
        self.call_failed = False  # the bus failed the call: its refusals are not the events'
        self.given_up = 0

    def due(
        self, cursor: Cursor, at: datetime, limit: int, after: IssueEvent | None
    ) -> list[IssueEvent]:
        """Unpublished events after ``after``, bounded as they are published."""
        cursor.execute(
            """
            SELECT issue_id, version, type, detail, created_at, published_at, attempts,
                   last_error, dossier
            FROM issue_event
            WHERE published_at IS NULL AND refusals < %(refusals)s
              AND (%(created)s::timestamptz IS NULL
                   OR (created_at, issue_id, version) > (%(created)s, %(issue)s, %(version)s))
            ORDER BY created_at, issue_id, version
            LIMIT %(limit)s
            FOR UPDATE SKIP LOCKED
            """,
            {
                "created": after.created_at if after else None,
                "issue": after.issue_id if after else None,
                "version": after.version if after else None,
                "limit": limit,
                "refusals": MAX_REFUSALS,
            },
        )
        events = [IssueEvent(*row) for row in cursor.fetchall()]
        return [replace(e, detail=fit_detail(e.detail)) for e in events]

    def mark(
        self,
        cursor: Cursor,
        at: datetime,
        sent: list[IssueEvent],
        refused: list[tuple[IssueEvent, str]],
    ) -> None:
        """The events published, those refused with their error, an attempt each (and a
        refusal, unless the bus failed the call: at MAX_REFUSALS the event is given up); and
        those published ``KEEP_PUBLISHED`` ago forgotten."""
        for event in sent:
            cursor.execute(
                "UPDATE issue_event SET published_at = %s, attempts = attempts + 1, "
                "last_error = NULL WHERE issue_id = %s AND version = %s",
                (at, event.issue_id, event.version),
            )
        refusal = 0 if self.call_failed else 1
        for event, error in refused:
            cursor.execute(
                "UPDATE issue_event SET attempts = attempts + 1, refusals = refusals + %s,"
                " last_error = %s WHERE issue_id = %s AND version = %s RETURNING refusals",
                (refusal, error, event.issue_id, event.version),
            )
            row = cursor.fetchone()
            if refusal and row is not None and row[0] >= MAX_REFUSALS:
                self.given_up += 1
                logger.warning(
                    "issue event given up: the bus refused it every time",
                    extra={"event_id": event.id, "refusals": row[0], "error": error},
                )
        cursor.execute("DELETE FROM issue_event WHERE published_at < %s", (at - KEEP_PUBLISHED,))
