"""The per-process hub's write path: one framing per broadcast under daphne, the ASGI send
for anything else, and a failing socket that does not stop the others."""

from __future__ import annotations

import asyncio
import functools
import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from autobahn.twisted.websocket import WebSocketServerFactory  # what daphne uses
from django.conf import settings

from tables.realtime.connections import prepared_protocol
from tables.realtime.hub import TableHub

TEXT = '{"type": "table_state", "phase": "change", "note": "café"}'


class FakeDaphneProtocol:
    """What daphne's connection looks like to the hub: an autobahn protocol with its factory."""

    STATE_OPEN = 3

    def __init__(self, factory: WebSocketServerFactory, *, state: int = 3, fail: bool = False) -> None:
        self.factory = factory
        self.state = state
        self.fail = fail
        self.written: list[bytes] = []
        self.prepared: list[Any] = []

    def sendPreparedMessage(self, prepared: Any) -> None:  # noqa: N802  (autobahn's name)
        if self.fail:
            raise ConnectionError("gone")
        self.prepared.append(prepared)
        self.written.append(prepared.payloadHybi)


class Socket:
    """A consumer as the hub sees it; ``base_send`` is daphne's partial or a plain coroutine."""

    def __init__(self, user_id: int, protocol: FakeDaphneProtocol | None = None) -> None:
        self.table_id = 7
        self.user_id = user_id
        self.sent: list[dict[str, Any]] = []
        self.base_send: Any = (
            self._plain_send if protocol is None else functools.partial(self._daphne_handle_reply, protocol)
        )

    async def _daphne_handle_reply(self, protocol: FakeDaphneProtocol, message: dict[str, Any]) -> None:
        self.sent.append(message)

    async def _plain_send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)


def new_factory() -> Any:
    return WebSocketServerFactory()  # type: ignore[no-untyped-call]


def unframe(data: bytes) -> str:
    """The text of one unmasked server frame (RFC 6455 §5.2)."""
    assert data[0] == 0x81  # FIN + text
    length, offset = data[1] & 0x7F, 2
    assert not data[1] & 0x80  # a server never masks
    if length == 126:
        length, offset = int.from_bytes(data[2:4], "big"), 4
    payload = data[offset : offset + length]
    assert len(payload) == length == len(data) - offset
    return payload.decode()


def test_prepared_protocol_only_for_an_open_daphne_connection() -> None:
    factory = new_factory()
    open_protocol = FakeDaphneProtocol(factory)
    assert prepared_protocol(Socket(1, open_protocol)) is open_protocol
    assert prepared_protocol(Socket(2, FakeDaphneProtocol(factory, state=4))) is None
    assert prepared_protocol(Socket(3)) is None


async def test_a_frame_is_framed_once_and_written_to_every_daphne_socket() -> None:
    factory = new_factory()
    calls = []
    prepare = factory.prepareMessage

    def counting_prepare(payload: bytes, *args: Any, **kwargs: Any) -> Any:
        calls.append(payload)
        return prepare(payload, *args, **kwargs)

    factory.prepareMessage = counting_prepare
    protocols = [FakeDaphneProtocol(factory) for _ in range(3)]
    broken = FakeDaphneProtocol(factory, fail=True)
    closing = FakeDaphneProtocol(factory, state=4)
    sockets = [Socket(i, p) for i, p in enumerate([*protocols, broken, closing])]
    plain = Socket(99)
    hub = TableHub(asyncio.get_running_loop())
    for socket in [*sockets, plain]:
        hub.sockets[7].add(socket)

    await hub.deliver(7, TEXT, refresh_private=False)

    assert calls == [TEXT.encode()]  # framed once for the whole table
    for protocol in protocols:
        assert [unframe(data) for data in protocol.written] == [TEXT]
    assert protocols[0].prepared[0] is protocols[1].prepared[0]
    # Not open, or not daphne: through the ASGI send, as before.
    assert sockets[4].sent == [{"type": "websocket.send", "text": TEXT}]
    assert plain.sent == [{"type": "websocket.send", "text": TEXT}]
    # The socket that failed is dropped, the others stay.
    assert sockets[3] not in hub.sockets[7]
    assert len(hub.sockets[7]) == 5


