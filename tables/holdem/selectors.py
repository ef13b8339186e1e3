"""Reads of Hold'em tables: the public table frame, a player's private frame, hands.

The frames' shapes are in ``tables/realtime/frames.py`` (documented in docs/protocol.md). The
secret rule: hole cards appear in the public frame only when shown at the showdown; a
player's own cards (and their salts) only in his private frame; the seeds, which give every
card of the deck, only once ``tables.holdem.records.seed_is_public`` (the hand's end plus a delay).
Fairness meanwhile rests on the per-card commitments published at the deal
(docs/provably-fair.md, Card commitments).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

import numpy as np
from django.contrib.auth.models import User
from django.db.models import QuerySet

from config.infra.rows import RowReader
from tables.engine.cards import card_code
from tables.engine.holdem import HandState, Phase, client_seed_commitment, equity
from tables.errors import TableNotFoundError, WrongGameError
from tables.holdem.records import (
    card_commitments,
    hole_openings,
    replay,
    seed_is_public,
    seed_public_at,
    showdown_deadline,
    shown_openings,
    turn_deadline,
)
from tables.models import (
    HoldemConditions,
    HoldemFreeze,
    HoldemFreezeStatus,
    HoldemHand,
    HoldemHandStatus,
    Seat,
    SeatStatus,
    Table,
    TableGame,
)
from tables.realtime.frames import (
    HoldemCardOpening,
    HoldemConfig,
    HoldemFreezeView,
    HoldemHandView,
    HoldemLegalView,
    HoldemPotResultView,
    HoldemPotView,
    HoldemPrivateFrame,
    HoldemResultView,
    HoldemSeatView,
    HoldemSeedCommitment,
    HoldemTableFrame,
    dumps,
)
from tables.services.beacon import time_of as beacon_time_of
from tables.services.presence import is_connected
from wallet import selectors as wallet_selectors

STREETS = ("preflop", "flop", "turn", "river")


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def get_holdem_table(table_id: int) -> tuple[Table, HoldemConditions]:
    """The Hold'em table and its conditions. Raises TableNotFoundError, WrongGameError."""
    table = Table.objects.filter(pk=table_id).first()
    if table is None:
        raise TableNotFoundError(f"no table {table_id}", table_id=table_id)
    if table.game != TableGame.HOLDEM:
        raise WrongGameError(f"{table.name} is not a Hold'em table", table_id=table_id)
    return table, HoldemConditions.objects.get(table=table)


def _config(table: Table, conditions: HoldemConditions) -> HoldemConfig:
    return cast(HoldemConfig, conditions.snapshot() | {"currency": table.currency, "mode": table.mode})


def find_current_hand(table: Table) -> HoldemHand | None:
    """The running hand, else the last one (its results stay on screen until the next)."""
    return HoldemHand.objects.filter(table=table).order_by("-number").first()


def pending_freeze_of(table: Table) -> HoldemFreeze | None:
    """The table's next hand, frozen and waiting for its beacon round, or None."""
    return HoldemFreeze.objects.filter(table=table, status=HoldemFreezeStatus.PENDING).order_by("-pk").first()


def freeze_view(freeze: HoldemFreeze) -> HoldemFreezeView:
    """The public view of a pending freeze (``next_hand``): the frozen inputs with each
    client seed as its commitment only (the seeds stay secret with the hand's seeds)."""
    players = freeze.inputs["players"]
    return HoldemFreezeView(
        number=int(freeze.number),
        frozen_at=freeze.frozen_at.isoformat(),
        deal_round=int(freeze.deal_round),
        deal_round_at=beacon_time_of(int(freeze.deal_round)).isoformat(),
        deal_at=freeze.deal_at.isoformat(),
        chain_id=freeze.chain_id,
        chain_index=freeze.chain_index,
        commitment=freeze.commitment,
        button=int(freeze.inputs["button"]),
        seats=[
            HoldemSeedCommitment(
                seat=int(p["seat"]),
                name=str(p["name"]),
                bot=bool(p["bot"]),
                client_seed_commitment=client_seed_commitment(str(p["name"]), str(p["client_seed"])),
            )
            for p in sorted(players, key=lambda p: int(p["seat"]))
        ],
        digest=freeze.digest,
        round_value=None,
    )


