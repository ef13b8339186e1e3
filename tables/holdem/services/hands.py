"""The Hold'em hand on the clock: deal, actions, timeouts, bots, showdown, settlement.

The rules are the engine's (``tables.engine.holdem``; seed 003; docs/holdem.md): this
module only stores a hand (``HoldemHand``: its setup, deck seed and actions), rebuilds the
engine's immutable ``HandState`` from them (``replay``), and moves money through
``tables.holdem.services.money``. The clock (``tables.clock.advance_due_tables``)
calls ``advance_holdem_table`` with the table's row locked (SKIP LOCKED + version check in
``tables.clock.advance_table``), so a duplicated tick does nothing.

Table phases: WAITING (fewer than two players with chips) -> PLAYING (``phase_deadline``
is the deadline of the player to act) -> RESULTS (``RESULTS_PAUSE``) -> next hand.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from config import metrics
from tables.engine import fairness
from tables.engine.cards import card_code
from tables.engine.holdem import (
    ALGORITHM_DEAL_ROUND,
    PERSONALITIES,
    RECONNECT_MS,
    Action,
    ActionKind,
    HandState,
    HoldemError,
    Phase,
    PhhError,
    bot_rng,
    client_seed_commitment,
    deal_seed,
    decide,
    first_button,
    freeze_digest,
    freeze_lines,
    hand_to_phh,
    play_showdown,
    timeout_action,
)
from tables.engine.holdem import next_button as engine_next_button
from tables.errors import HoldemActionError, InvalidActionError
from tables.holdem.policy import policy_of
from tables.holdem.records import apply_action, replay, showdown_deadline, turn_deadline
from tables.holdem.selectors import HoldemTableRows, read_holdem_seats
from tables.holdem.services import money
from tables.holdem.services.conditions import apply_pending_holdem_changes
from tables.models import (
    HoldemConditions,
    HoldemFreeze,
    HoldemFreezeStatus,
    HoldemHand,
    HoldemHandPlayer,
    HoldemHandStatus,
    Seat,
    SeatStatus,
    Table,
    TableGame,
    TableMode,
    TablePhase,
)
from tables.services import beacon, degradation
from tables.services import fairness as fairness_services
from tables.services.presence import is_connected
from wallet import protection
from wallet import services as wallet_services
from wallet.models import AccountKind, Currency, TransferKind

logger = logging.getLogger(__name__)

RESULTS_PAUSE = timedelta(seconds=4)
"""The pause between a hand's end and the next deal (results on screen)."""

BOT_THINK = timedelta(seconds=1)
"""How long a house bot's turn lasts before the clock plays its decision."""

PLAYER_KINDS = frozenset(
    {
        ActionKind.FOLD,
        ActionKind.CHECK,
        ActionKind.CALL,
        ActionKind.BET,
        ActionKind.RAISE,
        ActionKind.ALL_IN,
        ActionKind.SHOW,
        ActionKind.MUCK,
    }
)
"""The actions a player may send: the betting actions, and at the showdown ``show`` or
``muck`` when the rules leave him the choice (seed 003, Showdown: "the remaining players
may/may not show their cards as they wish")."""

BOT_PREFIX = "housebot-"


# --- the stored hand and the engine ---------------------------------------------------------


def parse_action(kind: object, amount: object) -> tuple[ActionKind, int | None]:
    """A player's action from the wire: ``kind`` one of fold, check, call, bet, raise,
    all_in, show, muck; ``amount`` the bet or raise-to total in chips (minor units) or None for the
    minimum. Raises InvalidActionError."""
    try:
        action_kind = ActionKind(str(kind))
    except ValueError:
        raise InvalidActionError(f"unknown action {kind!r}", kind=str(kind)[:20]) from None
    if action_kind not in PLAYER_KINDS:
        raise InvalidActionError(f"{action_kind.value} is not a player's action", kind=action_kind.value)
    if amount is None:
        return action_kind, None
    if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
        raise InvalidActionError("the amount is a positive whole number of chips", amount=repr(amount)[:20])
    return action_kind, amount


def running_hand(table: Table) -> HoldemHand | None:
    """The table's hand being played, or None."""
    return HoldemHand.objects.filter(table=table, status=HoldemHandStatus.PLAYING).order_by("-number").first()


# --- the clock ----------------------------------------------------------------------------


def advance_holdem_table(table: Table, *, now: datetime) -> HoldemTableRows | None:
    """One clock step of a Hold'em table whose deadline has passed (row locked by the
    caller, which bumps ``version`` when this changes it): play the due turn (a bot's
    decision, a leaving player's fold, or the timeout rule), or deal the next hand.

    Returns the rows the step holds when it played an action that left the hand running
    (the caller's push builds the public frame from them, ``build_holdem_table_frame``,
    instead of reading them again), else None (a deal, a settlement, a wait)."""
    conditions = HoldemConditions.objects.get(table=table)
    if table.phase == TablePhase.PLAYING:
        hand = running_hand(table)
        if hand is not None:
            return _play_due_turn(table, conditions, hand, now=now)
    freeze = pending_freeze(table)
    if freeze is not None and _deal_frozen(table, conditions, freeze, now=now):
        return None
    _start_hand_or_wait(table, conditions, now=now, after_pause=freeze is None)
    return None


