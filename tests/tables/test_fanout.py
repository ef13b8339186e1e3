"""A change frame's fan-out through real game sockets (issue 23, item 4): every socket of
the table gets the public frame once, the same bytes as published, and its own private
state once, the same bytes the batched builder renders (the frames are a public contract:
docs/protocol.md)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.utils import timezone

from tables import selectors
from tables.clock import advance_table
from tables.realtime import bus
from tables.realtime.routing import websocket_urlpatterns
from tables.widerpoker import selectors as widerpoker_selectors
from tables.widerpoker.services.seating import join_table
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


async def drain(communicator: WebsocketCommunicator, quiet: float = 0.5) -> list[str]:
    """Every text frame (raw) that arrives until none has come for ``quiet`` seconds."""
    frames: list[str] = []
    while not await communicator.receive_nothing(timeout=quiet):
        frames.append(await communicator.receive_from(timeout=10))
    return frames


@pytest.mark.parametrize("private_slice", [None, 2])
async def test_the_change_frame_reaches_every_socket_once_with_the_published_bytes(
    monkeypatch: pytest.MonkeyPatch, private_slice: int | None
) -> None:
    """Also with the private states read and written two players at a time (as 100 are at
    scale: tables/realtime/refresh.py, ``PRIVATE_SLICE``)."""
    from tables.realtime import refresh

    if private_slice is not None:
        monkeypatch.setattr(refresh, "PRIVATE_SLICE", private_slice)
    players = [await sync_to_async(make_player)(f"p{i}") for i in range(4)]
    watcher = await sync_to_async(make_player)("watcher")  # not seated: public frame only
    table = await sync_to_async(create_fun_table)()
    now = timezone.now()
    for user in players:
        await sync_to_async(join_table)(table_id=table.pk, user_id=user.pk, now=now)
    # Two sockets of the first player (phone and laptop), one of each other, the watcher's.
    owners = [players[0], *players, watcher]
    sockets = [await open_socket(user, table.pk) for user in owners]
    for socket in sockets:
        await drain(socket)

    published: list[tuple[int, str | None, bool]] = []
    original = bus.publish_table_frame

    def record(table_id: int, text: str | None, *, refresh_private: bool = False) -> None:
        published.append((table_id, text, refresh_private))
        original(table_id, text, refresh_private=refresh_private)

    monkeypatch.setattr(bus, "publish_table_frame", record)
    assert await sync_to_async(advance_table)(table_id=table.pk, now=now)
    received = [await drain(socket) for socket in sockets]

    [(table_id, text, refresh_private)] = [p for p in published if p[1] and '"phase":"change"' in p[1]]
    assert table_id == table.pk and refresh_private and text is not None
    frame = json.loads(text)
    assert frame["type"] == "table_state" and frame["phase"] == "change"
    # A fresh build of the public frame at the published frame's clock gives the same bytes.
    fresh = await sync_to_async(selectors.get_public_state)(table_id=table.pk)
    assert {**fresh, "server_time": frame["server_time"]} == frame
    user_ids = {user.pk for user in owners}
    expected_private = await sync_to_async(widerpoker_selectors.render_entry_states)(
        table_id=table.pk, user_ids=user_ids
    )
    for owner, frames in zip(owners, received, strict=True):
        public = [f for f in frames if json.loads(f)["type"] == "table_state"]
        private = [f for f in frames if json.loads(f)["type"] == "entry_state"]
        assert public == [text]  # once, byte for byte what was published
        assert len(private) == 1 and frames.index(private[0]) > frames.index(text)  # after the public frame
        mine = json.loads(private[0])
        assert mine == json.loads(expected_private[owner.pk])
        if owner is watcher:
            assert mine["entry"] is None
        else:
            assert len(mine["entry"]["cards"]) == 5
    # The same player's two sockets got the same private state; other players their own.
    assert received[0] == received[1]
    cards = [json.loads(next(f for f in r if '"entry_state"' in f))["entry"]["cards"] for r in received[1:5]]
    assert len({json.dumps(c) for c in cards}) == 4
    for socket in sockets:
        await socket.disconnect()


async def test_a_connect_storm_gets_each_socket_its_frames_from_shared_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sockets of one table connecting together each get the public frame, then their own
    private state, the bytes the batched builder renders; the private states come from
    fewer reads than sockets (one read for the connects waiting: 10,000 players connecting
    took 315 s with one read each, docs/benchmarks.md)."""
    from tables.realtime import hub as hub_module

    players = [await sync_to_async(make_player)(f"s{i}") for i in range(6)]
    table = await sync_to_async(create_fun_table)()
    now = timezone.now()
    for user in players:
        await sync_to_async(join_table)(table_id=table.pk, user_id=user.pk, now=now)
    assert await sync_to_async(advance_table)(table_id=table.pk, now=now)  # dealt: private cards to send
    reads: list[set[int]] = []
    original = hub_module.render_private_frames

    def counted(table_id: int, user_ids: set[int]) -> dict[int, str]:
        reads.append(set(user_ids))
        return original(table_id, user_ids)

    monkeypatch.setattr(hub_module, "render_private_frames", counted)
    sockets = await asyncio.gather(*(open_socket(user, table.pk) for user in players))
    received = [await drain(socket) for socket in sockets]

    expected = await sync_to_async(widerpoker_selectors.render_entry_states)(
        table_id=table.pk, user_ids={user.pk for user in players}
    )
    for user, frames in zip(players, received, strict=True):
        assert [json.loads(f)["type"] for f in frames] == ["table_state", "entry_state"]
        assert json.loads(frames[0])["phase"] == "change"
        assert json.loads(frames[1]) == json.loads(expected[user.pk])
        assert len(json.loads(frames[1])["entry"]["cards"]) == 5
    assert sorted(user for read in reads for user in read) == sorted(user.pk for user in players)  # each once
    assert len(reads) < len(players)
    for socket in sockets:
        await socket.disconnect()
