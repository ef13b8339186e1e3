"""Process-local fan-out of table frames (shared/reference/REALTIME_ANCHORS.md §0, §6, §7).

Going through a Channels group costs ~0.1-0.5 ms of CPU per recipient; a loop over the
sockets' ``base_send`` with one pre-built message costs ~11-15 µs. So table frames do not use
the channel layer: every ASGI process keeps a hub of its own sockets per table and

* in production (``REDIS_URL``), subscribes **once per process** to the pattern
  ``<prefix>:table:*``; publishers (the Celery worker's clock, any process's services) send one
  ``PUBLISH`` per broadcast;
* in the embedded default, receives publishes directly from the threads of the same process.

After a public frame, the hub builds the private states of all its sockets of that table in
one batched read (``tables.selectors.render_entry_states``) and sends each its own. The same
hub delivers a player's private refresh (``publish_player``): the sockets of one player, at
one table or at all of them, each get their private state, or are closed. So a player's
private state has one path, whatever changed it (tables/realtime/frames.py).
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
from collections import defaultdict
from typing import Any, Protocol

from channels.db import database_sync_to_async
from django.conf import settings

from tables.realtime.frames import hub_channel

logger = logging.getLogger(__name__)


class HubSocket(Protocol):
    """What the hub needs of a consumer: who it is and its raw ASGI send."""

    table_id: int
    user_id: int

    async def base_send(self, message: dict[str, Any]) -> None: ...


def layer_prefix() -> str:
    """The Redis key prefix of this installation's channel layer (``CHANNEL_LAYER_PREFIX``)."""
    return str(settings.CHANNEL_LAYERS["default"].get("CONFIG", {}).get("prefix", "asgi"))


def channel_prefix() -> str:
    """What every hub channel starts with; each process subscribes to ``<this>*``."""
    return f"{layer_prefix()}:table:"


class TableHub:
    """The sockets of one event loop, by table, and the delivery of frames to them."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.sockets: dict[int, set[HubSocket]] = defaultdict(set)
        self.players: dict[int, set[HubSocket]] = defaultdict(set)
        self.listener: asyncio.Task[None] | None = None
        self.heartbeat: asyncio.Task[None] | None = None
        self.subscribed = asyncio.Event()
        if not settings.REDIS_URL:
            self.subscribed.set()  # embedded: publishes arrive in-process, nothing to wait for

    def add(self, socket: HubSocket) -> None:
        self.sockets[socket.table_id].add(socket)
        self.players[socket.user_id].add(socket)
        if settings.REDIS_URL and self.listener is None:
            self.listener = self.loop.create_task(self._listen())
        if settings.PRESENCE_HEARTBEAT_SECONDS and self.heartbeat is None:
            self.heartbeat = self.loop.create_task(self._beat())

    async def _beat(self) -> None:
        """Stamp this process's heartbeat for as long as it runs (tables/services/presence.py)."""
        from channels.db import database_sync_to_async
        from django.utils import timezone

        from tables.services.presence import beat

        while True:
            try:
                await database_sync_to_async(beat)(now=timezone.now())
            except Exception:
                logger.exception("presence heartbeat failed; retrying")
            await asyncio.sleep(settings.PRESENCE_HEARTBEAT_SECONDS)

    async def wait_subscribed(self, timeout: float = 5.0) -> None:
        """Wait until this process receives table frames (its Redis subscription is live), so
        a socket that has just been sent its snapshot cannot miss the next frame."""
        try:
            await asyncio.wait_for(self.subscribed.wait(), timeout)
        except TimeoutError:
            logger.warning("table hub not subscribed after %s s; clients will resync", timeout)

    def discard(self, socket: HubSocket) -> None:
        for index, key in ((self.sockets, socket.table_id), (self.players, socket.user_id)):
            members = index.get(key)
            if members is not None:
                members.discard(socket)
                if not members:
                    del index[key]

    async def deliver_player(
        self, user_id: int, table_id: int | None, close_code: int | None, text: str | None = None
    ) -> None:
        """Send the player's local sockets (at ``table_id``, or at every table) their private
        state; or, with ``close_code``, send them ``text`` (if any) and close them."""
        members = [s for s in self.players.get(user_id, ()) if table_id is None or s.table_id == table_id]
        if not members:
            return
        if close_code is not None:
            for socket in members:
                self.discard(socket)
                if text:
                    await self._send(socket, {"type": "websocket.send", "text": text})
                await self._send(socket, {"type": "websocket.close", "code": close_code})
            return
        from tables.selectors import render_entry_states

        for table in sorted({socket.table_id for socket in members}):
            states = await database_sync_to_async(render_entry_states)(table_id=table, user_ids={user_id})
            for socket in members:
                if socket.table_id == table:
                    await self._send(socket, {"type": "websocket.send", "text": states[user_id]})

    async def deliver(self, table_id: int, text: str | None, refresh_private: bool) -> None:
        """Send ``text`` to every local socket of the table, then (if asked) each one's
        private state. A socket that fails is dropped from the hub; the others go on."""
        members = list(self.sockets.get(table_id, ()))
        if not members:
            return
        if text:
            message = {"type": "websocket.send", "text": text}  # built once for everyone
            for socket in members:
                await self._send(socket, message)
        if refresh_private:
            from tables.selectors import render_entry_states

            states = await database_sync_to_async(render_entry_states)(
                table_id=table_id, user_ids={socket.user_id for socket in members}
            )
            for socket in members:
                await self._send(socket, {"type": "websocket.send", "text": states[socket.user_id]})

    async def _send(self, socket: HubSocket, message: dict[str, Any]) -> None:
        try:
            await socket.base_send(message)
        except Exception:  # a socket closing mid-broadcast must not stop the others
            logger.debug("dropping a closed socket of table %s", socket.table_id, exc_info=True)
            self.discard(socket)

    async def dispatch(self, payload: dict[str, Any]) -> None:
        """One published delivery (``publish_table_frame`` or ``publish_player``)."""
        if "user_id" in payload:
            await self.deliver_player(
                payload["user_id"], payload.get("table_id"), payload.get("close_code"), payload.get("text")
            )
        else:
            await self.deliver(payload["table_id"], payload["text"], payload["refresh_private"])

    async def _listen(self) -> None:
        """One Redis pattern subscription for this process; re-subscribes after errors."""
        import redis.asyncio as aioredis

        pattern = channel_prefix() + "*"
        while True:
            client = aioredis.Redis.from_url(settings.REDIS_URL, socket_timeout=None)
            try:
                pubsub = client.pubsub()
                await pubsub.psubscribe(pattern)
                self.subscribed.set()
                async for message in pubsub.listen():
                    if message.get("type") != "pmessage":
                        continue
                    await self.dispatch(json.loads(message["data"]))
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("table hub subscription failed; re-subscribing")
                await asyncio.sleep(1)
            finally:
                await client.aclose()


