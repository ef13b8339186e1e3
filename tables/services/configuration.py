"""Creating tables and changing their configuration, with an audit row per change."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from tables.errors import InvalidTableConfigError, TableNotFoundError
from tables.models import (
    CONFIG_FIELDS,
    HOLDEM_CONFIG_FIELDS,
    HoldemConditions,
    Table,
    TableConfigChange,
    TableGame,
    TableMode,
    TablePhase,
)
from tables.realtime.push import broadcast_table_on_commit
from tables.services.fairness import new_chain
from tables.widerpoker.services.conditions import validate_table_config
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
def create_table(
    *, name: str, mode: str, currency: str, staff_user_id: int | None = None, reason: str = "", **config: Any
) -> Table:
    """Open a new table in the lobby. ``config`` takes the fields of CONFIG_FIELDS (money in
    minor units); missing ones take the model defaults. Fun tables play FUN chips. Opened by
    staff (``staff_user_id``), the creation is audit-logged with ``reason``
    (``record_table_created``). Raises InvalidTableConfigError (nothing saved)."""
    check_mode_currency(mode, currency)
    unknown = set(config) - set(CONFIG_FIELDS)
    if unknown:
        raise InvalidTableConfigError(f"unknown fields {sorted(unknown)}", field=sorted(unknown)[0])
    table = Table(name=name, mode=mode, currency=currency, **config)
    validate_table_config({field: getattr(table, field) for field in CONFIG_FIELDS})
    table.save()
    if staff_user_id is not None:
        conditions = {field: getattr(table, field) for field in CONFIG_FIELDS}
        record_table_created(
            table=table, conditions=conditions, staff_user_id=staff_user_id, reason=reason, now=timezone.now()
        )
    # The table's seed chain is published as it opens, before anyone can sit down
    # (docs/provably-fair.md, "Algorithm 2").
    new_chain(table_id=table.pk, now=timezone.now())
    broadcast_table_on_commit(table.pk)
    return table


@transaction.atomic(durable=True)
def change_table_config(
    *, table_id: int, changes: dict[str, Any], staff_user_id: int, reason: str, now: datetime
) -> Table:
    """A staff change of a table's conditions (DESIGN 14, rules "Rake").

    Each changed field is audit-logged (who, when, old, new, why). If a hand is running it
    finishes under the old conditions; the change applies when it ends, then the table
    restarts and its players return to the lobby to see the new conditions. A table with no
    hand running restarts at once.
    """
    if not reason.strip():
        raise InvalidTableConfigError("a configuration change needs a reason", field="reason")
    table = Table.objects.select_for_update().filter(pk=table_id).first()
    if table is None:
        raise TableNotFoundError(f"no table {table_id}", table_id=table_id)
    holdem = table.game == TableGame.HOLDEM
    fields = HOLDEM_CONFIG_FIELDS if holdem else CONFIG_FIELDS
    unknown = set(changes) - set(fields)
    if unknown:
        raise InvalidTableConfigError(f"unknown fields {sorted(unknown)}", field=sorted(unknown)[0])
    source: Any = HoldemConditions.objects.get(table=table) if holdem else table
    effective = {field: getattr(source, field) for field in fields} | table.pending_changes
    changed = {field: value for field, value in changes.items() if effective[field] != value}
    if not changed:
        return table
    if holdem:
        from tables.holdem.services.conditions import validate_holdem_config

        validate_holdem_config(effective | changed, mode=table.mode)
    else:
        validate_table_config(effective | changed)
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
    if holdem:
        # Hold'em: applied by the clock before the next hand is dealt (the seated players
        # keep their seats and chips); a waiting table applies it at its next tick.
        if table.phase in (TablePhase.WAITING, TablePhase.CLOSED):
            table.phase_deadline = now
        table.save(update_fields=["pending_changes", "phase_deadline"])
    elif table.phase in (TablePhase.WAITING, TablePhase.CLOSED):
        from tables.services.lifecycle import apply_pending_changes

        apply_pending_changes(table, now=now)
        table.phase_deadline = None
        table.save()
    else:
        table.save(update_fields=["pending_changes"])
    broadcast_table_on_commit(table.pk)
    return table


@transaction.atomic(durable=True)
def set_table_open(*, table_id: int, is_open: bool, staff_user_id: int, reason: str, now: datetime) -> Table:
    """Open or close a table (audit-logged). A running hand finishes; then the table closes."""
    table = Table.objects.select_for_update().filter(pk=table_id).first()
    if table is None:
        raise TableNotFoundError(f"no table {table_id}", table_id=table_id)
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
