"""The wire contract of table pushes: group names, frame shapes, and the broadcast helper.

Public frames of a table are serialised once per broadcast and fanned out by each ASGI
process's hub (tables/hub.py); private data (a player's own cards, odds and result) is built
per socket from ``tables.selectors.list_entry_states``, so nothing secret is ever broadcast.
Lobby lines and a player's own refreshes go through the Channels layer groups below. Change keys
and the server seed appear only in frames of a terminal hand.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Literal, NotRequired, TypedDict

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

logger = logging.getLogger(__name__)

LOBBY_GROUP = "lobby"


def player_group(user_id: int) -> str:
    """The Channels group of one player's sockets (all tables)."""
    return f"player.{user_id}"


class TableStateFrame(TypedDict):
    """Public state of a table; sent on every phase change (``version`` grows by one)."""

    type: Literal["table_state"]
    table_id: int
    version: int
    phase: str
    deadline: str | None
    server_time: str
    players: int
    hand: dict[str, Any] | None
    config: dict[str, Any]
    jackpots: list[dict[str, Any]]


class PoolUpdatedFrame(TypedDict):
    """The live prize pool of the running hand (not a state change: same ``version``)."""

    type: Literal["pool_updated"]
    table_id: int
    version: int
    hand_id: int
    gross_minor: int
    pool_minor: int
    rake_minor: int
    entries: int


class TableRestartedFrame(TypedDict):
    """A staff configuration change restarted the table; players go back to the lobby."""

    type: Literal["table_restarted"]
    table_id: int
    version: int
    reason: str


class KickedFrame(TypedDict):
    """The player may not stay at the tables (staff suspended the account, or he started a
    time-out or self-exclusion): sent to each of his game sockets just before the server
    closes it with ``CLOSE_KICKED``."""

    type: Literal["kicked"]
    reason: str


# The close code of a socket whose player was removed from play (KickedFrame).
CLOSE_KICKED = 4403


class LobbyTableFrame(TypedDict):
    """One table's line in the lobby."""

    type: Literal["lobby_table"]
    table: dict[str, Any]


class ErrorFrame(TypedDict):
    """The answer to a bad or refused inbound message; ``code`` is stable."""

    type: Literal["error"]
    code: str
    message: str
    ref: NotRequired[Any]


def dumps(frame: Any) -> str:
    """Serialise a frame compactly (one serialisation per broadcast)."""
    return json.dumps(frame, separators=(",", ":"), sort_keys=False)


def send_to_group(
    group: str,
    text: str | None,
    *,
    refresh_private: bool = False,
    table_id: int | None = None,
    close_code: int | None = None,
) -> None:
    """Send pre-serialised ``text`` to every socket in ``group`` (from sync code).

    ``refresh_private`` asks each seated player's consumer to rebuild and send its private
    entry state as well; ``table_id`` limits that to the sockets of one table (for pushes to
    a player's own group, which spans tables); ``close_code`` asks each game socket to close
    with that code after sending ``text``. A failed send is logged, never raised: pushes are hints and clients
    resynchronise from the HTTP snapshot (channel layers are at-most-once by specification).
    """
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(
            group,
            {
                "type": "push.frame",
                "text": text,
                "refresh_private": refresh_private,
                "table_id": table_id,
                "close_code": close_code,
            },
        )
    except Exception:  # a broken layer must never break a hand
        logger.exception("push to %s failed", group)


def broadcast_table_on_commit(table_id: int, *, refresh_private: bool = False, lobby: bool = True) -> None:
    """After the current transaction commits, push the table's public state to everyone at
    the table (through the hubs; with ``refresh_private`` each seated socket also gets its own
    private state) and its lobby line to the lobby. Nothing is announced for a rolled-back
    change."""

    def push() -> None:
        from tables.hub import publish_table_frame
        from tables.selectors import get_lobby_table, get_table_state

        publish_table_frame(table_id, dumps(get_table_state(table_id=table_id)), refresh_private=refresh_private)
        if lobby:
            send_to_group(
                LOBBY_GROUP,
                dumps(LobbyTableFrame(type="lobby_table", table=get_lobby_table(table_id=table_id))),
            )

    transaction.on_commit(push)


def push_private_on_commit(table_id: int, user_id: int) -> None:
    """After commit, ask the player's sockets at ``table_id`` to resend their private state."""

    def push() -> None:
        send_to_group(player_group(user_id), None, refresh_private=True, table_id=table_id)

    transaction.on_commit(push)


def push_player_on_commit(user_id: int) -> None:
    """After commit, ask every game screen of the player (all tables) to resend his private
    state: his balance changed outside a table, e.g. a cashier's deposit (issue #11)."""

    def push() -> None:
        send_to_group(player_group(user_id), None, refresh_private=True)

    transaction.on_commit(push)


def kick_player_on_commit(user_id: int, reason: str) -> None:
    """After commit, tell every game socket of the player why he was removed from play
    (KickedFrame) and close it with ``CLOSE_KICKED``; the page does not reconnect."""

    def push() -> None:
        send_to_group(player_group(user_id), dumps(KickedFrame(type="kicked", reason=reason)), close_code=CLOSE_KICKED)

    transaction.on_commit(push)
