"""A third game through the house (issue 21): a coin flip that touches only its own package
(tests/tables/coinflip) is registered in the registry of games, opened by a croupier on the
admin's add page, played through the registry's command door, a game socket and the house's
clock, and its players taken away by the house's ``remove_from_tables``: no shared module
names it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.utils import timezone

from config.infra.jsonwire import UnknownFieldError
from tables import clock, games
from tables.commands import InvalidFieldError, UnknownActionError
from tables.models import Seat, SeatStatus, Table, TableConfigChange, TablePhase
from tables.realtime.routing import websocket_urlpatterns
from tests.conftest import make_player
from tests.helpers import logged_in
from tests.tables.coinflip import game as coinflip


@pytest.fixture
def registered() -> Iterator[games.Game]:
    coinflip.STATE.clear()
    with games.registered(coinflip.GAME) as game:
        yield game
    coinflip.STATE.clear()


@pytest.mark.django_db(transaction=True)
def test_a_coin_flip_is_opened_played_on_the_clock_and_left(
    registered: games.Game, croupier: User, django_user_model: type[User]
) -> None:
    client = logged_in(croupier)
    assert client.get("/admin/tables/table/add-coinflip/").status_code == 200
    answer = client.post(
        "/admin/tables/table/add-coinflip/",
        {"name": "Heads Rail", "mode": "fun", "currency": "FUN", "reason": "a third game"},
    )
    assert answer.status_code == 302
    table = Table.objects.get(name="Heads Rail")
    assert table.game == "coinflip" and games.game_of(table.pk) is registered
    assert TableConfigChange.objects.filter(table=table, field="created", changed_by=croupier).exists()

    alice = django_user_model.objects.create_user("flip-alice", password="x")
    bob = django_user_model.objects.create_user("flip-bob", password="x")
    now = timezone.now()
    for user, side in ((alice, "heads"), (bob, "tails")):
        games.run_command(table_id=table.pk, user_id=user.pk, name="call", fields={"side": side}, now=now)
    with pytest.raises(UnknownActionError):
        games.run_command(table_id=table.pk, user_id=alice.pk, name="hold", fields={}, now=now)
    with pytest.raises(UnknownFieldError):
        games.run_command(table_id=table.pk, user_id=alice.pk, name="call", fields={"hold": 1}, now=now)
    with pytest.raises(InvalidFieldError):
        games.run_command(table_id=table.pk, user_id=alice.pk, name="call", fields={"side": "edge"}, now=now)
    assert registered.private_frame(table.pk, alice.pk)["call"] == "heads"

    assert clock.advance_due_tables(now=now) == 0  # the round runs ROUND_SECONDS
    deadline = now + timedelta(seconds=coinflip.ROUND_SECONDS)
    assert clock.advance_due_tables(now=deadline) == 1
    table.refresh_from_db()
    assert (table.phase, table.hands_dealt) == (TablePhase.RESULTS, 1)
    side = coinflip.flip(table.pk, 1)
    winner = alice if side == "heads" else bob
    state = coinflip.rounds(table.pk)
    assert state.flips == [{"round": 1, "side": side, "winners": [winner.pk]}]
    assert [frame["version"] for frame in state.published] == [table.version]  # one step, one frame
    assert registered.public_frame(table.pk)["flips"][0]["side"] == side

    assert clock.advance_due_tables(now=deadline + timedelta(seconds=coinflip.RESULTS_SECONDS)) == 1
    table.refresh_from_db()
    assert table.phase == TablePhase.WAITING and table.phase_deadline is None

    assert clock.remove_from_tables(user_id=bob.pk, reason="suspended", now=deadline) == [table.pk]
    assert Seat.objects.get(table=table, user=bob).status == SeatStatus.LEFT


@pytest.mark.django_db
def test_an_unknown_game_has_no_add_page(croupier: User) -> None:
    assert logged_in(croupier).get("/admin/tables/table/add-coinflip/").status_code == 404


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_coin_flip_is_played_through_a_socket_and_the_clock(registered: games.Game) -> None:
    alice = await sync_to_async(make_player)("flip-socket")
    table = await sync_to_async(registered.create)(name="Socket Rail", mode="fun", currency="FUN")
    socket = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/tables/{table.pk}/")
    socket.scope["user"] = alice
    connected, _ = await socket.connect(timeout=10)
    assert connected
    public = json.loads(await socket.receive_from(timeout=10))
    private = json.loads(await socket.receive_from(timeout=10))
    assert (public["type"], public["phase"], private["call"]) == ("coinflip_state", "waiting", None)

    await socket.send_to(text_data=json.dumps({"type": "call", "side": "tails", "ref": 7}))
    frames = [json.loads(await socket.receive_from(timeout=10))]
    while not await socket.receive_nothing(timeout=0.5):
        frames.append(json.loads(await socket.receive_from(timeout=10)))
    assert {"type": "ack", "ref": 7}.items() <= frames[0].items()
    await socket.send_to(text_data=json.dumps({"type": "hold", "hold": [True] * 5, "ref": 8}))
    refused = json.loads(await socket.receive_from(timeout=10))
    assert (refused["type"], refused["code"]) == ("error", "unknown_type")  # WiderPoker's, not this game's

    deadline = timezone.now() + timedelta(seconds=coinflip.ROUND_SECONDS)
    assert await sync_to_async(clock.advance_due_tables)(now=deadline) == 1
    frames = [json.loads(await socket.receive_from(timeout=10))]
    while not await socket.receive_nothing(timeout=0.5):
        frames.append(json.loads(await socket.receive_from(timeout=10)))
    side = coinflip.flip(table.pk, 1)
    [state] = [frame for frame in frames if frame["type"] == "coinflip_state"]
    assert state["flips"] == [{"round": 1, "side": side, "winners": [alice.pk] if side == "tails" else []}]
    assert any(frame["type"] == "coinflip_private" for frame in frames)  # his own frame, refreshed
    await socket.disconnect()
