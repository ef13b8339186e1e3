"""The per-process hub's write path: one framing per broadcast under daphne, the ASGI send
for anything else, and a failing socket that does not stop the others."""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from autobahn.twisted.websocket import WebSocketServerFactory  # what daphne uses

from tables.realtime.hub import TableHub, prepared_protocol

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