async def test_a_long_frame_gets_the_extended_length() -> None:
    factory = new_factory()
    protocol = FakeDaphneProtocol(factory)
    hub = TableHub(asyncio.get_running_loop())
    hub.sockets[7].add(Socket(1, protocol))
    text = '{"type": "table_state", "pad": "' + "x" * 5000 + '"}'
    await hub.deliver(7, text, refresh_private=False)
    assert unframe(protocol.written[0]) == text


# --- The connect frame's cache (TableHub.public_snapshot) ----------------------------------


class FakeTable:
    """The database as the snapshot cache reads it: a version and a frame per build, with
    a gate to hold a build open while the test delivers something."""

    def __init__(self) -> None:
        self.version = 5
        self.players = 10
        self.builds = 0
        self.version_reads = 0
        self.gate: asyncio.Event | None = None
        self.loop = asyncio.get_running_loop()

    def read_version(self, table_id: int) -> int:
        self.version_reads += 1
        return self.version

    def build(self, table_id: int) -> dict[str, Any]:
        self.builds += 1
        frame = {
            "type": "table_state",
            "table_id": table_id,
            "version": self.version,
            "phase": "change",
            "deadline": None,
            "server_time": "built",
            "players": self.players,
        }
        if self.gate is not None:  # wait (in the worker thread) until the test opens it
            asyncio.run_coroutine_threadsafe(self.gate.wait(), self.loop).result(timeout=5)
        return frame


@pytest.fixture
async def fake_table(monkeypatch: pytest.MonkeyPatch) -> FakeTable:
    from tables.realtime import hub as hub_module

    fake = FakeTable()
    # No database here: the hub's reads run as plain worker-thread calls.
    monkeypatch.setattr(hub_module, "database_sync_to_async", sync_to_async)
    monkeypatch.setattr(hub_module, "read_table_version", fake.read_version)
    monkeypatch.setattr(hub_module, "build_table_state", fake.build)
    return fake


def seated_hub() -> TableHub:
    hub = TableHub(asyncio.get_running_loop())
    hub.sockets[7].add(Socket(1))
    return hub


async def test_the_connect_frame_is_built_once_then_served_with_a_fresh_server_time(fake_table: FakeTable) -> None:
    hub = seated_hub()
    first = json.loads(await hub.public_snapshot(7))
    second = json.loads(await hub.public_snapshot(7))
    assert fake_table.builds == 1
    assert fake_table.version_reads == 1  # the second connect read the version, not the frame
    assert first["server_time"] != "built" and second["server_time"] != "built"
    assert {**first, "server_time": None} == {**second, "server_time": None}
    assert list(second) == ["type", "table_id", "version", "phase", "deadline", "server_time", "players"]


async def test_a_new_version_in_the_database_is_rebuilt_even_without_a_delivery(fake_table: FakeTable) -> None:
    hub = seated_hub()
    await hub.public_snapshot(7)
    fake_table.version, fake_table.players = 6, 11  # its push was lost
    assert json.loads(await hub.public_snapshot(7))["version"] == 6
    assert fake_table.builds == 2


async def test_any_delivery_of_the_table_drops_its_frame(fake_table: FakeTable) -> None:
    """A push with the same version (a join's new player count, a live pool) is newer than
    the cached frame: the next connect must not get an older one."""
    hub = seated_hub()
    await hub.public_snapshot(7)
    fake_table.players = 11
    await hub.deliver(8, '{"type":"pool_updated"}', refresh_private=False)  # another table
    assert json.loads(await hub.public_snapshot(7))["players"] == 10
    await hub.deliver(7, '{"type":"pool_updated"}', refresh_private=False)
    assert json.loads(await hub.public_snapshot(7))["players"] == 11
    assert fake_table.builds == 2


async def test_connects_during_a_build_share_it(fake_table: FakeTable) -> None:
    hub = seated_hub()
    fake_table.gate = asyncio.Event()
    waiting = [asyncio.create_task(hub.public_snapshot(7)) for _ in range(5)]
    await asyncio.sleep(0.05)
    fake_table.gate.set()
    frames = [json.loads(text) for text in await asyncio.gather(*waiting)]
    assert fake_table.builds == 1
    assert {frame["players"] for frame in frames} == {10}


