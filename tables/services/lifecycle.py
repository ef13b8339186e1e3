"""The hand lifecycle as a state machine in the database, driven by one clock function.

WAITING --(>= 2 active, connected players who can pay the ante)--> CHANGE
CHANGE  --(deadline)--> settlement --> RESULTS --(a few seconds)--> WAITING --> next hand

``advance_due_tables`` is the clock: Celery beat calls it every second in production, the
ASGI process in the embedded default. Each table advances in its own transaction, claimed
with ``SELECT ... FOR UPDATE SKIP LOCKED`` and written back with a version check, so a
duplicated or late tick changes nothing. Rules: seed 001 B (phases), C (multidraw, redeal),
Notes 2 (disconnection), Notes 3 (malfunction); DESIGN.md "The game, as implemented".
"""

from __future__ import annotations

import logging
import secrets
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import F

from tables.engine import (
    AllocationConfig,
    Board,
    allocate_pool,
    best_draws,
    board_grid,
    card_code,
    category_of,
    change_keys,
    combination_index,
    commitment,
    deal_board,
    draw_strengths,
    final_hand,
    initial_combinations,
    rake_minor,
    rank_places,
)
from tables.events import TableRestartedFrame, broadcast_table_on_commit, dumps
from tables.hub import publish_table_frame
from tables.models import (
    CONFIG_FIELDS,
    Entry,
    Hand,
    HandStatus,
    Seat,
    SeatStatus,
    Table,
    TableConfigChange,
    TablePhase,
)
from tables.services.play import escrow_key
from tables.services.seating import is_connected
from wallet import services as wallet_services
from wallet.models import Account, AccountKind, TransferKind

logger = logging.getLogger(__name__)

MALFUNCTION_PAUSE = timedelta(seconds=5)
LEADERBOARD_SIZE = 10
_DIGIT_WEIGHTS = np.array([10_000, 1_000, 100, 10, 1], dtype=np.int64)


def board_from_json(data: dict[str, Any]) -> Board:
    """The Board stored with a hand (``{"columns": [[codes]...], "out": [codes]}``)."""
    return Board.from_columns(data["columns"], data["out"])


def board_to_json(board: Board) -> dict[str, Any]:
    """Card codes of the board's five columns and the two cards out (public from the deal)."""
    return {
        "columns": [[card_code(card) for card in column] for column in board.columns],
        "out": [card_code(card) for card in board.out],
    }


