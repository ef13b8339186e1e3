"""Fixtures for hand-history tests: a fun table and hands dealt and settled with an injected
clock (no real time passes)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.utils import timezone

from tables import services
from tables.models import Hand, Table


@pytest.fixture(autouse=True)
def _fresh_throttle_counters() -> Iterator[None]:
    """API rate limits count in the cache; every test starts with none used."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def base() -> datetime:
    """The injected clock's start: hands are dealt at ``base``, 31 s ago, so that a hand
    settled at its deadline (30 s change phase) ends about now, on today's date."""
    return timezone.now() - timedelta(seconds=31)


def create_fun_table(name: str = "Test Rail", **config: Any) -> Table:
    """A fun table: ante 1.00, draws 0.50, redeals 0.80, 30 s change phase."""
    return services.create_table(
        name=name,
        mode="fun",
        currency="FUN",
        **{
            "ante_minor": 100,
            "draw_price_minor": 50,
            "redeal_price_minor": 80,
            "change_seconds": 30,
            **config,
        },
    )


@pytest.fixture
def fun_table(db: Any) -> Table:
    return create_fun_table()


def deal_hand(table: Table, players: list[User], at: datetime) -> Hand:
    """Seat ``players`` and deal a hand at ``at``; return it."""
    for player in players:
        services.join_table(table_id=table.pk, user_id=player.pk, now=at)
    assert services.advance_table(table_id=table.pk, now=at)
    table.refresh_from_db()
    assert table.current_hand is not None, f"no hand dealt (phase {table.phase})"
    return table.current_hand


def settle_current_hand(table: Table) -> Hand:
    """Advance the table one second past its change deadline; return the settled hand."""
    table.refresh_from_db()
    hand = table.current_hand
    assert hand is not None
    at = hand.change_deadline + timedelta(seconds=1)
    assert services.advance_table(table_id=table.pk, now=at)
    hand.refresh_from_db()
    return hand


@pytest.fixture
def settled_hand(fun_table: Table, alice: User, bob: User, base: datetime) -> Hand:
    """A settled hand of alice and bob with choices made: alice holds two columns and buys
    two draws, bob buys a redeal."""
    deal_hand(fun_table, [alice, bob], base)
    services.set_hold(
        table_id=fun_table.pk,
        user_id=alice.pk,
        hold=[True, True, False, False, False],
        now=base + timedelta(seconds=1),
    )
    for second in (2, 3):
        services.buy_draw(table_id=fun_table.pk, user_id=alice.pk, now=base + timedelta(seconds=second))
    services.buy_redeal(table_id=fun_table.pk, user_id=bob.pk, now=base + timedelta(seconds=4))
    return settle_current_hand(fun_table)
