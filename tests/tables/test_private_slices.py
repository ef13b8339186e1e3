"""A public frame's private states in slices (tables/realtime/refresh.py, issue 23 item 4):
each socket still gets its own private state once, after the public frame; no slice is read
or written while a public frame is being written; a newer frame ends the older round, and
the sockets it had not reached get only the newer read."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from tables.realtime import hub as hub_module
from tables.realtime.hub import TableHub
from tests.tables.test_hub import TEXT, PrivateDaphneProtocol, Socket, new_factory, unframe

pytestmark = pytest.mark.asyncio


def make_hub(monkeypatch: pytest.MonkeyPatch, render: Any, size: int) -> TableHub:
    monkeypatch.setattr(hub_module, "database_sync_to_async", sync_to_async)  # no database here
    monkeypatch.setattr(hub_module, "render_private_frames", render)
    hub = TableHub(asyncio.get_running_loop())
    hub.refresh.slice = size
    return hub


async def test_a_round_reads_and_writes_its_players_a_slice_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[set[int]] = []

    def render(table_id: int, user_ids: set[int]) -> dict[int, str]:
        reads.append(set(user_ids))
        return {u: json.dumps({"type": "entry_state", "user": u, "read": len(reads)}) for u in user_ids}

    hub = make_hub(monkeypatch, render, 2)
    factory = new_factory()
    protocols = {u: PrivateDaphneProtocol(factory) for u in range(5)}
    phone = PrivateDaphneProtocol(factory)  # a second socket of player 3
    sockets = [Socket(u, p) for u, p in protocols.items()] + [Socket(3, phone)]
    plain = Socket(4)  # a socket written through its ASGI send
    for socket in [*sockets, plain]:
        hub.sockets[7].add(socket)

    await hub.deliver(7, TEXT, refresh_private=True)
    await hub.refresh.settled()

    assert reads == [{0, 1}, {2, 3}, {4}]  # every player once, two a read
    for user_id, protocol in [*protocols.items(), (3, phone)]:
        assert [unframe(d) for d in protocol.written] == [TEXT]
        assert [json.loads(m)["user"] for m in protocol.messages] == [user_id]  # his own, once
    assert [json.loads(m["text"]).get("user") for m in plain.sent] == [None, 4]  # public, then his


async def test_no_slice_is_read_while_a_public_frame_is_being_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sync thread rendering private states took the GIL from the loop at each socket
    write of a change frame (about 400 µs a write instead of 90 µs at 5,000 sockets)."""
    reads: list[tuple[set[int], int]] = []
    hub: TableHub | None = None

    def render(table_id: int, user_ids: set[int]) -> dict[int, str]:
        assert hub is not None
        reads.append((set(user_ids), hub.refresh.holding))
        return {u: f'{{"type":"entry_state","user":{u}}}' for u in user_ids}

    hub = make_hub(monkeypatch, render, 1)
    factory = new_factory()
    for user_id in (1, 2, 3):
        hub.sockets[7].add(Socket(user_id, PrivateDaphneProtocol(factory)))
    stuck = asyncio.Event()

    class SlowSocket(Socket):
        async def _plain_send(self, message: dict[str, Any]) -> None:
            if '"results"' in message.get("text", ""):
                await stuck.wait()  # the public frame of table 8 is being written meanwhile
            await super()._plain_send(message)

    slow = SlowSocket(9)
    slow.table_id = 8
    hub.sockets[8].add(slow)

    await hub.deliver(7, TEXT, refresh_private=True)  # table 7's private states are due
    other = asyncio.create_task(hub.deliver(8, TEXT.replace("change", "results"), refresh_private=False))
    await asyncio.sleep(0.2)
    assert hub.refresh.holding == 1 and len(reads) <= 1  # at most the slice already begun
    stuck.set()
    await other
    await hub.refresh.settled()
    assert sorted(u for users, _ in reads for u in users) == [1, 2, 3]
    assert [holding for _, holding in reads[1:]] == [0, 0]  # none begun during the write
    assert hub.refresh.holding == 0 and hub.refresh.clear.is_set()


async def test_a_newer_frame_ends_the_older_round_and_the_rest_get_only_the_newer_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gate = asyncio.Event()
    reads: list[set[int]] = []
    loop = asyncio.get_running_loop()

    def render(table_id: int, user_ids: set[int]) -> dict[int, str]:
        reads.append(set(user_ids))
        read = len(reads)
        if read == 1:  # the first slice is slow: the next frame arrives meanwhile
            asyncio.run_coroutine_threadsafe(gate.wait(), loop).result(timeout=5)
        return {u: f'{{"type":"entry_state","user":{u},"read":{read}}}' for u in user_ids}

    hub = make_hub(monkeypatch, render, 1)
    factory = new_factory()
    protocols = {u: PrivateDaphneProtocol(factory) for u in (1, 2, 3)}
    for user_id, protocol in protocols.items():
        hub.sockets[7].add(Socket(user_id, protocol))
    first, second = TEXT, TEXT.replace("change", "results")

    await hub.deliver(7, first, refresh_private=True)
    await asyncio.sleep(0.05)  # the first slice's read has begun
    await hub.deliver(7, second, refresh_private=True)
    gate.set()
    await hub.refresh.settled()

    assert reads == [{1}, {1}, {2}, {3}]  # the old round ended after its slice; the new one read all
    for protocol in protocols.values():
        assert [unframe(d) for d in protocol.written] == [first, second]
    assert [json.loads(m)["read"] for m in protocols[1].messages] == [1, 2]  # the newest last
    assert [json.loads(m)["read"] for m in protocols[2].messages] == [3]  # only the newer read
    assert [json.loads(m)["read"] for m in protocols[3].messages] == [4]


async def test_the_switch_interval_is_short_only_while_a_public_frame_is_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A slice already being rendered took the GIL from the loop for up to the process's
    switch interval after each socket write."""
    import sys

    from tables.realtime.refresh import WRITE_SWITCH_INTERVAL

    seen: list[float] = []

    class Watching(PrivateDaphneProtocol):
        def sendPreparedMessage(self, prepared: Any) -> None:  # noqa: N802
            seen.append(sys.getswitchinterval())
            super().sendPreparedMessage(prepared)

    hub = make_hub(monkeypatch, lambda table_id, user_ids: dict.fromkeys(user_ids, "{}"), 10)
    hub.sockets[7].add(Socket(1, Watching(new_factory())))
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    try:
        await hub.deliver(7, TEXT, refresh_private=False)
        assert seen == [pytest.approx(WRITE_SWITCH_INTERVAL)]
        assert sys.getswitchinterval() == pytest.approx(0.0005)
    finally:
        sys.setswitchinterval(before)
