"""The game screen's WebSocket: parses, rate-limits, hands actions to the one way in.

Inbound frames (JSON objects, at most 2 KB; an optional ``ref`` is echoed in the answer) are
the actions of the table's game (``Game.commands`` of the registry, tables/games.py: for
WiderPoker ``hold``, ``buy_draw``, ``redeal``, ``join``, ``leave``, ``sit_out``, ``sit_in``)
plus the socket's own
``snapshot`` (resend the public and private state) and ``ping`` (presence heartbeat, answered
by ``pong``). An accepted action is answered by ``ack``; the private state it changed arrives
once, pushed through the hub (tables/realtime/push.py). docs/protocol.md is the contract.

A bad frame gets ``{"type": "error", "code": ..., "message": ...}`` with a stable code: ``bad_json``,
``bad_message``, ``unknown_type``, ``unknown_field``, ``too_large``, ``too_deep``,
``invalid_hold``, ``invalid_field`` (the shared parse of tables/commands.py, the same as
REST's), ``rate_limited``, or a domain error's code. ``message`` is for people, in the language of
the connection (``language_of_scope``: the language cookie, else ``Accept-Language``, else
English), as REST's error bodies; the ``code`` never changes.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.db import connection as db_connection
from django.utils import timezone, translation
from django.utils.translation import gettext

from config.infra import metrics
from config.infra.errors import DomainError
from config.infra.languages import pick_language
from tables import commands, games
from tables.commands import FRAME_ENVELOPE, Action, frame_ref, parse_action, read_frame
from tables.errors import TableNotFoundError
from tables.games import Game
from tables.realtime.connections import daphne_protocol
from tables.realtime.frames import AckFrame, ErrorFrame, PongFrame, dumps
from tables.realtime.hub import get_hub
from tables.services import seating

logger = logging.getLogger(__name__)

MAX_FRAME_BYTES = 2048
CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404
CLOSE_FLOODING = 4429
FLOOD_STRIKES = 20


def language_of_scope(scope: dict[str, Any]) -> str:
    """The language a socket's messages are written in, chosen as LocaleMiddleware chooses a
    page's (docs/i18n.md): the ``django_language`` cookie, else the browser's
    ``Accept-Language`` header, else ``settings.LANGUAGE_CODE``; always one of ``LANGUAGES``."""
    cookie = (scope.get("cookies") or {}).get(settings.LANGUAGE_COOKIE_NAME)
    headers = scope.get("headers") or ()
    return pick_language(cookie, [value.decode("latin-1") for name, value in headers if name == b"accept-language"])


def record_socket_async() -> Any:
    """``seating.record_socket`` for a socket opening or closing, awaitable. On PostgreSQL it
    runs in a worker thread of its own (``thread_sensitive=False``, a connection of the
    process's pool), not in the process's one thread for sync code: a connect storm's
    commits then overlap (PostgreSQL flushes them together) instead of queueing one WAL flush
    after another behind each other and behind the table's pushes; the seat's row lock keeps
    the counts exact. SQLite, one writer at a time, keeps the one thread."""
    on_postgresql = "postgresql" in settings.DATABASES["default"]["ENGINE"]
    if not on_postgresql:
        return database_sync_to_async(seating.record_socket)
    return database_sync_to_async(_record_socket_and_return_connection, thread_sensitive=False)


def _record_socket_and_return_connection(**kwargs: Any) -> bool:
    """``seating.record_socket`` in a worker thread, its connection handed back to the pool
    after it: otherwise each worker thread keeps one out of the pool until the thread ends
    (the tests' event loops, one per test, each left up to six and exhausted the pool)."""
    try:
        return seating.record_socket(**kwargs)
    finally:
        db_connection.close()


class TokenBucket:
    """``rate`` messages a second on average, bursts of ``burst`` (clock injectable)."""

    def __init__(self, *, rate: float, burst: int, now: float) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self.stamp = now

    def take(self, now: float) -> bool:
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


class TableConsumer(AsyncWebsocketConsumer):
    """One browser (or API client) watching or playing at one table."""

    table_id: int
    user_id: int
    game: Game  # the table's game (tables/games.py), read once at connect
    counted = False  # whether this socket is counted in its seat's ws_connections
    metered = False  # whether this socket is counted in widerpoker_websockets_open

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.user_id = user.pk
        self.language = language_of_scope(self.scope)
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        self.bucket = TokenBucket(rate=settings.WS_RATE_PER_SECOND, burst=settings.WS_RATE_BURST, now=time.monotonic())
        self.strikes = 0
        try:
            self.game = await database_sync_to_async(games.game_of)(self.table_id)
        except TableNotFoundError:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        self.counted = await record_socket_async()(
            table_id=self.table_id, user_id=self.user_id, opened=True, now=timezone.now()
        )
        await self.accept()
        metrics.SOCKETS_OPEN.inc()
        self.metered = True
        hub = get_hub()
        hub.add(self)
        await hub.wait_subscribed()
        await self.send_snapshot()

    async def disconnect(self, code: int) -> None:
        if self.metered:
            metrics.SOCKETS_OPEN.dec()
            self.metered = False
        if not hasattr(self, "table_id"):
            return
        get_hub().discard(self)
        if self.counted:  # only what this socket counted: the seat may predate or postdate it
            await record_socket_async()(table_id=self.table_id, user_id=self.user_id, opened=False, now=timezone.now())

    async def dispatch(self, message: dict[str, Any]) -> None:
        """A frame received goes straight to its handler: channels' ``dispatch`` first closes
        the event loop thread's stale database connections in a worker thread, for every
        message (a quarter of a socket purchase's CPU), and this consumer touches the
        database only through ``database_sync_to_async``, which does that itself."""
        if message["type"] == "websocket.receive":
            await self.websocket_receive(message)
        else:
            await super().dispatch(message)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if not self.bucket.take(time.monotonic()):
            self.strikes += 1
            if self.strikes >= FLOOD_STRIKES:
                await self.close(code=CLOSE_FLOODING)
                return
            with translation.override(self.language):
                message = gettext("Too many messages: slow down.")
            await self.send(dumps(ErrorFrame(type="error", code="rate_limited", message=message)))
            return
        ref: str | int | None = None
        try:
            content = read_frame(text_data, max_bytes=MAX_FRAME_BYTES)
            ref = frame_ref(content)
            action = parse_action(content["type"], content, envelope=FRAME_ENVELOPE, game=self.game)
            if self._batched(action):
                await self.buy(action, ref)
                return
            await self.execute(action)
        except DomainError as failure:
            with translation.override(self.language):
                message = failure.for_people()
            frame = ErrorFrame(type="error", code=failure.code, message=message)
            if failure.extra:
                frame["extra"] = failure.extra
            if ref is not None:
                frame["ref"] = ref
            await self.send(dumps(frame))
        else:
            if action.name not in commands.SOCKET_ONLY:
                await self.send(dumps(AckFrame(type="ack", action=action.name, ref=ref)))

    def _batched(self, action: Action) -> bool:
        """Whether ``action`` is a purchase the process's purchase writer commits in a batch
        (``Game.purchases``: at a WiderPoker table a draw or redeal paid by the player,
        tables/widerpoker/services/purchases.py), with the writer on (free items keep the
        one-at-a-time path)."""
        door = self.game.purchases
        return door is not None and door.batches(action.name, action.params) and door.enabled()

    async def buy(self, action: Action, ref: str | int | None) -> None:
        """Queue a purchase for the writer without blocking the event loop, then answer: an
        ``ack`` and the new private state built by the writer after the commit, or the
        refusal's error frame (raised to ``receive``). A duplicate ``ref`` is acked with
        ``duplicate: true`` and the state read afresh; nothing is charged again."""
        door = self.game.purchases
        assert door is not None
        order = door.order(action.name, table_id=self.table_id, user_id=self.user_id, now=timezone.now(), ref=ref)
        door.precheck(order)
        outcome = await door.submit_async(order)
        if outcome.error is not None:
            raise outcome.error
        ack = AckFrame(type="ack", action=action.name, ref=ref)
        if outcome.duplicate:
            ack["duplicate"] = True
        # The frame's text, spliced from the panel cache (``Outcome.text``): asking for
        # ``Outcome.frame`` would build the dict frame too, panel included, for nothing.
        text = outcome.text
        if text is None:  # a duplicate: the state as it is now
            await self.send(dumps(ack))
            await self.send_private()
            return
        protocol = daphne_protocol(self)
        if protocol is not None:
            # Under daphne the two frames go straight to the connection, as daphne's own
            # send would write them, without two trips through channels' and daphne's queues.
            protocol.sendMessage(dumps(ack).encode())
            protocol.sendMessage(text.encode())
        else:
            await self.send(dumps(ack))
            await self.send(text)
        # The player's other screens at this table in this process get the same state (in
        # other processes they catch up at the next private frame: docs/protocol.md).
        for other in list(get_hub().players.get(self.user_id, ())):
            if other is not self and other.table_id == self.table_id:
                await other.base_send({"type": "websocket.send", "text": text})

    async def execute(self, action: Action) -> None:
        """Run a parsed action for this socket's player at this socket's table."""
        common = {"table_id": self.table_id, "user_id": self.user_id}
        if action.name == "ping":
            await database_sync_to_async(seating.touch_presence)(**common, now=timezone.now())
            await self.send(dumps(PongFrame(type="pong", server_time=timezone.now().isoformat())))
        elif action.name == "snapshot":
            await self.send_snapshot()
        else:
            await database_sync_to_async(commands.execute)(action, **common, now=timezone.now(), game=self.game)
            if commands.find_command(action.name, game=self.game).seats and not self.counted:
                # The player sat down from this open socket: from now on it is his presence.
                self.counted = await database_sync_to_async(seating.record_socket)(
                    **common, opened=True, now=timezone.now()
                )

    async def send_snapshot(self) -> None:
        """Send the public frame, then this player's private one. The public frame of a game
        whose connect frames are cached (``Game.cached_snapshot``, WiderPoker) comes from the
        hub's per-process cache while it is current (tables/realtime/hub.py,
        ``public_snapshot``): every socket of a table gets the same."""
        if self.game.cached_snapshot:
            await self.send(await get_hub().public_snapshot(self.table_id))
        else:
            state = await database_sync_to_async(self.game.public_frame)(self.table_id)
            await self.send(dumps(state))
        await self.send_private()

    async def send_private(self) -> None:
        """Send this player his private frame, read in one batched read with the other
        sockets of the table asking at the same moment (a connect storm: ``TableHub.private_state``)."""
        await self.send(await get_hub().private_state(self.table_id, self.user_id))


class LobbyConsumer(AsyncWebsocketConsumer):
    """The lobby's live list: forwards each table's lobby line as it changes."""

    async def connect(self) -> None:
        await self.channel_layer.group_add("lobby", self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard("lobby", self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        with translation.override(language_of_scope(self.scope)):
            message = gettext("The lobby socket only pushes.")
        await self.send(dumps(ErrorFrame(type="error", code="read_only", message=message)))

    async def push_frame(self, event: dict[str, Any]) -> None:
        if event.get("text"):
            await self.send(event["text"])
