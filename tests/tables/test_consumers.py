"""The table WebSocket: authentication, origin, snapshots, pushes, reconnects and bad frames."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from tables.clock import advance_table
from tables.realtime.routing import websocket_urlpatterns
from tables.services.presence import is_connected
from tables.widerpoker.services.create import create_table
from tables.widerpoker.services.seating import join_table, sit_out
from tests.conftest import make_player
from tests.helpers import create_fun_table

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]
router = URLRouter(websocket_urlpatterns)


async def open_socket(user: Any, table_id: int) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(router, f"/ws/tables/{table_id}/")
    communicator.scope["user"] = user
    connected, _ = await communicator.connect(timeout=10)
    assert connected
    return communicator


async def receive(communicator: WebsocketCommunicator, frame_type: str, timeout: float = 10) -> dict[str, Any]:
    """The next frame of ``frame_type`` (earlier frames of other types are skipped)."""
    for _ in range(20):
        frame: dict[str, Any] = json.loads(await communicator.receive_from(timeout=timeout))
        if frame["type"] == frame_type:
            return frame
    raise AssertionError(f"no {frame_type} frame")


async def test_anonymous_socket_is_refused() -> None:
    table = await sync_to_async(create_fun_table)()
    communicator = WebsocketCommunicator(router, f"/ws/tables/{table.pk}/")
    communicator.scope["user"] = AnonymousUser()
    connected, code = await communicator.connect(timeout=10)
    assert not connected
    assert code == 4401


async def test_socket_from_a_foreign_origin_is_refused() -> None:
    from config.asgi import application

    table = await sync_to_async(create_fun_table)()
    communicator = WebsocketCommunicator(
        application, f"/ws/tables/{table.pk}/", headers=[(b"origin", b"https://evil.example")]
    )
    connected, _ = await communicator.connect(timeout=10)
    assert not connected


async def test_connecting_sends_the_public_and_private_state() -> None:
    alice = await sync_to_async(make_player)("alice")
    table = await sync_to_async(create_fun_table)()
    communicator = await open_socket(alice, table.pk)
    state = json.loads(await communicator.receive_from(timeout=10))
    private = json.loads(await communicator.receive_from(timeout=10))
    assert (state["type"], state["table_id"], state["phase"]) == ("table_state", table.pk, "waiting")
    assert (private["type"], private["seat"], private["balance_minor"]) == ("entry_state", None, 100_000)
    await communicator.disconnect()


async def test_bad_frames_get_error_frames_with_stable_codes() -> None:
    alice = await sync_to_async(make_player)("alice")
    table = await sync_to_async(create_fun_table)()
    communicator = await open_socket(alice, table.pk)
    await receive(communicator, "entry_state")
    cases = [
        ("{not json", "bad_json"),
        ("[1, 2]", "bad_message"),
        (json.dumps({"type": "teleport"}), "unknown_type"),
        (json.dumps({"type": "hold", "hold": "HHHHH"}), "invalid_hold"),
        (json.dumps({"type": "hold", "hold": [True, False]}), "invalid_hold"),
        (json.dumps({"type": "buy_draw", "ref": 7}), "phase_closed"),
        (json.dumps({"type": "ping", "pad": "x" * 3000}), "too_large"),
    ]
    for text, code in cases:
        await communicator.send_to(text_data=text)
        error = await receive(communicator, "error")
        assert error["code"] == code, text
    await communicator.disconnect()


async def test_a_flood_of_frames_is_rate_limited_then_disconnected() -> None:
    alice = await sync_to_async(make_player)("alice")
    table = await sync_to_async(create_fun_table)()
    communicator = await open_socket(alice, table.pk)
    await receive(communicator, "entry_state")
    for _ in range(30):
        await communicator.send_to(text_data=json.dumps({"type": "teleport"}))
    codes = [json.loads(await communicator.receive_from(timeout=10))["code"] for _ in range(30)]
    assert "rate_limited" in codes
    assert codes.count("unknown_type") <= 25  # the burst, plus what refilled meanwhile
    for _ in range(40):
        await communicator.send_to(text_data=json.dumps({"type": "teleport"}))
    closed = None
    for _ in range(60):
        message = await communicator.receive_output(timeout=2)
        if message["type"] == "websocket.close":
            closed = message
            break
    assert closed is not None
    assert closed["code"] == 4429


async def test_a_dealt_hand_reaches_the_socket_without_its_secrets() -> None:
    alice = await sync_to_async(make_player)("alice")
    bob = await sync_to_async(make_player)("bob")
    table = await sync_to_async(create_fun_table)()
    now = timezone.now()
    for user in (alice, bob):
        await sync_to_async(join_table)(table_id=table.pk, user_id=user.pk, now=now)
    communicator = await open_socket(alice, table.pk)
    first = await receive(communicator, "table_state")
    await receive(communicator, "entry_state")

    assert await sync_to_async(advance_table)(table_id=table.pk, now=now)
    state = await receive(communicator, "table_state")
    private = await receive(communicator, "entry_state")
    assert state["version"] > first["version"]
    assert state["phase"] == "change"
    assert "server_seed" not in json.dumps(state)
    assert "change_keys" not in json.dumps(state)
    assert private["entry"]["cards"] and len(private["entry"]["cards"]) == 5
    assert private["entry"]["panel"] is not None
    assert "key" not in json.dumps(private["entry"]["panel"])
    await communicator.disconnect()


async def test_reconnecting_restores_the_choices_already_sent() -> None:
    alice = await sync_to_async(make_player)("alice")
    bob = await sync_to_async(make_player)("bob")
    table = await sync_to_async(create_fun_table)()
    now = timezone.now()
    for user in (alice, bob):
        await sync_to_async(join_table)(table_id=table.pk, user_id=user.pk, now=now)
    await sync_to_async(advance_table)(table_id=table.pk, now=now)

    communicator = await open_socket(alice, table.pk)
    await receive(communicator, "entry_state")
    await communicator.send_to(
        text_data=json.dumps({"type": "hold", "hold": [True, False, True, False, True], "ref": "h1"})
    )
    ack = await receive(communicator, "ack")
    assert ack["ref"] == "h1"
    await communicator.send_to(text_data=json.dumps({"type": "buy_draw"}))
    await receive(communicator, "ack")
    await communicator.disconnect()

    again = await open_socket(alice, table.pk)
    private = await receive(again, "entry_state")
    assert private["entry"]["hold"] == [True, False, True, False, True]
    assert private["entry"]["draws_bought"] == 2
    await again.disconnect()


async def test_settlement_pushes_each_player_their_result() -> None:
    alice = await sync_to_async(make_player)("alice")
    bob = await sync_to_async(make_player)("bob")
    table = await sync_to_async(create_fun_table)()
    now = timezone.now()
    for user in (alice, bob):
        await sync_to_async(join_table)(table_id=table.pk, user_id=user.pk, now=now)
    await sync_to_async(advance_table)(table_id=table.pk, now=now)
    communicator = await open_socket(bob, table.pk)
    await receive(communicator, "entry_state")

    await sync_to_async(advance_table)(table_id=table.pk, now=now + timedelta(seconds=31))
    state = await receive(communicator, "table_state")
    private = await receive(communicator, "entry_state")
    assert state["phase"] == "results"
    assert len(state["hand"]["server_seed"]) == 64
    assert len(state["hand"]["leaderboard"]) == 2
    result = private["entry"]["result"]
    assert [draw["bought"] for draw in result["draws"]] == [True, False, False, False, False]
    assert result["place"] in (1, 2)
    await communicator.disconnect()


async def test_socket_presence_counts_open_sockets() -> None:
    from tables.models import Seat

    alice = await sync_to_async(make_player)("alice")
    table = await sync_to_async(create_fun_table)()
    await sync_to_async(join_table)(table_id=table.pk, user_id=alice.pk, now=timezone.now())
    first = await open_socket(alice, table.pk)
    second = await open_socket(alice, table.pk)
    seat = await sync_to_async(Seat.objects.get)(table=table, user=alice)
    assert seat.ws_connections == 2
    await first.disconnect()
    await second.disconnect()
    seat = await sync_to_async(Seat.objects.get)(table=table, user=alice)
    assert seat.ws_connections == 0


async def test_socket_counts_stay_exact_whatever_order_pages_open_and_close_in() -> None:
    """A page opened before its player sat down, then a reload whose old socket closes
    after the new one opened: the seat still counts exactly one open socket."""
    from tables.models import Seat

    alice = await sync_to_async(make_player)("alice")
    table = await sync_to_async(create_fun_table)("Socket Rail")
    first = await open_socket(alice, table.pk)  # not seated yet: not counted
    await receive(first, "entry_state")
    await first.send_to(text_data=json.dumps({"type": "join"}))
    await receive(first, "ack")
    second = await open_socket(alice, table.pk)  # the reloaded page
    await first.disconnect()  # the old page's close arrives after the new page opened
    seat = await sync_to_async(Seat.objects.get)(table=table, user=alice)
    assert seat.ws_connections == 1
    assert await sync_to_async(is_connected)(seat, now=timezone.now())
    await second.disconnect()
    seat = await sync_to_async(Seat.objects.get)(table=table, user=alice)
    assert seat.ws_connections == 0
    after_grace = timezone.now() + timedelta(seconds=settings.PRESENCE_RECONNECT_GRACE_SECONDS + 1)
    assert not await sync_to_async(is_connected)(seat, now=after_grace)


async def test_a_deposit_while_seated_refreshes_the_balance_on_the_game_screen() -> None:
    from tests.helpers import logged_in
    from wallet.models import Account

    alice = await sync_to_async(make_player)("alice")
    croupier = await sync_to_async(make_player)("croupier")
    croupier.is_staff = croupier.is_superuser = True
    await sync_to_async(croupier.save)()
    table = await sync_to_async(create_table)(
        name="Euro", mode="cash", currency="EUR", ante_minor=100, redeal_price_minor=80, change_seconds=30
    )
    from wallet import services as wallet_services

    await sync_to_async(wallet_services.deposit_cash)(  # the ante: a cash table seats no empty wallet
        user_id=alice.pk, currency="EUR", amount_minor=100, reason="first deposit", staff_user_id=croupier.pk
    )
    await sync_to_async(join_table)(table_id=table.pk, user_id=alice.pk, now=timezone.now())
    communicator = await open_socket(alice, table.pk)
    assert (await receive(communicator, "entry_state"))["balance_minor"] == 100
    account = await sync_to_async(Account.objects.get)(key=f"player:{alice.pk}:EUR")

    def deposit() -> None:
        client = logged_in(croupier)
        page = client.get(f"/admin/wallet/account/{account.pk}/cash/")
        token = page.context["form"]["token"].value()
        client.post(
            f"/admin/wallet/account/{account.pk}/cash/",
            {"direction": "deposit", "amount": "12.50", "reason": "cash at the desk", "token": token},
        )

    await sync_to_async(deposit)()
    assert (await receive(communicator, "entry_state"))["balance_minor"] == 1_350
    await communicator.disconnect()


async def drain(communicator: WebsocketCommunicator, quiet: float = 0.5) -> list[dict[str, Any]]:
    """Every frame that arrives until none has come for ``quiet`` seconds."""
    frames: list[dict[str, Any]] = []
    while not await communicator.receive_nothing(timeout=quiet):
        frames.append(json.loads(await communicator.receive_from(timeout=10)))
    return frames


async def test_an_action_is_answered_once_and_its_private_state_sent_once() -> None:
    """The issue found each action's private state sent twice (the consumer's own answer
    and the service's push); now the ack answers and the push is the one private state,
    reaching every socket of the player at that table and no other player's."""
    alice = await sync_to_async(make_player)("alice")
    bob = await sync_to_async(make_player)("bob")
    table = await sync_to_async(create_fun_table)()
    now = timezone.now()
    for user in (alice, bob):
        await sync_to_async(join_table)(table_id=table.pk, user_id=user.pk, now=now)
    await sync_to_async(advance_table)(table_id=table.pk, now=now)
    phone = await open_socket(alice, table.pk)
    laptop = await open_socket(alice, table.pk)
    other = await open_socket(bob, table.pk)
    for socket in (phone, laptop, other):
        await drain(socket)

    await phone.send_to(text_data=json.dumps({"type": "hold", "hold": [True, True, False, False, True], "ref": 7}))
    answered = await drain(phone)
    mirrored = await drain(laptop)
    assert [frame["type"] for frame in answered].count("ack") == 1
    assert [frame["type"] for frame in answered].count("entry_state") == 1
    assert [frame["type"] for frame in mirrored] == ["entry_state"]
    assert mirrored[0]["entry"]["hold"] == [True, True, False, False, True]
    assert await drain(other) == []
    for socket in (phone, laptop, other):
        await socket.disconnect()


