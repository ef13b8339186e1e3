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

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import islice
from typing import Any

from django.conf import settings
from django.db import connection, models, transaction
from django.db.models import F
from django.db.models.functions import Greatest

from tables.engine import fairness
from tables.engine.widerpoker import COMBINATION_COUNT, hold_mask, redeal_candidates
from tables.errors import (
    InvalidHoldError,
    LimitReachedError,
    NotInHandError,
    PhaseClosedError,
    RedealClosedError,
    RedealPendingError,
)
from tables.models import Entry, GamingSession, Hand, HandStatus, Redeal, RedealCounter, Seat, Table, TablePhase
from tables.realtime.push import push_private_on_commit
from tables.selectors import get_table
from tables.services import beacon
from tables.widerpoker.records import escrow_key
from tables.widerpoker.services import powerups
from tables.widerpoker.services.settlement import capture_purchases, hand_escrow
from wallet import protection
from wallet import services as wallet_services
from wallet.lookups import int_array_literal
from wallet.models import Account, Exclusion, LimitKind, PlayerLimit, Suspension, TransferKind


def hold_to_mask(hold: Sequence[bool]) -> int:
    """Five booleans (True = hold) -> bit mask with bit c set when column c is held.

    Raises InvalidHoldError unless ``hold`` is exactly five booleans.
    """
    if isinstance(hold, str | bytes) or len(hold) != 5 or not all(isinstance(h, bool) for h in hold):
        raise InvalidHoldError("a hold is five booleans, one per column", hold=repr(hold)[:60])
    return hold_mask(hold)


@dataclass(frozen=True, slots=True)
class _Locked:
    """What ``_lock_entry`` read and locked: the running hand (its row key-share locked), the
    player's entry (locked), the hand's escrow account id, and whether the player has any row
    player protection could refuse him on (a suspension, a break, a loss or session limit);
    without one, ``protection.check_can_play`` cannot refuse and is skipped."""

    hand: Hand
    entry: Entry
    escrow_id: int | None
    guarded: bool


_HAND_FIELDS = (
    "id",
    "table_id",
    "number",
    "status",
    "server_seed",
    "algorithm",
    "config",
    "change_deadline",
    "redeal_deadline",
    "entry_count",
)


def _lock_entry(*, table_id: int, user_id: int, now: datetime) -> _Locked:
    r"""Return the running hand, key-share locked, with the player's entry locked, or raise;
    the player's seat is marked seen.

    ``FOR KEY SHARE`` (PostgreSQL): thousands of players' actions proceed side by side, and
    the clock's capture and the redeal counter (plain ``UPDATE``\ s of the hand) do not wait
    for them; settlement's ``FOR UPDATE`` waits for every action in flight, and an action
    that comes after it sees the hand settled. On PostgreSQL one statement does it all (the
    common case); when it finds nothing, the step-by-step reads below say why.
    """
    if connection.vendor == "postgresql":
        locked = _lock_entry_at_once(table_id=table_id, user_id=user_id, now=now)
        if locked is not None:
            return locked
    table = get_table(table_id, rows=Table.objects.only("id", "phase", "current_hand_id"))
    if table.phase != TablePhase.CHANGE or table.current_hand_id is None:
        raise PhaseClosedError("choices are accepted during the change phase only", table_id=table_id)
    if connection.vendor == "postgresql":
        # The one statement found no entry in the running hand: say why (nothing was locked).
        if not Entry.objects.filter(hand_id=table.current_hand_id, user_id=user_id).exists():
            raise NotInHandError("you are not playing this hand", hand_id=table.current_hand_id)
        raise PhaseClosedError("the change phase of this hand is over", table_id=table_id)  # it changed meanwhile
    hand = Hand.objects.get(pk=table.current_hand_id)  # SQLite runs one write at a time
    if hand.status != HandStatus.CHANGE or now >= hand.change_deadline:
        raise PhaseClosedError("the change phase of this hand is over", hand_id=hand.pk)
    entry = Entry.objects.select_for_update().filter(hand=hand, user_id=user_id).first()
    if entry is None:
        raise NotInHandError("you are not playing this hand", hand_id=hand.pk)
    Seat.objects.filter(table_id=table_id, user_id=user_id).update(last_seen_at=now)
    escrow = Account.objects.filter(key=escrow_key(hand.pk)).values_list("pk", flat=True).first()
    return _Locked(hand, entry, escrow, guarded=True)