async def test_a_frame_built_while_a_delivery_arrived_is_not_served_nor_cached(fake_table: FakeTable) -> None:
    hub = seated_hub()
    fake_table.gate = asyncio.Event()
    waiting = asyncio.create_task(hub.public_snapshot(7))
    await asyncio.sleep(0.05)  # the build has read the old state...
    fake_table.players = 11
    await hub.deliver(7, '{"type":"table_state"}', refresh_private=False)  # ...and a newer frame went out
    fake_table.gate.set()
    assert json.loads(await waiting)["players"] == 11  # built again, not the older frame
    assert fake_table.builds == 2
    assert hub.snapshots[7].frame["players"] == 11


async def test_a_cached_frame_expires(fake_table: FakeTable, monkeypatch: pytest.MonkeyPatch) -> None:
    from tables.realtime import hub as hub_module

    hub = seated_hub()
    await hub.public_snapshot(7)
    monkeypatch.setattr(hub_module, "SNAPSHOT_MAX_AGE_SECONDS", 0.0)
    await hub.public_snapshot(7)
    assert fake_table.builds == 2


async def test_a_resubscription_or_the_last_socket_leaving_drops_the_frames(fake_table: FakeTable) -> None:
    hub = seated_hub()
    await hub.public_snapshot(7)
    hub.drop_snapshots()  # deliveries may have been lost while unsubscribed
    await hub.public_snapshot(7)
    assert fake_table.builds == 2
    hub.discard(next(iter(hub.sockets[7])))
    assert 7 not in hub.snapshots