async def test_a_player_can_be_disconnected_from_every_table_socket() -> None:
    """``kick_player_on_commit`` (a suspended account) tells that player's sockets why and
    closes them with 4403, and nobody else's."""
    from django.db import transaction

    from tables.realtime.push import kick_player_on_commit

    alice = await sync_to_async(make_player)("alice")
    bob = await sync_to_async(make_player)("bob")
    table = await sync_to_async(create_fun_table)()
    mine = await open_socket(alice, table.pk)
    theirs = await open_socket(bob, table.pk)
    for socket in (mine, theirs):
        await drain(socket)

    def suspend() -> None:
        with transaction.atomic():
            kick_player_on_commit(alice.pk, "suspended")

    await sync_to_async(suspend)()
    assert json.loads(await mine.receive_from(timeout=5)) == {"type": "kicked", "reason": "suspended"}
    assert await mine.receive_output(timeout=5) == {"type": "websocket.close", "code": 4403}
    await theirs.send_to(text_data=json.dumps({"type": "ping"}))
    assert (await receive(theirs, "pong"))["type"] == "pong"
    await theirs.disconnect()


@pytest.mark.parametrize("action", ["join", "sit_out", "sit_in", "leave"])
async def test_every_seat_action_pushes_the_new_seat_to_the_player(action: str) -> None:
    """Each accepted action is followed by exactly one private state showing its effect."""
    alice = await sync_to_async(make_player)("alice")
    table = await sync_to_async(create_fun_table)()
    if action != "join":
        await sync_to_async(join_table)(table_id=table.pk, user_id=alice.pk, now=timezone.now())
    if action == "sit_in":
        await sync_to_async(sit_out)(table_id=table.pk, user_id=alice.pk, now=timezone.now())
    socket = await open_socket(alice, table.pk)
    await drain(socket)
    await socket.send_to(text_data=json.dumps({"type": action}))
    frames = await drain(socket)
    privates = [frame for frame in frames if frame["type"] == "entry_state"]
    assert len(privates) == 1
    expected = {"join": "active", "sit_out": "sitting_out", "sit_in": "active", "leave": "left"}[action]
    assert privates[0]["seat"]["status"] == expected
    await socket.disconnect()
