"""The daphne connection behind a game socket: what the hub needs of a consumer
(``HubSocket``), and the open autobahn protocol behind its ASGI send, which takes a frame
prepared once for every socket (``prepared_protocol``, the hub's fan-out) or a purchase's
answer written straight to it (``daphne_protocol``, tables/realtime/consumers.py)."""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any, Protocol

from channels.sessions import InstanceSessionWrapper
from twisted.internet import tcp


class HubSocket(Protocol):
    """What the hub needs of a consumer: who it is and its raw ASGI send."""

    table_id: int
    user_id: int

    async def base_send(self, message: dict[str, Any]) -> None: ...


def prepared_protocol(socket: HubSocket) -> Any | None:
    """The autobahn protocol behind a daphne connection's ASGI send, if it is one and is
    open (it can then take a prepared message); ``None`` otherwise. Channels' session
    middleware (``AuthMiddlewareStack``) wraps that send in one that saves the session on
    ``http.response.start`` only, never for a socket's frame: it is looked through (it hid
    every production socket, each written through its ASGI send: docs/benchmarks.md)."""
    send = socket.base_send
    while isinstance(wrapper := getattr(send, "__self__", None), InstanceSessionWrapper):
        send = wrapper.real_send
    if not isinstance(send, functools.partial) or not send.args:
        return None
    protocol = send.args[0]
    prepare = getattr(getattr(protocol, "factory", None), "prepareMessage", None)
    if prepare is None or not hasattr(protocol, "sendPreparedMessage"):
        return None
    if getattr(protocol, "state", None) != getattr(protocol, "STATE_OPEN", object()):
        return None
    return protocol


def daphne_protocol(socket: Any) -> Any | None:
    """The open daphne connection behind a consumer's send (``prepared_protocol``),
    looked for through channels' session wrapper, whose send passes a ``websocket.send`` on
    untouched (it saves sessions on HTTP responses only); None when there is none."""
    real = getattr(getattr(socket.base_send, "__self__", None), "real_send", None)
    return prepared_protocol(SimpleNamespace(base_send=real) if real is not None else socket)


def send_prepared(protocol: Any, prepared: Any) -> bool:
    """Hand ``prepared`` (autobahn's ``PreparedMessage``) to the open ``protocol``
    (``prepared_protocol``): straight to its socket's kernel buffer when nothing is queued
    before it, else through autobahn (``sendPreparedMessage``). Returns True when every byte
    went to the kernel now.

    A plain TCP connection (twisted's ``tcp.Connection``, no TLS) with nothing waiting in
    autobahn's send queue or the transport's buffers gets the frame's bytes with one
    non-blocking ``send()``; what the kernel does not take is left to the transport's
    ``write`` (sent on the loop's next turns, after nothing else). The bytes on the wire are
    those autobahn would send (``payloadHybi``; not when the connection compresses, which
    goes through autobahn). Through twisted each socket's write was buffered, a writer
    registered with the event loop, and sent on its next turn (``doWrite``): at 5,000
    sockets a process that flush took 0.5 s after the last write at load 9, 2-3 s at load
    20 (docs/benchmarks.md, "s5-fanout"). Raises what ``sendPreparedMessage`` raises (a
    connection gone). Should twisted's or autobahn's private attributes read here be
    gone (neither is pinned), every frame goes through ``sendPreparedMessage``: without this,
    the hub would take each socket for closed and drop it."""
    transport: Any = getattr(protocol, "transport", None)
    data: bytes = prepared.payloadHybi
    try:
        direct = (
            isinstance(transport, tcp.Connection)
            and not getattr(transport, "TLS", False)
            and transport.connected
            and not transport.disconnecting
            and not transport._writeDisconnected
            and not transport._tempDataBuffer
            and len(transport.dataBuffer) == transport.offset
            and (protocol._perMessageCompress is None or prepared.doNotCompress)
            and not protocol.send_queue
        )
    except AttributeError:  # twisted or autobahn (not pinned) renamed their insides: their own way
        direct = False
    if not direct:
        protocol.sendPreparedMessage(prepared)
        return False
    try:
        sent = transport.socket.send(data)
    except (BlockingIOError, InterruptedError):
        sent = 0
    except OSError:  # the connection is going away: twisted finds it out as it would have
        sent = 0
    protocol.trafficStats.outgoingOctetsWireLevel += len(data)  # as autobahn's sendData counts
    if sent < len(data):
        transport.write(data[sent:])
        return False
    return True
