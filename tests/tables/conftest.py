"""Fixtures for table tests: a fun table, seated personas, and an injected clock."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from tables import services
from tables.models import Hand, Table


@pytest.fixture
def now() -> datetime:
    return timezone.now().replace(microsecond=0)


@pytest.fixture
def table(db: Any) -> Table:
    """A fun table: ante 1.00, draws 0.50, redeals 0.80, 5% rake, 30 s change phase."""
    return services.create_table(
        name="Test Rail",
        mode="fun",
        currency="FUN",
        ante_minor=100,
        draw_price_minor=50,
        redeal_price_minor=80,
        change_seconds=30,
        results_seconds=5,
        rake_bps=500,
        max_draws=5,
        max_redeals=2,
        redeal_seconds=20,
    )


def seat_players(table: Table, users: list[User], now: datetime) -> None:
    for user in users:
        services.join_table(table_id=table.pk, user_id=user.pk, now=now)


def deal(table: Table, now: datetime) -> Hand:
    """Advance the table at ``now`` and return the hand it dealt."""
    assert services.advance_table(table_id=table.pk, now=now)
    table.refresh_from_db()
    assert table.current_hand is not None, f"no hand dealt (phase {table.phase})"
    return table.current_hand


def settle(table: Table, now: datetime) -> Hand:
    """Advance the table past its change deadline and return the settled hand."""
    table.refresh_from_db()
    hand = table.current_hand
    assert hand is not None
    assert services.advance_table(table_id=table.pk, now=hand.change_deadline + timedelta(seconds=1))
    hand.refresh_from_db()
    return hand
