"""The player's entry during the change phase, as every choice takes it
(tables.widerpoker.services.play): locked under the hand's ``FOR KEY SHARE`` lock (the
hand's fields read with it), the player's protection limits checked, a purchase paid by a
hold on his wallet (or from his free items), and the entry's changed fields written. Lock
order: hand (key share), entry, wallet, session (docs/platform.md, "Purchases at scale")."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection, models
from django.db.models import F

from tables.errors import NotInHandError, PhaseClosedError
from tables.models import Entry, GamingSession, Hand, HandStatus, Seat, Table, TablePhase
from tables.selectors import get_table
from tables.widerpoker.records import escrow_key
from tables.widerpoker.services import powerups
from tables.widerpoker.services.settlement import capture_purchases, hand_escrow
from wallet import protection
from wallet import services as wallet_services
from wallet.models import Account, Exclusion, LimitKind, PlayerLimit, Suspension, TransferKind


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


def _write_entry(entry: Entry, fields: list[str]) -> None:
    """Write ``fields`` of the (locked) entry, found by its hand and id: on PostgreSQL the
    entries are partitioned by hand (primary key ``(hand_id, id)``, config/infra/partitions.py), and
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