def _play_due_turn(
    table: Table, conditions: HoldemConditions, hand: HoldemHand, *, now: datetime
) -> HoldemTableRows | None:
    state = replay(hand)
    if state.is_over:  # settled state not written (should not happen): settle now
        _settle(table, hand, state, now=now)
        return None
    seat_no = state.to_act
    assert seat_no is not None
    # One read of every seat: the one to act, the next one (``_start_turn``) and the frame.
    seats = read_holdem_seats(table)
    by_position = {seat.position: seat for seat in seats}
    seat = by_position.get(seat_no) or Seat.objects.get(table=table, position=seat_no)
    if state.phase is Phase.SHOWDOWN and not seat.is_bot:
        # A person's show-or-muck choice ran out (no time bank, no grace): he mucks when he
        # may, else shows (clocks.timeout_action).
        action = timeout_action(state, connected=False)
        new_state = record_action(
            table, hand, state, action.kind, action.seat, action.amount, now=now, timeout=True, seats=by_position
        )
        return None if new_state.is_over else HoldemTableRows(conditions, hand, new_state, seats)
    if seat.is_bot or seat.leaving:
        if seat.is_bot:
            action = bot_action(hand, state, seat_no, seat.bot_personality)
            kind, actor, amount = action.kind, action.seat, action.amount
        else:
            # A player leaving checks when he may, else folds.
            kind = ActionKind.CHECK if ActionKind.CHECK in state.legal_actions().kinds else ActionKind.FOLD
            actor, amount = seat_no, None
        new_state = record_action(table, hand, state, kind, actor, amount, now=now, seats=by_position)
        return None if new_state.is_over else HoldemTableRows(conditions, hand, new_state, seats)
    connected = is_connected(seat, now=now)
    if connected and _came_back_in_turn(hand, seat) and not hand.turn_extended:
        # Seed 003: a player who drops and comes back while his turn has time gets 20 s more.
        hand.turn_extended = True
        hand.save(update_fields=["turn_extended"])
        table.phase_deadline = turn_deadline(hand, hand.config)
        if table.phase_deadline > now:
            table.version += 1
            return None
    grace_until = platform_grace(hand, now=now)
    if grace_until is not None:
        hand.turn_grace_until = grace_until
        hand.save(update_fields=["turn_grace_until"])
        table.phase_deadline = grace_until
        table.version += 1
        return None
    action = timeout_action(state, connected=connected)
    new_state = record_action(
        table, hand, state, action.kind, action.seat, action.amount, now=now, timeout=True, seats=by_position
    )
    return None if new_state.is_over else HoldemTableRows(conditions, hand, new_state, seats)


def bot_action(hand: HoldemHand, state: HandState, seat_no: int, personality_name: str) -> Action:
    """A house bot's decision (``bots.decide``) for seat ``seat_no``, the player to act in
    ``state``: drawn from the hand's own stream of that seat and decision (algorithm 3,
    ``bot_rng(server_seed, seat, len(hand.actions))``), so every bot decision replays from
    the hand's seed once it is public; an older hand (algorithm 2) draws the same way. The
    personality is the seat's (the third, the default, when unknown)."""
    personality = next((p for p in PERSONALITIES if p.name == personality_name), PERSONALITIES[2])
    rng = bot_rng(bytes.fromhex(hand.server_seed), seat_no, len(hand.actions))
    return decide(state, personality, rng)


def platform_grace(hand: HoldemHand, *, now: datetime) -> datetime | None:
    """The new deadline of a person's turn that has run out while the platform knew it was
    degraded, or None to apply the timeout rule (docs/deployment.md, "When Redis is down").

    A fault recorded (``degradation``: Redis unreachable from a web process, the clock
    late) since the turn started, or since its last grace, may have kept the player's
    action from arriving: the turn gets ``PLATFORM_GRACE_SECONDS`` more from now, and again
    while faults go on, but never past ``PLATFORM_GRACE_MAX_SECONDS`` after its own
    deadline, so an outage cannot hold a table for good. Seed 003's timeout rule applies
    unchanged once the turn is out of grace."""
    assert hand.turn_started_at is not None
    step = timedelta(seconds=settings.PLATFORM_GRACE_SECONDS)
    since = hand.turn_started_at if hand.turn_grace_until is None else hand.turn_grace_until - step
    if not degradation.degraded_between(start=since, end=now):
        return None
    latest = turn_deadline(hand, hand.config, grace=False) + timedelta(seconds=settings.PLATFORM_GRACE_MAX_SECONDS)
    grace_until = min(now + step, latest)
    return grace_until if grace_until > now else None


