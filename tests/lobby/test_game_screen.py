"""The game screen, its JSON snapshot and the no-JavaScript seat forms."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tables.models import Seat, SeatStatus, Table
from tests.helpers import deal_hand, logged_in, settle

pytestmark = pytest.mark.django_db


def test_game_screen_needs_a_login(client: Client, table: Table) -> None:
    response = client.get(f"/tables/{table.pk}/")
    assert response.status_code == 302
    assert response["Location"] == f"/login/?next=/tables/{table.pk}/"


def test_game_screen_offers_to_join_a_player_who_is_not_seated(table: Table, alice: User) -> None:
    page = logged_in(alice).get(f"/tables/{table.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-seat="none"' in html
    assert f'action="/tables/{table.pk}/seat/join/"' in html
    assert 'id="table-boot"' in html


def test_unknown_table_is_not_found(alice: User) -> None:
    client = logged_in(alice)
    assert client.get("/tables/999999/").status_code == 404
    assert client.get("/tables/999999/snapshot.json").status_code == 404


def test_seat_forms_join_sit_out_sit_in_and_leave(table: Table, alice: User) -> None:
    client = logged_in(alice)
    base = f"/tables/{table.pk}/seat"
    assert client.post(f"{base}/join/")["Location"] == f"/tables/{table.pk}/"
    assert Seat.objects.get(table=table, user=alice).status == SeatStatus.ACTIVE
    client.post(f"{base}/sit-out/")
    assert Seat.objects.get(table=table, user=alice).status == SeatStatus.SITTING_OUT
    client.post(f"{base}/sit-in/")
    assert Seat.objects.get(table=table, user=alice).status == SeatStatus.ACTIVE
    assert client.post(f"{base}/leave/")["Location"] == "/"
    assert Seat.objects.get(table=table, user=alice).status == SeatStatus.LEFT
    assert client.post(f"{base}/dance/").status_code == 404
    assert client.get(f"{base}/join/").status_code == 405


def test_seat_form_refusal_is_shown_as_a_message(table: Table, alice: User) -> None:
    response = logged_in(alice).post(f"/tables/{table.pk}/seat/sit-out/", follow=True)
    assert "join the table first" in response.content.decode()


def test_snapshot_needs_a_login(client: Client, table: Table) -> None:
    response = client.get(f"/tables/{table.pk}/snapshot.json")
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


def test_snapshot_hides_the_seed_and_change_keys_during_the_change_phase(
    table: Table, alice: User, bob: User, carol: User, now: datetime
) -> None:
    hand = deal_hand(table, [alice, bob], now)
    for viewer in (alice, carol):
        response = logged_in(viewer).get(f"/tables/{table.pk}/snapshot.json")
        text = response.content.decode()
        assert "server_seed" not in text
        assert "change_keys" not in text
        assert hand.server_seed not in text
        snapshot = json.loads(text)
        assert snapshot["table"]["phase"] == "change"
        assert snapshot["table"]["hand"]["commitment"] == hand.commitment
    mine = logged_in(alice).get(f"/tables/{table.pk}/snapshot.json").json()["private"]
    assert len(mine["entry"]["cards"]) == 5
    assert len(mine["entry"]["panel"]["counts"]) == 32
    assert logged_in(carol).get(f"/tables/{table.pk}/snapshot.json").json()["private"]["entry"] is None
    page = logged_in(alice).get(f"/tables/{table.pk}/").content.decode()
    assert hand.server_seed not in page


def test_snapshot_reveals_the_seed_and_the_result_once_the_hand_is_settled(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    deal_hand(table, [alice, bob], now)
    hand = settle(table)
    snapshot = logged_in(alice).get(f"/tables/{table.pk}/snapshot.json").json()
    assert snapshot["table"]["phase"] == "results"
    assert snapshot["table"]["hand"]["server_seed"] == hand.server_seed
    assert len(snapshot["table"]["hand"]["leaderboard"]) == 2
    result = snapshot["private"]["entry"]["result"]
    assert result["place"] in (1, 2)
    assert len(result["draws"]) == 5


def test_snapshot_counts_as_presence(table: Table, alice: User, now: datetime) -> None:
    logged_in(alice).post(f"/tables/{table.pk}/seat/join/")
    seat = Seat.objects.get(table=table, user=alice)
    Seat.objects.filter(pk=seat.pk).update(last_seen_at=now.replace(year=2000))
    logged_in(alice).get(f"/tables/{table.pk}/snapshot.json")
    seat.refresh_from_db()
    assert seat.last_seen_at.year > 2000
