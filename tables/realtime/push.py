"""Pushes: one path per audience (tables/realtime/frames.py lists them).

* A table's watchers: ``broadcast_table_on_commit`` serialises the public state once and
  hands it to every ASGI process's hub (tables/realtime/hub.py); with ``refresh_private``
  each hub also sends every seated socket of that table its own private state.
* One player's sockets: ``push_private_on_commit`` (one table) and
  ``push_player_on_commit`` (all his tables, e.g. after a cashier's deposit) ask the hubs
  to send that player's sockets their private state; ``kick_player_on_commit`` tells
  them why and closes them (a suspended account).
* The lobby: ``publish_lobby_line`` through the Channels layer group ``lobby``.
* A game may push its public frame from rows it already holds through ``bus`` itself
  (tables/holdem/push.py: a Hold'em betting action, no second read, no lobby line).

Every helper runs after the current transaction commits, so nothing is announced for a
rolled-back change, and runs robustly: a push that raises (Redis unreachable, security
audit L7) is logged by Django and never turns the committed change into an error for the
request or clock step that made it. Pushes are hints; the snapshot is the truth.
Private data is built per socket by the hub, through the table's game
(``Game.private_frames``, tables/realtime/hub.py): nothing secret is ever broadcast.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction
from django.utils import timezone

from tables import selectors
from tables.realtime import bus
from tables.realtime.frames import CLOSE_KICKED, LOBBY_GROUP, KickedFrame, LobbyTableFrame, dumps
from tables.services import degradation

logger = logging.getLogger(__name__)


def publish_lobby_line(table_id: int, *, row: dict[str, Any] | None = None) -> None:
    """Send the table's lobby line to every lobby socket (from sync code): ``row`` when the
    caller built it from the rows it holds (``selectors.lobby_table_row``), else read. A
    failed send is logged, never raised: pushes are hints, the lobby re-reads its list over
    HTTP."""
    layer = get_channel_layer()
    if layer is None:
        return
    line = selectors.get_lobby_table(table_id=table_id) if row is None else row
    text = dumps(LobbyTableFrame(type="lobby_table", table=line))

    async def send() -> None:
        # Bounded: this runs after a commit, in the request or clock step that made the
        # change; a Redis that does not answer must not hold it (security audit L7).
        await asyncio.wait_for(layer.group_send(LOBBY_GROUP, {"type": "push.frame", "text": text}), LOBBY_PUSH_SECONDS)

    try:
        async_to_sync(send)()
    except Exception:  # a broken layer must never break a hand
        logger.exception("push to the lobby failed")
        degradation.record_degradation(kind=degradation.REDIS, now=timezone.now())


LOBBY_PUSH_SECONDS = 1.0
"""How long a lobby push may take before it is given up (the lobby re-reads over HTTP)."""


def broadcast_table_on_commit(table_id: int, *, refresh_private: bool = False, lobby: bool = True) -> None:
    """After commit, push the table's public state to everyone at the table (and, with
    ``refresh_private``, each seated socket its own private state) and its lobby line."""

    def push() -> None:
        bus.publish_table_frame(
            table_id, dumps(selectors.get_public_state(table_id=table_id)), refresh_private=refresh_private
        )
        if lobby:
            publish_lobby_line(table_id)

    transaction.on_commit(push, robust=True)


def push_private_on_commit(table_id: int, user_id: int) -> None:
    """After commit, send the player's sockets at ``table_id`` their private state."""
    transaction.on_commit(lambda: bus.publish_player(user_id, table_id=table_id), robust=True)


def push_player_on_commit(user_id: int) -> None:
    """After commit, send every game screen of the player (all tables) his private state:
    his balance changed outside a table, e.g. a cashier's deposit."""
    transaction.on_commit(lambda: bus.publish_player(user_id), robust=True)


def kick_player_on_commit(user_id: int, reason: str) -> None:
    """After commit, tell every game socket of the player why he was removed from play
    (``KickedFrame``) and close it with ``CLOSE_KICKED`` (a suspended account, a time-out or
    self-exclusion started)."""
    text = dumps(KickedFrame(type="kicked", reason=reason))
    transaction.on_commit(lambda: bus.publish_player(user_id, text=text, close_code=CLOSE_KICKED), robust=True)