def _came_back_in_turn(hand: HoldemHand, seat: Seat) -> bool:
    """Whether the player of ``seat`` dropped during the running turn and came back since
    (seed 003: he gets 20 s more, once)."""
    assert hand.turn_started_at is not None
    return (
        seat.socket_closed_at is not None
        and seat.socket_closed_at >= hand.turn_started_at
        and seat.last_seen_at > seat.socket_closed_at
    )


def player_turn_deadline(hand: HoldemHand, seat: Seat) -> datetime:
    """When the turn of the player to act (``seat``, a connected person acting now) is over:
    ``turn_deadline`` (10 s to act, then the table's time bank, seed 003), with the 20 s of
    reconnection time when granted, or when the clock would grant them at the deadline (he
    dropped during this turn and came back: ``_came_back_in_turn``). An action at or after
    it is refused (TurnOverError, ``turn_over``): the clock plays the timeout rule, as it
    would have at the deadline (``phase_deadline <= now`` is due)."""
    deadline = turn_deadline(hand, hand.config)
    if hand.turn_extended or not _came_back_in_turn(hand, seat):
        return deadline
    return deadline + timedelta(milliseconds=RECONNECT_MS)


def record_action(
    table: Table,
    hand: HoldemHand,
    state: HandState,
    kind: ActionKind,
    seat: int,
    amount: int | None,
    *,
    now: datetime,
    timeout: bool = False,
    seats: Mapping[int | None, Seat] | None = None,
) -> HandState:
    """Apply one action to ``state`` (the engine validates it: HoldemActionError with the
    engine's code, nothing changed), store it, and move the table on: the next turn's
    deadline, or the settlement when the hand is over. Returns the new state. ``seats``
    (by position), when the caller has read them, spares reading the next seat."""
    try:
        new_state = apply_action(state, kind.value, seat, amount)
    except HoldemError as error:
        raise HoldemActionError(str(error), engine_code=error.code) from error
    stored_amount = _stored_amount(new_state, kind, seat, amount)
    entry: dict[str, Any] = {"kind": kind.value, "seat": seat, "at": now.isoformat()}
    if stored_amount is not None:
        entry["amount"] = stored_amount
    if timeout:
        entry["timeout"] = True
    hand.actions = [*hand.actions, entry]
    new_state = showdown_until_choice(table, hand, new_state, now=now)
    table.version += 1
    if new_state.is_over:
        hand.save(update_fields=["actions"])
        _settle(table, hand, new_state, now=now)
        return new_state
    _start_turn(table, hand, new_state, now=now, seats=seats)
    hand.save(update_fields=["actions", "turn_started_at", "turn_extended", "turn_grace_until"])
    return new_state


def showdown_until_choice(table: Table, hand: HoldemHand, state: HandState, *, now: datetime) -> HandState:
    """Play the showdown decisions nobody has to make (seed 003, Showdown) and stop at the
    first person who may choose to show or muck; returns the new state.

    A player who must show (the first to show, a hand that wins something, every hand after
    an all-in run-out) shows; a house bot, a player leaving the table or one not connected
    mucks when he may. Each is stored in ``hand.actions`` with ``"auto": true`` so the
    replay is exact. A hand dealt before players chose (no ``setup["showdown_choice"]``) is
    played by the house policy (``play_showdown``) as it was. The caller saves the hand."""
    if not hand.setup.get("showdown_choice"):
        return play_showdown(state)
    while state.phase is Phase.SHOWDOWN:
        legal = state.legal_actions()
        kind = ActionKind.SHOW
        if ActionKind.MUCK in legal.kinds:
            seat = Seat.objects.only("is_bot", "leaving", "last_seen_at", "ws_connections", "socket_closed_at").get(
                table=table, position=legal.seat
            )
            if not seat.is_bot and not seat.leaving and is_connected(seat, now=now):
                return state  # his choice (_start_turn gives him the time to make it)
            kind = ActionKind.MUCK
        hand.actions = [*hand.actions, {"kind": kind.value, "seat": legal.seat, "at": now.isoformat(), "auto": True}]
        state = state.act(Action(kind, legal.seat))
    return state


def _stored_amount(state: HandState, kind: ActionKind, seat: int, amount: int | None) -> int | None:
    """The amount to store so the replay takes the same action: a bet or raise's total
    (the minimum filled in when none was given)."""
    if kind not in (ActionKind.BET, ActionKind.RAISE):
        return None
    if amount is not None:
        return amount
    k = state.seats.index(seat)
    return int(state.bets[k])


