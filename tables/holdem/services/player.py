"""What a Hold'em player does: take a seat with a buy-in, add chips, sit out, sit in,
leave, and act in the hand (fold, check, call, bet, raise, all-in).

Entry points (socket, REST and views call these) run in ``transaction.atomic(durable=True)``
and lock the table row first (the global lock order: table, then wallet accounts). Every
chip movement goes through ``tables.holdem.services.money``; the player protection
(wallet/protection.py) refuses buy-ins as it refuses WiderPoker stakes. Errors carry stable
codes (tables/errors.py; the engine's codes for refused actions).
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from tables.engine.holdem import Phase
from tables.errors import (
    AlreadySeatedError,
    BuyInOutOfRangeError,
    HandInProgressError,
    InvalidSeatError,
    NoHandError,
    NotSeatedError,
    SeatTakenError,
    TableClosedError,
    TurnOverError,
    WrongGameError,
)
from tables.holdem.policy import policy_of
from tables.holdem.practice.services import leave_practice_table
from tables.holdem.push import broadcast_holdem_action_on_commit
from tables.holdem.records import replay, seats_in_hand, showdown_deadline
from tables.holdem.selectors import HoldemTableRows, read_holdem_seats
from tables.holdem.services import hands, money
from tables.holdem.services.table_row import save_holdem_table
from tables.models import HoldemConditions, Seat, SeatStatus, Table, TableGame, TablePhase
from tables.realtime.push import broadcast_table_on_commit, push_private_on_commit
from tables.selectors import get_table
from wallet import guests, protection
from wallet import services as wallet_services

BLIND_CHOICES = ("wait", "post")


def lock_holdem_table(table_id: int) -> tuple[Table, HoldemConditions]:
    """The Hold'em table, row-locked until the transaction ends, with its conditions.
    Raises TableNotFoundError, WrongGameError."""
    table = get_table(table_id, lock=True)
    if table.game != TableGame.HOLDEM:
        raise WrongGameError(f"{table.name} is not a Hold'em table", table_id=table_id)
    return table, HoldemConditions.objects.get(table=table)


def _refuse_practice(table: Table) -> None:
    """A practice game's table (seed 004) is private and its chips come from the FUN
    cashier: no seat or buy-in there. Raises PracticeTableError."""
    if policy_of(table).practice:
        from tables.errors import PracticeTableError

        raise PracticeTableError("this is a practice game: stop it from its banner", table_id=table.pk)


def _seat_of(table: Table, user_id: int) -> Seat:
    seat = Seat.objects.filter(table=table, user_id=user_id, position__isnull=False).exclude(status=SeatStatus.LEFT)
    found = seat.first()
    if found is None:
        raise NotSeatedError("take a seat first", table_id=table.pk)
    return found


def _in_running_hand(table: Table, seat: Seat) -> bool:
    """Whether the seat plays the running hand, or is frozen into the next one (its inputs
    are published and it is dealt at its beacon round: ``deal._freeze``)."""
    hand = hands.running_hand(table)
    if hand is not None:
        return seat.position in seats_in_hand(hand)
    return seat.user_id in hands.frozen_user_ids(table)


def _wake(table: Table, now: datetime) -> None:
    if table.phase == TablePhase.WAITING:
        table.phase_deadline = now


@transaction.atomic(durable=True)
def take_seat(
    *, table_id: int, user_id: int, position: int, buy_in_minor: int, blind: str = "wait", now: datetime
) -> Seat:
    """Sit at seat ``position`` (0 .. seats - 1) with ``buy_in_minor`` chips bought from the
    wallet into the table's escrow. ``blind``: ``"wait"`` for the big blind to reach the
    seat, or ``"post"`` a big blind at once (seed 003, The First round); a table that is
    starting deals everyone in either way.

    Raises TableNotFoundError, WrongGameError, TableClosedError, InvalidSeatError,
    AlreadySeatedError, SeatTakenError, BuyInOutOfRangeError, InvalidActionError (blind),
    InsufficientFundsError, and the player protection's refusals (SuspendedError,
    SelfExcludedError, TimeOutError, SessionLimitError, LossLimitError); nothing changes.
    """
    from tables.errors import InvalidActionError

    table, conditions = lock_holdem_table(table_id)
    _refuse_practice(table)
    guests.refuse_guest(user_id=user_id)
    if not table.is_open or table.phase == TablePhase.CLOSED:
        raise TableClosedError(f"{table.name} is closed", table_id=table_id)
    if blind not in BLIND_CHOICES:
        raise InvalidActionError("blind is 'wait' or 'post'", blind=str(blind)[:10])
    if not isinstance(position, int) or isinstance(position, bool) or not 0 <= position < conditions.seats:
        raise InvalidSeatError(f"seats are 0 to {conditions.seats - 1}", seat=repr(position)[:10])
    if Seat.objects.filter(table=table, user_id=user_id, position__isnull=False).exclude(status=SeatStatus.LEFT):
        raise AlreadySeatedError("you already have a seat at this table", table_id=table_id)
    if Seat.objects.filter(table=table, position=position).exists():
        raise SeatTakenError(f"seat {position} is taken", seat=position)
    _check_buy_in(conditions, buy_in_minor, stack_minor=0)
    _lock_buyer(table, user_id)
    protection.check_can_play(user_id=user_id, currency=table.currency, stake_minor=buy_in_minor, now=now)
    seat = money.sit_down(
        table=table, user_id=user_id, position=position, buy_in_minor=buy_in_minor, now=now, blind_choice=blind
    )
    _wake(table, now)
    table.version += 1
    save_holdem_table(table)
    broadcast_table_on_commit(table.pk, refresh_private=True)
    return seat


def join_holdem(
    *, table_id: int, user_id: int, seat: int, buy_in_minor: int, blind: str = "wait", now: datetime
) -> Seat:
    """``take_seat`` under the wire's field names (``seat``: the seat number); the Hold'em
    ``join`` action of tables/commands.py."""
    return take_seat(table_id=table_id, user_id=user_id, position=seat, buy_in_minor=buy_in_minor, blind=blind, now=now)


def _lock_buyer(table: Table, user_id: int) -> None:
    """Lock the buyer's wallet and the table's escrow (primary-key order, after the table's
    row: the global lock order) before the player protection reads his losses: a stake of
    his at another table (a WiderPoker purchase or deal, another buy-in), which locks the
    wallet too, is counted before or after this buy-in, never beside it."""
    wallet = wallet_services.ensure_player_account(user_id=user_id, currency=table.currency)
    wallet_services.lock_accounts([wallet.pk, money.table_escrow(table).pk])


def _check_buy_in(conditions: HoldemConditions, amount_minor: object, *, stack_minor: int) -> None:
    if not isinstance(amount_minor, int) or isinstance(amount_minor, bool) or amount_minor <= 0:
        raise BuyInOutOfRangeError("the amount is a positive whole number of minor units", amount=repr(amount_minor))
    total = stack_minor + amount_minor
    if stack_minor == 0 and amount_minor < conditions.min_buy_in_minor:
        raise BuyInOutOfRangeError(
            f"the minimum buy-in is {conditions.min_buy_in_minor}", min_minor=conditions.min_buy_in_minor
        )
    if total > conditions.max_buy_in_minor:
        raise BuyInOutOfRangeError(
            f"the maximum at the table is {conditions.max_buy_in_minor}", max_minor=conditions.max_buy_in_minor
        )


@transaction.atomic(durable=True)
def add_chips(*, table_id: int, user_id: int, amount_minor: int, now: datetime) -> Seat:
    """Buy more chips between hands (table stakes, seed 003: never while the player is in
    a hand), up to the maximum buy-in; a player who had run out plays again.

    Raises NotSeatedError, HandInProgressError, BuyInOutOfRangeError,
    InsufficientFundsError and the protection's refusals."""
    table, conditions = lock_holdem_table(table_id)
    _refuse_practice(table)
    guests.refuse_guest(user_id=user_id)
    seat = _seat_of(table, user_id)
    if _in_running_hand(table, seat):
        raise HandInProgressError("chips can be added between hands only", table_id=table_id)
    _check_buy_in(conditions, amount_minor, stack_minor=int(seat.stack_minor))
    _lock_buyer(table, user_id)
    protection.check_can_play(user_id=user_id, currency=table.currency, stake_minor=amount_minor, now=now)
    money.buy_chips(table=table, seat=seat, amount_minor=amount_minor)
    if seat.status_reason == "no chips":
        Seat.objects.filter(pk=seat.pk).update(status=SeatStatus.ACTIVE, status_reason="", last_seen_at=now)
        seat.status = SeatStatus.ACTIVE
    _wake(table, now)
    table.version += 1
    save_holdem_table(table)
    broadcast_table_on_commit(table.pk, refresh_private=True)
    return seat


