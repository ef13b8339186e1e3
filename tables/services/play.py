"""A player's choices during the change phase: hold, buy a draw, buy a redeal (rules B.2, C).

Built for hands of 100,000 players (docs/platform.md, "Purchases at scale"). Every action
takes a ``FOR KEY SHARE`` lock on the hand row, which any number of actions hold together
and which settlement's ``FOR UPDATE`` waits for: an action either lands before settlement
reads the hand or is refused with PhaseClosedError, never half-applied. Then it locks only
the player's own rows: his entry (limits), his wallet (funds), his gaming session. A paid
draw or redeal is confirmed by a hold on the wallet (``wallet.services.hold_funds``): no
ledger write, no lock on the escrow, the hand's totals or the currency's chain head; the
clock moves the holds into the escrow in batches (``capture_purchases``), and settlement
and cancellation move what is left first. Redeals alone also take the hand's redeal counter
(an ``UPDATE`` of ``redeal_count``), since ``redeal:<n>`` streams need one order per hand.
Lock order: hand (key share), entry, wallet, session; settlement: table, hand, accounts.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from itertools import islice

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.db.models.functions import Greatest

from tables.engine.widerpoker import COMBINATION_COUNT, hold_mask, redeal_candidates
from tables.errors import (
    InvalidHoldError,
    LimitReachedError,
    NotInHandError,
    PhaseClosedError,
    RedealClosedError,
    TableNotFoundError,
)
from tables.models import Entry, Hand, HandStatus, Redeal, RedealCounter, Seat, Table, TablePhase
from tables.realtime.push import push_private_on_commit
from tables.services import powerups
from tables.services.settlement import capture_purchases, hand_escrow
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


def _lock_entry(*, table_id: int, user_id: int, now: datetime) -> tuple[Hand, Entry]:
    r"""Return the running hand, key-share locked, with the player's entry locked, or raise.

    ``FOR KEY SHARE`` (PostgreSQL): thousands of players' actions proceed side by side, and
    the clock's capture and the redeal counter (plain ``UPDATE``\ s of the hand) do not wait
    for them; settlement's ``FOR UPDATE`` waits for every action in flight, and an action
    that comes after it sees the hand settled.
    """
    hand: Hand | None = None
    if connection.vendor == "postgresql":
        # The table's running hand, key-share locked, in one statement (the common case).
        hands = Hand._meta.db_table
        running = Hand.objects.raw(
            f"SELECT h.* FROM {hands} h JOIN {Table._meta.db_table} t ON t.current_hand_id = h.id "
            "WHERE t.id = %s AND t.phase = %s FOR KEY SHARE OF h",
            [table_id, TablePhase.CHANGE.value],
        )
        hand = next(iter(running), None)
    if hand is None:
        table = Table.objects.filter(pk=table_id).only("id", "phase", "current_hand_id").first()
        if table is None:
            raise TableNotFoundError(f"no table {table_id}", table_id=table_id)
        if table.phase != TablePhase.CHANGE or table.current_hand_id is None:
            raise PhaseClosedError("choices are accepted during the change phase only", table_id=table_id)
        if connection.vendor == "postgresql":  # the hand changed between the two reads
            raise PhaseClosedError("the change phase of this hand is over", table_id=table_id)
        hand = Hand.objects.get(pk=table.current_hand_id)  # SQLite runs one write at a time
    if hand.status != HandStatus.CHANGE or now >= hand.change_deadline:
        raise PhaseClosedError("the change phase of this hand is over", hand_id=hand.pk)
    entry = Entry.objects.select_for_update().filter(hand=hand, user_id=user_id).first()
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
    _, entry = _lock_entry(table_id=table_id, user_id=user_id, now=now)
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
    _pay(
        hand=hand,
        entry=entry,
        kind=TransferKind.DRAW,
        price=price,
        reference=reference,
        free=free,
        memo=f"Draw {number} in hand {hand.table_id}#{hand.number}",
    )
    entry.draws_bought = number
    entry.save(update_fields=["draws_bought", "paid_minor", "promo_minor"])
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
    price = int(config["redeal_price_minor"])
    _check_protection(hand, user_id=user_id, stake_minor=0 if free else price, now=now)
    # Paid first, numbered last: the redeal counter's lock, which orders the hand's redeals,
    # is held only for the few statements that need the number (the reference names the
    # player and his own redeal count, unique without the hand's number).
    _pay(
        hand=hand,
        entry=entry,
        kind=TransferKind.REDEAL,
        price=price,
        reference=f"redeal:{hand.pk}:{user_id}:{len(entry.redeals) + 1}",
        free=free,
        memo=f"{'Free redeal' if free else 'Redeal'} in hand {hand.table_id}#{hand.number}",
    )
    number = _next_redeal_number(hand)
    if free:  # paid by promotions into the escrow already: the hand's totals show it now
        Hand.objects.filter(pk=hand.pk).update(redeal_count=Greatest(F("redeal_count"), number + 1))
    new = _free_combination(hand, number)
    Redeal.objects.create(hand=hand, number=number, user_id=user_id, combination=new, created_at=now)
    entry.combination = new
    entry.redeals = [*entry.redeals, [number, new]]
    entry.hold_mask = None
    entry.save(update_fields=["combination", "redeals", "hold_mask", "paid_minor", "promo_minor"])
    push_private_on_commit(table_id, user_id)
    return entry


def _pay(*, hand: Hand, entry: Entry, kind: str, price: int, reference: str, free: bool, memo: str) -> None:
    """Pay a draw or redeal into the hand's pool and add it to ``entry`` (saved by the caller).

    Bought: a hold on the buyer's wallet, captured into the escrow by the clock (or at once
    with ``PURCHASE_CAPTURE=inline``). Free (seed 001, E): the promotions account pays the
    escrow at once, and the hand's totals follow (free items are rare; their pool must show).
    """
    escrow = hand_escrow(hand_id=hand.pk, currency=hand.currency)
    what = "draw" if kind == TransferKind.DRAW else "redeal"
    if free:
        if price:
            # The hand's totals first: the clock's capture locks the hand before accounts too.
            totals = (
                {"draws_minor": F("draws_minor") + price}
                if what == "draw"
                else {"redeals_minor": F("redeals_minor") + price}
            )
            Hand.objects.filter(pk=hand.pk).update(gross_minor=F("gross_minor") + price, **totals)
        legs = powerups.take_free_item(
            table_id=hand.table_id,
            user_id=entry.user_id,
            kind=what,
            price_minor=price,
            currency=hand.currency,
            escrow_id=escrow.pk,
        )
        powerups.pay_free_item(legs=legs, reference=reference, currency=hand.currency, memo=memo)
        entry.promo_minor += price
    else:
        if price > 0:
            wallet_services.hold_funds(
                user_id=entry.user_id,
                currency=hand.currency,
                destination_id=escrow.pk,
                amount_minor=price,
                kind=kind,
                reference=reference,
            )
            if settings.PURCHASE_CAPTURE == "inline":
                capture_purchases(hand=hand, escrow_id=escrow.pk)
        powerups.count_purchase(table_id=hand.table_id, user_id=entry.user_id, kind=what)
    entry.paid_minor += price


def _next_redeal_number(hand: Hand) -> int:
    """Take the hand's next redeal number (0, 1, ...) from its RedealCounter, whose row lock
    orders the hand's redeals until commit (draws, holds and the clock's capture do not wait
    for it). One upsert: the first redeal creates the row."""
    table = RedealCounter._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (hand_id, count) VALUES (%s, 1) "
            f"ON CONFLICT (hand_id) DO UPDATE SET count = {table}.count + 1 RETURNING count",
            [hand.pk],
        )
        row = cursor.fetchone()
    assert row is not None
    hand.redeal_count = int(row[0])
    return hand.redeal_count - 1


def _free_combination(hand: Hand, number: int) -> int:
    """Redeal ``number``'s new combination: the first index of the seed's ``redeal:<n>``
    stream not yet assigned in the hand (initial or redealt, folded or not; the engine's
    ``redeal_combination``), checked against the database a few candidates at a time instead
    of loading the hand's 100,000 combinations."""
    if hand.entry_count + number >= COMBINATION_COUNT:
        raise LimitReachedError("every combination of this hand is taken", hand_id=hand.pk)
    candidates = redeal_candidates(bytes.fromhex(hand.server_seed), number)
    while True:
        batch = list(islice(candidates, 8))
        taken = set(
            Entry.objects.filter(hand=hand, initial_combination__in=batch).values_list("initial_combination", flat=True)
        )
        taken.update(Redeal.objects.filter(hand=hand, combination__in=batch).values_list("combination", flat=True))
        for index in batch:
            if index not in taken:
                return index
