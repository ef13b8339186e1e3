"""Set-based writes of many rows of the tables app: one ``COPY`` or one ``UPDATE … FROM
unnest`` on PostgreSQL, plain batched statements on SQLite (the embedded default). Values
come as columns (sequences or numpy arrays), never as one model object per row."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from django.db import connection, transaction

from wallet.lookups import binary_copy_rows, int_array_literal


def _text(value: Any) -> str:
    """One value in PostgreSQL's COPY text format (``\\N`` for NULL)."""
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    text = str(value)
    if "\\" in text or "\t" in text or "\n" in text:
        text = text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
    return text


def _lists(columns: dict[str, Sequence[Any] | np.ndarray], vendor: str | None = None) -> list[list[Any]]:
    lists = [column.tolist() if isinstance(column, np.ndarray) else list(column) for column in columns.values()]
    if (vendor or connection.vendor) != "postgresql":
        # As Django stores them (naive UTC text on SQLite).
        adapt = connection.ops.adapt_datetimefield_value
        lists = [[adapt(v) if isinstance(v, datetime) else v for v in values] for values in lists]
    return lists


def _copy_text(columns: list[list[Any]]) -> str:
    """Rows in COPY text format: one ``%`` template per row, with the columns that hold one
    value for every row written into the template once and integers formatted by ``%d``
    (they need no escaping)."""
    count = len(columns[0])
    fields: list[str] = []
    varying: list[list[Any]] = []
    for values in columns:
        if len(values) != count:
            raise ValueError("columns of different lengths")
        if values and values.count(values[0]) == count:
            fields.append(_text(values[0]).replace("%", "%%"))  # one value for every row
        elif all(type(v) is int for v in values):
            fields.append("%d")
            varying.append(values)
        else:
            fields.append("%s")
            varying.append(list(map(_text, values)))
    template = "\t".join(fields) + "\n"
    if not varying:
        return template.replace("%%", "%") * count
    return "".join(map(template.__mod__, zip(*varying, strict=True)))


@dataclass(frozen=True, slots=True)
class PreparedRows:
    """Rows made ready for ``insert_rows`` without the database: the column names and, for
    PostgreSQL, the ``COPY`` text (``values`` empty); for SQLite, the columns' values
    (``text`` None). ``count``: the number of rows; ``vendor``: the database they are for."""

    vendor: str
    names: tuple[str, ...]
    count: int
    text: str | None
    values: list[list[Any]]


def prepare_rows(columns: dict[str, Sequence[Any] | np.ndarray], *, vendor: str) -> PreparedRows:
    """The rows of ``columns`` (equally long) in the form ``insert_rows`` sends them to a
    database of ``vendor`` (``connection.vendor``, read by the caller). No query: safe in a
    worker thread while the caller's connection runs other statements (the deal builds its
    100,000 entries' text so, during the ante). Raises ValueError for columns of different
    lengths."""
    values = _lists(columns, vendor)
    count = len(values[0]) if values else 0
    if any(len(column) != count for column in values):
        raise ValueError("columns of different lengths")
    if vendor == "postgresql":
        return PreparedRows(vendor, tuple(columns), count, _copy_text(values) if count else "", [])
    return PreparedRows(vendor, tuple(columns), count, None, values)


def insert_rows(table: str, columns: dict[str, Sequence[Any] | np.ndarray] | PreparedRows) -> None:
    """Insert one row per position of the (equally long) ``columns`` into ``table``: one
    ``COPY`` on PostgreSQL, one ``executemany`` on SQLite. ``columns`` may come prepared
    (``prepare_rows``) for this connection's vendor; ValueError if they were prepared for
    another."""
    rows = columns if isinstance(columns, PreparedRows) else prepare_rows(columns, vendor=connection.vendor)
    if rows.vendor != connection.vendor:
        raise ValueError(f"rows prepared for {rows.vendor}, not {connection.vendor}")
    if not rows.count:
        return
    names = ", ".join(rows.names)
    with connection.cursor() as cursor:
        if rows.text is not None:
            with cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                copy.write(rows.text)
            return
        marks = ", ".join(["%s"] * len(rows.names))
        cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", list(zip(*rows.values, strict=True)))


def insert_missing_rows(table: str, columns: dict[str, Sequence[Any] | np.ndarray]) -> None:
    """``insert_rows`` that skips the rows a unique constraint of ``table`` already holds
    (another transaction inserted them first): ``ON CONFLICT DO NOTHING``.

    PostgreSQL: the rows are copied into a temporary table shaped like ``columns`` of
    ``table`` and moved by one ``INSERT … SELECT … ON CONFLICT DO NOTHING``; SQLite:
    ``INSERT OR IGNORE``. Works with or without a transaction open: the temporary table
    lives until the commit (``ON COMMIT DROP``), so the statements run in one transaction,
    the caller's when there is one (no savepoint), a new one otherwise (security audit
    2026-11-26, L2: in autocommit the table was gone before the ``COPY``, a 500 on
    ``/history/commitments/`` for every player with no client seed yet)."""
    values = _lists(columns)
    if not values or not values[0]:
        return
    names = ", ".join(columns)
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            temp = f"missing_{table}"
            cursor.execute(f"CREATE TEMPORARY TABLE {temp} ON COMMIT DROP AS SELECT {names} FROM {table} WITH NO DATA")
            with cursor.copy(f"COPY {temp} ({names}) FROM STDIN") as copy:
                copy.write(_copy_text(values))
            cursor.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM {temp} ON CONFLICT DO NOTHING")
            cursor.execute(f"DROP TABLE {temp}")
            return
        marks = ", ".join(["%s"] * len(columns))
        cursor.executemany(f"INSERT OR IGNORE INTO {table} ({names}) VALUES ({marks})", list(zip(*values, strict=True)))


