"""Staff changes of every game's tables, with an audit row per change: a table's creation
(logged by the game's ``create``), its conditions (``change_table_config``, through the
game's ``ConditionsSpec``), opening and closing it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction

from tables.errors import InvalidTableConfigError
from tables.gamespec import ConditionsSpec
from tables.models import Table, TableConfigChange, TableMode, TablePhase
from tables.realtime.push import broadcast_table_on_commit
from tables.selectors import get_table
from wallet.models import Currency

TABLE_CREATED = "created"
"""The ``field`` of the audit row that records a table's creation (before ``{}``, after the
table's name, game, mode, currency and conditions)."""


def check_mode_currency(mode: str, currency: str) -> None:
    """The house rule of every game's tables (DESIGN 18): fun tables play FUN chips, cash
    tables a cash currency. Raises InvalidTableConfigError (``field="currency"``)."""
    if mode == TableMode.FUN and currency != Currency.FUN:
        raise InvalidTableConfigError("fun tables play FUN chips", field="currency", value=currency)
    if mode == TableMode.CASH and currency == Currency.FUN:
        raise InvalidTableConfigError("cash tables play a cash currency", field="currency", value=currency)


def record_table_created(
    *, table: Table, conditions: dict[str, Any], staff_user_id: int, reason: str, now: datetime
) -> TableConfigChange:
    """Log a table's creation by staff in the configuration audit log (``TableConfigChange``,
    DESIGN 14), as every later change of it is: who, when, why (``reason``, may be empty),
    before ``{}`` (no table) and after its name, game, mode, currency and ``conditions``
    (money in minor units, shares in basis points). Building block inside the caller's
    transaction; applied at once."""
    after = {"name": table.name, "game": table.game, "mode": table.mode, "currency": table.currency} | conditions
    return TableConfigChange.objects.create(
        table=table,
        changed_by_id=staff_user_id,
        changed_at=now,
        field=TABLE_CREATED,
        old_value={},
        new_value=after,
        reason=reason.strip()[:255],
        applied_at=now,
    )


@transaction.atomic(durable=True)
def change_table_config(
    *,
    table_id: int,
    changes: dict[str, Any],
    staff_user_id: int,
    reason: str,
    now: datetime,
    conditions: ConditionsSpec,
) -> Table:
    """A staff change of a table's conditions (DESIGN 14, rules "Rake"), for a table whose
    game's conditions are ``conditions`` (``Game.conditions``: the registry's
    ``tables.games.change_table_config`` passes them).

    Each changed field is audit-logged (who, when, old, new, why) and waits in
    ``pending_changes``; the game applies it (``ConditionsSpec.on_change``): at once on a
    table with no hand running, else when the running hand ends (it finishes under the old
    conditions). Raises InvalidTableConfigError (no reason, an unknown field, a value the
    game's rules refuse) and TableNotFoundError; nothing changes then.
    """
    if not reason.strip():
        raise InvalidTableConfigError("a configuration change needs a reason", field="reason")
    table = get_table(table_id, lock=True)
    unknown = set(changes) - set(conditions.fields)
    if unknown:
        raise InvalidTableConfigError(f"unknown fields {sorted(unknown)}", field=sorted(unknown)[0])
    effective = conditions.current(table) | table.pending_changes
    changed = {field: value for field, value in changes.items() if effective[field] != value}
    if not changed:
        return table
    conditions.validate(effective | changed, table.mode)
    TableConfigChange.objects.bulk_create(
        [
            TableConfigChange(
                table=table,
                changed_by_id=staff_user_id,
                changed_at=now,
                field=field,
                old_value=effective[field],
                new_value=value,
                reason=reason[:255],
            )
            for field, value in changed.items()
        ]
    )
    table.pending_changes = {**table.pending_changes, **changed}
    conditions.on_change(table, now)
    table.save()
    broadcast_table_on_commit(table.pk)
    return table


@transaction.atomic(durable=True)
def set_table_open(*, table_id: int, is_open: bool, staff_user_id: int, reason: str, now: datetime) -> Table:
    """Open or close a table (audit-logged). A running hand finishes; then the table closes."""
    table = get_table(table_id, lock=True)
    if table.is_open == is_open:
        return table
    TableConfigChange.objects.create(
        table=table,
        changed_by_id=staff_user_id,
        changed_at=now,
        field="is_open",
        old_value=table.is_open,
        new_value=is_open,
        reason=reason[:255],
        applied_at=now,
    )
    table.is_open = is_open
    if is_open and table.phase == TablePhase.CLOSED:
        table.phase = TablePhase.WAITING
        table.phase_deadline = now
    elif not is_open and table.phase == TablePhase.WAITING:
        table.phase = TablePhase.CLOSED
        table.phase_deadline = None
    table.version += 1
    table.save()
    broadcast_table_on_commit(table.pk)
    return table
