"""State changes of tables, seats and hands. Views, consumers, tasks and admin call these.

The names below are resolved on first use (PEP 562), not when the package is imported: a
module that needs one service module (``tables.selectors`` reads power-up sessions and the
special-hand schedule) imports just that one, and importing ``tables.widerpoker.services.powerups``
does not drag in seating, play and the push helpers, which depend on the selectors. That
keeps the import graph free of cycles (selectors -> services -> push -> selectors).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tables.services.configuration import change_table_config, create_table, set_table_open
    from tables.services.lifecycle import advance_due_tables, advance_table, publish_live_pools, recover_table
    from tables.services.presence import is_connected
    from tables.services.seating import (
        join_table,
        leave_table,
        record_socket,
        remove_from_tables,
        sit_in,
        sit_out,
        touch_presence,
    )
    from tables.widerpoker.services.play import buy_draw, buy_redeal, hold_to_mask, set_hold
    from tables.widerpoker.services.settlement import cancel_hand, settle_hand

_HOMES = {
    "change_table_config": "tables.services.configuration",
    "create_table": "tables.services.configuration",
    "set_table_open": "tables.services.configuration",
    "advance_due_tables": "tables.services.lifecycle",
    "advance_table": "tables.services.lifecycle",
    "publish_live_pools": "tables.services.lifecycle",
    "recover_table": "tables.services.lifecycle",
    "buy_draw": "tables.widerpoker.services.play",
    "buy_redeal": "tables.widerpoker.services.play",
    "hold_to_mask": "tables.widerpoker.services.play",
    "set_hold": "tables.widerpoker.services.play",
    "is_connected": "tables.services.presence",
    "join_table": "tables.services.seating",
    "leave_table": "tables.services.seating",
    "record_socket": "tables.services.seating",
    "remove_from_tables": "tables.services.seating",
    "sit_in": "tables.services.seating",
    "sit_out": "tables.services.seating",
    "touch_presence": "tables.services.seating",
    "cancel_hand": "tables.widerpoker.services.settlement",
    "settle_hand": "tables.widerpoker.services.settlement",
}

__all__ = [
    "advance_due_tables",
    "advance_table",
    "buy_draw",
    "buy_redeal",
    "cancel_hand",
    "change_table_config",
    "create_table",
    "hold_to_mask",
    "is_connected",
    "join_table",
    "leave_table",
    "publish_live_pools",
    "record_socket",
    "recover_table",
    "remove_from_tables",
    "set_hold",
    "set_table_open",
    "settle_hand",
    "sit_in",
    "sit_out",
    "touch_presence",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:  # also how ``from tables.services import powerups`` finds a submodule
        raise AttributeError(f"module 'tables.services' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
