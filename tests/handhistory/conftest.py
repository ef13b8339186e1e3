"""Fixtures for hand-history tests: fresh rate-limit counters, the injected clock's start, and
a settled hand dealt and settled with that clock (no real time passes)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from tables.models import Hand, Table
from tables.widerpoker.services.play import buy_draw, buy_redeal, set_hold
from tests.helpers import deal_hand, settle


@pytest.fixture(autouse=True)
def _fresh_throttle_counters(fresh_throttle_counters: None) -> None:
    """API rate limits count in the cache; every test starts with none used
    (tests/conftest.py)."""


@pytest.fixture
def base() -> datetime:
    """The injected clock's start: hands are dealt at ``base``, 31 s ago, so that a hand
    settled at its deadline (30 s change phase) ends about now, on today's date."""
    return timezone.now() - timedelta(seconds=31)


@pytest.fixture
def settled_hand(fun_table: Table, alice: User, bob: User, base: datetime) -> Hand:
    """A settled hand of alice and bob with choices made: alice holds two columns and buys
    two draws, bob buys a redeal."""
    deal_hand(fun_table, [alice, bob], base)
    set_hold(
        table_id=fun_table.pk,
        user_id=alice.pk,
        hold=[True, True, False, False, False],
        now=base + timedelta(seconds=1),
    )
    for second in (2, 3):
        buy_draw(table_id=fun_table.pk, user_id=alice.pk, now=base + timedelta(seconds=second))
    buy_redeal(table_id=fun_table.pk, user_id=bob.pk, now=base + timedelta(seconds=4))
    return settle(fun_table)