def hand_freeze_view(hand: HoldemHand) -> HoldemFreezeView | None:
    """The frozen inputs of a dealt algorithm-3 hand with its round's value (None for an
    older hand): what ``next_hand`` showed before the deal, for anyone to compare."""
    if hand.deal_round is None or hand.frozen_at is None:
        return None
    seeds = {str(name): str(seed) for name, seed in hand.client_seeds}
    return HoldemFreezeView(
        number=hand.number,
        frozen_at=hand.frozen_at.isoformat(),
        deal_round=int(hand.deal_round),
        deal_round_at=beacon_time_of(int(hand.deal_round)).isoformat(),
        deal_at=None,
        chain_id=hand.chain_id,
        chain_index=hand.chain_index,
        commitment=hand.commitment,
        button=int(hand.setup["button"]),
        seats=[
            HoldemSeedCommitment(
                seat=int(p["seat"]),
                name=str(p["name"]),
                bot=bool(p.get("bot", False)),
                client_seed_commitment=client_seed_commitment(str(p["name"]), seeds.get(str(p["name"]), "")),
            )
            for p in sorted(hand.players, key=lambda p: int(p["seat"]))
        ],
        digest=hand.freeze_digest,
        round_value=hand.deal_beacon_value or None,
    )


def _street(state: HandState) -> str:
    if state.phase is Phase.COMPLETE:
        return "complete"
    if state.phase is Phase.SHOWDOWN:
        return "showdown"
    return STREETS[int(state.street)]


def _hand_view(hand: HoldemHand, state: HandState, *, now: datetime) -> HoldemHandView:
    n = state.player_count
    small, big = (1, 0) if n == 2 else (0, 1)
    over = hand.is_terminal
    deadline = turn_deadline(hand, hand.config) if hand.turn_started_at and not over else None
    choosing = deadline is not None and state.phase is Phase.SHOWDOWN
    if choosing:  # a show-or-muck choice: the time to act, no time bank
        deadline = showdown_deadline(hand)
    result: HoldemResultView | None = None
    if over:
        public = seed_is_public(hand, now=now)
        result = HoldemResultView(
            # By seat: the same bytes whether the results come from the step's memory or
            # from PostgreSQL's jsonb, which orders an object's keys its own way.
            won={str(k): int(v) for k, v in sorted(hand.results.get("won", {}).items(), key=lambda kv: int(kv[0]))},
            rake_minor=hand.rake_minor,
            showdown=bool(hand.results.get("showdown")),
            pots=[
                HoldemPotResultView(
                    amount_minor=int(p["amount"]), rake_minor=int(p["rake"]), winners=list(p["winners"])
                )
                for p in hand.results.get("pots", [])
            ],
            revealed=[cast(HoldemCardOpening, o) for o in shown_openings(hand, state)],
            seed_public_at=_iso(seed_public_at(hand)),
            server_seed=hand.server_seed if public else None,
            chain_seed=hand.chain_seed if public else None,
        )
    if hand.status == HoldemHandStatus.CANCELLED:
        pots: list[HoldemPotView] = []
        board: list[str] = []
    else:
        pots = [HoldemPotView(amount_minor=p.amount, seats=[state.seats[k] for k in p.eligible]) for p in state.pots()]
        board = [card_code(c) for c in state.board]
    bank = int(hand.config["time_bank_seconds"])
    return HoldemHandView(
        id=hand.pk,
        number=hand.number,
        commitment=hand.commitment,
        button=int(hand.setup["button"]),
        small_blind_seat=state.seats[small] if hand.config["small_blind_minor"] else None,
        big_blind_seat=state.seats[big],
        street=_street(state),
        board=board,
        pots=pots,
        total_pot_minor=state.total_pot if not state.is_over else sum(state.committed),
        card_commitments=card_commitments(hand, state),
        to_act=None if over else state.to_act,
        turn_started_at=None if over else _iso(hand.turn_started_at),
        act_deadline=_iso(deadline),
        time_bank_from=_iso(deadline - timedelta(seconds=bank)) if deadline and not choosing else None,
        result=result,
        freeze=hand_freeze_view(hand),
    )


@dataclass(frozen=True)
class HoldemTableRows:
    """The rows a Hold'em table's public frame is built from, besides the table itself.

    ``hand`` is the table's newest hand (running, else the last one) and ``state`` its
    replayed engine state (None with no hand); ``seats`` are the table's positioned seats
    with their users loaded, in any order and of any status (the frame drops ``left``
    ones). A clock step that just played an action already holds all of them and passes
    them to the push (``build_holdem_table_frame``), which then sends no SQL statement
    (perf audit 2026-11-26, section 3: the push re-read all of it and replayed the hand
    a second time). ``lobby_line``: the step changed the table's lobby line beyond its
    version and deadline (a freeze, a deal): its push sends the line too, as it does for a
    settled hand."""

    conditions: HoldemConditions
    hand: HoldemHand | None
    state: HandState | None
    seats: Sequence[Seat]
    freeze: HoldemFreeze | None = None
    lobby_line: bool = False


_CONDITIONS = RowReader(HoldemConditions)
_HANDS = RowReader(HoldemHand)


