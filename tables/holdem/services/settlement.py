"""The end of a Hold'em hand: pay the pots, store the results, free or sit out the seats.

``settle`` is called by ``hands`` (the action that ends a hand) and ``deal`` (a hand whose
players are all in on the blinds), with the table's row locked. When the caller holds the
table's seats (``play_due_turn`` read them for the step), the settlement writes from them:
one ``UPDATE`` of every paid seat's stack and one of every hand player's finishing stack
(a ``CASE`` on the key each: issue 23, item 6, statements per advance), and keeps the held
rows as they now are in the database, so the push builds the public frame from them
(``tables.holdem.push``) instead of reading them again.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from django.db import connection
from django.db.models import BigIntegerField, Case, F, Value, When

from config.infra import metrics
from tables.engine.cards import card_code
from tables.engine.holdem import HandState, PhhError, hand_to_phh
from tables.holdem.policy import policy_of
from tables.holdem.services import money
from tables.models import HoldemHand, HoldemHandPlayer, HoldemHandStatus, Seat, SeatStatus, Table, TableGame, TablePhase
from tables.services import beacon

RESULTS_PAUSE = timedelta(seconds=4)
"""The pause between a hand's end and the next deal (results on screen)."""


def settle(
    table: Table, hand: HoldemHand, state: HandState, *, now: datetime, seats: Mapping[int | None, Seat] | None = None
) -> None:
    """Pay the pots: the seats' stacks become the finishing stacks, the rake moves from the
    escrow to the rake account (each pot's own, no flop no drop: ``pots.rake_pots``), the hand is
    stored with its board, results and PHH text; its seeds become public later
    (``tables.holdem.records.seed_public_at``: nothing is written to the hand then).
    Leaving players are cashed out; players left without chips sit out.

    ``seats``: the table's positioned seats by position as the caller read them in this
    transaction (``read_holdem_seats``), or None to read them here. They are updated in
    place (stack, blind choice, status, a freed seat's position) to what is written."""
    held = _held_seats(table, seats)
    with metrics.timed(metrics.SETTLEMENT_DURATION, TableGame.HOLDEM):
        _pay_pots(table, hand, state, now=now, seats=held)
    metrics.count_on_commit(metrics.HANDS, TableGame.HOLDEM, "settled")
    end_hand(table, now=now, seats=held)


def _held_seats(table: Table, seats: Mapping[int | None, Seat] | None) -> dict[int | None, Seat]:
    """The table's positioned seats by position: ``seats`` when held, else one read."""
    if seats is None:
        return {int(s.position or 0): s for s in Seat.objects.filter(table=table, position__isnull=False)}
    return {int(position): seat for position, seat in seats.items() if position is not None}


def _pay_pots(
    table: Table, hand: HoldemHand, state: HandState, *, now: datetime, seats: dict[int | None, Seat]
) -> None:
    finishing = state.finishing_stacks()
    starting = dict(zip(state.seats, state.starting_stacks, strict=True))
    if sum(starting.values()) != sum(finishing.values()) + state.rake:
        raise AssertionError(f"hand {hand.pk}: chips not conserved")
    for position, chips in finishing.items():
        seats[position].stack_minor = chips
        seats[position].blind_choice = ""
    money.take_rake(table=table, hand_id=hand.pk, amount_minor=state.rake)
    showdown = len(state.hand_strengths) > 0
    shown = {
        str(seat): [card_code(c) for c in state.holes[k]]
        for k, seat in enumerate(state.seats)
        if showdown and not state.folded[k] and not state.mucked[k]
    }
    hand.results = {
        "starting_stacks": {str(s): v for s, v in starting.items()},
        "finishing_stacks": {str(s): v for s, v in finishing.items()},
        "won": {str(s): int(w) for s, w in zip(state.seats, state.winnings or (), strict=True) if w},
        "shown": shown,
        "showdown": showdown,
        # Each pot, main first: its chips before rake, its rake and the seats that shared
        # the rest (docs/holdem.md, rake: every pot pays its own rake).
        "pots": [
            {"amount": p.amount, "rake": p.rake, "winners": [state.seats[k] for k in p.winners]}
            for p in state.pot_results
        ],
    }
    hand.board = [card_code(c) for c in state.board]
    hand.pot_minor = sum(state.committed)
    hand.rake_minor = state.rake
    try:
        hand.phh = hand_to_phh(state, hand=hand.number, table=table.name)
    except PhhError as error:
        hand.phh_error = str(error)[:200]
    hand.status = HoldemHandStatus.SETTLED
    hand.settled_at = now
    _write_settlement(hand, {seats[position].pk: chips for position, chips in finishing.items()}, finishing)