def _start_turn(
    table: Table, hand: HoldemHand, state: HandState, *, now: datetime, seats: Mapping[int | None, Seat] | None = None
) -> None:
    """The next player's turn starts now: his deadline (a bot's or a leaving player's
    turn is played at once by the clock). ``seats``: the table's seats by position, when
    the caller holds them (else the next seat is read)."""
    hand.turn_started_at = now
    hand.turn_extended = False
    hand.turn_grace_until = None
    seat_no = state.to_act
    held = None if seats is None else seats.get(seat_no)
    seat = held or Seat.objects.only("is_bot", "leaving").get(table=table, position=seat_no)
    if state.phase is Phase.SHOWDOWN:
        table.phase_deadline = showdown_deadline(hand)  # a person's choice to show or muck
    elif seat.is_bot:
        table.phase_deadline = now + BOT_THINK
    elif seat.leaving:
        table.phase_deadline = now
    else:
        table.phase_deadline = turn_deadline(hand, hand.config)


# --- settlement ---------------------------------------------------------------------------


def _settle(table: Table, hand: HoldemHand, state: HandState, *, now: datetime) -> None:
    """Pay the pots: the seats' stacks become the finishing stacks, the rake moves from the
    escrow to the rake account (each pot's own, no flop no drop: ``pots.rake_pots``), the hand is
    stored with its board, results and PHH text; its seeds become public later
    (``holdem_records.seed_public_at``: nothing is written to the hand then).
    Leaving players are cashed out; players left without chips sit out."""
    with metrics.timed(metrics.SETTLEMENT_DURATION, TableGame.HOLDEM):
        _pay_pots(table, hand, state, now=now)
    metrics.count_on_commit(metrics.HANDS, TableGame.HOLDEM, "settled")
    _end_hand(table, now=now)


def _pay_pots(table: Table, hand: HoldemHand, state: HandState, *, now: datetime) -> None:
    finishing = state.finishing_stacks()
    starting = dict(zip(state.seats, state.starting_stacks, strict=True))
    if sum(starting.values()) != sum(finishing.values()) + state.rake:
        raise AssertionError(f"hand {hand.pk}: chips not conserved")
    seats = {seat.position: seat for seat in Seat.objects.filter(table=table, position__in=list(finishing))}
    for position, chips in finishing.items():
        Seat.objects.filter(pk=seats[position].pk).update(stack_minor=chips, blind_choice="")
        seats[position].stack_minor = chips
    for row in HoldemHandPlayer.objects.filter(hand=hand):
        HoldemHandPlayer.objects.filter(pk=row.pk).update(finishing_minor=finishing[row.seat])
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
    hand.save()


def _end_hand(table: Table, *, now: datetime) -> None:
    """After a hand (settled or cancelled): cash out the leaving, sit out the broke, and
    pause before the next deal."""
    bust_out = policy_of(table).bots_bust_out  # a practice game eliminates its players itself
    for seat in Seat.objects.filter(table=table, position__isnull=False).exclude(status=SeatStatus.LEFT):
        if seat.leaving or (seat.is_bot and seat.stack_minor == 0 and bust_out):
            release_seat(table, seat, now=now, reason="left")
        elif seat.stack_minor == 0 and seat.status == SeatStatus.ACTIVE:
            Seat.objects.filter(pk=seat.pk).update(status=SeatStatus.SITTING_OUT, status_reason="no chips")
    table.phase = TablePhase.RESULTS
    # The next hand's inputs freeze ``freeze_lead()`` before the pause ends, so its beacon
    # round is out when the pause is over (docs/holdem-screen.md, Timing).
    table.phase_deadline = now + RESULTS_PAUSE - freeze_lead()
    table.version += 1


def release_seat(table: Table, seat: Seat, *, now: datetime, reason: str) -> int:
    """Cash the seat's chips out to the player's wallet and free the seat; returns the
    amount returned. The caller holds the table's lock and no hand holds the seat."""
    amount = money.cash_out(table=table, seat=seat)
    Seat.objects.filter(pk=seat.pk).update(
        status=SeatStatus.LEFT, status_reason=reason, left_at=now, position=None, leaving=False, blind_choice=""
    )
    return amount


def cancel_holdem_hand(*, table: Table, reason: str, now: datetime) -> bool:
    """Cancel the table's running hand (a malfunction, rules Notes 3): the seats keep their
    starting stacks, which the escrow still holds, so every chip wagered is back at once.
    Returns whether a hand was cancelled. A hand frozen but not dealt yet is void instead
    (nothing was dealt or staked; returns False)."""
    hand = running_hand(table)
    if hand is None:
        freeze = pending_freeze(table)
        if freeze is not None:
            _void(table, freeze, reason=reason, now=now)
        return False
    hand.status = HoldemHandStatus.CANCELLED
    hand.cancel_reason = reason[:200]
    hand.settled_at = now
    hand.save(update_fields=["status", "cancel_reason", "settled_at"])
    metrics.count_on_commit(metrics.HANDS, TableGame.HOLDEM, "cancelled")
    _end_hand(table, now=now)
    return True


