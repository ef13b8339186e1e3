"""Game recall (GLI-19 style) and the notice a player gets on return after a disconnection
(seed 001, Notes 2: the result of the hand is visible through the hand history)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.contrib.auth.models import User

from tables.models import Entry, Table
from tests.helpers import deal_hand, logged_in, settle

pytestmark = pytest.mark.django_db


def test_the_game_screen_recalls_the_tables_last_hands(
    table: Table, alice: User, bob: User, carol: User, now: datetime
) -> None:
    deal_hand(table, [alice, bob], now)
    hand = settle(table)
    recall = logged_in(carol).get(f"/tables/{table.pk}/recall.json").json()["hands"]
    assert [h["number"] for h in recall] == [1]
    assert recall[0]["pool_minor"] == hand.pool_minor and recall[0]["mine"] is None
    mine = logged_in(alice).get(f"/tables/{table.pk}/recall.json").json()["hands"][0]["mine"]
    entry = Entry.objects.get(hand=hand, user=alice)
    assert (mine["place"], mine["prize_minor"]) == (entry.place, entry.prize_minor)
    assert logged_in(alice).get(f"/tables/{table.pk}/").content.decode().count('data-testid="recall"') == 1


def test_a_running_hand_is_not_recalled(table: Table, alice: User, bob: User, now: datetime) -> None:
    deal_hand(table, [alice, bob], now)
    assert logged_in(alice).get(f"/tables/{table.pk}/recall.json").json()["hands"] == []


def test_a_player_back_from_a_disconnection_is_told_once(table: Table, alice: User, bob: User) -> None:
    start = datetime.now().astimezone() - timedelta(minutes=5)
    deal_hand(table, [alice, bob], start)
    hand = settle(table)  # nobody touched presence: both were away at the deadline
    assert Entry.objects.get(hand=hand, user=alice).connected_at_end is False
    client = logged_in(alice)
    first = client.get(f"/tables/{table.pk}/").content.decode()
    assert 'data-testid="missed-result"' in first and f"hand #{hand.number} was settled" in first
    assert f"/history/hands/{hand.pk}/" in first
    assert 'data-testid="missed-result"' not in client.get(f"/tables/{table.pk}/").content.decode()
