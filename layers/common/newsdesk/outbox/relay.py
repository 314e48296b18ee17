"""The outbox relay, one for every outbox: batches of ``limit`` rows, each a transaction of
the outbox's store (``newsdesk.storage.outbox``: claimed, sent through the carrier's adapter,
marked), until fewer than ``limit`` were due or the carrier failed a call. A refused row either
is passed over, the rows behind it going on in the same relay (``past_refused``: the issue
events, whose refusals are an event's own), or ends the relay there (the article outbox, whose
next relay sends it again under a new deduplication id). What the outboxes call their rows,
messages and ids stays theirs (``outbox.articles``, ``cluster.events``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from newsdesk.storage.outbox import Batch

Row = TypeVar("Row")


@dataclass(frozen=True)
class Relayed:
    """What a relay did: rows sent and refused (or left by a failed call), and the failure
    that ended it early, if one of ``ends_on`` did (what went before it is kept)."""

    sent: int = 0
    refused: int = 0
    error: str | None = None


def relay(
    batch: Callable[[Row | None], Batch[Row]],
    limit: int,
    *,
    past_refused: bool,
    ends_on: tuple[type[Exception], ...] = (),
) -> Relayed:
    """``batch(after)``: one transaction of the store's relay, offering up to ``limit`` rows
    after ``after`` (the last row the one before offered; None at first). An exception of
    ``ends_on`` ends the relay and is reported; any other raises."""
    sent = refused = 0
    after: Row | None = None
    try:
        while True:
            done = batch(after)
            sent, refused = sent + done.sent, refused + done.refused
            if len(done.rows) < limit or done.stopped or (done.refused and not past_refused):
                return Relayed(sent, refused)
            after = done.rows[-1]
    except ends_on as e:
        return Relayed(sent, refused, str(e))