def combination_digits(indices: npt.NDArray[np.int64]) -> npt.NDArray[np.uint8]:
    """Combination indices (N,) -> digits p0..p4 as an (N, 5) uint8 array."""
    return ((indices[:, None] // _DIGIT_WEIGHTS) % 10).astype(np.uint8)


def carry_key(table_id: int, currency: str) -> str:
    """The account carrying a table's indivisible tie-split cents to its next hand's pool."""
    return f"carry:table:{table_id}:{currency}"


# --- the clock -----------------------------------------------------------------------------


def advance_due_tables(*, now: datetime, limit: int = 100) -> int:
    """Advance every table whose phase deadline has passed; return how many advanced.

    Safe to run from any number of workers at once. A table whose step fails is treated as a
    malfunction (rules, Notes 3): its running hand is cancelled and every wager refunded.
    """
    due = list(
        Table.objects.filter(phase_deadline__lte=now)
        .exclude(phase=TablePhase.CLOSED)
        .order_by("phase_deadline")
        .values_list("id", flat=True)[:limit]
    )
    advanced = 0
    for table_id in due:
        try:
            advanced += advance_table(table_id=table_id, now=now)
        except Exception:
            logger.exception("table %s failed to advance; cancelling its hand", table_id)
            recover_table(table_id=table_id, now=now, reason="malfunction while advancing the table")
    return advanced


@transaction.atomic(durable=True)
def advance_table(*, table_id: int, now: datetime) -> bool:
    """Move one table a step if its deadline has passed; False if it was not due or another
    worker holds it (SKIP LOCKED: that worker is advancing it right now)."""
    table = (
        Table.objects.select_for_update(skip_locked=True)
        .filter(pk=table_id, phase_deadline__lte=now)
        .exclude(phase=TablePhase.CLOSED)
        .first()
    )
    if table is None:
        return False
    expected_version = table.version
    if table.phase == TablePhase.CHANGE:
        _settle_table(table, now=now)
    else:
        if table.phase == TablePhase.RESULTS:
            _end_results(table, now=now)
        _start_hand_or_wait(table, now=now)
    if table.version != expected_version:
        # One step, one broadcast, one version: clients read a gap as a missed frame.
        table.version = expected_version + 1
    saved = _save_table(table, expected_version=expected_version)
    if saved:
        # Every phase change is public, and every seated player's screen must follow it.
        broadcast_table_on_commit(table.pk, refresh_private=True)
    return saved


def _save_table(table: Table, *, expected_version: int) -> bool:
    """Write the table's state back only if nobody advanced it meanwhile (version check)."""
    if table.version == expected_version:
        Table.objects.filter(pk=table.pk).update(phase_deadline=table.phase_deadline)
        return False
    updated = Table.objects.filter(pk=table.pk, version=expected_version).update(
        phase=table.phase,
        phase_deadline=table.phase_deadline,
        version=table.version,
        current_hand=table.current_hand,
        hands_dealt=table.hands_dealt,
        pending_changes=table.pending_changes,
        is_open=table.is_open,
        **{field: getattr(table, field) for field in CONFIG_FIELDS},
    )
    if updated != 1:
        transaction.set_rollback(True)
        return False
    return True


# --- WAITING -> CHANGE -----------------------------------------------------------------------


def _start_hand_or_wait(table: Table, *, now: datetime) -> None:
    """Remove disconnected players (rules Notes 2), collect the ante from every active player
    (rules B.1) and deal, or wait when fewer than two can play (rules A.3)."""
    seats = list(Seat.objects.filter(table=table).exclude(status=SeatStatus.LEFT).order_by("joined_at", "pk"))
    gone = {seat.pk for seat in seats if not is_connected(seat, now=now)}
    if gone:
        Seat.objects.filter(pk__in=gone).update(status=SeatStatus.LEFT, status_reason="disconnected", left_at=now)
        table.version += 1
    active = [seat for seat in seats if seat.pk not in gone and seat.status == SeatStatus.ACTIVE]
    table.phase = TablePhase.WAITING
    table.current_hand = None
    table.phase_deadline = None  # join and sit-in wake the table
    if not table.is_open:
        table.phase = TablePhase.CLOSED
        table.version += 1
        return
    if len(active) >= 2:
        payers = _players_who_can_pay(table, active)
        paying = {seat.pk for seat in payers}
        broke = [seat.pk for seat in active if seat.pk not in paying]
        if broke:
            Seat.objects.filter(pk__in=broke).update(status=SeatStatus.SITTING_OUT, status_reason="insufficient funds")
            table.version += 1
        if len(payers) >= 2:
            _deal(table, payers, now=now)


def _players_who_can_pay(table: Table, active: list[Seat]) -> list[Seat]:
    accounts = wallet_services.ensure_player_accounts(
        user_ids=[seat.user_id for seat in active], currency=table.currency
    )
    balances = dict(
        Account.objects.select_for_update()
        .filter(pk__in=sorted(accounts.values()))
        .order_by("pk")
        .values_list("pk", "balance_minor")
    )
    return [seat for seat in active if balances[accounts[seat.user_id]] >= table.ante_minor]


def _deal(table: Table, payers: list[Seat], *, now: datetime) -> Hand:
    seed = secrets.token_bytes(32)
    board = deal_board(seed)
    change_end = now + timedelta(seconds=table.change_seconds)
    count = len(payers)
    hand = Hand.objects.create(
        table=table,
        number=table.hands_dealt + 1,
        server_seed=seed.hex(),
        commitment=commitment(seed),
        board=board_to_json(board),
        config=table.config_snapshot(),
        started_at=now,
        change_deadline=change_end,
        redeal_deadline=min(change_end, now + timedelta(seconds=table.redeal_seconds)),
        entry_count=count,
        antes_minor=table.ante_minor * count,
        gross_minor=table.ante_minor * count,
    )
    escrow = wallet_services.ensure_account(key=escrow_key(hand.pk), kind=AccountKind.ESCROW, currency=table.currency)
    accounts = wallet_services.ensure_player_accounts(
        user_ids=[seat.user_id for seat in payers], currency=table.currency
    )
    legs = [wallet_services.Leg(accounts[seat.user_id], -table.ante_minor) for seat in payers]
    legs.append(wallet_services.Leg(escrow.pk, table.ante_minor * count))
    wallet_services.post_transfer(
        reference=f"ante:{hand.pk}",
        kind=TransferKind.ANTE,
        currency=table.currency,
        legs=legs,
        memo=f"Ante of hand {table.name} #{hand.number}",
    )
    combinations = initial_combinations(seed, count)
    Entry.objects.bulk_create(
        [
            Entry(
                hand=hand,
                user_id=seat.user_id,
                join_order=order,
                initial_combination=combination_index(combination),
                combination=combination_index(combination),
                paid_minor=table.ante_minor,
            )
            for order, (seat, combination) in enumerate(zip(payers, combinations, strict=True))
        ],
        batch_size=2000,
    )
    table.phase = TablePhase.CHANGE
    table.phase_deadline = change_end
    table.current_hand = hand
    table.hands_dealt += 1
    table.version += 1
    return hand


# --- CHANGE -> RESULTS: settlement -------------------------------------------------------------


def _settle_table(table: Table, *, now: datetime) -> None:
    assert table.current_hand_id is not None
    settle_hand(hand_id=table.current_hand_id, now=now)
    table.phase = TablePhase.RESULTS
    table.phase_deadline = now + timedelta(seconds=table.results_seconds)
    table.version += 1


@transaction.atomic
def settle_hand(*, hand_id: int, now: datetime) -> bool:
    """Settle a hand whose change phase is over, in one step; False if already settled.

    Default choices (rules B.2, Notes 2): a player connected at the end who sent no hold has
    all cards changed; one disconnected before any hold reached the server keeps all cards.
    Every entry's five draws are computed (bought or not); the final hand is the best of the
    draws bought. Gross = antes + draws + redeals; rake = floor(gross x rate) (rules, Rake);
    pool = gross - rake + the table's carried cents; the pool is split by the table's
    allocation with ties sharing the prizes of the places they occupy, and the indivisible
    cents of tie splits are carried to the table's next hand. Everything is paid in one
    balanced transfer (reference ``settle:<hand>``), so settling twice pays once.
    """
    hand = Hand.objects.select_for_update().get(pk=hand_id)
    if hand.status != HandStatus.CHANGE:
        return False
    config = hand.config
    currency = str(config["currency"])
    seed = bytes.fromhex(hand.server_seed)
    board = board_from_json(hand.board)
    grid = board_grid(board)
    keys = change_keys(seed)

    rows = list(
        Entry.objects.filter(hand=hand)
        .order_by("join_order")
        .values_list("id", "user_id", "combination", "hold_mask", "draws_bought", "paid_minor")
    )
    count = len(rows)
    ids = [row[0] for row in rows]
    user_ids = [row[1] for row in rows]
    seats = {seat.user_id: seat for seat in Seat.objects.filter(table_id=hand.table_id, user_id__in=user_ids)}
    connected = [
        (seat := seats.get(user_id)) is not None and seat.status != SeatStatus.LEFT and is_connected(seat, now=now)
        for user_id in user_ids
    ]
    holds_used = np.array(
        [
            row[3] if row[3] is not None else (0 if is_on else 0b11111)
            for row, is_on in zip(rows, connected, strict=True)
        ],
        dtype=np.int64,
    )
    combinations = combination_digits(np.array([row[2] for row in rows], dtype=np.int64))
    holds = ((holds_used[:, None] >> np.arange(5)) & 1).astype(bool)
    draws = np.array([row[4] for row in rows], dtype=np.int64)
    strengths = draw_strengths(grid, combinations, holds, np.array(keys, dtype=np.int64))
    best, best_index = best_draws(strengths, draws)
    categories = category_of(best)
    places = rank_places(best)

    gross = int(sum(row[5] for row in rows))
    escrow = wallet_services.ensure_account(key=escrow_key(hand.pk), kind=AccountKind.ESCROW, currency=currency)
    carry = wallet_services.ensure_account(
        key=carry_key(hand.table_id, currency), kind=AccountKind.CARRY, currency=currency
    )
    rake_account = wallet_services.ensure_house_account(kind=AccountKind.RAKE, currency=currency)
    locked = dict(
        Account.objects.select_for_update()
        .filter(pk__in=sorted({escrow.pk, carry.pk}))
        .order_by("pk")
        .values_list("pk", "balance_minor")
    )
    if locked[escrow.pk] != gross or hand.gross_minor != gross:
        raise RuntimeError(
            f"hand {hand.pk}: escrow holds {locked[escrow.pk]}, entries paid {gross}, hand says {hand.gross_minor}"
        )
    carry_in = locked[carry.pk]
    rake = rake_minor(gross, int(config["rake_bps"]))
    pool = gross - rake + carry_in
    allocation = allocate_pool(
        pool,
        best,
        AllocationConfig(
            paid_fraction_bps=int(config["paid_fraction_bps"]),
            min_prize_minor=int(config["min_prize_minor"]),
        ),
    )
    prizes = allocation.prizes_minor

    legs = [
        wallet_services.Leg(escrow.pk, -gross),
        wallet_services.Leg(carry.pk, allocation.breakage_minor - carry_in),
    ]
    if rake:
        legs.append(wallet_services.Leg(rake_account.pk, rake))
    paid_users = [user_ids[i] for i in np.flatnonzero(prizes)]
    accounts = wallet_services.ensure_player_accounts(user_ids=paid_users, currency=currency)
    legs.extend(wallet_services.Leg(accounts[user_ids[i]], int(prizes[i])) for i in np.flatnonzero(prizes))
    if any(leg.delta_minor for leg in legs):
        wallet_services.post_transfer(
            reference=f"settle:{hand.pk}",
            kind=TransferKind.SETTLEMENT,
            currency=currency,
            legs=legs,
            memo=f"Settlement of hand {hand.table_id}#{hand.number}: rake {rake}, pool {pool}",
        )

    _write_results(
        ids,
        connected=connected,
        holds_used=holds_used.tolist(),
        strengths=strengths.tolist(),
        best_draw=best_index.tolist(),
        strength=best.tolist(),
        category=categories.tolist(),
        place=places.tolist(),
        prize=prizes.tolist(),
    )
    hand.status = HandStatus.SETTLED
    hand.settled_at = now
    hand.rake_minor = rake
    hand.carry_in_minor = carry_in
    hand.pool_minor = pool
    hand.breakage_minor = allocation.breakage_minor
    hand.change_keys = [list(key) for key in keys]
    hand.leaderboard = _leaderboard(
        hand,
        board=board,
        keys=keys,
        rows=rows,
        combinations=combinations,
        holds=holds,
        best_index=best_index,
        categories=categories,
        places=places,
        prizes=prizes,
        count=count,
    )
    hand.save(
        update_fields=[
            "status",
            "settled_at",
            "rake_minor",
            "carry_in_minor",
            "pool_minor",
            "breakage_minor",
            "change_keys",
            "leaderboard",
        ]
    )
    return True


def _write_results(ids: list[int], **columns: list[Any]) -> None:
    """Write every entry's result in bulk (one statement on PostgreSQL)."""
    if not ids:
        return
    if connection.vendor == "postgresql":
        import json

        with connection.cursor() as cursor:
            cursor.execute(
                f"""
                UPDATE {Entry._meta.db_table} AS e SET
                    connected_at_end = v.connected, hold_used = v.hold_used,
                    draw_strengths = v.strengths::jsonb, best_draw = v.best_draw,
                    strength = v.strength, category = v.category, place = v.place, prize_minor = v.prize
                FROM unnest(%s::bigint[], %s::boolean[], %s::smallint[], %s::text[], %s::smallint[],
                            %s::integer[], %s::smallint[], %s::integer[], %s::bigint[])
                    AS v(id, connected, hold_used, strengths, best_draw, strength, category, place, prize)
                WHERE e.id = v.id
                """,
                [
                    ids,
                    columns["connected"],
                    columns["holds_used"],
                    [json.dumps(row) for row in columns["strengths"]],
                    columns["best_draw"],
                    columns["strength"],
                    columns["category"],
                    columns["place"],
                    columns["prize"],
                ],
            )
        return
    entries = [
        Entry(
            pk=entry_id,
            connected_at_end=columns["connected"][i],
            hold_used=columns["holds_used"][i],
            draw_strengths=columns["strengths"][i],
            best_draw=columns["best_draw"][i],
            strength=columns["strength"][i],
            category=columns["category"][i],
            place=columns["place"][i],
            prize_minor=columns["prize"][i],
        )
        for i, entry_id in enumerate(ids)
    ]
    Entry.objects.bulk_update(
        entries,
        [
            "connected_at_end",
            "hold_used",
            "draw_strengths",
            "best_draw",
            "strength",
            "category",
            "place",
            "prize_minor",
        ],
        batch_size=1000,
    )


def _leaderboard(
    hand: Hand,
    *,
    board: Board,
    keys: tuple[tuple[int, ...], ...],
    rows: list[tuple[Any, ...]],
    combinations: npt.NDArray[np.uint8],
    holds: npt.NDArray[np.bool_],
    best_index: npt.NDArray[Any],
    categories: npt.NDArray[Any],
    places: npt.NDArray[Any],
    prizes: npt.NDArray[Any],
    count: int,
) -> list[dict[str, Any]]:
    if count == 0:
        return []
    order = np.lexsort((np.arange(count), places))[:LEADERBOARD_SIZE]
    names = dict(get_user_model().objects.filter(pk__in=[rows[i][1] for i in order]).values_list("pk", "username"))
    return [
        {
            "place": int(places[i]),
            "player": names.get(rows[i][1], "?"),
            "cards": list(
                final_hand(board, tuple(combinations[i].tolist()), tuple(holds[i].tolist()), keys[int(best_index[i])])
            ),
            "category": int(categories[i]),
            "prize_minor": int(prizes[i]),
        }
        for i in order
    ]


# --- RESULTS -> WAITING -------------------------------------------------------------------------


def _end_results(table: Table, *, now: datetime) -> None:
    """Apply staff changes waiting for the hand to end (DESIGN 14): the table restarts and its
    players go back to the lobby, where they see the new conditions."""
    table.current_hand = None
    table.phase = TablePhase.WAITING
    table.version += 1
    if table.pending_changes:
        apply_pending_changes(table, now=now)


def apply_pending_changes(table: Table, *, now: datetime) -> None:
    """Apply the table's pending configuration and restart it: every seat is released and the
    players are told to return to the lobby."""
    for field, value in table.pending_changes.items():
        setattr(table, field, value)
    TableConfigChange.objects.filter(table=table, applied_at__isnull=True).update(applied_at=now)
    table.pending_changes = {}
    Seat.objects.filter(table=table).exclude(status=SeatStatus.LEFT).update(
        status=SeatStatus.LEFT, status_reason="table restarted", left_at=now
    )
    table.version += 1
    frame = TableRestartedFrame(
        type="table_restarted",
        table_id=table.pk,
        version=table.version,
        reason="The table's conditions changed; see them in the lobby.",
    )
    transaction.on_commit(lambda: publish_table_frame(table.pk, dumps(frame)))


# --- malfunction -----------------------------------------------------------------------------


@transaction.atomic
def cancel_hand(*, hand_id: int, reason: str, now: datetime) -> bool:
    """Cancel a hand that cannot complete and return every amount wagered in it in full
    (rules, Notes 3): ante, draws and redeals, from the hand's escrow. False if the hand was
    already settled or cancelled. Idempotent (reference ``refund:<hand>``)."""
    hand = Hand.objects.select_for_update().get(pk=hand_id)
    if hand.status != HandStatus.CHANGE:
        return False
    currency = hand.currency
    escrow = wallet_services.ensure_account(key=escrow_key(hand.pk), kind=AccountKind.ESCROW, currency=currency)
    paid = list(Entry.objects.filter(hand=hand, paid_minor__gt=0).values_list("user_id", "paid_minor"))
    total = sum(amount for _, amount in paid)
    if total:
        legs = [wallet_services.Leg(escrow.pk, -total)]
        accounts = wallet_services.ensure_player_accounts(user_ids=[user_id for user_id, _ in paid], currency=currency)
        legs.extend(wallet_services.Leg(accounts[user_id], amount) for user_id, amount in paid)
        wallet_services.post_transfer(
            reference=f"refund:{hand.pk}",
            kind=TransferKind.REFUND,
            currency=currency,
            legs=legs,
            memo=f"Refund of cancelled hand {hand.table_id}#{hand.number}: {reason}"[:255],
        )
    hand.status = HandStatus.CANCELLED
    hand.cancel_reason = reason[:200]
    hand.settled_at = now
    hand.save(update_fields=["status", "cancel_reason", "settled_at"])
    return True


@transaction.atomic(durable=True)
def recover_table(*, table_id: int, now: datetime, reason: str) -> None:
    """After a failed step: cancel the running hand with full refunds and let the table
    wait a few seconds before dealing again."""
    table = Table.objects.select_for_update().filter(pk=table_id).first()
    if table is None:
        return
    if table.current_hand_id is not None:
        cancel_hand(hand_id=table.current_hand_id, reason=reason, now=now)
    Table.objects.filter(pk=table_id).update(
        phase=TablePhase.WAITING,
        current_hand=None,
        phase_deadline=now + MALFUNCTION_PAUSE,
        version=F("version") + 1,
    )
    broadcast_table_on_commit(table_id, refresh_private=True)


# --- live prize pools --------------------------------------------------------------------------

_published_pools: dict[int, int] = {}


def publish_live_pools() -> int:
    """Push the prize pool of every running hand whose gross changed since the last push
    (at most once per clock tick, however many draws and redeals were bought)."""
    from tables.selectors import live_pool_frames

    sent = 0
    live = set()
    for hand_id, gross, frame in live_pool_frames():
        live.add(hand_id)
        if _published_pools.get(hand_id) != gross:
            _published_pools[hand_id] = gross
            publish_table_frame(frame["table_id"], dumps(frame))
            sent += 1
    for hand_id in set(_published_pools) - live:
        del _published_pools[hand_id]
    return sent
