"""Staff changes that are no one table's conditions: jackpots (with the tables they feed and
their starting amount), the power-up rules, and house funding of the jackpot reserve and the
promotions account (DESIGN items 12, 14 and 17; docs/deployment.md, "Staff roles").

Each is an entry-point service (``durable=True``; the admin calls it outside a transaction
of its own) that asks for a reason and writes the audit log the table conditions already
use, ``TableConfigChange``: who, when, why, before and after. A jackpot's change is logged
once per table it feeds or fed (it moves up to 10% of each of their pools), or once without
a table when it feeds none; the power-up rules and house funding are logged without a table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction

from jackpots import services as jackpot_services
from jackpots.errors import InvalidJackpotError
from jackpots.models import DEFAULT_ONE_IN, Jackpot, JackpotKind
from tables.engine.widerpoker.conditions import ConditionsError, validate_overrides
from tables.errors import InvalidTableConfigError
from tables.models import PowerUpRules, Table, TableConfigChange
from tables.widerpoker.services.powerups import apply_rules
from wallet.models import Account, AccountKind, Currency, Transfer
from wallet.money import format_minor
from wallet.services import house_account_key

POWER_UP_FIELDS = (
    "is_active",
    "points_per_hand",
    "points_per_draw",
    "points_per_redeal",
    "points_per_level",
    "max_level",
    "draw_every_hands",
    "draw_step",
    "redeal_every_hands",
    "redeal_step",
    "max_stock",
    "idle_minutes",
)


def record_staff_change(
    *,
    table_id: int | None,
    field: str,
    old: dict[str, Any],
    new: dict[str, Any],
    staff_user_id: int,
    reason: str,
    now: datetime,
) -> TableConfigChange:
    """One row of the staff audit log, applied at ``now`` (building block, plain insert)."""
    return TableConfigChange.objects.create(
        table_id=table_id,
        changed_by_id=staff_user_id,
        changed_at=now,
        field=field[:40],
        old_value=old,
        new_value=new,
        reason=reason.strip()[:255],
        applied_at=now,
    )


def _require_reason(reason: str, error: type[InvalidTableConfigError] | type[InvalidJackpotError]) -> None:
    if not reason.strip():
        raise error("say why: the reason is kept in the audit log", field="reason")


# --- jackpots ------------------------------------------------------------------------------


@dataclass(frozen=True)
class JackpotInput:
    """A jackpot as staff submit it: shares in basis points, money in minor units of
    ``currency``. ``starting_minor`` is moved from the house's jackpot reserve when the
    jackpot is created (ignored on a change). ``table_ids``: the tables it feeds."""

    name: str
    kind: str
    currency: str
    contribution_bps: int
    reset_minor: int
    one_in: int | None
    spin_overrides: dict[str, Any] = field(default_factory=dict)
    is_active: bool = True
    table_ids: tuple[int, ...] = ()
    starting_minor: int = 0


def describe_jackpot(jackpot: Jackpot) -> dict[str, Any]:
    """A jackpot's settings as the audit log keeps them (before and after a change)."""
    return {
        "name": jackpot.name,
        "kind": jackpot.kind,
        "currency": jackpot.currency,
        "contribution_bps": jackpot.contribution_bps,
        "reset_minor": jackpot.reset_minor,
        "one_in": jackpot.one_in,
        "spin_overrides": dict(jackpot.spin_overrides or {}),
        "is_active": jackpot.is_active,
        "tables": sorted(jackpot.tables.values_list("pk", flat=True)) if jackpot.pk else [],
    }


