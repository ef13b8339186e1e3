"""A dealt hand counted in its players' sessions, off the deal's critical path.

The deal writes only what a deal must: the entries, the antes and their ledger legs
(issue 23, item 2). What the players' sessions keep of a hand is derived from its entries
afterwards, once per hand:

* the gaming sessions at the table (``powerups.on_hands_dealt``: hands played, levels, the
  free draws and redeals a level releases; seed 001, E);
* the play sessions of the player protection (``protection.record_play``: the session time
  limit and the reality check read them, wallet/protection.py).

``advance_table`` counts a hand right after the deal's commit, once the change frame is
sent; ``settle_hand`` and ``cancel_hand`` count it first when that did not happen (the
process died between the two, or the counting failed), so a hand is always counted before
it ends, and exactly once (``Hand.sessions_counted``, claimed by one ``UPDATE``).
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from tables.models import Entry, Hand, Seat, SeatStatus
from tables.widerpoker.services import powerups
from wallet import protection


@transaction.atomic
def count_hand_sessions(*, hand_id: int) -> bool:
    """Count the WiderPoker hand ``hand_id`` in the gaming sessions of its players at its table
    and in their play sessions, as of the hand's deal (``started_at``); False when it was
    counted already (or is not a hand waiting for it). Set-based: one read of the hand's
    entries, then ``on_hands_dealt`` and ``record_play`` (a few statements whatever the
    number of players).

    The claim is an ``UPDATE`` of the hand row (a ``FOR NO KEY UPDATE`` lock: purchases in
    flight, which hold it ``FOR KEY SHARE``, go on), so two callers never count a hand twice.
    A player who left the table after the deal gets no gaming session reopened (his was
    ended when he left); his play session counts the hand, which he was dealt."""
    if not Hand.objects.filter(pk=hand_id, sessions_counted=False).update(sessions_counted=True):
        return False
    table_id, started_at = Hand.objects.values_list("table_id", "started_at").get(pk=hand_id)
    user_ids = list(Entry.objects.filter(hand_id=hand_id).values_list("user_id", flat=True))
    gone = _left_since(table_id, started_at)
    powerups.on_hands_dealt(table_id=table_id, user_ids=[u for u in user_ids if u not in gone], now=started_at)
    protection.record_play(user_ids=user_ids, now=started_at)
    return True


def _left_since(table_id: int, since: datetime) -> set[int]:
    """The players who left the table ``table_id`` at or after ``since`` (few: read without
    the hand's list of players)."""
    return set(
        Seat.objects.filter(table_id=table_id, status=SeatStatus.LEFT, left_at__gte=since).values_list(
            "user_id", flat=True
        )
    )