# --- the deal ------------------------------------------------------------------------------


def _start_hand_or_wait(table: Table, conditions: HoldemConditions, *, now: datetime, after_pause: bool = True) -> None:
    """Apply pending staff changes, seat or release house bots, then freeze the next hand
    (``_freeze``, dealt at its beacon round) when two or more players can play; otherwise
    wait (joining wakes the table). ``after_pause`` False: a void freeze is replaced at
    once, the pause between hands already over."""
    if table.pending_changes and apply_pending_holdem_changes(table, conditions, now=now):
        for seat in Seat.objects.filter(table=table, position__gte=conditions.seats).exclude(status=SeatStatus.LEFT):
            release_seat(table, seat, now=now, reason="seat removed")
        table.version += 1
    if not table.is_open:
        for seat in Seat.objects.filter(table=table, position__isnull=False).exclude(status=SeatStatus.LEFT):
            release_seat(table, seat, now=now, reason="table closed")
        table.phase = TablePhase.CLOSED
        table.phase_deadline = None
        table.version += 1
        return
    policy = policy_of(table)
    if not policy.practice:
        _release_busted_and_gone(table, now=now)
    if policy.practice:
        # A BigHoldem practice game seats its own bots and sets each hand's level (seed 004).
        from tables.holdem.practice.services import prepare_practice_hand

        if not prepare_practice_hand(table, conditions, now=now):
            return
    else:
        _manage_bots(table, conditions, now=now)
    seats = list(
        Seat.objects.filter(table=table, position__isnull=False, status=SeatStatus.ACTIVE, stack_minor__gt=0)
        .select_related("user")
        .order_by("position")
    )
    humans = [seat for seat in seats if not seat.is_bot]
    gone = [seat for seat in humans if not is_connected(seat, now=now)]
    barred = protection.barred_players(
        user_ids=[seat.user_id for seat in humans],
        currency=table.currency,
        # The chips in play were counted against a loss limit when bought (buy_in, until the
        # cash_out): a hand stakes nothing new; only a player past his limit (lowered since) sits out.
        stake_minor=0,
        now=now,
    )
    out = {seat.pk for seat in gone} | {seat.pk for seat in humans if seat.user_id in barred}
    for seat in seats:
        if seat.pk in out:
            why = "disconnected" if seat in gone else barred[seat.user_id].code.replace("_", " ")
            Seat.objects.filter(pk=seat.pk).update(status=SeatStatus.SITTING_OUT, status_reason=why)
            table.version += 1
    seats = [seat for seat in seats if seat.pk not in out]
    if len(seats) < 2:
        if table.phase != TablePhase.WAITING:
            table.version += 1
        table.phase = TablePhase.WAITING
        table.phase_deadline = None
        return
    _freeze(table, conditions, seats, now=now, after_pause=after_pause)


def _release_busted_and_gone(table: Table, *, now: datetime) -> None:
    """Before a deal, free the seat of every person with no chips left who is no longer at
    the table (``is_connected``: his page closed past the reconnection grace, or unseen for
    ``PRESENCE_TIMEOUT_SECONDS``): he cannot play without adding chips, and his seat is
    taken from players who could (UX audit 2026-11-26, N16: such a seat stayed 25 minutes).
    A busted player still at the table keeps his seat to add chips. Nothing to cash out."""
    busted = Seat.objects.filter(table=table, position__isnull=False, is_bot=False, stack_minor=0).exclude(
        status=SeatStatus.LEFT
    )
    for seat in busted:
        if not is_connected(seat, now=now):
            release_seat(table, seat, now=now, reason="no chips")
            table.version += 1


def _manage_bots(table: Table, conditions: HoldemConditions, *, now: datetime) -> None:
    """House bots fill a fun table up to ``bot_seats``, always leaving a seat free for a
    person; extra bots leave between hands. Never at cash tables (seed 001 Notes 4)."""
    seated = list(Seat.objects.filter(table=table, position__isnull=False).exclude(status=SeatStatus.LEFT))
    bots = [seat for seat in seated if seat.is_bot]
    target = 0
    if table.mode == TableMode.FUN and any(not seat.is_bot for seat in seated):
        target = min(conditions.bot_seats, conditions.seats - (len(seated) - len(bots)) - 1)
    for seat in bots[max(target, 0) :]:
        release_seat(table, seat, now=now, reason="bot left")
        table.version += 1
    taken = {seat.position for seat in seated if seat not in bots[max(target, 0) :]}
    free = [p for p in range(conditions.seats) if p not in taken]
    for _ in range(max(target, 0) - len(bots)):
        if not free:
            break
        _seat_bot(table, conditions, free.pop(0), now=now)
        table.version += 1


