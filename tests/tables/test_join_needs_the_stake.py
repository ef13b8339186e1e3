"""A cash table refuses a player whose wallet cannot pay the ante (UX audit 2026-11-26, N8):
before, a player with 0.00 EUR was seated, then silently sat out at the next deal while his
opponent read "waiting for players". Now join (and sit in) answer ``insufficient_funds`` with
the amount needed and the wallet's address, through the socket and REST, and seat nobody."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone

from tables.models import Seat, SeatStatus, Table
from tables.widerpoker.services.create import create_table
from tables.widerpoker.services.seating import join_table, sit_out
from tests.conftest import make_player
from tests.helpers import logged_in
from tests.tables.test_consumers import open_socket, receive
from wallet import services as wallet_services

pytestmark = pytest.mark.django_db(transaction=True)


def euro_table() -> Table:
    return create_table(
        name="Euro Classic", mode="cash", currency="EUR", ante_minor=100, redeal_price_minor=80, change_seconds=30
    )


@pytest.mark.asyncio
async def test_joining_a_cash_table_with_an_empty_wallet_is_refused_by_the_socket_with_the_amount() -> None:
    alice = await sync_to_async(make_player)("alice")
    table = await sync_to_async(euro_table)()
    communicator = await open_socket(alice, table.pk)
    await receive(communicator, "entry_state")
    await communicator.send_to(text_data=json.dumps({"type": "join", "ref": 1}))
    error = await receive(communicator, "error")
    assert (error["code"], error["ref"]) == ("insufficient_funds", 1)
    assert error["extra"]["needed_minor"] == 100 and error["extra"]["balance_minor"] == 0
    assert error["extra"]["currency"] == "EUR" and error["extra"]["wallet_url"] == reverse("wallet")
    assert "1.00 EUR" in error["message"] and "0.00 EUR" in error["message"]
    assert not await sync_to_async(Seat.objects.filter(table=table, user=alice).exists)()
    await communicator.disconnect()


def test_the_rest_join_is_refused_in_italian_with_the_amounts_then_accepted_after_a_deposit(
    alice: User, croupier: User
) -> None:
    table = euro_table()
    client = logged_in(alice)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "it"
    refused = client.post(f"/api/tables/{table.pk}/join/")
    assert refused.status_code == 409
    body = refused.json()
    assert body["code"] == "insufficient_funds" and body["extra"]["needed_minor"] == 100
    assert "1,00 €" in body["message"] and "0,00 €" in body["message"]
    assert not Seat.objects.filter(table=table, user=alice).exists()
    wallet_services.deposit_cash(
        user_id=alice.pk, currency="EUR", amount_minor=100, reason="cash at the desk", staff_user_id=croupier.pk
    )
    assert client.post(f"/api/tables/{table.pk}/join/").status_code == 200
    assert Seat.objects.get(table=table, user=alice).status == SeatStatus.ACTIVE


def test_sitting_in_without_the_ante_is_refused_and_the_seat_stays_out(alice: User, croupier: User) -> None:
    table = euro_table()
    now: datetime = timezone.now()
    wallet_services.deposit_cash(
        user_id=alice.pk, currency="EUR", amount_minor=150, reason="cash at the desk", staff_user_id=croupier.pk
    )
    join_table(table_id=table.pk, user_id=alice.pk, now=now)
    sit_out(table_id=table.pk, user_id=alice.pk, now=now)
    wallet_services.withdraw_cash(
        user_id=alice.pk, currency="EUR", amount_minor=150, reason="cash paid out", staff_user_id=croupier.pk
    )
    response = logged_in(alice).post(f"/api/tables/{table.pk}/sit-in/")
    assert (response.status_code, response.json()["code"]) == (409, "insufficient_funds")
    assert Seat.objects.get(table=table, user=alice).status == SeatStatus.SITTING_OUT
