"""State changes of tables, seats and hands. Views, consumers, tasks and admin call these."""

from __future__ import annotations

from tables.services.configuration import change_table_config, create_table, set_table_open
from tables.services.lifecycle import advance_due_tables, advance_table, publish_live_pools, recover_table
from tables.services.play import buy_draw, buy_redeal, hold_to_mask, set_hold
from tables.services.seating import (
    is_connected,
    join_table,
    leave_table,
    record_socket,
    remove_from_tables,
    sit_in,
    sit_out,
    touch_presence,
)
from tables.services.settlement import cancel_hand, settle_hand

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
