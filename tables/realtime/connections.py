"""The daphne connection behind a game socket: what the hub needs of a consumer
(``HubSocket``), and the open autobahn protocol behind its ASGI send, which takes a frame
prepared once for every socket (``prepared_protocol``, the hub's fan-out) or a purchase's
answer written straight to it (``daphne_protocol``, tables/realtime/consumers.py)."""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any, Protocol

from channels.sessions import InstanceSessionWrapper


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
