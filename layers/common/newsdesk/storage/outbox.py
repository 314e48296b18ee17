"""One relay transaction, for every outbox table (the extraction outbox, the issue event
outbox): the due rows claimed (up to a limit, none another relay holds), offered to ``send``
while they stay locked, and what it says recorded before the transaction commits: the rows
sent, and those refused with their error. Should ``send`` raise, nothing is recorded: the
rows are offered again by the next relay. ``newsdesk.outbox.relay`` repeats it until the
outbox is drained; each table says, in its own SQL, what due, sent and refused mean for it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Generic, Protocol, TypeVar

import psycopg2.extensions

from newsdesk.storage.database import Database

Cursor = psycopg2.extensions.cursor
Row = TypeVar("Row")


@dataclass(frozen=True)
class Sent:
    """What the carrier did with the rows offered, in their order: each one's error (None: it
    went), and whether it failed the call (``stopped``: the rows not sent wait for the next
    relay, with that error)."""

    errors: Sequence[str | None]
    stopped: bool = False


@dataclass(frozen=True)
class Batch(Generic[Row]):
    """One relay transaction: the rows offered, oldest first, how many went and how many were
    refused, and whether the carrier failed the call."""

    rows: list[Row] = field(default_factory=list)
    sent: int = 0
    refused: int = 0
    stopped: bool = False


class OutboxTable(Protocol[Row]):
    def due(self, cursor: Cursor, at: datetime, limit: int, after: Row | None) -> list[Row]:
        """Up to ``limit`` rows due at ``at``, oldest first (after ``after``, one a previous
        batch offered, where the table passes over refused rows), locked: ``FOR UPDATE SKIP
        LOCKED``."""
        ...

    def mark(
        self, cursor: Cursor, at: datetime, sent: list[Row], refused: list[tuple[Row, str]]
    ) -> None:
        """Record what went and what was refused, with why."""
        ...


def relay_batch(
    database: Database,
    table: OutboxTable[Row],
    send: Callable[[list[Row]], Sent],
    at: datetime,
    limit: int,
    after: Row | None = None,
) -> Batch[Row]:
    with database.transaction() as cursor:
        rows = table.due(cursor, at, limit, after)
        if not rows:
            return Batch()
        outcome = send(rows)
        went = list(zip(rows, outcome.errors, strict=True))
        sent = [row for row, error in went if error is None]
        refused = [(row, error) for row, error in went if error is not None]
        table.mark(cursor, at, sent, refused)
    return Batch(rows, len(sent), len(refused), outcome.stopped)
