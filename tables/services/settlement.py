"""The money of a hand: settlement (prizes, rake, carried cents) or cancellation (refunds).

Seed 001: B.3 (third phase), C.1 (multidraw), Rake, Notes 2 (disconnection), Notes 3
(malfunction); DESIGN.md items 4, 5, 11, 15.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
from django.contrib.auth import get_user_model
from django.db import connection, transaction

from tables.engine.widerpoker import (
    AllocationConfig,
    Board,
    allocate_pool,
    best_draws,
    board_grid,
    category_of,
    change_keys,
    draw_strengths,
    final_hand,
    rake_minor,
    rank_places,
)
from tables.models import Entry, Hand, HandStatus, Seat, SeatStatus
from tables.records import board_from_json, carry_key, combination_digits, escrow_key
from tables.services.seating import is_connected
from wallet import services as wallet_services
from wallet.models import Account, AccountKind, TransferKind

LEADERBOARD_SIZE = 10


def hand_escrow(*, hand_id: int, currency: str) -> Account:
    """The account holding a hand's antes, draws and redeals until settlement or refund."""
    return wallet_services.ensure_account(key=escrow_key(hand_id), kind=AccountKind.ESCROW, currency=currency)


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
    escrow = hand_escrow(hand_id=hand.pk, currency=currency)
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


@transaction.atomic
def cancel_hand(*, hand_id: int, reason: str, now: datetime) -> bool:
    """Cancel a hand that cannot complete and return every amount wagered in it in full
    (rules, Notes 3): ante, draws and redeals, from the hand's escrow. False if the hand was
    already settled or cancelled. Idempotent (reference ``refund:<hand>``)."""
    hand = Hand.objects.select_for_update().get(pk=hand_id)
    if hand.status != HandStatus.CHANGE:
        return False
    currency = hand.currency
    escrow = hand_escrow(hand_id=hand.pk, currency=currency)
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
