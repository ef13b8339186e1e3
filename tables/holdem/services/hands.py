"""The Hold'em hand in play: actions, turns and timeouts, bots' decisions, showdown, settlement.

The rules are the engine's (``tables.engine.holdem``; seed 003; docs/holdem.md): this
module only stores a hand (``HoldemHand``: its setup, deck seed and actions), rebuilds the
engine's immutable ``HandState`` from them (``replay``), and moves money through
``tables.holdem.services.money``. The clock's step and the deal of the next hand are
``tables.holdem.services.deal`` (``advance_holdem_table``), which plays a due turn here
(``play_due_turn``) with the table's row locked.

Table phases: WAITING (fewer than two players with chips) -> PLAYING (``phase_deadline``
is the deadline of the player to act) -> RESULTS (``RESULTS_PAUSE``) -> next hand.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connections, router

from config.infra import metrics
from tables.engine.holdem import (
    PERSONALITIES,
    RECONNECT_MS,
    Action,
    ActionKind,
    HandState,
    HoldemError,
    Phase,
    bot_rng,
    decide,
    play_showdown,
    timeout_action,
)
from tables.errors import HoldemActionError, InvalidActionError
from tables.holdem.records import apply_action, replay, showdown_deadline, turn_deadline
from tables.holdem.selectors import HoldemTableRows, read_holdem_seats, read_running_hand
from tables.holdem.services.settlement import RESULTS_PAUSE, end_hand, freeze_lead, release_seat, settle

__all__ = ["RESULTS_PAUSE", "freeze_lead", "release_seat", "settle"]  # their home was this module
from tables.models import (
    HoldemConditions,
    HoldemFreeze,
    HoldemFreezeStatus,
    HoldemHand,
    HoldemHandStatus,
    Seat,
    Table,
    TableGame,
)
from tables.services import degradation
from tables.services.presence import is_connected

logger = logging.getLogger(__name__)

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
    return read_running_hand(table)


# --- the turn ------------------------------------------------------------------------------


def play_due_turn(
    table: Table, conditions: HoldemConditions, hand: HoldemHand, *, now: datetime, seats: list[Seat] | None = None
) -> HoldemTableRows | None:
    """Play the running hand's turn whose deadline has passed (the table's row locked by
    the clock): a bot's decision, a leaving player's check or fold, a person's 20 s back
    from a drop or the platform's grace, else seed 003's timeout rule. Returns the rows
    the step holds when an action was played (for the push: the hand going on, or settled
    by it with the seats as settled), None when nothing was played. ``seats``: the table's
    positioned seats with their users, by position, when the caller read them in this
    transaction (``read_step_rows``), else read here."""
    state = replay(hand)
    if state.is_over:  # settled state not written (should not happen): settle now
        settle(table, hand, state, now=now)
        return None
    seat_no = state.to_act
    assert seat_no is not None
    # One read of every seat: the one to act, the next one (``_start_turn``) and the frame.
    if seats is None:
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
        return HoldemTableRows(conditions, hand, new_state, seats)
    if seat.is_bot or seat.leaving:
        if seat.is_bot:
            action = bot_action(hand, state, seat_no, seat.bot_personality)
            kind, actor, amount = action.kind, action.seat, action.amount
        else:
            # A player leaving checks when he may, else folds.
            kind = ActionKind.CHECK if ActionKind.CHECK in state.legal_actions().kinds else ActionKind.FOLD
            actor, amount = seat_no, None
        new_state = record_action(table, hand, state, kind, actor, amount, now=now, seats=by_position)
        return HoldemTableRows(conditions, hand, new_state, seats)
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
    return HoldemTableRows(conditions, hand, new_state, seats)


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
    new_state = showdown_until_choice(table, hand, new_state, now=now, seats=seats)
    table.version += 1
    if new_state.is_over:  # the settlement saves the hand, this action with it
        settle(table, hand, new_state, now=now, seats=seats)
        return new_state
    start_turn(table, hand, new_state, now=now, seats=seats)
    write_turn(hand)
    return new_state


_TURN_FIELDS = ("actions", "turn_started_at", "turn_extended", "turn_grace_until")


def write_turn(hand: HoldemHand) -> None:
    """``hand.save(update_fields=[actions and the turn's fields])`` without the ORM's update
    compiler (the step's hottest write: issue 23, item 6, clock CPU per step): the same
    ``UPDATE``, each value prepared by its field (``get_db_prep_save``) as the ORM does."""
    connection = connections[router.db_for_write(HoldemHand, instance=hand)]
    sql = _TURN_SQL.get(connection.alias)
    if sql is None:
        quote = connection.ops.quote_name
        columns = ", ".join(f"{quote(_FIELDS[name].column)} = %s" for name in _TURN_FIELDS)
        sql = _TURN_SQL[connection.alias] = (
            f"UPDATE {quote(HoldemHand._meta.db_table)} SET {columns} WHERE {quote(HoldemHand._meta.pk.column)} = %s"
        )
    params = [_FIELDS[name].get_db_prep_save(getattr(hand, name), connection) for name in _TURN_FIELDS]
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, hand.pk])


_TURN_SQL: dict[str, str] = {}
_FIELDS = {field.name: field for field in HoldemHand._meta.concrete_fields}


def showdown_until_choice(
    table: Table,
    hand: HoldemHand,
    state: HandState,
    *,
    now: datetime,
    seats: Mapping[int | None, Seat] | None = None,
) -> HandState:
    """Play the showdown decisions nobody has to make (seed 003, Showdown) and stop at the
    first person who may choose to show or muck; returns the new state.

    A player who must show (the first to show, a hand that wins something, every hand after
    an all-in run-out) shows; a house bot, a player leaving the table or one not connected
    mucks when he may. Each is stored in ``hand.actions`` with ``"auto": true`` so the
    replay is exact. A hand dealt before players chose (no ``setup["showdown_choice"]``) is
    played by the house policy (``play_showdown``) as it was. The caller saves the hand.
    ``seats``: the table's seats by position when the caller holds them (else each player
    who may muck is read)."""
    if not hand.setup.get("showdown_choice"):
        return play_showdown(state)
    while state.phase is Phase.SHOWDOWN:
        legal = state.legal_actions()
        kind = ActionKind.SHOW
        if ActionKind.MUCK in legal.kinds:
            held = None if seats is None else seats.get(legal.seat)
            seat = held or Seat.objects.only(
                "is_bot", "leaving", "last_seen_at", "ws_connections", "socket_closed_at"
            ).get(table=table, position=legal.seat)
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


def start_turn(
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


# --- settlement (tables.holdem.services.settlement) ------------------------------------


def cancel_holdem_hand(*, table: Table, reason: str, now: datetime) -> bool:
    """Cancel the table's running hand (a malfunction, rules Notes 3): the seats keep their
    starting stacks, which the escrow still holds, so every chip wagered is back at once.
    Returns whether a hand was cancelled. A hand frozen but not dealt yet is void instead
    (nothing was dealt or staked; returns False)."""
    hand = running_hand(table)
    if hand is None:
        freeze = pending_freeze(table)
        if freeze is not None:
            void_freeze(table, freeze, reason=reason, now=now)
        return False
    hand.status = HoldemHandStatus.CANCELLED
    hand.cancel_reason = reason[:200]
    hand.settled_at = now
    hand.save(update_fields=["status", "cancel_reason", "settled_at"])
    metrics.count_on_commit(metrics.HANDS, TableGame.HOLDEM, "cancelled")
    end_hand(table, now=now)
    return True


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


def void_freeze(
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