@transaction.atomic(durable=True)
def sit_out_holdem(*, table_id: int, user_id: int, now: datetime) -> Seat:
    """Keep the seat and chips but be dealt no more hands from the next one (a hand in
    play goes on: the clock's timeout rule acts for him). Raises NotSeatedError."""
    table, _ = lock_holdem_table(table_id)
    seat = _seat_of(table, user_id)
    Seat.objects.filter(pk=seat.pk).update(status=SeatStatus.SITTING_OUT, status_reason="sit out", last_seen_at=now)
    table.version += 1
    save_holdem_table(table)
    broadcast_table_on_commit(table.pk, refresh_private=True)
    return seat


@transaction.atomic(durable=True)
def sit_in_holdem(*, table_id: int, user_id: int, now: datetime) -> Seat:
    """Be dealt in again from the next hand. Raises NotSeatedError, BuyInOutOfRangeError
    (no chips left: add chips first) and the protection's refusals."""
    table, conditions = lock_holdem_table(table_id)
    seat = _seat_of(table, user_id)
    if seat.stack_minor <= 0:
        raise BuyInOutOfRangeError("add chips first", min_minor=conditions.min_buy_in_minor)
    # The chips were counted against a loss limit when bought (docs/platform.md, "Player
    # protection"): sitting in stakes nothing new; only a player already past his limit is refused.
    protection.check_can_play(user_id=user_id, currency=table.currency, stake_minor=0, now=now)
    Seat.objects.filter(pk=seat.pk).update(status=SeatStatus.ACTIVE, status_reason="", last_seen_at=now)
    _wake(table, now)
    table.version += 1
    save_holdem_table(table)
    broadcast_table_on_commit(table.pk, refresh_private=True)
    return seat


