"""The transports reach a game only through the registry (tables/games.py): a third game's
commands, frames and page reach the socket, REST and the table's URL with no change to
tables/commands.py, tables/realtime/ or tables/api/ (issue 21)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from rest_framework.test import APIClient

from tables import games
from tables.commands import Command, InvalidFieldError
from tables.forms import ConditionsForm
from tables.gamespec import NO_STEP, ConditionsSpec, Game, GameAdmin
from tables.models import Table
from tables.realtime.frames import dumps
from tables.realtime.routing import websocket_urlpatterns
from tests.conftest import make_player

router = URLRouter(websocket_urlpatterns)

flipped: list[tuple[int, int, str]] = []
"""What the coin flip's ``flip`` service was called with: (table, player, side)."""


def parse_side(value: object) -> str:
    if value not in ("heads", "tails"):
        raise InvalidFieldError('side is "heads" or "tails"', field="side")
    return str(value)


def flip(*, table_id: int, user_id: int, now: datetime, side: str) -> str:
    flipped.append((table_id, user_id, side))
    return side


def public_frame(table_id: int) -> Mapping[str, Any]:
    return {"type": "coin_state", "table_id": table_id, "flips": len(flipped)}


def private_frame(table_id: int, user_id: int) -> Mapping[str, Any]:
    return {"type": "coin_private", "table_id": table_id, "user_id": user_id}


def page(request: HttpRequest, table_id: int) -> HttpResponse:
    return HttpResponse(f"coin flip table {table_id}")


COIN_FLIP = Game(
    key="coinflip",
    label="Coin flip",
    create=lambda **kwargs: Table.objects.create(game="coinflip", **kwargs),
    conditions=ConditionsSpec(
        fields=(), current=lambda table: {}, validate=lambda values, mode: None, on_change=lambda table, now: None
    ),
    advance=lambda table, now: NO_STEP,
    cancel=lambda table, reason, now: False,
    leave=lambda table_id, user_id, now: None,
    admin=GameAdmin(
        create_form=ConditionsForm,
        create_initial={},
        conditions_form=ConditionsForm,
        running_hand=lambda table: None,
        add_title="Add a coin flip table",
        cancelled="cancelled",
        changed=lambda table, changes: "Recorded.",
    ),
    commands={"flip": Command(frozenset({"side"}), flip, {"side": parse_side}, required=frozenset({"side"}))},
    public_frame=public_frame,
    private_frames=lambda table_id, user_ids: {u: dumps(private_frame(table_id, u)) for u in user_ids},
    private_frame=private_frame,
    page=page,
)


@pytest.fixture
def coin_flip() -> Iterator[Game]:
    flipped.clear()
    with games.registered(COIN_FLIP) as game:
        yield game


def coin_table() -> Table:
    return Table.objects.create(name="Heads or tails", mode="fun", currency="FUN", game="coinflip")


@pytest.mark.django_db(transaction=True)
async def test_a_third_games_actions_and_frames_go_through_the_table_socket(coin_flip: Game) -> None:
    alice = await sync_to_async(make_player)("alice")
    table = await sync_to_async(coin_table)()
    communicator = WebsocketCommunicator(router, f"/ws/tables/{table.pk}/")
    communicator.scope["user"] = alice
    connected, _ = await communicator.connect(timeout=10)
    assert connected
    state = json.loads(await communicator.receive_from(timeout=10))
    assert state == {"type": "coin_state", "table_id": table.pk, "flips": 0}
    assert json.loads(await communicator.receive_from(timeout=10))["type"] == "coin_private"

    await communicator.send_to(text_data=json.dumps({"type": "flip", "side": "heads", "ref": 7}))
    assert json.loads(await communicator.receive_from(timeout=10)) == {"type": "ack", "action": "flip", "ref": 7}
    assert flipped == [(table.pk, alice.pk, "heads")]

    # Another game's action, a field the action does not take, a bad value: the wire's codes.
    for frame, code in [
        ({"type": "hold", "hold": [True, False, False, False, False]}, "unknown_type"),
        ({"type": "flip", "side": "heads", "hold": []}, "unknown_field"),
        ({"type": "flip", "side": "edge"}, "invalid_field"),
        ({"type": "flip"}, "invalid_field"),
    ]:
        await communicator.send_to(text_data=json.dumps(frame))
        answer = json.loads(await communicator.receive_from(timeout=10))
        assert (answer["type"], answer["code"]) == ("error", code), frame
    assert len(flipped) == 1

    await communicator.send_to(text_data=json.dumps({"type": "snapshot"}))
    assert json.loads(await communicator.receive_from(timeout=10))["flips"] == 1
    await communicator.disconnect()


@pytest.mark.django_db
def test_a_third_games_table_url_and_snapshot_are_its_own(coin_flip: Game, alice: User, client: Any) -> None:
    table = coin_table()
    client.force_login(alice)
    assert client.get(f"/tables/{table.pk}/").content == f"coin flip table {table.pk}".encode()
    snapshot = client.get(f"/tables/{table.pk}/snapshot.json").json()
    assert (snapshot["table"]["type"], snapshot["private"]["user_id"]) == ("coin_state", alice.pk)


@pytest.mark.django_db
def test_rest_actions_of_a_third_game_answer_its_private_frame(coin_flip: Game, alice: User) -> None:
    table = coin_table()
    api = APIClient()
    api.force_authenticate(alice)
    # A route of another game's action at this table: refused with the wire's code.
    refused = api.post(f"/api/tables/{table.pk}/holdem/flip/", {"side": "tails"}, format="json")
    assert (refused.status_code, refused.json()["code"]) == (400, "unknown_type")
    joined = api.post(f"/api/tables/{table.pk}/join/", {}, format="json")
    assert (joined.status_code, joined.json()["code"]) == (400, "unknown_type")  # the coin flip has no join
    assert flipped == []