_hubs: dict[asyncio.AbstractEventLoop, TableHub] = {}
_publisher: Any = None


def get_hub() -> TableHub:
    """The hub of the running event loop (one per ASGI process; tests run several loops)."""
    loop = asyncio.get_running_loop()
    hub = _hubs.get(loop)
    if hub is None:
        for stale in [other for other in _hubs if other.is_closed()]:
            del _hubs[stale]
        hub = _hubs[loop] = TableHub(loop)
    return hub


def publish_table_frame(table_id: int, text: str | None, *, refresh_private: bool = False) -> None:
    """Deliver a public frame to every socket of the table, in every ASGI process, and
    with ``refresh_private`` each of those sockets its own private state.

    Call from sync code (services' on-commit hooks, the clock). With Redis: one ``PUBLISH``.
    Embedded: hand the frame to the hubs of this process's event loops.
    """
    _publish(
        hub_channel(layer_prefix(), "table", table_id),
        {"table_id": table_id, "text": text, "refresh_private": refresh_private},
    )


def publish_player(
    user_id: int, *, table_id: int | None = None, close_code: int | None = None, text: str | None = None
) -> None:
    """Send the player's sockets (at ``table_id``, or all his tables) their private state,
    in every ASGI process; with ``close_code``, send them ``text`` and close them instead."""
    _publish(
        hub_channel(layer_prefix(), "player", user_id),
        {"user_id": user_id, "table_id": table_id, "close_code": close_code, "text": text},
    )


def _publish(channel: str, payload: dict[str, Any]) -> None:
    if settings.REDIS_URL:
        global _publisher
        if _publisher is None:
            import redis

            _publisher = redis.Redis.from_url(settings.REDIS_URL)
        try:
            _publisher.publish(channel, json.dumps(payload))
        except Exception:
            logger.exception("publishing to %s failed", channel)
        return
    for loop, hub in list(_hubs.items()):
        if not loop.is_closed():
            # A fresh context: the caller's (a sync_to_async worker thread) carries asgiref's
            # thread-sensitive markers, which would make the hub's own database reads deadlock.
            loop.call_soon_threadsafe(_start_delivery, hub, payload, context=contextvars.Context())


def _start_delivery(hub: TableHub, payload: dict[str, Any]) -> None:
    task = hub.loop.create_task(hub.dispatch(payload))
    _deliveries.add(task)
    task.add_done_callback(_deliveries.discard)


_deliveries: set[asyncio.Task[None]] = set()  # strong references until each delivery is done
