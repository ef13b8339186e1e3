"""A player's choices during the change phase: hold, buy a draw, buy a redeal (rules B.2, C).

Every action locks the hand row first, so it either lands before settlement reads the hand
or is refused with PhaseClosedError: a choice is never half-applied. Lock order: hand, then
wallet accounts (settlement takes table, hand, accounts: the same order).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.db import connection, transaction
from django.db.models import F

from tables.engine.widerpoker import combination_index, hold_mask, redeal_combination
from tables.errors import (
    InvalidHoldError,
    LimitReachedError,
    NotInHandError,
    PhaseClosedError,
    RedealClosedError,
    TableNotFoundError,
)
from tables.events import push_private_on_commit
from tables.models import Entry, Hand, HandStatus, Seat, Table, TablePhase
from tables.services import powerups
from tables.services.settlement import hand_escrow
from wallet import protection
from wallet import services as wallet_services
from wallet.models import TransferKind


def hold_to_mask(hold: Sequence[bool]) -> int:
    """Five booleans (True = hold) -> bit mask with bit c set when column c is held.

    Raises InvalidHoldError unless ``hold`` is exactly five booleans.
    """
    if isinstance(hold, str | bytes) or len(hold) != 5 or not all(isinstance(h, bool) for h in hold):
        raise InvalidHoldError("a hold is five booleans, one per column", hold=repr(hold)[:60])
    return hold_mask(hold)


def _lock_entry(*, table_id: int, user_id: int, now: datetime, shared: bool = False) -> tuple[Hand, Entry]:
    """Lock the running hand and return it with the player's entry, or raise.

    Purchases lock the hand row exclusively (they update its totals). A hold changes only the
    player's own entry, so it takes a shared lock (PostgreSQL ``FOR SHARE``): thousands of
    players' holds proceed side by side, while settlement's ``FOR UPDATE`` still waits for
    every hold in flight, and a hold that comes after it sees the hand settled.
    """
    table = Table.objects.filter(pk=table_id).only("id", "phase", "current_hand_id").first()
    if table is None:
        raise TableNotFoundError(f"no table {table_id}", table_id=table_id)
    if table.phase != TablePhase.CHANGE or table.current_hand_id is None:
        raise PhaseClosedError("choices are accepted during the change phase only", table_id=table_id)
    if shared and connection.vendor == "postgresql":
        table_name = Hand._meta.db_table
        shared_row = Hand.objects.raw(f"SELECT * FROM {table_name} WHERE id = %s FOR SHARE", [table.current_hand_id])
        hand = next(iter(shared_row))
    else:
        hand = Hand.objects.select_for_update().get(pk=table.current_hand_id)
    if hand.status != HandStatus.CHANGE or now >= hand.change_deadline:
        raise PhaseClosedError("the change phase of this hand is over", hand_id=hand.pk)
    entry = Entry.objects.filter(hand=hand, user_id=user_id).first()
    if entry is None:
        raise NotInHandError("you are not playing this hand", hand_id=hand.pk)
    Seat.objects.filter(table_id=table_id, user_id=user_id).update(last_seen_at=now)
    return hand, entry


def _check_protection(hand: Hand, *, user_id: int, stake_minor: int, now: datetime) -> None:
    """The player's protection (wallet/protection.py) before a purchase. A paid one first
    locks his wallet and the hand's escrow (primary-key order, after the hand), so his
    losses are read with no purchase of his at another table in flight."""
    if stake_minor > 0:
        wallet_services.lock_accounts(
            [
                wallet_services.ensure_player_account(user_id=user_id, currency=hand.currency).pk,
                hand_escrow(hand_id=hand.pk, currency=hand.currency).pk,
            ]
        )
    protection.check_can_play(user_id=user_id, currency=hand.currency, stake_minor=stake_minor, now=now)


@transaction.atomic(durable=True)
def set_hold(*, table_id: int, user_id: int, hold: Sequence[bool], now: datetime) -> Entry:
    """Record which cards the player holds (rules B.2: select the cards to keep; a further
    click deselects). The last hold received before the deadline is the one played."""
    mask = hold_to_mask(hold)
    _, entry = _lock_entry(table_id=table_id, user_id=user_id, now=now, shared=True)
    entry.hold_mask = mask
    entry.hold_at = now
    entry.save(update_fields=["hold_mask", "hold_at"])
    push_private_on_commit(table_id, user_id)
    return entry


@transaction.atomic(durable=True)
def buy_draw(*, table_id: int, user_id: int, now: datetime, free: bool = False) -> Entry:
    """Buy one more draw (rules C.1, Multidraw): the first draw comes with the ante, up to the
    table's maximum (at most 5); each extra draw costs the table's draw price, paid into the
    hand's prize pool. The final hand is the best of the draws bought.

    ``free``: use a free draw of the player's power-ups (seed 001, E): the house promotions
    account pays the price into the pool instead of the player.

    Raises PhaseClosedError, NotInHandError, LimitReachedError, InsufficientFundsError,
    NoFreeItemError, PromotionUnavailableError, and the player protection's refusals
    (wallet/protection.py; a free draw counts no loss) (in every error case nothing is
    charged and nothing changes).
    """
    hand, entry = _lock_entry(table_id=table_id, user_id=user_id, now=now)
    config = hand.config
    if entry.draws_bought >= config["max_draws"]:
        raise LimitReachedError(f"at most {config['max_draws']} draws in this hand", max_draws=config["max_draws"])
    price = int(config["draw_price_minor"])
    _check_protection(hand, user_id=user_id, stake_minor=0 if free else price, now=now)
    number = entry.draws_bought + 1
    reference = f"draw:{hand.pk}:{user_id}:{number}"
    if free:
        escrow = hand_escrow(hand_id=hand.pk, currency=hand.currency)
        legs = powerups.take_free_item(
            table_id=table_id,
            user_id=user_id,
            kind="draw",
            price_minor=price,
            currency=hand.currency,
            escrow_id=escrow.pk,
        )
        powerups.pay_free_item(
            legs=legs,
            reference=reference,
            currency=hand.currency,
            memo=f"Free draw {number} in hand {hand.table_id}#{hand.number}",
        )
        entry.promo_minor += price
    elif price > 0:
        wallet_services.transfer_between(
            source=wallet_services.ensure_player_account(user_id=user_id, currency=hand.currency),
            destination=hand_escrow(hand_id=hand.pk, currency=hand.currency),
            amount_minor=price,
            kind=TransferKind.DRAW,
            reference=reference,
            memo=f"Draw {number} in hand {hand.table_id}#{hand.number}",
        )
    if not free:
        powerups.count_purchase(table_id=table_id, user_id=user_id, kind="draw")
    entry.draws_bought = number
    entry.paid_minor += price
    entry.save(update_fields=["draws_bought", "paid_minor", "promo_minor"])
    Hand.objects.filter(pk=hand.pk).update(draws_minor=F("draws_minor") + price, gross_minor=F("gross_minor") + price)
    push_private_on_commit(table_id, user_id)
    return entry


@transaction.atomic(durable=True)
def buy_redeal(*, table_id: int, user_id: int, now: datetime, free: bool = False) -> Entry:
    """Fold the current initial combination and buy a new one not used in this hand (rules
    C.2, Redeal), within the table's redeal time limit and maximum. The hold is reset.

    The new combination comes from the seed's ``redeal:<n>`` stream, where n numbers the
    hand's redeals in the order they were bought (docs/provably-fair.md).

    ``free``: use a free redeal of the player's power-ups, paid by house promotions.

    Raises PhaseClosedError, RedealClosedError, NotInHandError, LimitReachedError,
    InsufficientFundsError, NoFreeItemError, PromotionUnavailableError, the player
    protection's refusals; nothing changes on error.
    """
    hand, entry = _lock_entry(table_id=table_id, user_id=user_id, now=now)
    config = hand.config
    if now >= hand.redeal_deadline:
        raise RedealClosedError("the redeal time of this hand is over", hand_id=hand.pk)
    if len(entry.redeals) >= config["max_redeals"]:
        raise LimitReachedError(
            f"at most {config['max_redeals']} redeals in this hand",
            max_redeals=config["max_redeals"],
        )
    taken: set[int] = set()
    for initial, redeals in Entry.objects.filter(hand=hand).values_list("initial_combination", "redeals"):
        taken.add(initial)
        taken.update(combination for _, combination in redeals)
    number = hand.redeal_count
    new = combination_index(redeal_combination(bytes.fromhex(hand.server_seed), taken, number))
    price = int(config["redeal_price_minor"])
    _check_protection(hand, user_id=user_id, stake_minor=0 if free else price, now=now)
    if free:
        escrow = hand_escrow(hand_id=hand.pk, currency=hand.currency)
        legs = powerups.take_free_item(
            table_id=table_id,
            user_id=user_id,
            kind="redeal",
            price_minor=price,
            currency=hand.currency,
            escrow_id=escrow.pk,
        )
        powerups.pay_free_item(
            legs=legs,
            reference=f"redeal:{hand.pk}:{number}",
            currency=hand.currency,
            memo=f"Free redeal in hand {hand.table_id}#{hand.number}",
        )
        entry.promo_minor += price
    elif price > 0:
        wallet_services.transfer_between(
            source=wallet_services.ensure_player_account(user_id=user_id, currency=hand.currency),
            destination=hand_escrow(hand_id=hand.pk, currency=hand.currency),
            amount_minor=price,
            kind=TransferKind.REDEAL,
            reference=f"redeal:{hand.pk}:{number}",
            memo=f"Redeal in hand {hand.table_id}#{hand.number}",
        )
    entry.combination = new
    entry.redeals = [*entry.redeals, [number, new]]
    entry.hold_mask = None
    if not free:
        powerups.count_purchase(table_id=table_id, user_id=user_id, kind="redeal")
    entry.paid_minor += price
    entry.save(update_fields=["combination", "redeals", "hold_mask", "paid_minor", "promo_minor"])
    Hand.objects.filter(pk=hand.pk).update(
        redeal_count=F("redeal_count") + 1,
        redeals_minor=F("redeals_minor") + price,
        gross_minor=F("gross_minor") + price,
    )
    push_private_on_commit(table_id, user_id)
    return entry