def validate_jackpot_input(data: JackpotInput, *, jackpot_id: int | None) -> tuple[Jackpot, list[Table]]:
    """Check a submitted jackpot against its own ranges and, for every table it would feed,
    the table's currency and other jackpots (one per kind, at most 10% together). Returns
    the unsaved candidate and the tables. Raises InvalidJackpotError naming the field
    (``starting_minor``, ``contribution_bps``, ``tables``, ...)."""
    one_in = data.one_in
    if data.kind in DEFAULT_ONE_IN and one_in is None:
        one_in = DEFAULT_ONE_IN[JackpotKind(data.kind)]
    jackpot_services.validate_jackpot(
        kind=data.kind,
        currency=data.currency,
        contribution_bps=data.contribution_bps,
        reset_minor=data.reset_minor,
        one_in=one_in,
    )
    if not data.name.strip():
        raise InvalidJackpotError("a jackpot needs a name players can read", field="name")
    if data.starting_minor < 0:
        raise InvalidJackpotError("the starting amount cannot be negative", field="starting_minor")
    if jackpot_id is None and data.kind != JackpotKind.ROYAL and data.starting_minor <= 0:
        # A spin adds its whole balance to a hand's pool and the screens say how much: a spin
        # jackpot that starts empty would announce "0.00 added" (issue 20).
        raise InvalidJackpotError(
            "a spin jackpot starts with money: give a starting amount (or a reset amount)", field="starting_minor"
        )
    if jackpot_id is None and data.starting_minor > 0 and data.currency != Currency.FUN:
        reserve = Account.objects.filter(key=house_account_key(AccountKind.RESERVE, data.currency)).first()
        held = reserve.balance_minor if reserve is not None else 0
        if held < data.starting_minor:
            raise InvalidJackpotError(
                f"the jackpot reserve holds {format_minor(held, data.currency)}, less than "
                f"{format_minor(data.starting_minor, data.currency)}: fund the reserve first",
                field="starting_minor",
            )
    try:
        overrides = validate_overrides(data.spin_overrides)
    except ConditionsError as error:
        raise InvalidJackpotError(str(error), field=error.field) from error
    if data.kind == JackpotKind.ROYAL and overrides:
        raise InvalidJackpotError(
            "only spin jackpots change the rules of the hand they are drawn in", field="spin_overrides"
        )
    candidate = Jackpot(
        pk=jackpot_id,
        name=data.name.strip(),
        kind=data.kind,
        currency=data.currency,
        contribution_bps=data.contribution_bps,
        reset_minor=data.reset_minor,
        one_in=one_in,
        spin_overrides=overrides,
        is_active=data.is_active,
    )
    tables = list(Table.objects.filter(pk__in=data.table_ids).order_by("pk"))
    if data.is_active:
        for table in tables:
            others = [j for j in table.jackpots.filter(is_active=True) if j.pk != jackpot_id]
            try:
                jackpot_services.validate_table_jackpots(table_currency=table.currency, jackpots=[*others, candidate])
            except InvalidJackpotError as error:
                raise InvalidJackpotError(f"{table.name}: {error}", field="tables") from error
    return candidate, tables


