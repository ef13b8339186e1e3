"""Hold'em over the one way in: socket frames and REST bodies are parsed and executed by
tables/commands.py; hole cards reach only their owner's sockets; errors carry stable codes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.utils import timezone

from tables.engine.cards import card_code
from tables.holdem.records import replay
from tables.models import HoldemHand, Seat
from tests.conftest import make_player
from tests.helpers import create_fun_table, logged_in
from tests.tables.holdem_helpers import assert_books, deal_now, holdem_table
from tests.tables.test_consumers import open_socket, receive


@pytest.mark.django_db
def test_rest_join_bet_and_error_codes(alice: User, bob: User) -> None:
    table = holdem_table()
    a, b = logged_in(alice), logged_in(bob)
    url = f"/api/tables/{table.pk}/holdem"
    bad = a.post(f"{url}/join/", {"seat": 0}, content_type="application/json")
    assert bad.status_code == 400 and bad.json()["code"] == "invalid_field"  # buy-in missing
    extra = a.post(f"{url}/join/", {"seat": 0, "buy_in_minor": 500, "x": 1}, content_type="application/json")
    assert extra.json()["code"] == "unknown_field"
    joined = a.post(f"{url}/join/", {"seat": 0, "buy_in_minor": 500}, content_type="application/json")
    assert joined.status_code == 200, joined.json()
    assert joined.json()["type"] == "holdem_private" and joined.json()["seat"] == 0
    taken = b.post(f"{url}/join/", {"seat": 0, "buy_in_minor": 500}, content_type="application/json")
    assert taken.status_code == 409 and taken.json()["code"] == "seat_taken"
    assert b.post(f"{url}/join/", {"seat": 1, "buy_in_minor": 500}, content_type="application/json").status_code == 200
    assert deal_now(table, timezone.now())
    state = replay(HoldemHand.objects.get(table=table))
    actor, other = (a, b) if state.to_act == 0 else (b, a)
    refused = other.post(f"{url}/call/", {}, content_type="application/json")
    assert refused.status_code == 409 and refused.json()["code"] == "not_your_turn"
    small = actor.post(f"{url}/raise/", {"amount": 11}, content_type="application/json")
    assert small.json()["code"] == "amount_too_small"
    assert actor.post(f"{url}/raise/", {"amount": True}, content_type="application/json").json()["code"] == (
        "invalid_field"
    )
    raised = actor.post(f"{url}/raise/", {"amount": 40}, content_type="application/json")
    assert raised.status_code == 200 and raised.json()["legal"] is None
    assert actor.post(f"{url}/hold/", {}, content_type="application/json").json()["code"] == "unknown_type"
    wider = create_fun_table()
    assert a.post(f"/api/tables/{wider.pk}/holdem/fold/", {}, content_type="application/json").status_code == 400
    assert_books(table)


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_socket_play_and_the_secret_rule() -> None:
    alice = await sync_to_async(make_player)("alice")
    bob = await sync_to_async(make_player)("bob")
    table = await sync_to_async(holdem_table)()
    a = await open_socket(alice, table.pk)
    b = await open_socket(bob, table.pk)
    first = await receive(a, "holdem_state")
    assert first["seats"] == [] and (await receive(a, "holdem_private"))["seat"] is None
    await receive(b, "holdem_private")
    await a.send_to(text_data=json.dumps({"type": "join", "seat": 2, "buy_in_minor": 600, "ref": 1}))
    assert (await receive(a, "ack"))["ref"] == 1
    await b.send_to(text_data=json.dumps({"type": "join", "seat": 5, "buy_in_minor": 600, "ref": 2}))
    assert (await receive(b, "ack"))["ref"] == 2
    await b.send_to(text_data=json.dumps({"type": "hold", "hold": [True] * 5}))
    assert (await receive(b, "error"))["code"] == "unknown_type"
    assert await sync_to_async(deal_now)(table, timezone.now())
    hand = await sync_to_async(HoldemHand.objects.get)(table=table)
    state = await sync_to_async(replay)(hand)
    alice_cards = [card_code(c) for c in state.holes[state.seats.index(2)]]
    bob_cards = [card_code(c) for c in state.holes[state.seats.index(5)]]
    frames: list[dict[str, Any]] = []
    for _ in range(12):  # until bob's own cards and the dealt hand arrive (a timeout would cancel the socket)
        frames.append(json.loads(await b.receive_from(timeout=10)))
        dealt = any(f["type"] == "holdem_state" and f["hand"] for f in frames)
        if dealt and any(f["type"] == "holdem_private" and f["hole"] for f in frames):
            break
    texts = json.dumps(frames)
    assert any(f["type"] == "holdem_state" and f["hand"] for f in frames)
    assert any(f["type"] == "holdem_private" and f["hole"] == bob_cards for f in frames)
    assert not any(f'"{code}"' in texts for code in alice_cards)
    assert hand.server_seed not in texts
    seated = await sync_to_async(Seat.objects.filter(table=table, position__isnull=False).count)()
    assert seated == 2
    await a.disconnect()
    await b.disconnect()
