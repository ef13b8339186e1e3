"""A WiderPoker hand played by an e2e set-up script while the server's own clock runs.

The script (``manage.py shell -c``) and the live server's clock both step the table. A step
locks the table ``FOR UPDATE SKIP LOCKED`` (``tables.clock._lock_due_table``): while the
server's clock holds the row, the script's ``advance_table`` does nothing and answers False,
and the step it wanted may then be taken by the clock, at its own (real) time, or not at
all. One call is therefore not enough (CI, 2026-11-27: the script's deal was skipped and its
redeal purchase found no hand). These helpers step until the state they wait for is there,
whichever of the two took the step.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime

from tables.clock import advance_table
from tables.models import Hand, HandFreeze, HandStatus
from tables.services import beacon

TIMEOUT_SECONDS = 30.0


def step_until(table_id: int, now: Callable[[], datetime], done: Callable[[], bool], *, what: str) -> None:
    """Step table ``table_id`` at ``now()`` until ``done()``; AssertionError naming ``what``
    after ``TIMEOUT_SECONDS`` (real time) without it."""
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"table {table_id}: {what} did not happen within {TIMEOUT_SECONDS:.0f} s of steps")
        if not advance_table(table_id=table_id, now=now()):
            time.sleep(0.05)  # not due at that moment, or the server's clock holds the row


def deal_live(table_id: int, start: datetime) -> Hand:
    """The table's first hand, dealt by whichever clock gets there first: the script steps at
    ``start`` until the inputs are frozen (algorithm 3), then at the freeze's deal round.
    ``start`` must be real time: a back-dated table is due at once for the server's clock,
    which may then sit its players out as disconnected."""

    def at() -> datetime:
        freeze = HandFreeze.objects.filter(table_id=table_id, abandoned_at__isnull=True).first()
        return start if freeze is None else max(start, beacon.time_of(int(freeze.deal_round)))

    step_until(table_id, at, lambda: Hand.objects.filter(table_id=table_id).exists(), what="the deal")
    return Hand.objects.filter(table_id=table_id).earliest("number")


def settle_live(hand: Hand, now: datetime) -> Hand:
    """Step the hand's table at ``now`` (after its change deadline and the beacon round its
    keys wait for) until the hand is settled; the hand, read again."""
    settled = Hand.objects.filter(pk=hand.pk, status=HandStatus.SETTLED)
    step_until(hand.table_id, lambda: now, settled.exists, what=f"hand {hand.pk}'s settlement")
    hand.refresh_from_db()
    return hand
