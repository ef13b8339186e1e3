"""Process-local fan-out of table frames (shared/reference/REALTIME_ANCHORS.md §0, §6, §7).

Going through a Channels group costs ~0.1-0.5 ms of CPU per recipient; a loop over the
sockets' ``base_send`` with one pre-built message costs ~11-15 µs. So table frames do not use
the channel layer: every ASGI process keeps a hub of its own sockets per table and

* in production (``REDIS_URL``), subscribes **once per process** to the pattern
  ``<prefix>:table:*``; publishers (the Celery worker's clock, any process's services) send one
  ``PUBLISH`` per broadcast (tables/realtime/bus.py, the publish side);
* in the embedded default, receives publishes directly from the threads of the same process
  (each hub registers itself with the bus as its loop's receiver).

After a public frame asking for it, the private states of all its sockets of that table are
rendered in batched reads of ``PRIVATE_SLICE`` players (``render_private_frames``) and each
socket is sent its own, by a task per table (tables/realtime/refresh.py) that does not hold
the next frame. A player's
private refresh (``bus.publish_player``) goes through the same hub: one path for a private
state, whatever changed it (tables/realtime/frames.py).

The hub also serves the public frame a socket gets on connect (and on its ``snapshot``
request), at a table whose game allows it (``Game.cached_snapshot``: WiderPoker), from a
per-table cache (``public_snapshot``; a build is ~10 ms and 5 queries at 10,000 seats), and
the connects waiting share their reads (tables/realtime/batches.py). The rule that keeps it
from ever being staler than
what the table's watchers were pushed: every table delivery that reaches this hub
(``table_state``, ``pool_updated``, ``table_restarted``, a private refresh) drops that
table's cached frame; a cached frame is served only while the table's version (one
indexed read) is the cached one and it is younger than ``SNAPSHOT_MAX_AGE_SECONDS``; a frame
built while a delivery arrived is not cached; and ``server_time`` is stamped at each send.
Concurrent connects of one table share one build.

Under daphne the public frame is framed **once** per broadcast: the hub writes autobahn's
``PreparedMessage`` (``prepareMessage``/``sendPreparedMessage``) straight to each open
protocol behind daphne's ASGI send (``functools.partial(server.handle_reply, protocol)``),
skipping the per-socket ASGI dispatch, UTF-8 encoding and framing (about 67 µs a socket),
and straight to the socket's kernel buffer when nothing is queued before it
(``send_prepared``, tables/realtime/connections.py: no flush on the loop's next turn);
private states are handed to each connection the same way (``sendMessage``), with no await
per socket, in slices, never while a public frame is written (tables/realtime/refresh.py).
Any other server, a socket not open, or a test communicator goes through
``base_send``.

A public frame's fan-out to ``FANOUT_REPORT_MIN_SOCKETS`` sockets or more is reported by the
process that wrote it (``FanoutReport``, tables/realtime/fanout.py), read by the benches.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.utils import timezone

from tables import games
from tables.realtime import bus
from tables.realtime.batches import ReadBatches
from tables.realtime.bus import channel_prefix
from tables.realtime.connections import HubSocket, prepared_protocol, send_prepared
from tables.realtime.fanout import FanoutReport, frame_head
from tables.realtime.frames import dumps
from tables.realtime.refresh import PrivateRefresh
from tables.selectors import table_version
from tables.services import presence

logger = logging.getLogger(__name__)
DISPATCH_BATCH = 1000  # at most this many deliveries already received are taken together

SNAPSHOT_MAX_AGE_SECONDS = 1.0
"""How long a cached connect frame may be served (seconds) when no delivery dropped it: a
bound on anything public that changed with neither a version bump nor a push reaching
this process (a lost pub/sub message, the clock-time text of ``config.next_special``)."""

SNAPSHOT_ATTEMPTS = 3
"""Builds tried before a connect gives up waiting for a quiet moment (a delivery arriving
during every build) and sends its last frame as built."""


@dataclass(frozen=True)
class CachedSnapshot:
    """A table's public frame as built for a connect: its ``version``, the hub's
    ``generation`` of that table when the build began, and ``built_at`` (monotonic s)."""

    frame: Mapping[str, Any]
    version: int
    generation: tuple[int, int]
    built_at: float

    def render(self) -> str:
        """The frame serialised with ``server_time`` now (the same keys, in the same order)."""
        return dumps({**self.frame, "server_time": timezone.now().isoformat()})


def read_table_version(table_id: int) -> int | None:
    """The table's current version (sync; ``tables.selectors.table_version``)."""
    return table_version(table_id=table_id)


