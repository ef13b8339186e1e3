"""``field__any_of=IntArray(...)``: membership in a long list of integers as one parameter.

``field__in`` with 100,000 ids sends 100,000 placeholders (psycopg spent seconds converting
such a query); ``any_of`` sends one array: ``field = ANY(%s::bigint[])`` on PostgreSQL and
``field IN (SELECT value FROM json_each(%s))`` on SQLite. Registered on every field by
``WalletConfig.ready`` (the lowest app, so every app may use it).

The ids go in an ``IntArray``: Django walks a list or tuple lookup value item by item
(resolving expressions, checking related model instances), about 2 µs an id, 0.2 s for a
hand of 100,000; an ``IntArray`` is one opaque value. A plain list still works."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Lookup
from django.db.models.sql.compiler import SQLCompiler


def int_array_literal(values: Iterable[int] | npt.NDArray[np.integer[Any]]) -> str:
    """A PostgreSQL array literal of integers (``{1,2,3}``), sent as one parameter and cast in
    the SQL (``%s::bigint[]``): much cheaper to send than a list of ints.

    int64 values (numpy's, or a list of Python ints that fit) are written by numpy, every
    number padded with zeros to one width (``{001,020,300}``, ``{-01,005}``), which
    PostgreSQL's integer input reads as the numbers themselves: a deal's 100,000 ids take
    about 2.5 ms on this box, against about 13 ms for the ``repr`` of a list (issue 23: a
    steady deal formats a dozen such arrays). Larger Python ints are written by ``str``.
    Raises TypeError or ValueError for values that are not integers."""
    try:
        array = np.asarray(values if isinstance(values, np.ndarray) else list(values), dtype=np.int64).reshape(-1)
    except OverflowError:
        return "{" + ",".join(map(str, values)) + "}"
    if array.dtype.kind not in "iu" or array.size == 0:
        return "{" + ",".join(map(str, array.tolist())) + "}"
    return "{" + _padded_decimal(array).decode("ascii") + "}"


def _padded_decimal(array: npt.NDArray[np.int64]) -> bytes:
    """``array`` (int64, ``(n,)``, n >= 1) as comma-separated decimal ASCII, each number in
    one width: a sign column (``-`` or ``0``) when any is negative, then the magnitude's
    digits zero-padded. Built as an ``(n, width + 1)`` uint8 array, one column a digit."""
    signed = int(array.min()) < 0
    negative = array < 0 if signed else None
    # The magnitudes as unsigned integers (int64's minimum has no int64 magnitude); uint32
    # where they fit, whose division is the quicker.
    magnitude = array.astype(np.uint64)
    if negative is not None:
        magnitude = np.where(negative, -(array + 1), array).astype(np.uint64) + negative.astype(np.uint64)
    largest = int(magnitude.max())
    if largest < 2**32:
        magnitude = magnitude.astype(np.uint32)
    digits = len(str(largest))
    width = digits + signed
    out = np.empty((array.size, width + 1), dtype=np.uint8)
    out[:, width] = ord(",")
    rest = magnitude
    for column in range(width - 1, width - 1 - digits, -1):
        quotient = rest // 10
        out[:, column] = rest - quotient * 10
        rest = quotient
    out[:, signed:width] += ord("0")
    if negative is not None:
        out[:, 0] = np.where(negative, ord("-"), ord("0"))
    return out.tobytes()[:-1]


def read_int_columns(sql: str, params: Sequence[Any], names: Sequence[str]) -> dict[str, np.ndarray]:
    """The rows of ``sql`` (a SELECT of ``len(names)`` integer columns named ``names``, none
    NULL: coalesce them in the SQL) as one int64 numpy array ``(N,)`` per name, aligned, in
    the order the database produced the rows (sort them with numpy when the order matters:
    see below).

    PostgreSQL: one row comes back, each column aggregated into one ``bytea`` of big-endian
    int64 (``string_agg(int8send(…))``: one aggregation fed every row in the same order, so
    the columns stay aligned) and read by ``np.frombuffer``: no Python object per row or
    value (100,000 entries in milliseconds, where a fetch through the ORM took a third of a
    second and a ``COPY … TO STDOUT`` one message a row); SQLite: a plain fetch. Raises
    ValueError when a column holds a NULL (its aggregate would be shorter)."""
    names = list(names)
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(sql, list(params))
            rows = cursor.fetchall()
        if any(value is None for row in rows for value in row):
            raise ValueError("a NULL in the columns read")
        table = np.array(rows, dtype=np.int64).reshape(len(rows), len(names))
        return {name: np.ascontiguousarray(table[:, i]) for i, name in enumerate(names)}
    aggregates = ", ".join(f"string_agg(int8send(q.{name}::bigint), ''::bytea)" for name in names)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*), {aggregates} FROM ({sql}) AS q", list(params))
        row = cursor.fetchone()
    assert row is not None
    count, blobs = int(row[0]), row[1:]
    if any(len(blob or b"") != 8 * count for blob in blobs):
        raise ValueError("a NULL in the columns read")
    return {
        name: np.frombuffer(blob or b"", dtype=">i8").astype(np.int64) for name, blob in zip(names, blobs, strict=True)
    }


# PostgreSQL's binary COPY format: a signature, flags and an empty header extension, then one
# tuple per row (a field count, then each field's length and bytes, big-endian), then -1.
_COPY_SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + b"\x00\x00\x00\x00" + b"\x00\x00\x00\x00"
_COPY_TRAILER = b"\xff\xff"
_BINARY_TYPES = {"boolean": "?", "smallint": ">i2", "integer": ">i4", "bigint": ">i8"}


def binary_copy_rows(columns: dict[str, tuple[str, np.ndarray]]) -> bytes:
    """``columns`` (name -> (PostgreSQL type: boolean, smallint, integer or bigint; values
    ``(N,)``)) as PostgreSQL's binary ``COPY`` stream, built by numpy in one structured
    array (every row the same width: no NULL). Raises KeyError for another type, ValueError
    for columns of different lengths or a value out of its type's range."""
    specs = list(columns.values())
    count = len(specs[0][1]) if specs else 0
    dtype = np.dtype(
        [("count", ">i2")]
        + [field for i, (kind, _) in enumerate(specs) for field in ((f"l{i}", ">i4"), (f"v{i}", _BINARY_TYPES[kind]))]
    )
    rows = np.empty(count, dtype=dtype)
    rows["count"] = len(specs)
    for i, (kind, values) in enumerate(specs):
        array = np.asarray(values)
        if array.shape != (count,):
            raise ValueError("columns of different lengths")
        if kind != "boolean" and array.size:
            info = np.iinfo(np.dtype(_BINARY_TYPES[kind]))
            if int(array.min()) < info.min or int(array.max()) > info.max:
                raise ValueError(f"a value out of the range of {kind}")
        rows[f"l{i}"] = np.dtype(_BINARY_TYPES[kind]).itemsize
        rows[f"v{i}"] = array
    return _COPY_SIGNATURE + rows.tobytes() + _COPY_TRAILER


class IntArray:
    """Integers (ids) as one int64 numpy array of shape ``(n,)``, for ``field__any_of``.

    Deliberately not iterable, so the ORM passes it through untouched. Raises ``ValueError``
    or ``TypeError`` (numpy's) for values that are not integers."""

    __slots__ = ("_literal", "values")

    def __init__(self, values: Iterable[int] | npt.NDArray[np.integer[Any]]) -> None:
        self.values: npt.NDArray[np.int64] = np.asarray(
            values if isinstance(values, np.ndarray) else list(values), dtype=np.int64
        ).reshape(-1)
        self._literal: str | None = None

    def literal(self) -> str:
        """The ids as a PostgreSQL array literal (``int_array_literal``), made once: a
        lookup list of 100,000 players used by several queries is formatted once."""
        if self._literal is None:
            self._literal = int_array_literal(self.values)
        return self._literal

    def __len__(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return f"IntArray({len(self.values)} ids)"


class AnyOf(Lookup):  # type: ignore[type-arg]  # django-stubs' Lookup is generic in the value type
    lookup_name = "any_of"
    prepare_rhs = False

    def get_db_prep_lookup(self, value: Any, connection: BaseDatabaseWrapper) -> tuple[str, list[Any]]:
        return "%s", [value]

    def as_sql(self, compiler: SQLCompiler, connection: BaseDatabaseWrapper) -> tuple[str, list[Any]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        if connection.vendor == "postgresql" and isinstance(self.rhs, IntArray):
            return f"{lhs} = ANY(%s::bigint[])", [*lhs_params, self.rhs.literal()]
        rhs = self.rhs.values if isinstance(self.rhs, IntArray) else self.rhs
        ints: list[int] = rhs.tolist() if hasattr(rhs, "tolist") else [int(value) for value in rhs]
        if connection.vendor == "postgresql":
            return f"{lhs} = ANY(%s::bigint[])", [*lhs_params, int_array_literal(ints)]
        return f"{lhs} IN (SELECT value FROM json_each(%s))", [*lhs_params, json.dumps(ints)]
