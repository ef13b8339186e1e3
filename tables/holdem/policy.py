"""Who runs a Hold'em table's seats between hands: the house's bots at a lobby table, or a
practice game (seed 004) that seats its own bots and its one person. Chosen once per table
object (``policy_of``) instead of asking ``hasattr(table, "practice")`` at each step (each a
hidden query that swallowed ``DoesNotExist``)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.db.models.signals import post_migrate

from tables.models import PracticeGame, Table


@dataclass(frozen=True, slots=True)
class SeatPolicy:
    """How a Hold'em table's seats are run.

    ``practice``: a practice game's table (private: no seat, buy-in or added chips from
    players; its hands are prepared by ``prepare_practice_hand``, which seats its bots and
    sets each hand's level; leaving stops the game). ``bots_bust_out``: a house bot with no
    chips leaves after the hand (a practice game eliminates its own players). ``bots_deal_last``:
    at a fresh table the first person who sat down deals, bots after (a practice game seats
    everyone at once: seat order). ``call_all_in_for_less``: None for the betting
    structure's own rule, False where a player short of a bet must fold (BigHoldem)."""

    practice: bool
    bots_bust_out: bool
    bots_deal_last: bool
    call_all_in_for_less: bool | None


HOUSE_BOTS = SeatPolicy(practice=False, bots_bust_out=True, bots_deal_last=True, call_all_in_for_less=None)
"""A lobby table: house bots fill a fun table (``bot_seats``) and leave broke."""

PRACTICE = SeatPolicy(practice=True, bots_bust_out=False, bots_deal_last=False, call_all_in_for_less=False)
"""A practice game's table (tables/holdem/practice/services.py)."""

_ATTRIBUTE = "_holdem_seat_policy"

_KNOWN: dict[int, SeatPolicy] = {}
"""Each table's policy as this process last read it, by table id. A table's practice game is
created in the transaction that creates the table (``start_practice_game``) and a table is
never made a practice table later, so once committed the answer never changes: the clock
reads it once per process and table, not at every step (issue 23, item 6)."""


def _forget_policies(**_: object) -> None:
    """A flushed or migrated database (a test's teardown) may reuse what was remembered."""
    _KNOWN.clear()


post_migrate.connect(_forget_policies, weak=False, dispatch_uid="tables.holdem.policies")


def policy_of(table: Table) -> SeatPolicy:
    """The table's policy: one indexed read the first time for this table in this process
    (none when its practice game is already loaded), then remembered on the object and, once
    the reading transaction commits (a rolled-back test may reuse the id), for the process."""
    policy: SeatPolicy | None = table.__dict__.get(_ATTRIBUTE) or _KNOWN.get(table.pk)
    if policy is None:
        cache = table._state.fields_cache
        if "practice" in cache:
            practice = cache["practice"] is not None
        else:
            practice = PracticeGame.objects.filter(table_id=table.pk).exists()
        policy = PRACTICE if practice else HOUSE_BOTS
        pk, known = table.pk, policy
        transaction.on_commit(lambda: _KNOWN.__setitem__(pk, known))
    table.__dict__[_ATTRIBUTE] = policy
    return policy