def build_table_state(table_id: int) -> Mapping[str, Any]:
    """A fresh public frame of a table (sync; its game's ``public_frame``, tables/games.py).
    Raises TableNotFoundError."""
    return games.game_of(table_id).public_frame(table_id)


def render_private_frames(table_id: int, user_ids: set[int]) -> dict[int, str]:
    """Each of ``user_ids``' private frame at the table, serialised, in one batched read
    (sync; its game's ``private_frames``, tables/games.py). Raises TableNotFoundError."""
    return games.game_of(table_id).private_frames(table_id, user_ids)


class TableHub:
    """The sockets of one event loop, by table, the delivery of frames to them, and the
    cached public frame their connects are sent (``public_snapshot``)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.sockets: dict[int, set[HubSocket]] = defaultdict(set)
        self.players: dict[int, set[HubSocket]] = defaultdict(set)
        self.listener: asyncio.Task[None] | None = None
        self.heartbeat: asyncio.Task[None] | None = None
        self.subscribed = asyncio.Event()
        # Connect frames: a table's generation grows with every delivery of that table that
        # reaches this hub; the epoch with every (re)subscription (deliveries may have been lost).
        self.epoch = 0
        self.generations: dict[int, int] = defaultdict(int)
        self.snapshots: dict[int, CachedSnapshot] = {}
        self.building: dict[int, asyncio.Task[CachedSnapshot]] = {}
        # A connect storm's reads, shared by the requests that arrive together (batches.py).
        self.versions: ReadBatches[int, int, int | None] = ReadBatches(loop, _read_versions)
        self.privates: ReadBatches[int, int, str] = ReadBatches(loop, _read_privates)
        # A public frame's private states, written without holding the next frame (refresh.py).
        self.refresh = PrivateRefresh(
            loop, lambda table_id: self.sockets.get(table_id, ()), _read_privates, self.write_privates
        )
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
        while True:
            try:
                # Not in the process's one thread for sync code (thread-sensitive): a busy
                # process queues seconds of work there (a hand of 10,000 sockets' private
                # states, requests), and a heartbeat waiting behind it got the process taken
                # for dead and its 5,000 players off their seats (docs/benchmarks.md).
                await database_sync_to_async(presence.beat, thread_sensitive=False)(now=timezone.now())
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
        if socket.table_id not in self.sockets:
            self.snapshots.pop(socket.table_id, None)  # nobody left here to connect to it

    def drop_snapshots(self) -> None:
        """Forget every cached connect frame (after a (re)subscription)."""
        self.epoch += 1
        self.snapshots.clear()

    def generation(self, table_id: int) -> tuple[int, int]:
        """What has reached this hub about the table: (subscription epoch, deliveries)."""
        return (self.epoch, self.generations.get(table_id, 0))

    def table_changed(self, table_id: int) -> None:
        """A delivery of the table reached this hub: its cached connect frame is stale."""
        self.generations[table_id] += 1
        self.snapshots.pop(table_id, None)

    async def public_snapshot(self, table_id: int) -> str:
        """The public frame (serialised) a new socket of a table whose game caches it
        is sent: the cached one while it is current (see the module's docstring for the
        rule), else a fresh build shared by every connect that waits for it. Raises
        TableNotFoundError."""
        snapshot: CachedSnapshot | None = None
        for _ in range(SNAPSHOT_ATTEMPTS):
            cached = self.snapshots.get(table_id)
            if cached is not None and time.monotonic() - cached.built_at < SNAPSHOT_MAX_AGE_SECONDS:
                version = await self.versions.get(table_id, 0)  # one read for the connects waiting
                # Checked after the read: a delivery may have arrived meanwhile.
                if self.snapshots.get(table_id) is cached and version == cached.version:
                    return cached.render()
            task = self.building.get(table_id)
            if task is None:
                task = self.building[table_id] = self.loop.create_task(self._build(table_id))
                task.add_done_callback(_retrieve)  # its waiters may all have gone (closed sockets)
            snapshot = await asyncio.shield(task)
            if snapshot.generation == self.generation(table_id):
                return snapshot.render()  # nothing was delivered since its build began
        assert snapshot is not None
        return snapshot.render()

    async def private_state(self, table_id: int, user_id: int) -> str:
        """The player's private frame at the table (serialised) for his connect or
        ``snapshot``: read after this call, in one batched read with every other request of
        the table waiting meanwhile (``render_private_frames``). Raises TableNotFoundError."""
        return await self.privates.get(table_id, user_id)

    async def _build(self, table_id: int) -> CachedSnapshot:
        """Build the table's frame, and cache it unless a delivery arrived meanwhile."""
        generation = self.generation(table_id)
        try:
            frame = await database_sync_to_async(build_table_state)(table_id)
        finally:
            del self.building[table_id]
        snapshot = CachedSnapshot(
            frame=frame, version=frame["version"], generation=generation, built_at=time.monotonic()
        )
        if self.generation(table_id) == generation and table_id in self.sockets:
            self.snapshots[table_id] = snapshot
        return snapshot

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
        for table in sorted({socket.table_id for socket in members}):
            states = await database_sync_to_async(render_private_frames)(table, {user_id})
            for socket in members:
                if socket.table_id == table:
                    await self._send(socket, {"type": "websocket.send", "text": states[user_id]})

    async def deliver_players(self, table_id: int, user_ids: set[int]) -> None:
        """Send the local sockets of ``user_ids`` at ``table_id`` their private states, all
        rendered in one batched read (``render_private_frames``) and handed to daphne sockets
        without an await each (``write_frames``)."""
        members = [s for user_id in user_ids for s in self.players.get(user_id, ()) if s.table_id == table_id]
        if not members:
            return
        states = await database_sync_to_async(render_private_frames)(table_id, {socket.user_id for socket in members})
        await self.write_privates(table_id, members, states)

    async def write_privates(self, table_id: int, members: list[HubSocket], states: Mapping[int, str]) -> None:
        """Hand each of ``members`` its ``states[user_id]`` (``write_frames``, else its ASGI send)."""
        _, slow = self.write_frames(table_id, members, lambda socket: states[socket.user_id], prepare=None)
        for socket in slow:
            await self._send(socket, {"type": "websocket.send", "text": states[socket.user_id]})

    async def dispatch_many(self, payloads: list[dict[str, Any]]) -> None:
        """Deliveries that arrived together, in their order, except that a run of consecutive
        private refreshes of players at one table (``publish_player`` with a ``table_id`` and
        no ``close_code``: what every purchase sends) is rendered in one batched read and
        sent once per socket. Each player still gets a private state read after his refresh
        was published. One at a time, 1,000 purchases' refreshes took the single sync thread
        a read each, and the next hand's change frame waited behind them for 64-76 s at both
        daphnes (docs/benchmarks.md, issue 23)."""
        run_table: int | None = None
        run_users: set[int] = set()
        for payload in [*payloads, None]:
            batchable = (
                payload is not None
                and "user_id" in payload
                and payload.get("close_code") is None
                and payload.get("table_id") is not None
            )
            if batchable and payload is not None and payload["table_id"] == run_table:
                run_users.add(payload["user_id"])
                continue
            if run_table is not None:
                await self.deliver_players(run_table, run_users)
                run_table, run_users = None, set()
            if payload is None:
                break
            if batchable:
                run_table, run_users = payload["table_id"], {payload["user_id"]}
            else:
                await self.dispatch(payload)

    async def deliver(
        self, table_id: int, text: str | None, refresh_private: bool, published_at: float | None = None
    ) -> None:
        """Send ``text`` to every local socket of the table (framed once, handed to each open
        daphne connection with no await per socket: ``write_frames``; other sockets through
        their ASGI send), then (if asked) have each one's private state sent
        (``PrivateRefresh``, not awaited: the next delivery is not held behind its read). A
        socket that fails is dropped; the others go on. The garbage collector is off from the
        first write to the flush. ``published_at`` (epoch s, ``publish_table_frame``) dates
        the ``FanoutReport`` logged once the transports are flushed."""
        self.table_changed(table_id)
        members = list(self.sockets.get(table_id, ()))
        if not members:
            return
        report: FanoutReport | None = None
        origin = time.time() if published_at is None else published_at
        if text:
            started, cpu = time.time(), time.thread_time()
            data = text.encode()
            prepared: Any = None

            def frame(protocol: Any) -> Any:
                nonlocal prepared
                if prepared is None:
                    prepared = protocol.factory.prepareMessage(data)  # framed once for everyone
                return prepared

            collecting = gc.isenabled()
            gc.disable()
            self.refresh.hold()  # no private slice begins until this frame is flushed (refresh.py)
            try:
                written, slow = self.write_frames(table_id, members, lambda _socket: text, prepare=frame)
                for socket in slow:
                    await self._send(socket, {"type": "websocket.send", "text": text})
                written.extend(time.time() for _ in slow)
                loop_done = time.time()
                # The transports write to the kernel when the event loop next polls them: the
                # first full turn of the loop after the writes (see FanoutReport.flushed).
                await asyncio.sleep(0)
                await asyncio.sleep(0)
            finally:
                self.refresh.release()
                if collecting:
                    gc.enable()
            report = FanoutReport(
                table_id=table_id,
                frame=frame_head(text),
                sockets=len(written),
                queued=started - origin,
                written=[offset - origin for offset in written],
                loop=loop_done - origin,
                flushed=time.time() - origin,
                cpu=time.thread_time() - cpu,
            )
            if report.sockets >= settings.FANOUT_REPORT_MIN_SOCKETS:
                report.log()  # now: the private states below may take seconds
        if refresh_private:
            reported = report is not None and report.sockets >= settings.FANOUT_REPORT_MIN_SOCKETS
            self.refresh.want(table_id, report if reported else None, origin)

    def write_frames(
        self,
        table_id: int,
        members: list[HubSocket],
        text_of: Callable[[HubSocket], str],
        *,
        prepare: Callable[[Any], Any] | None,
    ) -> tuple[list[float], list[HubSocket]]:
        """Hand each open daphne socket of ``members`` its frame, without awaiting anything:
        with ``prepare`` the one prepared message it returns (the same bytes for everyone),
        else ``text_of(socket)`` framed for that socket. Returns the epoch second at which each
        write was handed over, and the sockets that must go through their ASGI send (not
        daphne, or not open). A socket whose write fails is dropped from the hub."""
        written: list[float] = []
        slow: list[HubSocket] = []
        for socket in members:
            protocol = prepared_protocol(socket)
            if protocol is None:
                slow.append(socket)
                continue
            try:
                if prepare is not None:
                    send_prepared(protocol, prepare(protocol))  # to the kernel now when nothing is queued
                else:
                    protocol.sendMessage(text_of(socket).encode())  # what daphne's serverSend does
            except Exception:  # the connection went away under us: the others go on
                logger.debug("dropping a closed socket of table %s", table_id, exc_info=True)
                self.discard(socket)
                continue
            written.append(time.time())
        return written, slow

    async def _send(self, socket: HubSocket, message: dict[str, Any]) -> None:
        try:
            await socket.base_send(message)
        except Exception:  # a socket closing mid-broadcast must not stop the others
            logger.debug("dropping a closed socket of table %s", socket.table_id, exc_info=True)
            self.discard(socket)

    async def dispatch(self, payload: dict[str, Any]) -> None:
        """One published delivery (``publish_table_frame``, ``publish_player`` or
        ``publish_tokens_revoked``)."""
        if "forget_tokens" in payload:
            for forget in bus.TOKEN_LISTENERS:
                forget(int(payload["forget_tokens"]))
        elif "user_id" in payload:
            await self.deliver_player(
                payload["user_id"], payload.get("table_id"), payload.get("close_code"), payload.get("text")
            )
        else:
            await self.deliver(
                payload["table_id"], payload["text"], payload["refresh_private"], payload.get("published_at")
            )

    async def _listen(self) -> None:
        """One Redis pattern subscription for this process; re-subscribes after errors."""
        import redis.asyncio as aioredis

        pattern = channel_prefix() + "*"
        while True:
            client = aioredis.Redis.from_url(settings.REDIS_URL, socket_timeout=None)
            try:
                pubsub = client.pubsub()
                await pubsub.psubscribe(pattern)
                self.drop_snapshots()  # what was published while unsubscribed never came
                self.subscribed.set()
                async for message in pubsub.listen():
                    if message.get("type") != "pmessage":
                        continue
                    payloads = [json.loads(message["data"])]
                    while len(payloads) < DISPATCH_BATCH:  # what else has arrived meanwhile
                        more = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0)
                        if more is None:
                            break
                        if more.get("type") == "pmessage":
                            payloads.append(json.loads(more["data"]))
                    await self.dispatch_many(payloads)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("table hub subscription failed; re-subscribing")
                await asyncio.sleep(1)
            finally:
                await client.aclose()


async def _read_versions(table_id: int, _items: set[int]) -> dict[int, int | None]:
    return {0: await database_sync_to_async(read_table_version)(table_id)}


async def _read_privates(table_id: int, user_ids: set[int]) -> dict[int, str]:
    states: dict[int, str] = await database_sync_to_async(render_private_frames)(table_id, user_ids)
    return states


def _retrieve(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()  # raised to its waiters; not logged again as never retrieved


_hubs: dict[asyncio.AbstractEventLoop, TableHub] = {}


def get_hub() -> TableHub:
    """The hub of the running event loop (one per ASGI process; tests run several loops)."""
    loop = asyncio.get_running_loop()
    hub = _hubs.get(loop)
    if hub is None:
        for stale in [other for other in _hubs if other.is_closed()]:
            del _hubs[stale]
        hub = _hubs[loop] = TableHub(loop)
        bus.register_receiver(loop, hub.dispatch)  # embedded deliveries of this loop (tables/realtime/bus.py)
    return hub