@transaction.atomic(durable=True)
def leave_holdem_table(*, table_id: int, user_id: int, now: datetime) -> int:
    """Leave the table. Outside a hand the chips go back to the wallet at once (returns the
    amount); in a hand (or frozen into the next one) the player folds when his turn comes
    (checks when checking is free) and his chips come back when the hand ends (returns 0).
    At a practice game's table the player who started it stops the game (its chips return to the FUN cashier, never to a
    wallet: tables/holdem/practice/services.py; returns 0). Raises NotSeatedError."""
    table, _ = lock_holdem_table(table_id)
    returned = 0
    if policy_of(table).practice:
        leave_practice_table(table, user_id=user_id, now=now)
    elif _in_running_hand(table, seat := _seat_of(table, user_id)):
        Seat.objects.filter(pk=seat.pk).update(leaving=True, status=SeatStatus.SITTING_OUT, status_reason="leaving")
        hand = hands.running_hand(table)
        if hand is not None and replay(hand).to_act == seat.position:
            table.phase_deadline = now  # the clock folds for him at its next tick
    else:
        returned = hands.release_seat(table, _seat_of(table, user_id), now=now, reason="left")
        _wake(table, now)  # house bots leave with the last person
    table.version += 1
    save_holdem_table(table)
    broadcast_table_on_commit(table.pk, refresh_private=True)
    push_private_on_commit(table.pk, user_id)  # no longer seated: the hub's refresh misses him
    return returned


@transaction.atomic(durable=True)
def act_in_hand(*, table_id: int, user_id: int, kind: object, amount: object = None, now: datetime) -> int:
    """The player's action in the running hand: ``kind`` one of fold, check, call, bet,
    raise, all_in, or at the showdown show or muck (seed 003, Showdown: a player whose
    hand wins nothing, and who is not the first to show, may muck; his turn to choose
    lasts ``tables.holdem.records.showdown_deadline``); ``amount`` the bet or raise-to total in
    chips (minor units; None = the minimum). Validated by the engine (seed 003). Returns
    the table's new version.

    Raises TableNotFoundError, WrongGameError, InvalidActionError, NotSeatedError,
    NoHandError, TurnOverError (``turn_over``: his turn's deadline, time bank included, has
    passed; the clock's timeout rule applies), and HoldemActionError with the engine's code
    (``not_your_turn``, ``illegal_action``, ``amount_too_small``, ``amount_too_large``,
    ``hand_over``); nothing changes then."""
    action_kind, action_amount = hands.parse_action(kind, amount)
    table, conditions = lock_holdem_table(table_id)
    # One read of every seat: the player's, the next to act (``record_action``) and the
    # pushed frame's (perf audit 2026-11-26, section 3).
    seats = read_holdem_seats(table)
    seat = next((s for s in seats if s.user_id == user_id and s.status != SeatStatus.LEFT), None)
    if seat is None:
        raise NotSeatedError("take a seat first", table_id=table.pk)
    hand = hands.running_hand(table)
    if hand is None:
        raise NoHandError("no hand is being played", table_id=table_id)
    if seat.position not in seats_in_hand(hand):
        from tables.errors import NotInHandError

        raise NotInHandError("you are not dealt in this hand", table_id=table_id)
    assert seat.position is not None
    state = replay(hand)
    showdown = state.phase is Phase.SHOWDOWN
    deadline = showdown_deadline(hand) if showdown else hands.player_turn_deadline(hand, seat)
    if state.to_act == seat.position and now >= deadline:
        raise TurnOverError(
            "your time to act is over: the timeout rule plays for you", table_id=table_id, hand_id=hand.pk
        )
    by_position = {s.position: s for s in seats}
    new_state = hands.record_action(
        table, hand, state, action_kind, seat.position, action_amount, now=now, seats=by_position
    )
    Seat.objects.filter(pk=seat.pk).update(last_seen_at=now)
    seat.last_seen_at = now
    save_holdem_table(table)
    # The frame from the rows held here (settled with the hand when it ended); a lobby line
    # only when the hand ended (docs/protocol.md).
    broadcast_holdem_action_on_commit(table, HoldemTableRows(conditions, hand, new_state, seats))
    return table.version
