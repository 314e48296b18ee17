"""Read-only function (issue 40): what `newsdesk issues|articles|events|dossier --stack NAME`
shows of a deployed stack, read from PostgreSQL as ``newsdesk_reader`` (SELECT only, no
article's text: migration 0015) and answered to an IAM-authorised ``lambda:InvokeFunction``,
so that an operator needs AWS credentials and no way into the VPC.

An event names a command and its options:

- ``{"command": "issues", "limit": 50, "before": 120}``, or ``"top": 10`` for the open issues
  by importance;
- ``{"command": "articles", "since": TIME, "after": 3051, "limit": 200}``;
- ``{"command": "events", "since": TIME, "limit": 100, "before": [TIME, 7, 2]}``;
- ``{"command": "dossier", "issue": 7, "version": 2}`` (no version: the newest with one).

It answers ``{"issues" | "articles" | "events": [...], "next": {...} | null}`` (``next``: the
options of the following page) or ``{"dossier": {...} | null}``. A page holds at most
``PAGE_MAX`` items and ``ANSWER_MAX_BYTES`` of JSON (Lambda returns 6 MB at most): what does
not fit is the next page's. An event it cannot read is answered ``{"error": "..."}``, one line
in words, and fails nothing."""

from __future__ import annotations

import functools
import json
from dataclasses import asdict
from datetime import datetime
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from newsdesk.core.settings import Settings
from newsdesk.core.times import format_time, parse_time, utc_now
from newsdesk.storage.database import Database, database_from
from newsdesk.storage.extractions import ExtractionStore
from newsdesk.storage.issue_events import IssueEventStore, kept_dossier
from newsdesk.storage.issue_lists import list_issues, top_issues

logger = Logger()

PAGE_MAX = {"issues": 100, "articles": 1000, "events": 500}
ANSWER_MAX_BYTES = 5 * 1024 * 1024


class RequestError(ValueError):
    """An event that is not a request this function answers."""


@functools.cache
def database() -> Database:
    return database_from(Settings.from_env())


def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return handle(event, context, database())


@logger.inject_lambda_context(clear_state=True)
def handle(event: dict[str, Any], context: LambdaContext, db: Database) -> dict[str, Any]:
    try:
        command = event.get("command") if isinstance(event, dict) else None
        if command == "dossier":
            kept = kept_dossier(db, _number(event, "issue"), _number(event, "version", None))
            return {"dossier": None if kept is None else json.loads(kept)}
        if command not in PAGE_MAX:
            known = ", ".join(["dossier", *PAGE_MAX])
            raise RequestError(f"unknown command {command!r}; expected one of: {known}")
        items, cursors, more = _page(db, command, event)
    except RequestError as e:
        logger.warning("request refused", extra={"error": str(e)})
        return {"error": str(e)}
    return _bounded(command, items, cursors, more)


def _page(
    db: Database, command: str, event: dict[str, Any]
) -> tuple[list[Any], list[dict[str, Any]], bool]:
    """The page's items; for each, the next page's options were the page to end there; and
    whether a page may follow (the page is full)."""
    limit = min(_number(event, "limit", PAGE_MAX[command]), PAGE_MAX[command])
    if command == "issues":
        top = _number(event, "top", None)
        if top is not None:
            found = top_issues(db, min(top, limit), utc_now())
            return found, [{} for _ in found], False
        items = list_issues(db, limit, _number(event, "before", None))
        cursors = [{"before": i["id"]} for i in items]
    elif command == "articles":
        since = _time(event.get("since")) or utc_now()
        rows = ExtractionStore(db).articles(since, _number(event, "after", None), limit)
        items = [_article(r) for r in rows]
        cursors = [{"after": r.id} for r in rows]
    else:
        # newest first: the next page is older, from the exact time of the last one shown
        events = IssueEventStore(db).events(_time(event.get("since")), limit, _before(event))[::-1]
        items = [e.as_dict() for e in events]
        cursors = [{"before": [e.created_at.isoformat(), e.issue_id, e.version]} for e in events]
    return items, cursors, len(items) == limit


def _bounded(
    command: str, items: list[Any], cursors: list[dict[str, Any]], more: bool
) -> dict[str, Any]:
    """The page within ANSWER_MAX_BYTES (the items left out are the next page's), and the
    next page's options."""
    kept = list(items)
    while len(kept) > 1 and _size(kept) > ANSWER_MAX_BYTES:
        kept.pop()
    following = bool(kept) and (more or len(kept) < len(items))
    return {command: kept, "next": cursors[len(kept) - 1] if following else None}


def _size(items: list[Any]) -> int:
    return len(json.dumps(items, ensure_ascii=False, default=str).encode())


def _before(event: dict[str, Any]) -> tuple[datetime, int, int] | None:
    before = event.get("before")
    if before is None:
        return None
    if not (isinstance(before, list) and len(before) == 3):
        raise RequestError("'before' must be [time, issue id, version]")
    at = _time(before[0])
    if at is None:
        raise RequestError("'before' must start with a time")
    return at, _whole(before[1], "before"), _whole(before[2], "before")


def _article(row: Any) -> dict[str, Any]:
    article = asdict(row)
    article["collected_at"] = format_time(row.collected_at)
    return article


def _number(event: dict[str, Any], key: str, default: Any = ...) -> Any:
    value = event.get(key, default)
    if value is ...:
        raise RequestError(f"'{key}' is required")
    return None if value is None else _whole(value, key)


def _whole(value: Any, key: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise RequestError(f"'{key}' must be a whole number, not {value!r}")


def _time(value: Any) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_time(str(value))
    except ValueError:
        raise RequestError(f"not an ISO 8601 time: {value!r}") from None