def read_holdem_conditions(table: Table) -> HoldemConditions:
    """The table's conditions (one statement, without the ORM's compiler: a clock step
    reads them every time). Raises HoldemConditions.DoesNotExist."""
    found = _CONDITIONS.read(f'"{HoldemConditions._meta.db_table}"."table_id" = %s', [table.pk])
    if not found:
        raise HoldemConditions.DoesNotExist(f"no conditions for table {table.pk}")
    return found[0]


def read_running_hand(table: Table) -> HoldemHand | None:
    """The table's hand being played, or None (one statement, without the ORM's compiler)."""
    name = HoldemHand._meta.db_table
    found = _HANDS.read(
        f'"{name}"."table_id" = %s AND "{name}"."status" = %s ORDER BY "{name}"."number" DESC LIMIT 1',
        [table.pk, HoldemHandStatus.PLAYING.value],
    )
    return found[0] if found else None


_SEATS = RowReader(Seat, joined=("user", User, ("username",)))
_SEATS_WHERE = f'"{Seat._meta.db_table}"."table_id" = %s AND "{Seat._meta.db_table}"."position" IS NOT NULL'


def read_holdem_seats(table: Table) -> list[Seat]:
    """The table's positioned seats with their users, by position: one statement, without
    the ORM's compiler (``config.infra.rows``: a clock step reads them every time). Of the
    user only the name is read (the frame's and the freeze's); another field of it is read
    when asked for (one statement more)."""
    return _SEATS.read(f'{_SEATS_WHERE} ORDER BY "{Seat._meta.db_table}"."position"', [table.pk])


def get_holdem_table_frame(*, table_id: int, now: datetime) -> HoldemTableFrame:
    """The public state of a Hold'em table (frame ``holdem_state``): seats, stacks, bets,
    pots with side pots, board, button, blinds, whose turn and until when. Raises
    TableNotFoundError, WrongGameError."""
    table, conditions = get_holdem_table(table_id)
    hand = find_current_hand(table)
    state = replay(hand) if hand is not None else None
    freeze = None if hand is not None and not hand.is_terminal else pending_freeze_of(table)
    rows = HoldemTableRows(conditions, hand, state, read_holdem_seats(table), freeze)
    return build_holdem_table_frame(table, rows, now=now)


def build_holdem_table_frame(table: Table, rows: HoldemTableRows, *, now: datetime) -> HoldemTableFrame:
    """``get_holdem_table_frame`` from rows already read (no SQL): the same frame, field for
    field, as a fresh read of the same committed rows gives."""
    conditions, hand, state = rows.conditions, rows.hand, rows.state
    in_hand: dict[int, int] = {} if state is None else {seat: k for k, seat in enumerate(state.seats)}
    shown: dict[str, list[str]] = hand.results.get("shown", {}) if hand is not None and hand.is_terminal else {}
    if hand is not None and state is not None and not hand.is_terminal and state.phase is Phase.SHOWDOWN:
        # Cards shown so far at a showdown still waiting for a player's choice (seed 003).
        shown = {str(state.seats[e.player]): [card_code(c) for c in e.cards] for e in state.log if e.kind == "show"}
    waiting = set(hand.setup.get("waiting", ())) if hand is not None and not hand.is_terminal else set()
    cancelled = hand is not None and hand.status == HoldemHandStatus.CANCELLED
    seats: list[HoldemSeatView] = []
    for seat in sorted(
        (seat for seat in rows.seats if seat.position is not None and seat.status != SeatStatus.LEFT),
        key=lambda seat: int(seat.position or 0),
    ):
        position = int(seat.position or 0)
        k = in_hand.get(position)
        live = state is not None and k is not None and not cancelled
        running = live and hand is not None and not hand.is_terminal
        stack = int(state.stacks[k]) if running and state is not None and k is not None else int(seat.stack_minor)
        seats.append(
            HoldemSeatView(
                seat=position,
                name=seat.user.username,
                bot=seat.is_bot,
                stack_minor=stack,
                bet_minor=int(state.bets[k]) if running and state is not None and k is not None else 0,
                status=seat.status,
                in_hand=bool(live and state is not None and k is not None and not state.folded[k]),
                folded=bool(live and state is not None and k is not None and state.folded[k]),
                all_in=bool(running and stack == 0),
                waiting=position in waiting or seat.blind_choice == "wait",
                leaving=seat.leaving,
                connected=seat.is_bot or is_connected(seat, now=now),
                shown=shown.get(str(position)),
            )
        )
    return HoldemTableFrame(
        type="holdem_state",
        table_id=table.pk,
        name=table.name,
        version=table.version,
        phase=table.phase,
        deadline=_iso(table.phase_deadline),
        server_time=now.isoformat(),
        config=_config(table, conditions),
        seats=seats,
        hand=None if hand is None or state is None else _hand_view(hand, state, now=now),
        next_hand=None if rows.freeze is None else freeze_view(rows.freeze),
    )


