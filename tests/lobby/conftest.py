"""Fixtures for the players' web: a fun table, logged-in clients, and a dealt hand."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from tables import services
from tables.models import Hand, Table


@pytest.fixture
def now() -> datetime:
    return timezone.now().replace(microsecond=0)


@pytest.fixture
def table(db: Any) -> Table:
    """A fun table: ante 1.00 FUN, draws 0.50, redeals 0.80, 5% rake, 30 s change phase."""
    return services.create_table(
        name="Rail Test",
        mode="fun",
        currency="FUN",
        ante_minor=100,
        draw_price_minor=50,
        redeal_price_minor=80,
        change_seconds=30,
        rake_bps=500,
    )


def logged_in(user: User) -> Client:
    """A test client with ``user``'s session."""
    client = Client()
    client.force_login(user)
    return client


def deal_hand(table: Table, players: list[User], now: datetime) -> Hand:
    """Seat ``players`` and advance the table clock at ``now`` until it deals a hand."""
    for player in players:
        services.join_table(table_id=table.pk, user_id=player.pk, now=now)
    assert services.advance_table(table_id=table.pk, now=now)
    table.refresh_from_db()
    assert table.current_hand is not None, f"no hand dealt (phase {table.phase})"
    return table.current_hand


def settle_hand(table: Table, hand: Hand) -> Hand:
    """Advance the table clock past the hand's change deadline; return the settled hand."""
    later = hand.change_deadline + timedelta(seconds=1)
    assert services.advance_table(table_id=table.pk, now=later)
    hand.refresh_from_db()
    return hand
