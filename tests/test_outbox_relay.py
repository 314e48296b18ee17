"""The outbox relay's rules, shared by the article and the issue event outboxes
(``newsdesk.outbox.relay``): when it goes on to the next batch, after which row, and what ends
it. Each batch here is what one store transaction reported (tests/test_extraction.py and
tests/test_hostile_events.py run the real ones against PostgreSQL, SQS and EventBridge)."""

from __future__ import annotations

import pytest

from newsdesk.core.errors import NewsdeskError, QueueError, StoreError
from newsdesk.outbox.relay import Relayed, relay
from newsdesk.storage.outbox import Batch

LIMIT = 3


def batches(*done: Batch[int] | Exception):
    """A store's relay answering ``done`` in turn; the ``after`` each call was given."""
    asked: list[int | None] = []

    def batch(after: int | None) -> Batch[int]:
        asked.append(after)
        answer = done[len(asked) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer

    return batch, asked


@pytest.mark.parametrize(
    ("past_refused", "done", "relayed", "afters"),
    [
        # a full batch goes on after its last row; a short one is the end
        (False, [Batch([1, 2, 3], 3), Batch([4], 1)], Relayed(4, 0), [None, 3]),
        # nothing due
        (False, [Batch()], Relayed(0, 0), [None]),
        # a refusal ends the article outbox's relay (the next relay sends the row again)…
        (False, [Batch([1, 2, 3], 2, 1), Batch([4], 1)], Relayed(2, 1), [None]),
        # …and is passed over by the issue events', the rows behind it going on
        (True, [Batch([1, 2, 3], 2, 1), Batch([4], 1)], Relayed(3, 1), [None, 3]),
        # a call the carrier failed ends either
        (True, [Batch([1, 2, 3], 1, 2, stopped=True), Batch([4], 1)], Relayed(1, 2), [None]),
    ],
)
def test_the_relay_goes_on_while_batches_are_full(past_refused, done, relayed, afters):
    batch, asked = batches(*done)
    assert relay(batch, LIMIT, past_refused=past_refused) == relayed
    assert asked == afters


def test_a_failure_it_ends_on_keeps_what_went_before():
    # GIVEN a full batch sent, then a queue that fails (the store rolled that batch back)
    batch, _ = batches(Batch([1, 2, 3], 3), QueueError("cannot send to the article queue"))
    # WHEN the relay ends on newsdesk's errors THEN it says so, counting the first batch
    relayed = relay(batch, LIMIT, past_refused=False, ends_on=(NewsdeskError,))
    assert relayed == Relayed(3, 0, "cannot send to the article queue")


def test_any_other_failure_raises():
    batch, _ = batches(Batch([1, 2, 3], 3), StoreError("PostgreSQL connection failed"))
    with pytest.raises(StoreError):
        relay(batch, LIMIT, past_refused=True)
