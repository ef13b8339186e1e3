"""What a Hold'em clock step reads, in one statement (issue 23, item 6: SQL statements per
bot action).

A step needs the table's conditions, its newest hand (the running one to play; else the
last one, whose results stay on the frame), its pending freeze (the next hand to deal),
and its positioned seats with their users' names (who acts, who is dealt in, the pushed
frame). They were four statements (five with the freeze's own read of the last hand);
``read_step_rows`` reads them as one: the conditions outer-joined to the newest hand, the
newest pending freeze and the seats, one row per seat, without the ORM's compiler
(``config.infra.rows.RowReader``: the rows become the ORM's own instances). Portable SQL
(PostgreSQL and SQLite): the newest hand and freeze are found by correlated subqueries.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import connections

from config.infra.rows import RowReader
from tables.models import HoldemConditions, HoldemFreeze, HoldemFreezeStatus, HoldemHand, Seat, Table

_CONDITIONS = RowReader(HoldemConditions)
_HAND = RowReader(HoldemHand)
_FREEZE = RowReader(HoldemFreeze)
_SEAT = RowReader(Seat, joined=("user", User, ("username",)))
_SQL: dict[str, str] = {}


@dataclass(frozen=True, slots=True)
class StepRows:
    """A Hold'em table's rows as one clock step reads them.

    ``newest``: the table's hand of the highest number, any status, or None (no hand yet);
    ``freeze``: its newest pending freeze, or None; ``seats``: its seats with a position
    (any status), by position, each with ``user`` loaded (its id and username only)."""

    conditions: HoldemConditions
    newest: HoldemHand | None
    freeze: HoldemFreeze | None
    seats: list[Seat]


def _sql(using: str) -> str:
    sql = _SQL.get(using)
    if sql is None:
        connection = connections[using]
        quote = connection.ops.quote_name
        conditions, hands = quote(HoldemConditions._meta.db_table), quote(HoldemHand._meta.db_table)
        freezes, seats, users = (
            quote(HoldemFreeze._meta.db_table),
            quote(Seat._meta.db_table),
            quote(User._meta.db_table),
        )
        columns = [
            *_CONDITIONS.columns(connection, "c"),
            *_HAND.columns(connection, "h"),
            *_FREEZE.columns(connection, "f"),
            *_SEAT.columns(connection, "s", "u"),
        ]
        sql = _SQL[using] = (
            f"SELECT {', '.join(columns)} FROM {conditions} c"
            f" LEFT JOIN {hands} h ON h.id = (SELECT x.id FROM {hands} x WHERE x.table_id = c.table_id"
            " ORDER BY x.number DESC LIMIT 1)"
            f" LEFT JOIN {freezes} f ON f.id = (SELECT y.id FROM {freezes} y WHERE y.table_id = c.table_id"
            " AND y.status = %s ORDER BY y.id DESC LIMIT 1)"
            f" LEFT JOIN {seats} s ON s.table_id = c.table_id AND s.position IS NOT NULL"
            f" LEFT JOIN {users} u ON u.id = s.user_id"
            " WHERE c.table_id = %s ORDER BY s.position"
        )
    return sql


def read_step_rows(table: Table, *, using: str = "default") -> StepRows:
    """The table's conditions, newest hand, pending freeze and positioned seats (see
    ``StepRows``) in one statement. Raises HoldemConditions.DoesNotExist (not a Hold'em
    table)."""
    with connections[using].cursor() as cursor:
        cursor.execute(_sql(using), [HoldemFreezeStatus.PENDING.value, table.pk])
        rows = cursor.fetchall()
    if not rows:
        raise HoldemConditions.DoesNotExist(f"no conditions for table {table.pk}")
    first = rows[0]
    a = _CONDITIONS.width
    b = a + _HAND.width
    c = b + _FREEZE.width
    conditions = _CONDITIONS.build(first[:a], using=using)
    assert conditions is not None
    newest = _HAND.build(first[a:b], using=using)
    freeze = _FREEZE.build(first[b:c], using=using)
    seats = [seat for row in rows if (seat := _SEAT.build(row[c:], using=using)) is not None]
    return StepRows(conditions, newest, freeze, seats)