def _array_element(value: Any) -> str:
    """One element of a PostgreSQL array literal (``NULL``, ``t``/``f``, a number, or a
    double-quoted string with ``"`` and ``\\`` escaped)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "t" if value else "f"
    if type(value) is int:
        return str(value)
    text = str(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def array_literal(values: Sequence[Any] | np.ndarray) -> str:
    """A PostgreSQL array literal of ``values`` (ints, bools, None, or anything whose ``str``
    is the element's text: JSON, timestamps), sent as one parameter and cast in the SQL."""
    items = values.tolist() if isinstance(values, np.ndarray) else list(values)
    kinds = set(map(type, items))
    if kinds <= {int}:
        return int_array_literal(items)
    if kinds == {bool}:
        return "{" + ",".join(["f", "t"][v] for v in items) + "}"
    if kinds == {str}:
        # Quoted as one string when no element holds a quote or a backslash (JSON of
        # numbers, hex seeds): 100,000 elements without a call each.
        body = '","'.join(items)
        if "\\" not in body and body.count('"') == 2 * (len(items) - 1):
            return '{"' + body + '"}'
    return "{" + ",".join(map(_array_element, items)) + "}"


def update_rows(
    table: str,
    ids: Sequence[int] | np.ndarray,
    columns: dict[str, tuple[str, Sequence[Any] | np.ndarray]],
    *,
    constants: dict[str, Any] | None = None,
    scope: dict[str, int] | None = None,
) -> None:
    """Set ``columns`` (name -> (PostgreSQL type, values aligned with ``ids``)) and
    ``constants`` (name -> one value for every row) of the rows ``ids`` of ``table``.

    ``scope`` (column -> value every row has) narrows the statement: on a partitioned
    table, its partition key (``{"hand_id": …}`` for entries) lets PostgreSQL read one
    partition through its primary key ``(hand_id, id)`` instead of looking for each id in
    every partition (config/infra/partitions.py).

    PostgreSQL: one ``UPDATE … FROM unnest(…)``, each column sent as one array parameter
    (no temporary table, no per-row Python beyond the array's text); SQLite: one
    ``executemany``."""
    id_list = ids.tolist() if isinstance(ids, np.ndarray) else list(ids)
    if not id_list:
        return
    fixed = dict(constants or {})
    narrow = dict(scope or {})
    values = _lists({name: spec[1] for name, spec in columns.items()})
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            arrays = ", ".join(f"%s::{spec[0]}[]" for spec in columns.values())
            sets = ", ".join([*(f"{name} = v.{name}" for name in columns), *(f"{name} = %s" for name in fixed)])
            cursor.execute(
                f"UPDATE {table} AS t SET {sets} FROM unnest(%s::bigint[], {arrays}) AS v(id, {', '.join(columns)}) "
                "WHERE t.id = v.id" + "".join(f" AND t.{name} = %s" for name in narrow),
                [*fixed.values(), array_literal(id_list), *map(array_literal, values), *narrow.values()],
            )
            return
        adapt = connection.ops.adapt_datetimefield_value
        fixed_values = [adapt(v) if isinstance(v, datetime) else v for v in fixed.values()]
        sets = ", ".join([*(f"{name} = %s" for name in columns), *(f"{name} = %s" for name in fixed)])
        cursor.executemany(
            f"UPDATE {table} SET {sets} WHERE id = %s" + "".join(f" AND {name} = %s" for name in narrow),
            [(*row[1:], *fixed_values, row[0], *narrow.values()) for row in zip(id_list, *values, strict=True)],
        )


def update_rows_by_copy(
    table: str,
    ids: np.ndarray,
    columns: dict[str, tuple[str, np.ndarray]],
    *,
    sets: dict[str, str],
    scope: dict[str, int] | None = None,
) -> None:
    """PostgreSQL: set the columns of ``sets`` (column of ``table`` -> SQL expression over
    the columns sent, ``v.<name>``) of the rows ``ids`` (int64 ``(N,)``) of ``table``, from
    ``columns`` (name -> (type as in ``binary_copy_rows``, values aligned with ``ids``)).
    An expression may build one column from several sent (a jsonb array of five integers),
    so no text is formatted per row in Python.

    The columns go by one binary ``COPY`` into a temporary table (``ON COMMIT DROP``, and
    dropped after use), then one ``UPDATE … FROM`` it, narrowed by ``scope`` as in
    ``update_rows`` (a partitioned table's key). Runs in the caller's transaction, or in one
    of its own. ValueError on another database (``update_rows`` serves SQLite) or for
    arrays of different lengths; KeyError for a type ``binary_copy_rows`` does not write."""
    if connection.vendor != "postgresql":
        raise ValueError("update_rows_by_copy writes PostgreSQL's binary COPY: use update_rows")
    ids = np.asarray(ids, dtype=np.int64)
    if not len(ids):
        return
    sent = {"id": ("bigint", ids), **columns}
    stream = binary_copy_rows(sent)
    temp = f"copy_{table}"
    names = ", ".join(sent)
    narrow = dict(scope or {})
    assignments = ", ".join(f"{name} = {expression}" for name, expression in sets.items())
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TEMPORARY TABLE {temp} ("
            + ", ".join(f"{name} {kind}" for name, (kind, _) in sent.items())
            + ") ON COMMIT DROP"
        )
        with cursor.copy(f"COPY {temp} ({names}) FROM STDIN (FORMAT binary)") as copy:
            copy.write(stream)
        cursor.execute(
            f"UPDATE {table} AS t SET {assignments} FROM {temp} AS v WHERE t.id = v.id"
            + "".join(f" AND t.{name} = %s" for name in narrow),
            list(narrow.values()),
        )
        cursor.execute(f"DROP TABLE {temp}")