def _lock_entry_at_once(*, table_id: int, user_id: int, now: datetime) -> _Locked | None:
    """``_lock_entry`` in one PostgreSQL statement: the hand (``FOR KEY SHARE``), the entry
    (``FOR UPDATE``), the escrow's id, whether player protection must be asked, and the
    seat's ``last_seen_at`` (a data-modifying ``WITH``, run after the row locks: the lock
    order stays hand, entry, seat). None when the table has no running hand in its change
    phase or the player no entry in it."""
    hands, entries, seats = Hand._meta.db_table, Entry._meta.db_table, Seat._meta.db_table
    hand_columns = ", ".join(
        f"h.{name}::text AS hand_{name}" if name == "config" else f"h.{_column(Hand, name)} AS hand_{name}"
        for name in _HAND_FIELDS
    )
    rows = Entry.objects.raw(
        f"WITH seen AS (UPDATE {seats} SET last_seen_at = %(now)s WHERE table_id = %(table)s AND user_id = %(user)s) "
        f"SELECT e.*, {hand_columns}, "
        f"(SELECT a.id FROM {Account._meta.db_table} a WHERE a.key = 'escrow:hand:' || h.id) AS escrow_id, "
        f"(EXISTS (SELECT FROM {Suspension._meta.db_table} WHERE user_id = %(user)s AND lifted_at IS NULL) "
        f"OR EXISTS (SELECT FROM {Exclusion._meta.db_table} WHERE user_id = %(user)s "
        "AND starts_at <= %(now)s AND ends_at > %(now)s) "
        f"OR EXISTS (SELECT FROM {PlayerLimit._meta.db_table} WHERE user_id = %(user)s "
        "AND kind IN (%(loss)s, %(session)s))) AS guarded "
        f"FROM {Table._meta.db_table} t JOIN {hands} h ON h.id = t.current_hand_id "
        f"JOIN {entries} e ON e.hand_id = h.id AND e.user_id = %(user)s "
        "WHERE t.id = %(table)s AND t.phase = %(phase)s FOR KEY SHARE OF h FOR UPDATE OF e",
        {
            "now": now,
            "table": table_id,
            "user": user_id,
            "phase": TablePhase.CHANGE.value,
            "loss": LimitKind.LOSS.value,
            "session": LimitKind.SESSION.value,
        },
    )
    entry = next(iter(rows), None)
    if entry is None:
        return None
    values = [getattr(entry, f"hand_{name}") for name in _HAND_FIELDS]
    values[_HAND_FIELDS.index("config")] = json.loads(values[_HAND_FIELDS.index("config")])
    hand = Hand.from_db(connection.alias, list(_HAND_FIELDS), values)  # other fields load on access
    if hand.status != HandStatus.CHANGE or now >= hand.change_deadline:
        raise PhaseClosedError("the change phase of this hand is over", hand_id=hand.pk)
    annotations: dict[str, Any] = entry.__dict__  # the query's extra columns
    return _Locked(hand, entry, annotations["escrow_id"], bool(annotations["guarded"]))


def _field(model: type[models.Model], name: str) -> models.Field[Any, Any]:
    field = model._meta.get_field(name)
    assert isinstance(field, models.Field)
    return field


def _column(model: type[models.Model], name: str) -> str:
    return str(_field(model, name).column)


def _check_protection(locked: _Locked, *, user_id: int, stake_minor: int | None, now: datetime) -> None:
    """The player's protection (wallet/protection.py) before a purchase, when he has any row
    it could refuse him on (``_Locked.guarded``; a refusal needs one). ``stake_minor``: the
    price he pays, None for a free item (it stakes nothing of his). A paid purchase first
    locks his wallet, so his losses (purchases on hold at every table included) are read with
    no stake of his at another table in flight: two purchases at once on two tables are
    counted one after the other. The hand's escrow is not locked: purchases of one hand never
    wait for each other."""
    if not locked.guarded:
        return
    hand = locked.hand
    if stake_minor:
        wallet_services.lock_accounts(
            [wallet_services.ensure_player_account(user_id=user_id, currency=hand.currency).pk]
        )
    protection.check_can_play(user_id=user_id, currency=hand.currency, stake_minor=stake_minor, now=now)


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


def _write_entry(entry: Entry, fields: list[str]) -> None:
    """Write ``fields`` of the (locked) entry, found by its hand and id: on PostgreSQL the
    entries are partitioned by hand (primary key ``(hand_id, id)``, config/partitions.py), and
    ``entry.save()``'s ``WHERE id = …`` alone would look in every partition."""
    Entry.objects.filter(hand_id=entry.hand_id, pk=entry.pk).update(**{name: getattr(entry, name) for name in fields})


def _save_entry(entry: Entry, fields: list[str], *, table_id: int, counted: str | None) -> None:
    """Write ``fields`` of the (locked) entry and, for a purchase with the player's own money,
    add one to ``counted`` (``draws_bought`` or ``redeals_bought``) of his open gaming session
    (it raises his power-up level: ``powerups.count_purchase``). One statement on PostgreSQL."""
    if counted is None or connection.vendor != "postgresql":
        _write_entry(entry, fields)
        if counted is not None:
            powerups.count_purchase(
                table_id=table_id,
                user_id=entry.user_id,
                kind="draw" if counted == "draws_bought" else "redeal",
            )
        return
    columns = [_field(Entry, name) for name in fields]
    sets = ", ".join(f"{field.column} = %s" for field in columns)
    values = [field.get_db_prep_save(getattr(entry, field.attname), connection) for field in columns]
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH entry AS (UPDATE {Entry._meta.db_table} SET {sets} WHERE hand_id = %s AND id = %s) "
            f"UPDATE {GamingSession._meta.db_table} SET {counted} = {counted} + 1 "
            "WHERE table_id = %s AND user_id = %s AND ended_at IS NULL",
            [*values, entry.hand_id, entry.pk, table_id, entry.user_id],
        )


def _pay(locked: _Locked, *, kind: str, price: int, reference: str, free: bool, memo: str) -> None:
    """Pay a draw or redeal into the hand's pool and add it to the locked entry (saved by the
    caller).

    Bought: a hold on the buyer's wallet, captured into the escrow by the clock (or at once
    with ``PURCHASE_CAPTURE=inline``); the caller counts it in the player's session. Free
    (seed 001, E): the promotions account pays the escrow at once, and the hand's totals
    follow (free items are rare; their pool must show).
    """
    hand, entry = locked.hand, locked.entry
    escrow_id = locked.escrow_id or hand_escrow(hand_id=hand.pk, currency=hand.currency).pk
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
            escrow_id=escrow_id,
        )
        powerups.pay_free_item(legs=legs, reference=reference, currency=hand.currency, memo=memo)
        entry.promo_minor += price
    elif price > 0:
        wallet_services.hold_funds(
            user_id=entry.user_id,
            currency=hand.currency,
            destination_id=escrow_id,
            amount_minor=price,
            kind=kind,
            reference=reference,
        )
        if settings.PURCHASE_CAPTURE == "inline":
            capture_purchases(hand=hand, escrow_id=escrow_id)
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
