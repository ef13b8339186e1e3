"""A table's hands take consecutive elements of its seed chains (docs/provably-fair.md,
"Algorithm 2" and 1.9): the index is taken in one statement, the next chain is published
while the current one still has ``PREPUBLISH`` hands left, and a hand moves on to it only
when the current one is spent. Committed transactions (``transaction=True``): the index
is taken under the table's row lock, as the clock's step takes it."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tables.models import SeedChain, Table
from tables.services.fairness import PREPUBLISH, new_chain, next_chain_index
from tests.helpers import create_fun_table

pytestmark = pytest.mark.django_db(transaction=True)


def _take(table: Table) -> tuple[int, int, int]:
    """(chain id, index, statements) of one index taken as the clock takes it."""
    with transaction.atomic(durable=True):
        locked = Table.objects.select_for_update().get(pk=table.pk)
        with CaptureQueriesContext(connection) as queries:
            chain, index = next_chain_index(locked, now=timezone.now())
    return chain.pk, index, len(queries)


def test_hands_take_consecutive_indices_and_the_next_chain_is_published_ahead(db: Any) -> None:
    table = create_fun_table(name="Chain Ahead")
    SeedChain.objects.filter(table=table).delete()
    length = PREPUBLISH + 3
    first = new_chain(table_id=table.pk, now=timezone.now(), length=length)
    taken = [_take(table) for _ in range(length)]
    assert [(chain, index) for chain, index, _ in taken] == [(first.pk, i) for i in range(1, length + 1)]
    # One statement a hand while the chain is far from its end; the look for a chain
    # published ahead (and its publication, once) only in the last PREPUBLISH hands.
    assert [statements for _, index, statements in taken if length - index >= PREPUBLISH] == [1] * 3
    chains = list(SeedChain.objects.filter(table=table).order_by("created_at", "pk"))
    assert len(chains) == 2 and chains[0].next_index == length + 1
    ahead = chains[1]
    assert ahead.next_index == 1  # published, not used while the first had elements left
    # The spent chain hands over to the one published ahead; no third chain yet.
    assert _take(table)[:2] == (ahead.pk, 1)
    assert SeedChain.objects.filter(table=table).count() == 2


def test_a_table_without_a_usable_chain_gets_one_on_the_spot(db: Any) -> None:
    table = create_fun_table(name="Chain Spent")
    SeedChain.objects.filter(table=table).update(next_index=10**6)  # every chain spent
    before = set(SeedChain.objects.filter(table=table).values_list("pk", flat=True))
    chain_id, index, _ = _take(table)
    assert chain_id not in before and index == 1
    assert SeedChain.objects.get(pk=chain_id).next_index == 2