async def test_the_heartbeat_does_not_wait_for_the_busy_sync_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process whose one thread for sync code is busy (10,000 sockets' private states)
    still stamps its heartbeat: waiting behind that work got both daphnes of a 10,000-socket
    benchmark reaped and every player taken off his seat (docs/benchmarks.md)."""
    import threading
    import time

    from tables.services import presence

    beats: list[str] = []
    monkeypatch.setattr(presence, "beat", lambda *, now: beats.append(threading.current_thread().name))
    blocker = asyncio.ensure_future(sync_to_async(time.sleep)(1.5))  # thread-sensitive: the sync thread
    await asyncio.sleep(0.05)
    hub = TableHub(asyncio.get_running_loop())
    task = asyncio.get_running_loop().create_task(hub._beat())
    try:
        for _ in range(50):
            if beats:
                break
            await asyncio.sleep(0.01)
        assert beats, "the heartbeat waited for the busy sync thread"
        assert not blocker.done()
    finally:
        task.cancel()
        await blocker


# --- Private states after a public frame, and the fan-out report ---------------------------


class PrivateDaphneProtocol(FakeDaphneProtocol):
    """A fake daphne connection that also takes a message framed for it alone (autobahn's
    ``sendMessage``, what daphne's ``serverSend`` calls for a text frame)."""

    def __init__(self, factory: WebSocketServerFactory, **kwargs: Any) -> None:
        super().__init__(factory, **kwargs)
        self.messages: list[bytes] = []

    def sendMessage(self, payload: bytes, isBinary: bool = False) -> None:  # noqa: N802, N803  (autobahn's names)
        if self.fail:
            raise ConnectionError("gone")
        assert not isBinary
        self.messages.append(payload)


async def test_private_states_are_handed_to_each_daphne_socket_without_its_asgi_send(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    asked: list[set[int]] = []

    def render(table_id: int, user_ids: set[int]) -> dict[int, str]:
        asked.append(set(user_ids))
        return {user_id: json.dumps({"type": "entry_state", "user": user_id, "note": "é"}) for user_id in user_ids}

    from tables.realtime import hub as hub_module

    monkeypatch.setattr(hub_module, "database_sync_to_async", sync_to_async)  # no database here
    monkeypatch.setattr(hub_module, "render_private_frames", render)
    monkeypatch.setattr(settings, "FANOUT_REPORT_MIN_SOCKETS", 5)
    factory = new_factory()
    protocols = [PrivateDaphneProtocol(factory) for _ in range(4)]
    sockets = [Socket(i, p) for i, p in enumerate(protocols)]
    plain = Socket(99)
    hub = TableHub(asyncio.get_running_loop())
    for socket in [*sockets, plain]:
        hub.sockets[7].add(socket)

    with caplog.at_level(logging.INFO, logger="tables.realtime.fanout"):
        await hub.deliver(7, TEXT, refresh_private=True, published_at=None)
        await hub.refresh.settled()

    assert asked == [{0, 1, 2, 3, 99}]  # one batched read for the table's sockets
    for user_id, (socket, protocol) in enumerate(zip(sockets, protocols, strict=True)):
        assert [unframe(data) for data in protocol.written] == [TEXT]  # the public frame, once
        assert [json.loads(m.decode()) for m in protocol.messages] == [
            {"type": "entry_state", "user": user_id, "note": "é"}
        ]
        assert socket.sent == []  # nothing through the ASGI send
    assert [json.loads(m["text"])["type"] for m in plain.sent] == ["table_state", "entry_state"]
    [line, private_line] = [r.getMessage() for r in caplog.records if r.name == "tables.realtime.fanout"]
    assert line.startswith("fanout-report ") and private_line.startswith("fanout-private ")
    report = json.loads(line.removeprefix("fanout-report "))
    private = json.loads(private_line.removeprefix("fanout-private "))
    assert report["private"] is None  # logged before the private states, which may take seconds
    assert (private["table_id"], private["frame"], private["sockets"]) == (7, report["frame"], 5)
    assert report["table_id"] == 7 and report["sockets"] == 5
    assert 0 <= report["cpu"] <= report["flushed"] - report["queued"] + 0.01  # the loop thread's, within the writes
    assert report["frame"] == {"type": "table_state", "phase": "change"}
    offsets = report["written_pct"]
    assert len(offsets) == 101 and offsets == sorted(offsets) and offsets[0] >= 0
    assert report["queued"] <= offsets[0] <= offsets[-1] <= report["flushed"] <= private["private"]

    # A table with fewer sockets than FANOUT_REPORT_MIN_SOCKETS is not reported.
    hub.discard(plain)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="tables.realtime.fanout"):
        await hub.deliver(7, TEXT, refresh_private=True)
        await hub.refresh.settled()
    assert not [r for r in caplog.records if r.name == "tables.realtime.fanout"]


async def test_a_private_write_that_fails_drops_only_that_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    from tables.realtime import hub as hub_module

    monkeypatch.setattr(hub_module, "database_sync_to_async", sync_to_async)  # no database here
    monkeypatch.setattr(
        hub_module, "render_private_frames", lambda table_id, user_ids: {u: f'{{"u":{u}}}' for u in user_ids}
    )
    factory = new_factory()
    good, bad = PrivateDaphneProtocol(factory), PrivateDaphneProtocol(factory, fail=True)
    hub = TableHub(asyncio.get_running_loop())
    kept, dropped = Socket(1, good), Socket(2, bad)
    hub.sockets[7].update({kept, dropped})
    await hub.deliver(7, None, refresh_private=True)
    await hub.refresh.settled()
    assert good.messages == [b'{"u":1}']
    assert hub.sockets[7] == {kept}


async def test_consecutive_private_refreshes_of_a_table_are_rendered_in_one_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Purchases each publish the buyer's private refresh; those that arrived together are
    rendered in one batched read, in order with the table's frames around them."""
    from tables.realtime import hub as hub_module

    reads: list[tuple[int, set[int]]] = []

    def render(table_id: int, user_ids: set[int]) -> dict[int, str]:
        reads.append((table_id, set(user_ids)))
        return {user_id: f'{{"type":"entry_state","user":{user_id},"read":{len(reads)}}}' for user_id in user_ids}

    monkeypatch.setattr(hub_module, "database_sync_to_async", sync_to_async)  # no database here
    monkeypatch.setattr(hub_module, "render_private_frames", render)
    factory = new_factory()
    hub = TableHub(asyncio.get_running_loop())
    sockets = {user_id: Socket(user_id, PrivateDaphneProtocol(factory)) for user_id in (1, 2, 3)}
    other_table = Socket(4, PrivateDaphneProtocol(factory))
    other_table.table_id = 8
    for socket in [*sockets.values(), other_table]:
        hub.add(socket)

    await hub.dispatch_many(
        [
            {"user_id": 1, "table_id": 7, "close_code": None, "text": None},
            {"user_id": 2, "table_id": 7, "close_code": None, "text": None},
            {"user_id": 1, "table_id": 7, "close_code": None, "text": None},
            {"table_id": 7, "text": TEXT, "refresh_private": False},
            {"user_id": 3, "table_id": 7, "close_code": None, "text": None},
            {"user_id": 4, "table_id": 8, "close_code": None, "text": None},
            {"user_id": 2, "table_id": None, "close_code": None, "text": None},  # all his tables: alone
        ]
    )

    assert reads == [(7, {1, 2}), (7, {3}), (8, {4}), (7, {2})]
    protocol_1 = sockets[1].base_send.args[0]
    assert [json.loads(m)["read"] for m in protocol_1.messages] == [1]  # once, not twice
    assert [unframe(d) for d in protocol_1.written] == [TEXT]
    protocol_2 = sockets[2].base_send.args[0]
    assert [json.loads(m)["read"] for m in protocol_2.messages] == [1]
    assert [json.loads(m["text"])["read"] for m in sockets[2].sent] == [4]  # the all-tables path, as before
    assert [json.loads(m)["read"] for m in sockets[3].base_send.args[0].messages] == [2]


async def test_requests_during_a_read_wait_for_the_next_one_and_share_it() -> None:
    """A connect storm's reads (tables/realtime/batches.py): the requests that arrive
    together share one read; one that arrives while a read runs is not answered from it
    (the read began before the request) but from the next, shared with the others waiting."""
    from tables.realtime.batches import ReadBatches

    gate = asyncio.Event()
    reads: list[tuple[int, set[int], int]] = []
    state = {"value": 1}

    async def read(key: int, items: set[int]) -> dict[int, str]:
        seen = state["value"]  # what the read sees is fixed when it begins
        reads.append((key, set(items), seen))
        await gate.wait()
        return {item: f"{item}@{seen}" for item in items}

    batches: ReadBatches[int, int, str] = ReadBatches(asyncio.get_running_loop(), read)
    first = [asyncio.create_task(batches.get(7, item)) for item in (1, 2, 2)]
    await asyncio.sleep(0.01)  # the first read has begun
    state["value"] = 2  # a change after it began...
    later = [asyncio.create_task(batches.get(7, item)) for item in (2, 3)]
    other_table = asyncio.create_task(batches.get(8, 1))
    await asyncio.sleep(0.01)
    gate.set()
    assert await asyncio.gather(*first) == ["1@1", "2@1", "2@1"]
    assert await asyncio.gather(*later) == ["2@2", "3@2"]  # ...is seen by the requests after it
    assert await other_table == "1@2"
    assert sorted(reads) == [(7, {1, 2}, 1), (7, {2, 3}, 2), (8, {1}, 2)]
    assert batches.reads == 3


async def test_a_failed_read_fails_its_batch_and_the_next_one_reads_again() -> None:
    from tables.realtime.batches import ReadBatches

    calls = 0

    async def read(key: int, items: set[int]) -> dict[int, str]:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise LookupError("no such table")
        return {item: "ok" for item in items if item != 9}

    batches: ReadBatches[int, int, str] = ReadBatches(asyncio.get_running_loop(), read)
    with pytest.raises(LookupError):
        await batches.get(7, 1)
    assert await batches.get(7, 1) == "ok"
    with pytest.raises(KeyError):
        await batches.get(7, 9)  # left out by the read


async def test_the_next_public_frame_is_not_held_behind_the_private_states_of_the_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A change frame waited 13 s behind the previous frame's private states (a read of
    5,000 players): now it is written at once, and the private states that follow are read
    again after it, so the last private state each socket gets is the newest."""
    from tables.realtime import hub as hub_module

    gate = asyncio.Event()
    reads: list[int] = []
    loop = asyncio.get_running_loop()

    def render(table_id: int, user_ids: set[int]) -> dict[int, str]:
        reads.append(len(reads) + 1)
        read = len(reads)
        if read == 1:  # the first read is slow: the test sends the next frame meanwhile
            asyncio.run_coroutine_threadsafe(gate.wait(), loop).result(timeout=5)
        return dict.fromkeys(user_ids, f'{{"type":"entry_state","read":{read}}}')

    monkeypatch.setattr(hub_module, "database_sync_to_async", sync_to_async)  # no database here
    monkeypatch.setattr(hub_module, "render_private_frames", render)
    factory = new_factory()
    hub = TableHub(asyncio.get_running_loop())
    protocol = PrivateDaphneProtocol(factory)
    hub.sockets[7].add(Socket(1, protocol))
    first, second = TEXT, TEXT.replace("change", "results")

    await hub.deliver(7, first, refresh_private=True)
    await asyncio.sleep(0.05)  # the first read has begun
    await hub.deliver(7, second, refresh_private=True)
    assert [unframe(d) for d in protocol.written] == [first, second]  # not held behind the read
    assert protocol.messages == []
    gate.set()
    await hub.refresh.settled()
    assert [json.loads(m)["read"] for m in protocol.messages] == [1, 2]  # the newest last
    assert reads == [1, 2]


async def test_the_collector_is_off_while_a_public_frame_is_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """A full garbage collection at 5,000 sockets took 1-2 s before the first write: the
    hub keeps the collector off from the writes to the flush, and on again after."""
    import gc

    seen: list[bool] = []

    class Watching(FakeDaphneProtocol):
        def sendPreparedMessage(self, prepared: Any) -> None:  # noqa: N802
            seen.append(gc.isenabled())
            super().sendPreparedMessage(prepared)

    hub = TableHub(asyncio.get_running_loop())
    factory = new_factory()
    for user_id in (1, 2):
        hub.sockets[7].add(Socket(user_id, Watching(factory)))
    assert gc.isenabled()
    await hub.deliver(7, TEXT, refresh_private=False)
    assert seen == [False, False]
    assert gc.isenabled()


def test_the_session_middlewares_send_is_looked_through() -> None:
    """Under ``AuthMiddlewareStack`` a consumer's ``base_send`` is channels' session wrapper
    around daphne's send (it saves the session on ``http.response.start`` only): every
    production socket was written through its ASGI send, one await each, until the hub
    looked through it."""
    from channels.sessions import InstanceSessionWrapper

    factory = new_factory()
    protocol = FakeDaphneProtocol(factory)
    socket = Socket(1, protocol)
    daphne_send = socket.base_send
    wrapper = InstanceSessionWrapper({"type": "websocket", "cookies": {}}, daphne_send)
    socket.base_send = wrapper.send
    assert prepared_protocol(socket) is protocol
    outer = InstanceSessionWrapper({"type": "websocket", "cookies": {}}, wrapper.send)  # stacked twice
    socket.base_send = outer.send
    assert prepared_protocol(socket) is protocol


def test_a_consumers_daphne_connection_is_found_through_the_session_wrapper() -> None:
    """Under the real stack a consumer's send is channels' session wrapper's (its
    ``real_send`` daphne's partial): ``connections.daphne_protocol`` looks through it, so a
    socket purchase's answer goes straight to the connection."""
    from tables.realtime.connections import daphne_protocol

    class SessionWrapper:  # channels.sessions.InstanceSessionWrapper, as a consumer sees it
        def __init__(self, real_send: Any) -> None:
            self.real_send = real_send

        async def send(self, message: dict[str, Any]) -> None:
            await self.real_send(message)

    factory = new_factory()
    open_protocol = FakeDaphneProtocol(factory)
    wrapped = Socket(1, open_protocol)
    wrapped.base_send = SessionWrapper(wrapped.base_send).send
    assert prepared_protocol(wrapped) is None  # the wrapper hides it from the hub's own look
    assert daphne_protocol(wrapped) is open_protocol
    assert daphne_protocol(Socket(2, open_protocol)) is open_protocol
    closed = Socket(3, FakeDaphneProtocol(factory, state=4))
    closed.base_send = SessionWrapper(closed.base_send).send
    assert daphne_protocol(closed) is None
    assert daphne_protocol(Socket(4)) is None
