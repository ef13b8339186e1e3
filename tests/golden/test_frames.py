"""The socket contract: every frame type both games send, captured from real hands played
through the sockets (channels' ``WebsocketCommunicator`` on the project's routes), reduced to
their contract (``tests.golden.golden.shape``: keys, value types, enumerations) and compared
with ``tests/golden/frames/<scenario>.json``. Dealing draws from a seeded stream
(``seed_secrets``), so each run deals the same cards and the same frames.

Regenerate on purpose: ``UPDATE_GOLDEN=1 python -m pytest tests/golden/test_frames.py``."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import transaction
from django.utils import timezone

from tables import games
from tables.clock import advance_table
from tables.models import HoldemHand
from tables.realtime.push import kick_player_on_commit, publish_lobby_line
from tables.widerpoker.services.lifecycle import publish_live_pools
from tables.widerpoker.services.seating import join_table
from tests.conftest import make_player
from tests.golden.golden import assert_golden, by_type, seed_secrets
from tests.helpers import create_fun_table
from tests.tables.holdem_helpers import deal_now, holdem_table
from tests.tables.test_consumers import open_socket, router

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


class Recorder:
    """Every frame a socket received, in order."""

    def __init__(self, communicator: WebsocketCommunicator) -> None:
        self.communicator = communicator
        self.frames: list[dict[str, Any]] = []

    async def until(self, frame_type: str, **fields: Any) -> dict[str, Any]:
        """Record frames up to the next of ``frame_type`` whose ``fields`` match; return it."""
        for _ in range(40):
            frame: dict[str, Any] = json.loads(await self.communicator.receive_from(timeout=10))
            self.frames.append(frame)
            if frame["type"] == frame_type and all(frame.get(k) == v for k, v in fields.items()):
                return frame
        raise AssertionError(f"no {frame_type} frame {fields}")

    async def until_where(self, accepts: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """Record frames up to the next one ``accepts``; return it."""
        for _ in range(40):
            frame: dict[str, Any] = json.loads(await self.communicator.receive_from(timeout=10))
            self.frames.append(frame)
            if accepts(frame):
                return frame
        raise AssertionError("no such frame")

    async def send(self, **frame: Any) -> None:
        await self.communicator.send_to(text_data=json.dumps(frame))


async def test_widerpoker_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    """A WiderPoker hand from the seat to the results, with the acks, a pong, an error, the
    live pool, a kick and a restart of the table after a change of conditions."""
    seed_secrets(monkeypatch)
    alice = await sync_to_async(make_player)("alice")
    bob = await sync_to_async(make_player)("bob")
    staff = await sync_to_async(make_player)("staff")
    table = await sync_to_async(create_fun_table)()
    now = timezone.now()
    for user in (alice, bob):
        await sync_to_async(join_table)(table_id=table.pk, user_id=user.pk, now=now)
    socket = Recorder(await open_socket(alice, table.pk))
    await socket.until("table_state", phase="waiting")
    await socket.until("entry_state")
    await socket.send(type="ping", ref="p1")
    await socket.until("pong")
    await socket.send(type="teleport", ref="e1")
    await socket.until("error", code="unknown_type")
    await socket.send(type="hold", hold="HHHHH", ref="e2")
    await socket.until("error", code="invalid_hold")

    assert await sync_to_async(advance_table)(table_id=table.pk, now=now)
    await socket.until("table_state", phase="change")
    await socket.until("entry_state")
    await socket.send(type="hold", hold=[True, False, True, False, True], ref="h1")
    await socket.until("ack", ref="h1")
    await socket.send(type="buy_draw", ref="d1")
    await socket.until("ack", ref="d1")
    await sync_to_async(publish_live_pools)()
    await socket.until("pool_updated")

    assert await sync_to_async(advance_table)(table_id=table.pk, now=now + timedelta(seconds=31))
    await socket.until("table_state", phase="results")
    await socket.until("entry_state")

    await sync_to_async(games.change_table_config)(
        table_id=table.pk, changes={"ante_minor": 200}, staff_user_id=staff.pk, reason="golden", now=now
    )
    later = now + timedelta(seconds=120)
    await sync_to_async(advance_table)(table_id=table.pk, now=later)
    await socket.until("table_restarted")

    other = Recorder(await open_socket(bob, table.pk))
    await other.until("entry_state")

    def kick() -> None:
        with transaction.atomic():
            kick_player_on_commit(bob.pk, "This account is suspended.")

    await sync_to_async(kick)()
    await other.until("kicked")
    await socket.communicator.disconnect()
    assert_golden("frames/widerpoker.json", by_type(socket.frames + other.frames))


def settled_state(frame: dict[str, Any]) -> bool:
    """Whether ``frame`` is a Hold'em table's public state with its hand's result."""
    return frame["type"] == "holdem_state" and bool((frame["hand"] or {}).get("result"))


