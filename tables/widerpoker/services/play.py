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

from django.db import connection, transaction
from django.db.models import F
from django.db.models.functions import Greatest

from tables.engine import fairness
from tables.engine.widerpoker import COMBINATION_COUNT, hold_mask, redeal_candidates
from tables.errors import (
    InvalidHoldError,
    LimitReachedError,
    RedealClosedError,
    RedealPendingError,
)
from tables.models import Entry, GamingSession, Hand, Redeal, RedealCounter
from tables.realtime.push import push_private_on_commit
from tables.services import beacon
from tables.widerpoker.services.entries import _check_protection, _lock_entry, _pay, _save_entry, _write_entry
from wallet.lookups import int_array_literal
from wallet.models import TransferKind


def hold_to_mask(hold: Sequence[bool]) -> int:
    """Five booleans (True = hold) -> bit mask with bit c set when column c is held.

    Raises InvalidHoldError unless ``hold`` is exactly five booleans.
    """
    if isinstance(hold, str | bytes) or len(hold) != 5 or not all(isinstance(h, bool) for h in hold):
        raise InvalidHoldError("a hold is five booleans, one per column", hold=repr(hold)[:60])
    return hold_mask(hold)


@transaction.atomic(durable=True)
def set_hold(*, table_id: int, user_id: int, hold: Sequence[bool], now: datetime) -> Entry:
    """Record which cards the player holds (rules B.2: select the cards to keep; a further
    click deselects). The last hold received before the deadline is the one played."""
    mask = hold_to_mask(hold)
    locked = _lock_entry(table_id=table_id, user_id=user_id, now=now)
    entry = locked.entry
    if _redeal_pending(locked.hand, user_id):
        # Algorithm 3: the hold is for a combination not dealt yet.
        raise RedealPendingError("your redeal has not arrived yet", hand_id=locked.hand.pk)
    entry.hold_mask = mask
    entry.hold_at = now
    _write_entry(entry, ["hold_mask", "hold_at"])
    push_private_on_commit(table_id, user_id)
    return entry


@transaction.atomic(durable=True)
def buy_draw(*, table_id: int, user_id: int, now: datetime, free: bool = False) -> Entry:
    """Buy one more draw (rules C.1, Multidraw): the first draw comes with the ante, up to the
    table's maximum (at most 5); each extra draw costs the table's draw price, paid into the
    hand's prize pool. The final hand is the best of the draws bought.

    ``free``: use a free draw of the player's power-ups (seed 001, E): the house promotions
    account pays the price into the pool instead of the player.

    On PostgreSQL a bought draw is three statements in one transaction (docs/platform.md,
    "Purchases at scale"): lock and read (``_lock_entry``), hold (``hold_funds``), write the
    entry and the session's count (``_save_entry``).

    Raises PhaseClosedError, NotInHandError, LimitReachedError, InsufficientFundsError,
    NoFreeItemError, PromotionUnavailableError, and the player protection's refusals
    (wallet/protection.py; a free draw counts no loss) (in every error case nothing is
    charged and nothing changes).
    """
    locked = _lock_entry(table_id=table_id, user_id=user_id, now=now)
    hand, entry = locked.hand, locked.entry
    config = hand.config
    if entry.draws_bought >= config["max_draws"]:
        raise LimitReachedError(f"at most {config['max_draws']} draws in this hand", max_draws=config["max_draws"])
    price = int(config["draw_price_minor"])
    _check_protection(locked, user_id=user_id, stake_minor=None if free else price, now=now)
    number = entry.draws_bought + 1
    reference = f"draw:{hand.pk}:{user_id}:{number}"
    _pay(
        locked,
        kind=TransferKind.DRAW,
        price=price,
        reference=reference,
        free=free,
        memo=f"Draw {number} in hand {hand.table_id}#{hand.number}",
    )
    entry.draws_bought = number
    _save_entry(
        entry,
        ["draws_bought", "paid_minor", "promo_minor"],
        table_id=table_id,
        counted=None if free else "draws_bought",
    )
    push_private_on_commit(table_id, user_id)
    return entry


