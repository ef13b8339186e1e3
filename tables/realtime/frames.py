"""The wire contract: every frame the sockets send and every group and channel name.

A leaf module: it imports nothing of the project, so selectors (which build frames),
push helpers (which send them) and consumers (which answer with them) all depend on it and
never on each other. ``docs/protocol.md`` documents the same frames for clients; a change
here is a change of a public contract: add fields, never rename or remove one.

Audiences and their one path each (tables/realtime/push.py):

* everyone watching a table: ``table_state``, ``pool_updated``, ``table_restarted``, through
  the per-process hub (``table`` channel);
* one player's sockets, at one table or all of them: ``entry_state`` (his own cards, odds,
  result) and ``kicked``, through the per-process hub (``player`` channel);
* the lobby: ``lobby_table``, through the Channels layer group ``lobby``;
* the sender of a frame: ``ack``, ``error``, ``pong``, the consumer's own answer.

Secrets (seeds, change keys, other players' cards) appear only in frames of a hand that is
over (DESIGN.md, *Provably fair*).
"""

from __future__ import annotations

import json
from typing import Any, Final, Literal, NotRequired, TypedDict

LOBBY_GROUP: Final = "lobby"
"""The Channels layer group of every lobby socket."""


def hub_channel(prefix: str, kind: Literal["table", "player"], key: int) -> str:
    """The Redis pub/sub channel of one hub delivery: ``<prefix>:table:<id>`` for a
    table's frames, ``<prefix>:table:player.<user id>`` for one player's private refresh.
    Every ASGI process subscribes once to the pattern ``<prefix>:table:*``."""
    return f"{prefix}:table:{key}" if kind == "table" else f"{prefix}:table:player.{key}"


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


class EntryStateFrame(TypedDict):
    """One player's private view of a WiderPoker table (only ever sent to that player):
    seat, balance (minor units, what he may spend), and his entry in the current hand
    (cards, hold, purchases, probability panel, result)."""

    type: Literal["entry_state"]
    table_id: int
    version: int
    seat: dict[str, Any] | None
    balance_minor: int
    currency: str
    hand_id: int | None
    entry: dict[str, Any] | None
    powerups: dict[str, Any] | None


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
    closes it with ``CLOSE_KICKED``; the page does not reconnect."""

    type: Literal["kicked"]
    reason: str


CLOSE_KICKED: Final = 4403
"""The WebSocket close code of a socket whose player was removed from play (KickedFrame)."""


class LobbyTableFrame(TypedDict):
    """One table's line in the lobby."""

    type: Literal["lobby_table"]
    table: dict[str, Any]


class AckFrame(TypedDict):
    """The answer to an accepted action; ``ref`` echoes the frame's ``ref`` (or null). The
    changed private state follows as an ``entry_state`` push."""

    type: Literal["ack"]
    action: str
    ref: str | int | None


class PongFrame(TypedDict):
    """The answer to ``ping``: the server's clock, for the countdown."""

    type: Literal["pong"]
    server_time: str


class ErrorFrame(TypedDict):
    """The answer to a bad or refused inbound message; ``code`` is stable."""

    type: Literal["error"]
    code: str
    message: str
    ref: NotRequired[Any]


def dumps(frame: Any) -> str:
    """Serialise a frame compactly (once per broadcast, whatever the number of sockets)."""
    return json.dumps(frame, separators=(",", ":"), sort_keys=False)