async def test_holdem_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Hold'em hand through the sockets: two joins (acks), a refused action out of turn, a
    raise, a call, then folds to the settlement; the public and private frames of each step."""
    from tables.holdem.records import replay

    seed_secrets(monkeypatch)
    alice = await sync_to_async(make_player)("alice")
    bob = await sync_to_async(make_player)("bob")
    table = await sync_to_async(holdem_table)()
    sockets = {
        2: (alice, Recorder(await open_socket(alice, table.pk))),
        5: (bob, Recorder(await open_socket(bob, table.pk))),
    }
    for position, (_, socket) in sockets.items():
        await socket.until("holdem_private")
        await socket.send(type="join", seat=position, buy_in_minor=600, ref=f"j{position}")
        await socket.until("ack", ref=f"j{position}")
        await socket.send(type="hold", hold=[True] * 5, ref="bad")
        await socket.until("error", code="unknown_type")

    assert await sync_to_async(deal_now)(table, timezone.now())
    hand = await sync_to_async(HoldemHand.objects.get)(table=table)
    for step, kind in enumerate(["raise", "call", "fold"]):
        state = await sync_to_async(replay)(hand)
        if state.is_over:
            break
        actor = state.to_act
        assert actor is not None
        waiting = next(position for position in sockets if position != actor)
        await sockets[waiting][1].send(type="call", ref=f"w{step}")
        await sockets[waiting][1].until("error", code="not_your_turn")
        fields: dict[str, Any] = {"amount": 40} if kind == "raise" else {}
        await sockets[actor][1].send(type=kind, ref=f"a{step}", **fields)
        await sockets[actor][1].until("ack", ref=f"a{step}")
        await sync_to_async(hand.refresh_from_db)()
    settled = await sync_to_async(lambda: HoldemHand.objects.get(pk=hand.pk).status)()
    assert settled == "settled"
    frames: list[dict[str, Any]] = []
    for _, socket in sockets.values():
        if not any(settled_state(frame) for frame in socket.frames):
            await socket.until_where(settled_state)
        frames += socket.frames
        await socket.communicator.disconnect()
    assert_golden("frames/holdem.json", by_type(frames))


async def test_lobby_frames() -> None:
    """The lobby socket: a WiderPoker and a Hold'em table's lobby lines, and the refusal of
    anything sent to it."""
    widerpoker = await sync_to_async(create_fun_table)()
    holdem = await sync_to_async(holdem_table)()
    communicator = WebsocketCommunicator(router, "/ws/lobby/")
    connected, _ = await communicator.connect(timeout=10)
    assert connected
    lobby = Recorder(communicator)
    await sync_to_async(publish_lobby_line)(widerpoker.pk)
    await lobby.until("lobby_table")
    await sync_to_async(publish_lobby_line)(holdem.pk)
    await lobby.until("lobby_table")
    await lobby.send(type="ping")
    await lobby.until("error", code="read_only")
    await communicator.disconnect()
    lines = {frame["table"]["id"]: frame for frame in lobby.frames if frame["type"] == "lobby_table"}
    assert set(lines) == {widerpoker.pk, holdem.pk}
    assert_golden(
        "frames/lobby.json",
        {
            "widerpoker": by_type([lines[widerpoker.pk]]),
            "holdem": by_type([lines[holdem.pk]]),
            "refusal": by_type(frame for frame in lobby.frames if frame["type"] == "error"),
        },
    )
