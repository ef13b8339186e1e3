"""``wallet.lookups.int_array_literal``: the id arrays a deal sends (issue 23) are written by
numpy with every number zero-padded to one width. These tests check that the text means the
very integers given, read back by Python and, on PostgreSQL, by the database's own
``bigint[]`` input (the reader every such literal goes to)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from django.db import connection
from hypothesis import given, settings
from hypothesis import strategies as st

from wallet.lookups import int_array_literal

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)


def _read(literal: str) -> list[int]:
    assert literal.startswith("{") and literal.endswith("}")
    body = literal[1:-1]
    return [int(item) for item in body.split(",")] if body else []


@given(st.lists(INT64, max_size=40))
def test_the_literal_of_int64_values_reads_back_as_them(values: list[int]) -> None:
    assert _read(int_array_literal(values)) == values
    assert _read(int_array_literal(np.array(values, dtype=np.int64))) == values


@given(st.lists(st.integers(min_value=0, max_value=10**7), min_size=1, max_size=40))
def test_ids_share_one_width(values: list[int]) -> None:
    items = int_array_literal(np.array(values, dtype=np.int64))[1:-1].split(",")
    assert len({len(item) for item in items}) == 1
    assert len(items[0]) == len(str(max(values)))


@pytest.mark.parametrize(
    "values",
    [
        [],
        [0],
        [-1, 0, 1],
        [-(2**63), 2**63 - 1],
        [2**32 - 1, 2**32, 7],
        [2**64 + 3, -(2**70), 5],  # beyond int64: written by str
    ],
)
def test_edges_read_back(values: list[int]) -> None:
    assert _read(int_array_literal(values)) == values


def test_non_integers_are_refused() -> None:
    with pytest.raises((TypeError, ValueError)):
        int_array_literal(["seven"])  # type: ignore[list-item]


@pytest.mark.django_db
@settings(max_examples=30, deadline=None)
@given(st.lists(INT64, max_size=30))
def test_the_database_reads_the_same_integers(values: list[int]) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's array input")
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::bigint[]", [int_array_literal(np.array(values, dtype=np.int64))])
        row: Any = cursor.fetchone()
    assert list(row[0]) == values


@pytest.mark.django_db
def test_a_deal_sized_array_reaches_the_database_whole() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's array input")
    ids = np.random.default_rng(23).integers(1, 5_000_000, size=100_000, dtype=np.int64)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*), sum(v), min(v), max(v) FROM unnest(%s::bigint[]) AS v", [int_array_literal(ids)]
        )
        row: Any = cursor.fetchone()
    assert (row[0], int(row[1]), row[2], row[3]) == (len(ids), int(ids.sum()), int(ids.min()), int(ids.max()))