@transaction.atomic(durable=True)
def buy_redeal(*, table_id: int, user_id: int, now: datetime, free: bool = False) -> Entry:
    """Fold the current initial combination and buy a new one not used in this hand (rules
    C.2, Redeal), within the table's redeal time limit and maximum. The hold is reset.

    The new combination comes from the seed's ``redeal:<n>`` stream, where n numbers the
    hand's redeals in the order they were bought (docs/provably-fair.md). Algorithm 3: the
    redeal is paid and numbered now, but its combination waits for the first beacon round
    after ``now`` (``resolve_pending_redeals``); until then the entry keeps its combination,
    and a hold or a second redeal is refused with RedealPendingError.

    ``free``: use a free redeal of the player's power-ups, paid by house promotions.

    Raises PhaseClosedError, RedealClosedError, NotInHandError, LimitReachedError,
    InsufficientFundsError, NoFreeItemError, PromotionUnavailableError, the player
    protection's refusals; nothing changes on error.
    """
    locked = _lock_entry(table_id=table_id, user_id=user_id, now=now)
    hand, entry = locked.hand, locked.entry
    config = hand.config
    if now >= hand.redeal_deadline:
        raise RedealClosedError("the redeal time of this hand is over", hand_id=hand.pk)
    if _redeal_pending(hand, user_id):
        raise RedealPendingError("your last redeal has not arrived yet", hand_id=hand.pk)
    if len(entry.redeals) >= config["max_redeals"]:
        raise LimitReachedError(
            f"at most {config['max_redeals']} redeals in this hand",
            max_redeals=config["max_redeals"],
        )
    price = int(config["redeal_price_minor"])
    _check_protection(locked, user_id=user_id, stake_minor=None if free else price, now=now)
    # Paid first, numbered last: the redeal counter's lock, which orders the hand's redeals,
    # is held only for the few statements that need the number (the reference names the
    # player and his own redeal count, unique without the hand's number).
    _pay(
        locked,
        kind=TransferKind.REDEAL,
        price=price,
        reference=f"redeal:{hand.pk}:{user_id}:{len(entry.redeals) + 1}",
        free=free,
        memo=f"{'Free redeal' if free else 'Redeal'} in hand {hand.table_id}#{hand.number}",
    )
    number = _next_redeal_number(hand)
    if hand.algorithm >= fairness.ALGORITHM_DEAL_BEACON:
        _defer_redeal(hand, entry, number=number, now=now, free=free)
        push_private_on_commit(table_id, user_id)
        return entry
    if not free and connection.vendor == "postgresql":
        # The counter's lock is held from here to the commit: one statement in between.
        entry.combination = _redeal_at_once(hand, entry, number=number, now=now)
        entry.redeals = [*entry.redeals, [number, entry.combination]]
        entry.hold_mask = None
        push_private_on_commit(table_id, user_id)
        return entry
    if free:  # paid by promotions into the escrow already: the hand's totals show it now
        Hand.objects.filter(pk=hand.pk).update(redeal_count=Greatest(F("redeal_count"), number + 1))
    new = _free_combination(hand, number)
    Redeal.objects.create(hand=hand, number=number, user_id=user_id, combination=new, created_at=now)
    entry.combination = new
    entry.redeals = [*entry.redeals, [number, new]]
    entry.hold_mask = None
    _save_entry(
        entry,
        ["combination", "redeals", "hold_mask", "paid_minor", "promo_minor"],
        table_id=table_id,
        counted=None if free else "redeals_bought",
    )
    push_private_on_commit(table_id, user_id)
    return entry


def _redeal_pending(hand: Hand, user_id: int) -> bool:
    """Whether the player has a redeal waiting for its beacon round in ``hand`` (algorithm 3)."""
    if hand.algorithm < fairness.ALGORITHM_DEAL_BEACON:
        return False
    return Redeal.objects.filter(hand_id=hand.pk, user_id=user_id, combination__isnull=True).exists()