def get_holdem_private_frame(*, table_id: int, user_id: int, now: datetime) -> HoldemPrivateFrame:
    """One player's own view (frame ``holdem_private``): his seat, stack, hole cards (only
    his), legal actions on his turn, wallet balance and, when the table shows them, his
    probability of winning. Raises TableNotFoundError, WrongGameError."""
    table, conditions = get_holdem_table(table_id)
    seat = (
        Seat.objects.filter(table=table, user_id=user_id, position__isnull=False)
        .exclude(status=SeatStatus.LEFT)
        .first()
    )
    hand = find_current_hand(table) if seat is not None else None
    state = replay(hand) if hand is not None and hand.status != HoldemHandStatus.CANCELLED else None
    wallet = wallet_selectors.get_balance_minor(user_id=user_id, currency=table.currency)
    return _private_frame(table, conditions, seat, hand, state, wallet)


def _private_frame(
    table: Table,
    conditions: HoldemConditions,
    seat: Seat | None,
    hand: HoldemHand | None,
    state: HandState | None,
    wallet_minor: int,
) -> HoldemPrivateFrame:
    """A player's ``holdem_private`` frame from rows already read: ``state`` is ``hand``'s
    replay (None for no hand or a cancelled one)."""
    hole: list[str] | None = None
    openings: list[HoldemCardOpening] | None = None
    legal_view: HoldemLegalView | None = None
    chance: float | None = None
    stack = 0 if seat is None else int(seat.stack_minor)
    if seat is not None and hand is not None and state is not None and seat.position in state.seats:
        k = state.seats.index(int(seat.position or 0))
        hole = [card_code(c) for c in state.holes[k]]
        openings = [cast(HoldemCardOpening, o) for o in hole_openings(hand, state, k)]
        if not hand.is_terminal:
            stack = int(state.stacks[k])
            if state.to_act == seat.position and state.phase is not Phase.COMPLETE:
                legal = state.legal_actions()  # at the showdown: show, and muck when he may
                legal_view = HoldemLegalView(
                    kinds=[kind.value for kind in legal.kinds],
                    call_minor=legal.call_amount,
                    min_to_minor=legal.min_to,
                    max_to_minor=legal.max_to,
                    all_in_to_minor=legal.all_in_to,
                )
            if conditions.show_probabilities and not state.folded[k]:
                chance = _equity(state, k, hand.pk)
    return HoldemPrivateFrame(
        type="holdem_private",
        table_id=table.pk,
        version=table.version,
        seat=None if seat is None else seat.position,
        stack_minor=stack,
        status=None if seat is None else seat.status,
        blind_choice="" if seat is None else seat.blind_choice,
        hole=hole,
        hole_openings=openings,
        legal=legal_view,
        equity=chance,
        wallet_minor=wallet_minor,
    )


def _equity(state: HandState, k: int, hand_id: int) -> float:
    """The player's probability of winning against random hands of the other players still
    in (ties split), Monte Carlo seeded by the hand and the board (docs/holdem.md, Equity)."""
    live = [j for j in range(state.player_count) if not state.folded[j]]
    holes: list[Any] = [state.holes[k] if j == k else None for j in live]
    if len(holes) < 2:
        return 1.0
    result = equity(holes, state.board, samples=4_000, seed=np.random.default_rng([hand_id, len(state.board), k]))
    return round(float(result.players[live.index(k)].equity), 4)


def list_holdem_hands(*, table_id: int) -> QuerySet[HoldemHand]:
    """The table's terminal hands, newest first (hand history)."""
    return HoldemHand.objects.filter(table_id=table_id).exclude(status=HoldemHandStatus.PLAYING).order_by("-number")


def render_holdem_private_frames(*, table_id: int, user_ids: set[int]) -> dict[int, str]:
    """Each player's ``holdem_private`` frame, serialised (the hub's per-socket private
    state at a Hold'em table): the same frames as ``get_holdem_private_frame`` gives each,
    from one read of the table, its conditions, the players' seats, the hand (replayed
    once) and their wallets: 5 statements for the table, not 5 per player (perf audit
    2026-11-26, section 3). Raises TableNotFoundError, WrongGameError."""
    table, conditions = get_holdem_table(table_id)
    seats = {
        seat.user_id: seat
        for seat in Seat.objects.filter(table=table, user_id__in=user_ids, position__isnull=False).exclude(
            status=SeatStatus.LEFT
        )
    }
    hand = find_current_hand(table) if seats else None
    state = replay(hand) if hand is not None and hand.status != HoldemHandStatus.CANCELLED else None
    wallets = wallet_selectors.get_balances_minor(user_ids=user_ids, currency=table.currency)
    return {
        user_id: dumps(_private_frame(table, conditions, seats.get(user_id), hand, state, wallets[user_id]))
        for user_id in user_ids
    }