def _idle_bot_user() -> User:
    """A house bot's user seated nowhere, locked for this transaction (``SKIP LOCKED``: two
    clock workers seating bots at once never take the same one), or a new one: one query,
    not one per existing bot, and as many bots as the room needs (it stopped at 999). A new
    bot's name is the next free ``housebot-<k>``; a name another worker has just taken is
    skipped (a savepoint), never failing the step (it did: the table's hand was cancelled)."""
    busy = Seat.objects.filter(is_bot=True).exclude(status=SeatStatus.LEFT).values("user_id")
    idle = (
        User.objects.filter(
            username__startswith=BOT_PREFIX, is_active=False, password__startswith=UNUSABLE_PASSWORD_PREFIX
        )
        .exclude(pk__in=busy)
        .order_by("pk")
        .select_for_update(skip_locked=True)
        .first()
    )
    if idle is not None:
        return idle
    number = User.objects.filter(username__startswith=BOT_PREFIX).count() + 1
    while True:
        try:
            with transaction.atomic():
                return User.objects.create_user(username=f"{BOT_PREFIX}{number}", password=None, is_active=False)
        except IntegrityError:
            number += 1


def _seat_bot(table: Table, conditions: HoldemConditions, position: int, *, now: datetime) -> None:
    """Seat a house bot (an inactive user ``housebot-<k>``: it cannot log in) with a maximum
    buy-in of FUN chips from its own wallet, topped up by the cashier when low."""
    user = _idle_bot_user()
    buy_in = int(conditions.max_buy_in_minor)
    wallet = wallet_services.ensure_player_account(user_id=user.pk, currency=Currency.FUN)
    if wallet.balance_minor - wallet.held_minor < buy_in:
        wallet_services.transfer_between(
            source=wallet_services.ensure_house_account(kind=AccountKind.CASHIER, currency=Currency.FUN),
            destination=wallet,
            amount_minor=buy_in - (wallet.balance_minor - wallet.held_minor),
            kind=TransferKind.FUN_TOP_UP,
            reference=f"fun_top_up:{user.pk}:{secrets.token_hex(8)}",
            memo="House bot's fun chips",
        )
    personality = PERSONALITIES[(user.pk + position) % len(PERSONALITIES)].name
    money.sit_down(
        table=table, user_id=user.pk, position=position, buy_in_minor=buy_in, now=now, bot_personality=personality
    )


def next_button(previous: int | None, dealt: list[int], seat_count: int) -> int:
    """The button of the next hand: the first dealt-in seat clockwise after the previous
    button (seed 003: "the button moving clockwise to the next player"); for a fresh
    table's first hand (``previous`` None) the first of ``dealt``, which the caller lists
    in sitting order (seed 003, The First round: the first person sitting down becomes the
    dealer). The rule is the engine's (``tables.engine.holdem.button``)."""
    if previous is None:
        return first_button(dealt)
    return engine_next_button(previous, dealt, seat_count)


def freeze_lead() -> timedelta:
    """How long before the end of the pause between hands the next hand's inputs freeze:
    one beacon period (``BEACON_PERIOD_SECONDS``), at most the pause. The first round
    released strictly after the freeze is then out when the pause ends, so the beacon costs
    no wait between hands (docs/holdem-screen.md, Timing)."""
    return min(RESULTS_PAUSE, timedelta(seconds=settings.BEACON_PERIOD_SECONDS))


def pending_freeze(table: Table) -> HoldemFreeze | None:
    """The table's next hand frozen and waiting for its beacon round, or None."""
    return HoldemFreeze.objects.filter(table=table, status=HoldemFreezeStatus.PENDING).order_by("-pk").first()


def frozen_user_ids(table: Table) -> set[int]:
    """The players a pending freeze deals into the next hand (they are in it already: a
    leaving player folds, no chips can be added; ``player.py``)."""
    freeze = pending_freeze(table)
    if freeze is None:
        return set()
    return {int(p["user_id"]) for p in freeze.inputs["players"]}


