"""Opening a WiderPoker table (staff, fixtures, tournaments' tables are made elsewhere)."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from tables.errors import InvalidTableConfigError
from tables.models import CONFIG_FIELDS, Table, WiderPokerConditions
from tables.realtime.push import broadcast_table_on_commit
from tables.services.configuration import check_mode_currency, record_table_created
from tables.services.fairness import new_chain
from tables.widerpoker.services.conditions import validate_table_config


@transaction.atomic(durable=True)
def create_table(
    *, name: str, mode: str, currency: str, staff_user_id: int | None = None, reason: str = "", **config: Any
) -> Table:
    """Open a new table in the lobby. ``config`` takes the fields of CONFIG_FIELDS (money in
    minor units), kept in the table's WiderPokerConditions row; missing ones take the model
    defaults. Fun tables play FUN chips. Opened by
    staff (``staff_user_id``), the creation is audit-logged with ``reason``
    (``record_table_created``). Raises InvalidTableConfigError (nothing saved)."""
    check_mode_currency(mode, currency)
    unknown = set(config) - set(CONFIG_FIELDS)
    if unknown:
        raise InvalidTableConfigError(f"unknown fields {sorted(unknown)}", field=sorted(unknown)[0])
    conditions = WiderPokerConditions(**config)
    validate_table_config(conditions.values())
    table = Table.objects.create(name=name, mode=mode, currency=currency)
    conditions.table = table
    conditions.save(force_insert=True)
    if staff_user_id is not None:
        record_table_created(
            table=table, conditions=conditions.values(), staff_user_id=staff_user_id, reason=reason, now=timezone.now()
        )
    # The table's seed chain is published as it opens, before anyone can sit down
    # (docs/provably-fair.md, "Algorithm 2").
    new_chain(table_id=table.pk, now=timezone.now())
    broadcast_table_on_commit(table.pk)
    return table