@transaction.atomic(durable=True)
def save_jackpot(
    *,
    data: JackpotInput,
    staff_user_id: int,
    reason: str,
    now: datetime,
    jackpot_id: int | None = None,
) -> Jackpot:
    """Create a jackpot (its starting amount moved from the jackpot reserve in transfer
    ``jackpot-start:<id>``) or change one (kind and currency stay; ``is_active=False``
    retires it: it feeds and pays nothing from the next hand dealt), with the tables it
    feeds. Locks the tables, then the jackpot (STYLE lock order); audit-logged with
    ``reason`` (module docstring). Applies from the next hand dealt. Raises
    InvalidJackpotError naming the field; nothing changes."""
    _require_reason(reason, InvalidJackpotError)
    list(Table.objects.select_for_update().filter(pk__in=data.table_ids).order_by("pk").values_list("pk"))
    old: dict[str, Any] = {}
    if jackpot_id is not None:
        existing = Jackpot.objects.select_for_update().get(pk=jackpot_id)
        old = describe_jackpot(existing)
        data = JackpotInput(**{**data.__dict__, "kind": existing.kind, "currency": existing.currency})
        list(Table.objects.select_for_update().filter(jackpots=existing).order_by("pk").values_list("pk"))
    candidate, tables = validate_jackpot_input(data, jackpot_id=jackpot_id)
    if jackpot_id is not None:
        saved = existing
        for name in ("name", "contribution_bps", "reset_minor", "one_in", "spin_overrides", "is_active"):
            setattr(saved, name, getattr(candidate, name))
        candidate = saved
    candidate.save()
    candidate.tables.set(tables)
    if jackpot_id is None:
        jackpot_services.seed_from_reserve(
            jackpot=candidate,
            amount_minor=data.starting_minor,
            reference=f"jackpot-start:{candidate.pk}",
            staff_user_id=staff_user_id,
            now=now,
        )
    new = describe_jackpot(candidate)
    if jackpot_id is None:
        new["starting_minor"] = data.starting_minor
    if old == new:
        return candidate
    affected = sorted(set(old.get("tables", [])) | set(new["tables"])) or [None]
    for table_id in affected:
        record_staff_change(
            table_id=table_id,
            field=f"jackpot:{candidate.pk}",
            old=old,
            new=new,
            staff_user_id=staff_user_id,
            reason=reason,
            now=now,
        )
    return candidate


# --- power-up rules ------------------------------------------------------------------------


def describe_power_up_rules(row: PowerUpRules) -> dict[str, Any]:
    """The power-up rules as the audit log keeps them."""
    return {name: getattr(row, name) for name in POWER_UP_FIELDS}


@transaction.atomic(durable=True)
def save_power_up_rules(*, values: dict[str, Any], staff_user_id: int, reason: str, now: datetime) -> PowerUpRules:
    """Change the power-up rules (seed 001, E; keys of ``POWER_UP_FIELDS``), audit-logged
    with ``reason`` as ``powerups``. Applies from the next hand dealt. Raises
    InvalidTableConfigError naming the field; nothing changes."""
    _require_reason(reason, InvalidTableConfigError)
    PowerUpRules.objects.get_or_create(pk=1)
    old = describe_power_up_rules(PowerUpRules.objects.select_for_update().get(pk=1))
    row = apply_rules(**values)  # validated as a whole; unknown rules refused
    new = describe_power_up_rules(row)
    if new != old:
        record_staff_change(
            table_id=None, field="powerups", old=old, new=new, staff_user_id=staff_user_id, reason=reason, now=now
        )
    return row


# --- house funding -------------------------------------------------------------------------


@transaction.atomic(durable=True)
def fund_house(
    *, kind: str, currency: str, amount_minor: int, reference: str, staff_user_id: int, reason: str, now: datetime
) -> Transfer:
    """Move ``amount_minor`` (minor units of ``currency``) from the cashier into the jackpot
    reserve or the promotions account, audit-logged with ``reason`` as
    ``house:<kind>:<currency>`` (balance before and after). Idempotent on ``reference``: a
    repeated submission returns the first transfer and logs nothing more. Raises
    InvalidJackpotError naming the field (kind, currency, amount_minor, reason)."""
    _require_reason(reason, InvalidJackpotError)
    repeated = Transfer.objects.filter(reference=reference).first()
    if repeated is not None:
        return repeated
    key = house_account_key(kind, currency)
    before = Account.objects.filter(key=key).values_list("balance_minor", flat=True).first() or 0
    transfer = jackpot_services.post_house_funding(
        kind=kind,
        currency=currency,
        amount_minor=amount_minor,
        reference=reference,
        staff_user_id=staff_user_id,
        reason=reason.strip(),
    )
    after = Account.objects.get(key=key).balance_minor
    record_staff_change(
        table_id=None,
        field=f"house:{kind}:{currency}",
        old={"balance_minor": int(before)},
        new={"balance_minor": int(after), "amount_minor": amount_minor, "transfer": transfer.reference},
        staff_user_id=staff_user_id,
        reason=reason,
        now=now,
    )
    return transfer