def _freeze(table: Table, conditions: HoldemConditions, seats: list[Seat], *, now: datetime, after_pause: bool) -> None:
    """Freeze and publish the next hand's inputs (algorithm 3, docs/provably-fair.md section
    12): who is dealt in (``seats``: active, connected, with chips) with the button, who
    waits for the big blind or posts one now, the chain element, every dealt-in player's
    client seed (a fresh random one for each house bot) and the conditions. The hand is
    dealt (``_deal_frozen``) once the first beacon round released strictly after now is
    out, and not before the pause between hands is over (``after_pause``: ``freeze_lead``
    after the current deadline)."""
    count = conditions.seats
    previous = (
        HoldemHand.objects.filter(table=table).exclude(status=HoldemHandStatus.CANCELLED).order_by("-number").first()
    )
    previous_button = None if previous is None else int(previous.setup["button"])
    positions = [int(s.position) for s in seats if s.position is not None]
    if previous is None:
        # A fresh table: the first person (not a house bot) who sat down deals (seed 003, The
        # First round). A practice game seats everyone at once, seat 0 first, the person on
        # a random seat: seat 0 deals, so the first dealer is random (seed 004, PRE-FLOP).
        bots_last = policy_of(table).bots_deal_last  # chosen by _start_hand_or_wait: no query
        positions = [
            int(s.position)
            for s in sorted(seats, key=lambda s: (bots_last and s.is_bot, s.joined_at, s.pk))
            if s.position is not None
        ]
    waiting_choice = {int(s.position) for s in seats if s.position is not None and s.blind_choice == "wait"}
    posting_choice = {int(s.position) for s in seats if s.position is not None and s.blind_choice == "post"}
    regular = [p for p in positions if p not in waiting_choice | posting_choice]
    waiting: set[int] = set()
    posting: set[int] = set()
    if len(regular) >= 2 and previous is not None:
        button = next_button(previous_button, regular, count)
        around = sorted(
            (p for p in positions if p != button and p not in posting_choice), key=lambda s: (s - button - 1) % count
        )
        candidates = [p for p in around if p in regular or p in waiting_choice]
        big_blind = candidates[1] if len(candidates) >= 2 else candidates[0]
        waiting = waiting_choice - {big_blind}
        posting = set(posting_choice)
    else:
        # A table that starts deals everyone in: no one waits, no one posts out of turn.
        button = next_button(previous_button, positions, count)
    stacks: list[int | None] = [None] * count
    for seat in seats:
        assert seat.position is not None
        stacks[seat.position] = int(seat.stack_minor)
    dealt = [s for s in seats if s.position not in waiting]
    draw = fairness_services.next_chain_seed(table, now=now)
    humans = [s.user_id for s in dealt if not s.is_bot]
    seeds = fairness_services.client_seeds(humans, now=now) if humans else {}
    for seat in dealt:
        if seat.is_bot:
            seeds[seat.user_id] = secrets.token_hex(16)  # fresh for every hand, committed below
    number = table.hands_dealt + 1
    round_number = beacon.round_after(now)
    due = table.phase_deadline or now
    deal_at = beacon.time_of(round_number)
    if after_pause and table.phase == TablePhase.RESULTS:
        deal_at = max(deal_at, due + freeze_lead())
    commitment = hashlib.sha256(draw.seed).hexdigest()
    players = [
        {
            "seat": int(s.position or 0),
            "user_id": s.user_id,
            "name": s.user.username,
            "bot": s.is_bot,
            "personality": s.bot_personality if s.is_bot else "",
            "client_seed": seeds[s.user_id],
        }
        for s in dealt
    ]
    lines = freeze_lines(
        table_id=table.pk,
        number=number,
        chain_id=draw.chain.pk,
        chain_index=draw.index,
        commitment=commitment,
        button=button,
        seats=[
            (int(s.position or 0), s.user.username, client_seed_commitment(s.user.username, seeds[s.user_id]))
            for s in dealt
        ],
        deal_round=round_number,
    )
    config = conditions.snapshot() | {"mode": table.mode, "currency": table.currency}
    if policy_of(table).call_all_in_for_less is not None:
        # BigHoldem: short of a bet, fold (seed 004 Rilancio)
        config["call_all_in_for_less"] = policy_of(table).call_all_in_for_less
    HoldemFreeze.objects.create(
        table=table,
        number=number,
        frozen_at=now,
        deal_round=round_number,
        deal_at=deal_at,
        chain=draw.chain,
        chain_index=draw.index,
        chain_seed=draw.seed.hex(),
        commitment=commitment,
        inputs={
            "button": button,
            "waiting": sorted(waiting),
            "posting": sorted(posting),
            "stacks": stacks,
            "config": config,
            "players": players,
        },
        digest=freeze_digest(lines).hex(),
    )
    table.phase_deadline = deal_at
    table.version += 1


def _void(
    table: Table, freeze: HoldemFreeze, *, reason: str, now: datetime, evidence: dict[str, Any] | None = None
) -> None:
    """A frozen hand that cannot be dealt (the beacon round never came, the table closed, a
    frozen seat was freed by staff) is void: nothing was dealt or staked; the record keeps
    the reason, when, and the beacon's evidence (``beacon.outage_evidence``)."""
    freeze.status = HoldemFreezeStatus.VOID
    freeze.evidence = {"reason": reason[:200], "at": now.isoformat(), **(evidence or {})}
    freeze.save(update_fields=["status", "evidence"])
    table.phase_deadline = now
    table.version += 1


