"""WiderPoker's player actions (docs/protocol.md): the fields each takes, how they are
parsed and the service that runs it. The transports (socket, REST, forms) find them through
the game registry (``tables.games``) and run them through the house's one way in
(tables/commands.py: ``parse_action``, ``execute``); the wire does not change.

| action     | fields           | service                                            |
| ---------- | ---------------- | -------------------------------------------------- |
| `hold`     | `hold` (required)| ``set_hold``: five JSON booleans, column 0 first    |
| `buy_draw` | `free`           | ``buy_draw`` (or the purchase writer, paid)        |
| `redeal`   | `free`           | ``buy_redeal`` (or the purchase writer, paid)      |
| `join`     |                  | ``join_table`` (the socket then counts as presence)|
| `leave`    |                  | ``leave_table``                                    |
| `sit_out`  |                  | ``sit_out``                                        |
| `sit_in`   |                  | ``sit_in`` (the socket then counts as presence)    |
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from concurrent.futures import Future
from datetime import datetime
from typing import Any, Final

from tables.commands import Command, InvalidFieldError
from tables.errors import InvalidHoldError
from tables.gamespec import PurchaseDoor
from tables.widerpoker.services import play, purchases, seating


def parse_hold(value: object) -> tuple[bool, ...]:
    """Five JSON booleans, column 0 first (rules B.2). ``1``, ``"true"`` and ``null`` are not
    booleans. Raises InvalidHoldError.

    >>> parse_hold([True, False, False, True, False])
    (True, False, False, True, False)
    """
    if not isinstance(value, list) or len(value) != 5 or not all(isinstance(item, bool) for item in value):
        raise InvalidHoldError("a hold is five booleans, one per column", hold=repr(value)[:60])
    return tuple(value)


def parse_free(value: object) -> bool:
    """Whether to use a free item of the player's power-ups: a JSON boolean (an HTML form's
    ``"true"``/``"false"`` arrive as one through ``form_value``). Raises InvalidFieldError."""
    if isinstance(value, bool):
        return value
    raise InvalidFieldError('"free" is true or false', field="free")


COMMANDS: Final[Mapping[str, Command]] = {
    "hold": Command(frozenset({"hold"}), play.set_hold, {"hold": parse_hold}, required=frozenset({"hold"})),
    "buy_draw": Command(frozenset({"free"}), play.buy_draw, {"free": parse_free}),
    "redeal": Command(frozenset({"free"}), play.buy_redeal, {"free": parse_free}),
    "join": Command(frozenset(), seating.join_table, seats=True),
    "leave": Command(frozenset(), seating.leave_table),
    "sit_out": Command(frozenset(), seating.sit_out),
    "sit_in": Command(frozenset(), seating.sit_in, seats=True),
}
"""WiderPoker's actions by name (``Game.commands``)."""


def _batches(name: str, params: Mapping[str, Any]) -> bool:
    """A draw or redeal paid by the player (a free item keeps the one-at-a-time path)."""
    return name in purchases.ACTIONS and not params.get("free")


def _order(name: str, *, table_id: int, user_id: int, now: datetime, ref: object) -> purchases.Order:
    """The writer's order for purchase action ``name`` (its kind), ``ref`` as the client sent it."""
    return purchases.Order(
        kind=purchases.ACTIONS[name], table_id=table_id, user_id=user_id, now=now, ref=purchases.clean_ref(ref)
    )


def _submit(order: purchases.Order) -> Future[purchases.Outcome]:
    """Queue ``order`` with the process's writer; a future of its outcome."""
    return purchases.get_writer().submit(order)


def _submit_async(order: purchases.Order) -> asyncio.Future[purchases.Outcome]:
    """Queue ``order`` with the process's writer from the running event loop."""
    return purchases.get_writer().submit_async(order)


PURCHASES: Final = PurchaseDoor(
    batches=_batches,
    enabled=purchases.enabled,
    order=_order,
    precheck=purchases.precheck,
    submit=_submit,
    submit_async=_submit_async,
    wait=purchases.wait,
)
"""WiderPoker's paid draws and redeals through the purchase writer (``Game.purchases``)."""
