"""The money of a hand: settlement (prizes, rake, carried cents) or cancellation (refunds).

Seed 001: B.3 (third phase), C.1 (multidraw), Rake, Notes 2 (disconnection), Notes 3
(malfunction); DESIGN.md items 4, 5, 11, 15.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

import numpy as np
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import F, Subquery
from django.db.models.functions import Coalesce

from config.infra import metrics
from jackpots import services as jackpot_services
from jackpots.models import feed_key
from tables.bulk import update_rows, update_rows_by_copy
from tables.engine import fairness
from tables.engine.widerpoker import (
    NO_HOLD,
    Board,
    HandOutcome,
    board_grid,
    change_keys,
    conditions,
    final_hand,
    hand_outcome,
)
from tables.models import Entry, Hand, HandStatus, Redeal, RedealCounter, Seat
from tables.services import beacon
from tables.services.seating import connected_user_ids
from tables.widerpoker.records import (
    ENTRY_RESULTS,
    board_from_json,
    carry_key,
    combination_digits,
    escrow_key,
    hand_conditions,
)
from tables.widerpoker.services import powerups
from tables.widerpoker.services.sessions import count_hand_sessions
from wallet import services as wallet_services
from wallet.lookups import read_int_columns
from wallet.models import Account, AccountKind, TransferKind
from wallet.money import format_minor

LEADERBOARD_SIZE = 10

logger = logging.getLogger(__name__)


def hand_change_keys(hand: Hand, *, now: datetime) -> tuple[tuple[int, ...], ...] | None:
    """The hand's five change keys: from its seed (algorithm 1), or (algorithm 2) from its
    seed and the value of its beacon round, which it records; None while the round is not
    released (docs/provably-fair.md)."""
    seed = bytes.fromhex(hand.server_seed)
    if hand.algorithm < fairness.ALGORITHM_CHAIN:
        return change_keys(seed)
    assert hand.beacon_round is not None
    value = beacon.value(hand.beacon_round, now=now)
    if value is None:
        return None
    hand.beacon_value = value.hex()
    return change_keys(fairness.keys_seed(seed, value))


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
    if hand.sessions_counted is False:  # the deal's after-commit counting did not run
        count_hand_sessions(hand_id=hand.pk)
    metrics.count_on_commit(metrics.HANDS, "widerpoker", "settled")
    config = hand.config
    currency = str(config["currency"])
    board = board_from_json(hand.board)
    grid = board_grid(board)
    keys = hand_change_keys(hand, now=now)
    if keys is None:
        raise RuntimeError(f"hand {hand.pk}: beacon round {hand.beacon_round} is not released yet")

    entries = _read_entries(hand.pk)
    user_ids = entries["user_id"]
    connected = _connected_at_end(hand.table_id, user_ids, now=now)
    paid = entries["paid_minor"]
    gross = int(paid.sum())
    spin_award = hand.spin_award_minor
    feeds = list(config.get("jackpots", ()))
    escrow = hand_escrow(hand_id=hand.pk, currency=currency)
    carry = wallet_services.ensure_account(
        key=carry_key(hand.table_id, currency), kind=AccountKind.CARRY, currency=currency
    )
    rake_account = wallet_services.ensure_rake_account(currency=currency, table_id=hand.table_id)
    jackpot_accounts = {
        str(feed["key"]): jackpot_services.ensure_jackpot_account(feed=str(feed["key"]), currency=currency).pk
        for feed in feeds
    }
    locked = jackpot_services.lock_balances([escrow.pk, carry.pk, *jackpot_accounts.values()])
    # Purchases confirmed and not yet moved join the escrow now (docs/platform.md, Purchases).
    captured = capture_purchases(hand=hand, escrow_id=escrow.pk)
    escrow_balance = locked[escrow.pk] + captured
    hand.redeal_count = Redeal.objects.filter(hand=hand).count()
    totals = hand_totals(hand, draws_bought=int(entries["draws_bought"].sum()) - len(paid))
    if escrow_balance != gross + spin_award or totals["gross_minor"] != gross:
        raise RuntimeError(
            f"hand {hand.pk}: escrow holds {escrow_balance}, entries paid {gross} and the spin jackpot "
            f"{spin_award}, purchases add up to {totals['gross_minor']}"
        )
    for field, value in totals.items():
        setattr(hand, field, value)
    carry_in = locked[carry.pk]
    balances = {key: locked[account_id] for key, account_id in jackpot_accounts.items()}
    outcome = hand_outcome(
        grid,
        keys,
        combinations=combination_digits(entries["combination"]),
        hold_masks=entries["hold_mask"],
        connected=connected,
        draws_bought=entries["draws_bought"],
        paid_minor=paid,
        conditions=hand_conditions(config, balances),
        carry_in_minor=carry_in,
        spin_award_minor=spin_award,
    )
    split, scores, prizes = outcome.split, outcome.scores, outcome.prizes_minor
    rake, pool = split.rake_minor, split.pool_minor
    paid_out = prizes + outcome.royal_prizes_minor

    legs = [
        wallet_services.Leg(escrow.pk, -(gross + spin_award)),
        wallet_services.Leg(carry.pk, outcome.breakage_minor - carry_in),
    ]
    if rake:
        legs.append(wallet_services.Leg(rake_account.pk, rake))
    legs.extend(wallet_services.Leg(jackpot_accounts[key], amount) for key, amount in split.contributions if amount)
    royal_results: list[dict[str, Any]] = []
    for award in outcome.royal_awards:
        account_id = jackpot_accounts[award.key]
        legs.append(wallet_services.Leg(account_id, -award.share_minor * len(award.winners)))
        reset = jackpot_services.reset_legs(
            jackpot_account_id=account_id,
            currency=currency,
            reset_minor=award.balance_after_minor - award.remainder_minor,
        )
        legs.extend(reset.legs)
        royal_results.append(
            {
                "key": award.key,
                "amount_minor": award.amount_minor,
                "winners": [int(join_order) for join_order in award.winners],
                "share_minor": award.share_minor,
                "remainder_minor": award.remainder_minor,
                "reset_paid_minor": reset.paid_minor,
            }
        )
    winners = np.flatnonzero(paid_out)
    winner_users = user_ids[winners].tolist()
    accounts = wallet_services.ensure_player_accounts(user_ids=winner_users, currency=currency)
    winner_accounts = np.fromiter((accounts[user_id] for user_id in winner_users), dtype=np.int64, count=len(winners))
    account_ids = np.concatenate([np.array([leg.account_id for leg in legs], dtype=np.int64), winner_accounts])
    deltas = np.concatenate([np.array([leg.delta_minor for leg in legs], dtype=np.int64), paid_out[winners]])
    if deltas.any():
        wallet_services.post_transfer_arrays(
            reference=f"settle:{hand.pk}",
            kind=TransferKind.SETTLEMENT,
            currency=currency,
            account_ids=account_ids,
            deltas=deltas,
            memo=(
                # Stored text: written in English whatever language the request speaks.
                f"Settlement of hand {hand.table_id}#{hand.number}: "
                f"rake {format_minor(rake, currency, language='en')}, "
                f"pool {format_minor(pool, currency, language='en')}"
            ),
        )
    for result in royal_results:
        jackpot_services.record_royal(
            hand_id=hand.pk, award=result, reset_paid_minor=int(result["reset_paid_minor"]), now=now
        )

    _write_results(
        hand.pk,
        entries["id"],
        connected_at_end=connected,
        hold_used=outcome.holds,
        draw_strengths=scores.strengths,
        best_draw=scores.best_draw,
        strength=scores.best_strength,
        category=scores.categories,
        place=scores.places,
        prize_minor=prizes,
        jackpot_minor=outcome.royal_prizes_minor,
    )
    hand.status = HandStatus.SETTLED
    hand.settled_at = now
    hand.rake_minor = rake
    hand.carry_in_minor = carry_in
    hand.pool_minor = pool
    hand.breakage_minor = outcome.breakage_minor
    hand.change_keys = [list(key) for key in keys]
    hand.jackpot_contributions_minor = split.contributions_minor
    hand.jackpot_awards_minor = spin_award + int(outcome.royal_prizes_minor.sum())
    hand.jackpot_results = {
        "contributions": dict(split.contributions),
        "royal": royal_results,
        # Each jackpot's balance as this hand settled, before and after its legs (contribution,
        # royal shares, reset): an auditor follows a jackpot from hand to hand in the exports
        # (docs/export-format.md, jackpot_results.balances).
        "balances": {
            key: {
                "before_minor": int(balances[key]),
                "after_minor": int(balances[key])
                + sum(int(leg.delta_minor) for leg in legs if leg.account_id == account_id),
            }
            for key, account_id in jackpot_accounts.items()
        },
    }
    hand.leaderboard = _leaderboard(board=board, keys=keys, entries=entries, outcome=outcome)
    hand.save(
        update_fields=[
            *totals,
            "redeal_count",
            "status",
            "settled_at",
            "rake_minor",
            "carry_in_minor",
            "pool_minor",
            "breakage_minor",
            "change_keys",
            "beacon_value",
            "jackpot_results",
            "jackpot_contributions_minor",
            "jackpot_awards_minor",
            "leaderboard",
        ]
    )
    return True


ENTRY_COLUMNS = ("id", "user_id", "combination", "hold_mask", "draws_bought", "paid_minor")
"""What settlement reads of each entry (``_read_entries``)."""


def _read_entries(hand_id: int) -> dict[str, np.ndarray]:
    """The hand's entries in join order, as one int64 array ``(N,)`` per name of
    ``ENTRY_COLUMNS`` (``hold_mask`` ``NO_HOLD`` where no hold was sent), read in one
    statement from the hand's partition (``wallet.lookups.read_int_columns``) in the order the
    rows lie, and put in join order by numpy (the database would sort 100,000 rows on
    disk: more than its ``work_mem``)."""
    table = Entry._meta.db_table
    columns = read_int_columns(
        f"SELECT join_order, id, user_id, combination, COALESCE(hold_mask, %s) AS hold_mask, draws_bought, "
        f"paid_minor FROM {table} WHERE hand_id = %s",
        [NO_HOLD, hand_id],
        ("join_order", *ENTRY_COLUMNS),
    )
    order = np.argsort(columns.pop("join_order"), kind="stable")
    return {name: values[order] for name, values in columns.items()}


def _write_results(hand_id: int, ids: np.ndarray, **columns: np.ndarray) -> None:
    """Write every entry's result in one pass, in the hand's partition only (the ``hand_id``
    scope: config/infra/partitions.py). ``columns`` holds one array per name of
    ``ENTRY_RESULTS``, aligned with ``ids`` (``draw_strengths`` ``(N, 5)``, the others
    ``(N,)``).

    PostgreSQL: the columns go by one binary ``COPY`` and one ``UPDATE … FROM``
    (``tables.bulk.update_rows_by_copy``), the five strengths as five integer columns the
    database turns into the jsonb array (the same value as the text ``[s0,s1,s2,s3,s4]``):
    no text per entry formatted in Python. SQLite: ``update_rows``."""
    strengths = np.asarray(columns["draw_strengths"])
    if connection.vendor != "postgresql":
        values: dict[str, Any] = {name: np.asarray(column).tolist() for name, column in columns.items()}
        values["draw_strengths"] = ["[" + ",".join(map(str, row)) + "]" for row in strengths.tolist()]
        update_rows(
            Entry._meta.db_table,
            ids,
            {name: (sql_type, values[name]) for name, sql_type in ENTRY_RESULTS.items()},
            scope={"hand_id": hand_id},
        )
        return
    draws = strengths.shape[1]
    sent = {
        name: (sql_type, np.asarray(columns[name]))
        for name, sql_type in ENTRY_RESULTS.items()
        if name != "draw_strengths"
    }
    sent.update({f"draw_{d}": ("integer", strengths[:, d]) for d in range(draws)})
    sets = {name: f"v.{name}" for name in ENTRY_RESULTS}
    sets["draw_strengths"] = "jsonb_build_array(" + ", ".join(f"v.draw_{d}" for d in range(draws)) + ")"
    update_rows_by_copy(Entry._meta.db_table, ids, sent, sets=sets, scope={"hand_id": hand_id})


def _connected_at_end(table_id: int, user_ids: np.ndarray, *, now: datetime) -> np.ndarray:
    """Whether each player (``user_ids`` int64 ``(N,)``) is at the table at the end of the
    change phase: bool ``(N,)``, the presence rule evaluated by the database."""
    present = np.array(connected_user_ids(Seat.objects.filter(table_id=table_id), now=now), dtype=np.int64)
    return np.isin(user_ids, present)


def capture_purchases(*, hand: Hand, escrow_id: int) -> int:
    """Move the hand's purchases confirmed as holds into its escrow (one transfer) and add
    them to the hand's running totals; returns the amount moved. Called by the clock during
    the change phase, and by settlement and cancellation before they read the escrow.

    Locks the hand row first (``FOR NO KEY UPDATE``: purchases in flight, which hold it
    ``FOR KEY SHARE``, go on), then the holds and accounts."""
    Hand.objects.select_for_update(no_key=True).filter(pk=hand.pk).values_list("pk").first()
    capture = wallet_services.capture_holds(
        destination_id=escrow_id,
        currency=hand.currency,
        memo=f"Draws and redeals bought in hand {hand.table_id}#{hand.number}",
    )
    if capture.total_minor:
        draws = capture.by_kind.get(TransferKind.DRAW, 0)
        redeals = capture.by_kind.get(TransferKind.REDEAL, 0)
        Hand.objects.filter(pk=hand.pk).update(
            draws_minor=F("draws_minor") + draws,
            redeals_minor=F("redeals_minor") + redeals,
            gross_minor=F("gross_minor") + draws + redeals,
            redeal_count=Coalesce(
                Subquery(RedealCounter.objects.filter(hand_id=hand.pk).values("count")[:1]), F("redeal_count")
            ),
        )
    return capture.total_minor


def capture_running_purchases() -> int:
    """The clock's batch: capture the purchases of every hand in its change phase, each hand
    in its own transaction; returns the amount moved. A failure leaves the holds for the next
    tick or the settlement (docs/platform.md, Purchases at scale)."""
    moved = 0
    running = Hand.objects.filter(status=HandStatus.CHANGE).values_list("pk", "table_id", "number", "config")
    for hand_id, table_id, number, config in running:
        escrow = Account.objects.filter(key=escrow_key(hand_id)).values_list("pk", flat=True).first()
        if escrow is None:
            continue
        hand = Hand(pk=hand_id, table_id=table_id, number=number, config=config)
        with transaction.atomic(durable=True):
            moved += capture_purchases(hand=hand, escrow_id=escrow)
    return moved


def hand_totals(hand: Hand, *, draws_bought: int) -> dict[str, int]:
    """The hand's totals from its entries and redeal counter (prices are frozen in the
    hand's conditions; free items count at their price, paid by promotions): the engine's
    ``conditions.hand_totals`` as the Hand columns it updates, minor units."""
    totals = conditions.hand_totals(
        antes_minor=hand.antes_minor,
        draw_price_minor=int(hand.config["draw_price_minor"]),
        redeal_price_minor=int(hand.config["redeal_price_minor"]),
        extra_draws=draws_bought,
        redeals=hand.redeal_count,
    )
    return {"draws_minor": totals.draws_minor, "redeals_minor": totals.redeals_minor, "gross_minor": totals.gross_minor}


def _leaderboard(
    *, board: Board, keys: tuple[tuple[int, ...], ...], entries: dict[str, np.ndarray], outcome: HandOutcome
) -> list[dict[str, Any]]:
    """The best ``LEADERBOARD_SIZE`` entries in leaderboard order, as the results screen shows
    them; ``entries`` as ``_read_entries`` returns them."""
    top = outcome.order[:LEADERBOARD_SIZE].tolist()
    if not top:
        return []
    scores = outcome.scores
    user_ids = entries["user_id"]
    names = dict(get_user_model().objects.filter(pk__in=[int(user_ids[i]) for i in top]).values_list("pk", "username"))
    leaderboard = []
    for i in top:
        hold = tuple(bool(int(outcome.holds[i]) >> c & 1) for c in range(5))
        combination = tuple(int(d) for d in combination_digits(entries["combination"][i : i + 1])[0])
        leaderboard.append(
            {
                "place": int(scores.places[i]),
                "player": names.get(int(user_ids[i]), "?"),
                "cards": list(final_hand(board, combination, hold, keys[int(scores.best_draw[i])])),
                "category": int(scores.categories[i]),
                "prize_minor": int(outcome.prizes_minor[i]),
            }
        )
    return leaderboard


@transaction.atomic
def cancel_hand(*, hand_id: int, reason: str, now: datetime, beacon_answer: str = "") -> bool:
    """Cancel a hand that cannot complete and return every amount wagered in it in full
    (rules, Notes 3), from the hand's escrow, to whoever paid it: to each player his ante
    and the draws and redeals he bought (``paid_minor - promo_minor``), to the house
    promotions account the free draws and redeals it paid (``promo_minor``, seed 001, E:
    a free item is no cash of the player's), to the spin jackpot its award. False if the
    hand was already settled or cancelled. Idempotent (reference ``refund:<hand>``).

    A hand cancelled once its beacon round was due, for whatever reason, keeps the evidence
    (``beacon.outage_evidence``: the round awaited, since when, how long, what the beacon
    last answered, ``beacon_answer`` when the caller has it), public on the commitments page
    and in its export: an operator who aborts a hand after its outcome could be known
    leaves a trace (docs/provably-fair.md, "The beacon")."""
    hand = Hand.objects.select_for_update().get(pk=hand_id)
    if hand.status != HandStatus.CHANGE:
        return False
    if hand.sessions_counted is False:  # dealt, so counted in the sessions, cancelled or not
        count_hand_sessions(hand_id=hand.pk)
    if hand.beacon_round is not None and now >= beacon.time_of(int(hand.beacon_round)):
        answer = beacon_answer or f"not asked: cancelled for another reason ({reason})"
        hand.beacon_evidence = beacon.outage_evidence(
            int(hand.beacon_round), waited_since=hand.change_deadline, now=now, answer=answer
        )
    currency = hand.currency
    escrow = hand_escrow(hand_id=hand.pk, currency=currency)
    capture_purchases(hand=hand, escrow_id=escrow.pk)
    paid = list(
        Entry.objects.filter(hand=hand, paid_minor__gt=0)
        .annotate(own=F("paid_minor") - F("promo_minor"))
        .values_list("user_id", "own", "promo_minor")
    )
    own = [(user_id, int(amount)) for user_id, amount, _ in paid if amount > 0]
    promo = sum(int(amount) for _, _, amount in paid)
    total = sum(amount for _, amount in own) + promo
    if total or hand.spin_award_minor:
        account_ids = [escrow.pk]
        deltas = [-(total + hand.spin_award_minor)]
        accounts = wallet_services.ensure_player_accounts(user_ids=[user_id for user_id, _ in own], currency=currency)
        account_ids.extend(accounts[user_id] for user_id, _ in own)
        deltas.extend(amount for _, amount in own)
        if promo:
            account_ids.append(powerups.promotions_account(currency).pk)
            deltas.append(promo)
        if hand.spin_award_minor:
            # The spin jackpot goes back to its jackpot (the reset it was paid stays there).
            assert hand.spin_jackpot_id is not None  # a spin award always names its jackpot
            jackpot_account = jackpot_services.ensure_jackpot_account(
                feed=feed_key(hand.spin_jackpot_id), currency=currency
            )
            account_ids.append(jackpot_account.pk)
            deltas.append(hand.spin_award_minor)
        wallet_services.post_transfer_arrays(
            reference=f"refund:{hand.pk}",
            kind=TransferKind.REFUND,
            currency=currency,
            account_ids=np.array(account_ids, dtype=np.int64),
            deltas=np.array(deltas, dtype=np.int64),
            memo=f"Refund of cancelled hand {hand.table_id}#{hand.number}: {reason}"[:255],
        )
    hand.status = HandStatus.CANCELLED
    hand.cancel_reason = reason[:200]
    hand.settled_at = now
    # Every redeal bought, dealt or (algorithm 3) still waiting for its round, as settlement counts them.
    hand.redeal_count = Redeal.objects.filter(hand=hand).count()
    hand.save(update_fields=["status", "cancel_reason", "settled_at", "beacon_evidence", "redeal_count"])
    metrics.count_on_commit(metrics.HANDS, "widerpoker", "cancelled")
    logger.warning("hand %s cancelled and refunded: %s", hand.pk, reason, extra={"hand_id": hand.pk})
    return True