def _defer_redeal(hand: Hand, entry: Entry, *, number: int, now: datetime, free: bool) -> None:
    """Algorithm 3's redeal, paid and numbered: log it pending on the first beacon round
    released strictly after ``now`` (``Redeal.beacon_round``), reset the hold, and write the
    entry's payment; the combination comes at ``resolve_pending_redeals``."""
    Redeal.objects.create(
        hand_id=hand.pk,
        number=number,
        user_id=entry.user_id,
        combination=None,
        created_at=now,
        beacon_round=beacon.round_after(now),
    )
    if free:
        Hand.objects.filter(pk=hand.pk).update(redeal_count=Greatest(F("redeal_count"), number + 1))
    entry.hold_mask = None
    _save_entry(
        entry,
        ["hold_mask", "paid_minor", "promo_minor"],
        table_id=hand.table_id,
        counted=None if free else "redeals_bought",
    )


def resolve_pending_redeals(*, now: datetime, limit: int = 500) -> int:
    """The clock's step (algorithm 3): deal every pending redeal whose beacon round is out,
    hand by hand, each hand in its own transaction (``resolve_hand_redeals``). Returns how
    many were dealt. A redeal is dealt even after the redeal deadline: it was bought before."""
    released = beacon.round_after(now) - 1
    hands = list(
        Redeal.objects.filter(combination__isnull=True, beacon_round__lte=released)
        .values_list("hand_id", flat=True)
        .distinct()[:limit]
    )
    dealt = 0
    for hand_id in hands:
        with transaction.atomic(durable=True):
            dealt += resolve_hand_redeals(hand_id=hand_id, now=now)
    return dealt


def resolve_hand_redeals(*, hand_id: int, now: datetime) -> int:
    """Deal the pending redeals of one hand in their numbers' order, as long as each one's
    beacon round has a value: redeal ``n`` takes the first candidate of stream ``redeal:<n>``
    of ``redeal_seed(hand seed, n, round value)`` not assigned in the hand (initial
    combinations and redeals numbered below ``n``: the engine's ``redeal_combination``). The
    entry gets the combination (appended to ``redeals``, hold reset) and the player his
    private frame. Returns how many were dealt; stops at the first whose round has no value
    yet. Runs in the caller's transaction; locks the entries concerned, then the hand's
    redeal counter (the purchases' order), so it never waits in a cycle with a purchase."""
    pending = list(
        Redeal.objects.filter(hand_id=hand_id, combination__isnull=True)
        .order_by("number")
        .values_list("pk", "number", "user_id", "beacon_round")
    )
    if not pending:
        return 0
    users = sorted({row[2] for row in pending})
    list(Entry.objects.select_for_update().filter(hand_id=hand_id, user_id__in=users).order_by("pk").values_list("pk"))
    list(RedealCounter.objects.select_for_update().filter(hand_id=hand_id).values_list("pk"))
    hand = Hand.objects.only("id", "table_id", "server_seed", "entry_count").get(pk=hand_id)
    seed = bytes.fromhex(hand.server_seed)
    dealt = 0
    for pk, number, user_id, round_number in pending:
        if Redeal.objects.filter(pk=pk, combination__isnull=False).exists():
            continue  # another worker dealt it
        value = beacon.value(int(round_number or 0), now=now)
        if value is None:
            break
        combination = _free_combination(hand, number, seed=fairness.redeal_seed(seed, number, value))
        Redeal.objects.filter(pk=pk).update(combination=combination, resolved_at=now)
        entry = Entry.objects.only("pk", "hand_id", "redeals").get(hand_id=hand_id, user_id=user_id)
        entry.combination = combination
        entry.redeals = [*entry.redeals, [number, combination]]
        entry.hold_mask = None
        _write_entry(entry, ["combination", "redeals", "hold_mask"])
        push_private_on_commit(hand.table_id, user_id)
        dealt += 1
    return dealt


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