def _deal_frozen(table: Table, conditions: HoldemConditions, freeze: HoldemFreeze, *, now: datetime) -> bool:
    """Deal the frozen hand once its beacon round is out (algorithm 3): the server seed is
    ``deal_seed(hand_seed_v2, freeze digest, round value)``. Returns True when the freeze
    was dealt or still waits (the table's deadline moved to when to look again), False when
    it was void (the caller freezes anew)."""
    if now < freeze.deal_at:
        table.phase_deadline = freeze.deal_at
        return True
    if not table.is_open:
        _void(table, freeze, reason="the table closed", now=now)
        return False
    answer = beacon.fetch(int(freeze.deal_round), now=now)
    if answer.value is None:
        due = beacon.time_of(int(freeze.deal_round))
        if now - due < timedelta(seconds=settings.BEACON_MAX_WAIT_SECONDS):
            table.phase_deadline = now + timedelta(seconds=1)
            return True
        evidence = beacon.outage_evidence(int(freeze.deal_round), waited_since=due, now=now, answer=answer.error)
        _void(table, freeze, reason="the randomness beacon did not answer", now=now, evidence=evidence)
        return False
    inputs = freeze.inputs
    players = list(inputs["players"])
    stacks = list(inputs["stacks"])
    current = {
        s.position: s
        for s in Seat.objects.filter(table=table, position__in=[p["seat"] for p in players]).exclude(
            status=SeatStatus.LEFT
        )
    }
    for player in players:
        seat = current.get(int(player["seat"]))
        if seat is None or seat.user_id != int(player["user_id"]) or seat.stack_minor != stacks[int(player["seat"])]:
            _void(table, freeze, reason="a frozen seat changed before the deal", now=now)
            return False
    with metrics.timed(metrics.DEAL_DURATION, TableGame.HOLDEM):
        _deal(table, freeze, answer.value, now=now)
    metrics.count_on_commit(metrics.HANDS, TableGame.HOLDEM, "dealt")
    return True


def _deal(table: Table, freeze: HoldemFreeze, round_value: bytes, *, now: datetime) -> HoldemHand:
    """Deal the frozen hand ``freeze`` with its beacon round's value: the deck comes from the
    table's seed chain, the players' client seeds, the frozen inputs and the round
    (docs/provably-fair.md, 12, algorithm 3)."""
    inputs = freeze.inputs
    players = list(inputs["players"])
    number = int(freeze.number)
    pairs = [(str(p["name"]), str(p["client_seed"])) for p in players]
    chain_seed = bytes.fromhex(freeze.chain_seed)
    seed = deal_seed(fairness.hand_seed(chain_seed, table.pk, number, pairs), bytes.fromhex(freeze.digest), round_value)
    dealt_positions = [int(p["seat"]) for p in players]
    hand = HoldemHand(
        table=table,
        number=number,
        server_seed=seed.hex(),
        commitment=freeze.commitment,
        algorithm=ALGORITHM_DEAL_ROUND,
        chain=freeze.chain,
        chain_index=freeze.chain_index,
        chain_seed=freeze.chain_seed,
        client_seeds=[list(pair) for pair in pairs],
        config=inputs["config"],
        setup={
            "stacks": inputs["stacks"],
            "button": int(inputs["button"]),
            "waiting": list(inputs["waiting"]),
            "posting": list(inputs["posting"]),
            "showdown_choice": True,  # players show or muck themselves (seed 003, Showdown)
        },
        players=[
            {
                "seat": int(p["seat"]),
                "user_id": int(p["user_id"]),
                "name": str(p["name"]),
                "bot": bool(p["bot"]),
                **({"personality": str(p["personality"])} if p["bot"] else {}),
            }
            for p in players
        ],
        started_at=now,
        frozen_at=freeze.frozen_at,
        deal_round=freeze.deal_round,
        deal_beacon_value=round_value.hex(),
        freeze_digest=freeze.digest,
    )
    state = showdown_until_choice(table, hand, replay(hand), now=now)  # all-in on the blinds: a run-out
    hand.save()
    freeze.status = HoldemFreezeStatus.DEALT
    freeze.hand = hand
    freeze.save(update_fields=["status", "hand"])
    HoldemHandPlayer.objects.bulk_create(
        [
            HoldemHandPlayer(
                hand=hand,
                user_id=int(p["user_id"]),
                seat=int(p["seat"]),
                is_bot=bool(p["bot"]),
                starting_minor=int(inputs["stacks"][int(p["seat"])]),
            )
            for p in players
        ]
    )
    Seat.objects.filter(table=table, position__in=dealt_positions).update(blind_choice="")
    protection.record_play(user_ids=[int(p["user_id"]) for p in players if not p["bot"]], now=now)
    table.hands_dealt = number
    table.phase = TablePhase.PLAYING
    table.version += 1
    if state.is_over:  # everyone all-in on the blinds: nothing to decide
        _settle(table, hand, state, now=now)
        return hand
    _start_turn(table, hand, state, now=now)
    hand.save(update_fields=["turn_started_at", "turn_extended", "turn_grace_until"])
    return hand
