"""A public frame handed straight to the kernel (``send_prepared``,
tables/realtime/connections.py): over a real socket pair and twisted's own TCP transport,
the peer reads the bytes autobahn would have sent, and nothing jumps ahead of bytes already
queued."""

from __future__ import annotations

import contextlib
import socket
from collections import deque
from typing import Any, cast

from autobahn.twisted.websocket import WebSocketServerFactory
from autobahn.websocket.protocol import TrafficStats
from twisted.internet import tcp

from tables.realtime.connections import send_prepared
from tests.tables.test_hub import TEXT, unframe


class Reactor:
    """What a transport asks of its reactor when it buffers a write (no global reactor here)."""

    def __init__(self) -> None:
        self.writers: list[Any] = []

    def addWriter(self, writer: Any) -> None:  # noqa: N802  (twisted's names)
        self.writers.append(writer)

    def removeWriter(self, writer: Any) -> None:  # noqa: N802
        self.writers.remove(writer)


class Protocol:
    """The parts of autobahn's protocol ``send_prepared`` reads, and its fallback recorded."""

    def __init__(self, transport: Any, *, compress: Any = None) -> None:
        self.transport = transport
        self._perMessageCompress = compress
        self.send_queue: deque[Any] = deque()
        self.trafficStats = TrafficStats()  # type: ignore[no-untyped-call]
        self.fallback: list[Any] = []

    def sendPreparedMessage(self, prepared: Any) -> None:  # noqa: N802
        self.fallback.append(prepared)
        self.transport.write(prepared.payloadHybi)  # what autobahn's sendData does


def connection(size: int | None = None) -> tuple[tcp.Connection, socket.socket, Reactor]:
    ours, peer = socket.socketpair()
    if size is not None:
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, size)
    reactor = Reactor()
    transport = tcp.Connection(ours, cast(Any, None), reactor=cast(Any, reactor))
    transport.connected = 1
    return transport, peer, reactor


def prepared(text: str = TEXT) -> Any:
    return WebSocketServerFactory().prepareMessage(text.encode())  # type: ignore[no-untyped-call]


def read_all(peer: socket.socket, length: int) -> bytes:
    data = b""
    while len(data) < length:
        data += peer.recv(length - len(data))
    return data


def test_an_idle_connection_gets_the_frame_in_the_kernel_at_once() -> None:
    transport, peer, reactor = connection()
    protocol = Protocol(transport)
    message = prepared()
    assert send_prepared(protocol, message) is True
    assert protocol.fallback == [] and reactor.writers == []  # no writer for the next turn
    assert unframe(read_all(peer, len(message.payloadHybi))) == TEXT  # what autobahn sends
    assert protocol.trafficStats.outgoingOctetsWireLevel == len(message.payloadHybi)


def test_bytes_already_queued_go_first() -> None:
    transport, peer, _reactor = connection()
    protocol = Protocol(transport)
    transport.write(b"earlier")  # type: ignore[no-untyped-call]  # buffered for the loop's next turn
    message = prepared()
    assert send_prepared(protocol, message) is False
    assert protocol.fallback == [message]  # through autobahn, behind what was queued
    assert b"".join(transport._tempDataBuffer) == b"earlier" + message.payloadHybi
    protocol.send_queue.append((b"queued", False))
    transport._tempDataBuffer.clear()
    transport._tempDataLen = 0
    assert send_prepared(protocol, message) is False  # autobahn's own queue also goes first
    peer.setblocking(False)
    with contextlib.suppress(BlockingIOError):  # nothing was sent straight to the kernel
        assert peer.recv(10) == b""


def test_what_the_kernel_does_not_take_is_left_to_the_transport_in_order() -> None:
    transport, peer, reactor = connection(size=4096)
    protocol = Protocol(transport)
    message = prepared("x" * 2_000_000)
    data = message.payloadHybi
    assert send_prepared(protocol, message) is False
    rest = b"".join(transport._tempDataBuffer)
    assert rest and data.endswith(rest) and reactor.writers == [transport]
    assert read_all(peer, len(data) - len(rest)) == data[: len(data) - len(rest)]
    assert protocol.fallback == []


def test_a_compressing_or_closed_connection_goes_through_autobahn() -> None:
    transport, _peer, _reactor = connection()
    compressing = Protocol(transport, compress=object())
    message = prepared()
    assert send_prepared(compressing, message) is False and compressing.fallback == [message]
    closed, _peer2, _reactor2 = connection()
    closed.connected = 0
    protocol = Protocol(closed)
    assert send_prepared(protocol, message) is False and protocol.fallback == [message]


def test_a_transport_without_the_private_attributes_read_goes_through_autobahn() -> None:
    """Neither twisted nor autobahn is pinned: should one rename an attribute read here,
    the frame still goes out (autobahn's way), and nothing is raised (the hub would take
    the socket for closed and drop it)."""
    transport, peer, _reactor = connection()
    protocol = Protocol(transport)
    del protocol._perMessageCompress  # as an autobahn that renamed it
    message = prepared()
    assert send_prepared(protocol, message) is False and protocol.fallback == [message]
    transport.doWrite()  # type: ignore[no-untyped-call]  # the loop's next turn flushes the buffer
    assert read_all(peer, len(message.payloadHybi)) == message.payloadHybi