def _redeal_at_once(hand: Hand, entry: Entry, *, number: int, now: datetime) -> int:
    """Redeal ``number`` in one PostgreSQL statement per batch of candidates (the redeal
    counter's lock is held until the commit, so the fewer statements behind it, the more
    redeals a hand takes per second): the first candidate of the seed's ``redeal:<n>``
    stream not assigned in the hand (as ``_free_combination``), its ``Redeal`` row, the
    entry (new combination appended to ``redeals``, hold reset, ``paid_minor`` as the
    caller set it) and the session's count of redeals bought. Returns the combination.
    Raises LimitReachedError when every combination of the hand is taken."""
    if hand.entry_count + number >= COMBINATION_COUNT:
        raise LimitReachedError("every combination of this hand is taken", hand_id=hand.pk)
    entries, redeals = Entry._meta.db_table, Redeal._meta.db_table
    candidates = redeal_candidates(bytes.fromhex(hand.server_seed), number)
    while True:
        batch = list(islice(candidates, 8))
        with connection.cursor() as cursor:
            cursor.execute(
                "WITH pick AS (SELECT c.combination FROM unnest(%(batch)s::integer[]) "
                "WITH ORDINALITY AS c(combination, position) "
                f"WHERE NOT EXISTS (SELECT FROM {entries} e WHERE e.hand_id = %(hand)s "
                "AND e.combination = c.combination) "
                f"AND NOT EXISTS (SELECT FROM {entries} e WHERE e.hand_id = %(hand)s "
                "AND e.initial_combination = c.combination AND e.combination <> e.initial_combination) "
                f"AND NOT EXISTS (SELECT FROM {redeals} r WHERE r.hand_id = %(hand)s "
                "AND r.combination = c.combination) "
                "ORDER BY c.position LIMIT 1), "
                f"logged AS (INSERT INTO {redeals} (hand_id, number, user_id, combination, created_at) "
                "SELECT %(hand)s, %(number)s, %(user)s, combination, %(now)s FROM pick RETURNING combination), "
                f"entry AS (UPDATE {entries} SET combination = logged.combination, "
                "redeals = redeals || jsonb_build_array(jsonb_build_array(%(number)s, logged.combination)), "
                "hold_mask = NULL, paid_minor = %(paid)s FROM logged WHERE id = %(entry)s), "
                f"counted AS (UPDATE {GamingSession._meta.db_table} SET redeals_bought = redeals_bought + 1 "
                "WHERE table_id = %(table)s AND user_id = %(user)s AND ended_at IS NULL "
                "AND EXISTS (SELECT FROM logged)) "
                "SELECT combination FROM logged",
                {
                    "batch": int_array_literal(batch),
                    "hand": hand.pk,
                    "number": number,
                    "user": entry.user_id,
                    "now": now,
                    "paid": entry.paid_minor,
                    "entry": entry.pk,
                    "table": hand.table_id,
                },
            )
            row = cursor.fetchone()
        if row is not None:
            return int(row[0])


def _free_combination(hand: Hand, number: int, *, seed: bytes | None = None) -> int:
    """Redeal ``number``'s new combination: the first index of the seed's ``redeal:<n>``
    stream not yet assigned in the hand (initial or redealt, folded or not; the engine's
    ``redeal_combination``), checked against the database a few candidates at a time instead
    of loading the hand's 100,000 combinations. ``seed``: the stream's seed when it is not
    the hand seed (algorithm 3: ``fairness.redeal_seed``)."""
    if hand.entry_count + number >= COMBINATION_COUNT:
        raise LimitReachedError("every combination of this hand is taken", hand_id=hand.pk)
    candidates = redeal_candidates(seed or bytes.fromhex(hand.server_seed), number)
    while True:
        batch = list(islice(candidates, 8))
        # An initial combination is taken whether its entry still holds it (the unique
        # ``(hand, combination)``) or redealt it away (the partial ``entry_redealt_initial``).
        taken = set(Entry.objects.filter(hand=hand, combination__in=batch).values_list("combination", flat=True))
        taken.update(
            Entry.objects.filter(hand=hand, initial_combination__in=batch)
            .exclude(combination=F("initial_combination"))
            .values_list("initial_combination", flat=True)
        )
        taken.update(
            combination
            for combination in Redeal.objects.filter(hand=hand, combination__in=batch).values_list(
                "combination", flat=True
            )
            if combination is not None
        )
        for index in batch:
            if index not in taken:
                return index
