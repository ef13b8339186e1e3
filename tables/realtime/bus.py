"""The publish side of the table frames: what a service, the clock or a request calls to
reach every ASGI process's hub (tables/realtime/hub.py, the per-process receiver).

* In production (``REDIS_URL``) a delivery is one ``PUBLISH`` on its hub channel
  (``tables.realtime.frames.hub_channel``: ``<prefix>:table:<id>`` for a table's frames,
  ``<prefix>:table:player.<user id>`` for one player's private refresh); every process's
  hub is subscribed once to the pattern ``<prefix>:table:*``.
* In the embedded default a delivery is handed to the receivers of this process's event
  loops (``register_receiver``: each hub registers itself when it is made), on their loop.

A delivery is a JSON object: ``{"table_id", "text", "refresh_private", "published_at"}``
for a table's public frame, ``{"user_id", "table_id", "close_code", "text"}`` for one
player's sockets, ``{"forget_tokens"}`` for the API tokens a process cached for a player.
Publishing never raises: a Redis that does not answer is logged and recorded as a
degradation (security audit L7); pushes are hints, the snapshot is the truth.

This module names no game and imports no hub: the receivers come to it.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from django.conf import settings
from django.utils import timezone

from tables.realtime.frames import hub_channel
from tables.services import degradation

logger = logging.getLogger(__name__)

Receiver = Callable[[dict[str, Any]], Coroutine[Any, Any, None]]
"""What takes one delivery in a process (a hub's ``dispatch``), a coroutine function."""

_receivers: dict[asyncio.AbstractEventLoop, Receiver] = {}
_publisher: Any = None
_deliveries: set[asyncio.Task[None]] = set()  # strong references until each delivery is done


def layer_prefix() -> str:
    """The Redis key prefix of this installation's channel layer (``CHANNEL_LAYER_PREFIX``)."""
    return str(settings.CHANNEL_LAYERS["default"].get("CONFIG", {}).get("prefix", "asgi"))


def channel_prefix() -> str:
    """What every hub channel starts with; each process subscribes to ``<this>*``."""
    return f"{layer_prefix()}:table:"


def register_receiver(loop: asyncio.AbstractEventLoop, receiver: Receiver) -> None:
    """Make ``receiver`` the embedded-mode receiver of the deliveries for ``loop`` (the hub
    of that loop; one per loop, a later one replaces it). Receivers of closed loops are
    forgotten here."""
    for stale in [other for other in _receivers if other.is_closed()]:
        del _receivers[stale]
    _receivers[loop] = receiver


def publish_table_frame(table_id: int, text: str | None, *, refresh_private: bool = False) -> None:
    """Deliver a public frame to every socket of the table, in every ASGI process, and
    with ``refresh_private`` each of those sockets its own private state.

    Call from sync code (services' on-commit hooks, the clock). With Redis: one ``PUBLISH``.
    Embedded: hand the frame to the hubs of this process's event loops.
    """
    _publish(
        hub_channel(layer_prefix(), "table", table_id),
        {"table_id": table_id, "text": text, "refresh_private": refresh_private, "published_at": time.time()},
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


TOKEN_LISTENERS: list[Callable[[int], None]] = []
"""What a hub calls with the user id of a ``publish_tokens_revoked`` delivery (the REST
purchase door's token cache registers its ``forget_user``)."""


def publish_tokens_revoked(user_id: int) -> None:
    """Tell every ASGI process to forget the API tokens it cached for the player (a token
    deleted, an account deactivated: the REST purchase door, tables/api/purchase_door.py)."""
    _publish(hub_channel(layer_prefix(), "player", user_id), {"forget_tokens": user_id})


def _publish(channel: str, payload: dict[str, Any]) -> None:
    if settings.REDIS_URL:
        global _publisher
        if _publisher is None:
            import redis

            # Fail fast: a push runs after a commit, in the request that made the change; a
            # Redis that does not answer must not hold that request (security audit L7).
            _publisher = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1)
        try:
            _publisher.publish(channel, json.dumps(payload))
        except Exception:
            logger.exception("publishing to %s failed", channel)
            degradation.record_degradation(kind=degradation.REDIS, now=timezone.now())
        return
    for loop, receiver in list(_receivers.items()):
        if not loop.is_closed():
            # A fresh context: the caller's (a sync_to_async worker thread) carries asgiref's
            # thread-sensitive markers, which would make the hub's own database reads deadlock.
            loop.call_soon_threadsafe(_start_delivery, loop, receiver, payload, context=contextvars.Context())


def _start_delivery(loop: asyncio.AbstractEventLoop, receiver: Receiver, payload: dict[str, Any]) -> None:
    task = loop.create_task(receiver(payload))
    _deliveries.add(task)
    task.add_done_callback(_deliveries.discard)