_SETTLED_FIELDS = ("actions", "results", "board", "pot_minor", "rake_minor", "phh", "phh_error", "status", "settled_at")
"""What a settlement changes of the hand (with the action that ended it: ``record_action``
leaves it unsaved when the hand is over)."""


def _write_settlement(hand: HoldemHand, paid: dict[int, int], finishing: Mapping[int, int]) -> None:
    """Write the settlement: every paid seat's stack (``paid``: seat id -> chips, minor units;
    the blind choice cleared) and every hand player's finishing stack (``finishing``:
    position -> chips) in one statement on PostgreSQL (a data-modifying ``WITH`` on
    ``unnest`` arrays: issue 23, item 6, statements per step; the ORM's two elsewhere), then
    the hand (``_SETTLED_FIELDS``). The hand players are written before the hand is settled:
    a settled hand's players are final (the database refuses it, migration 0019)."""
    if connection.vendor != "postgresql":
        Seat.objects.filter(pk__in=list(paid)).update(
            stack_minor=Case(
                *(When(pk=pk, then=Value(chips)) for pk, chips in paid.items()), output_field=BigIntegerField()
            ),
            blind_choice="",
        )
        HoldemHandPlayer.objects.filter(hand=hand).update(
            finishing_minor=Case(
                *(When(seat=position, then=Value(chips)) for position, chips in finishing.items()),
                default=F("finishing_minor"),
                output_field=BigIntegerField(),
            )
        )
    else:
        seat_table, player_table = Seat._meta.db_table, HoldemHandPlayer._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute(
                f'WITH s AS (UPDATE "{seat_table}" SET "stack_minor" = v.chips, "blind_choice" = %s'
                f' FROM unnest(%s::bigint[], %s::bigint[]) AS v(id, chips) WHERE "{seat_table}"."id" = v.id)'
                f' UPDATE "{player_table}" SET "finishing_minor" = v.chips'
                f" FROM unnest(%s::integer[], %s::bigint[]) AS v(seat, chips)"
                f' WHERE "{player_table}"."hand_id" = %s AND "{player_table}"."seat" = v.seat',
                ["", list(paid), list(paid.values()), list(finishing), list(finishing.values()), hand.pk],
            )
    hand.save(update_fields=list(_SETTLED_FIELDS))


def end_hand(table: Table, *, now: datetime, seats: Mapping[int | None, Seat] | None = None) -> None:
    """After a hand (settled or cancelled): cash out the leaving, sit out the broke, and
    pause before the next deal. ``seats`` as for ``settle`` (updated in place)."""
    bust_out = policy_of(table).bots_bust_out  # a practice game eliminates its players itself
    for seat in _held_seats(table, seats).values():
        if seat.status == SeatStatus.LEFT:
            continue
        if seat.leaving or (seat.is_bot and seat.stack_minor == 0 and bust_out):
            release_seat(table, seat, now=now, reason="left")
        elif seat.stack_minor == 0 and seat.status == SeatStatus.ACTIVE:
            Seat.objects.filter(pk=seat.pk).update(status=SeatStatus.SITTING_OUT, status_reason="no chips")
            seat.status, seat.status_reason = SeatStatus.SITTING_OUT, "no chips"
    table.phase = TablePhase.RESULTS
    # The next hand's inputs freeze ``freeze_lead()`` before the pause ends, so its beacon
    # round is out when the pause is over (docs/holdem-screen.md, Timing).
    table.phase_deadline = now + RESULTS_PAUSE - freeze_lead()
    table.version += 1


def release_seat(table: Table, seat: Seat, *, now: datetime, reason: str) -> int:
    """Cash the seat's chips out to the player's wallet and free the seat; returns the
    amount returned. The caller holds the table's lock and no hand holds the seat. ``seat``
    is left as written (stack 0, status ``left``, no position)."""
    amount = money.cash_out(table=table, seat=seat, write_stack=False)
    Seat.objects.filter(pk=seat.pk).update(
        stack_minor=0,
        status=SeatStatus.LEFT,
        status_reason=reason,
        left_at=now,
        position=None,
        leaving=False,
        blind_choice="",
    )
    seat.status, seat.status_reason, seat.left_at = SeatStatus.LEFT, reason, now
    seat.position, seat.leaving, seat.blind_choice = None, False, ""
    return amount


def freeze_lead() -> timedelta:
    """How long before the end of the pause between hands the next hand's inputs freeze:
    one beacon period (``BEACON_PERIOD_SECONDS``), at most the pause. The first round
    released strictly after the freeze is then out when the pause ends, so the beacon costs
    no wait between hands (docs/holdem-screen.md, Timing)."""
    return beacon.period_within(RESULTS_PAUSE)
