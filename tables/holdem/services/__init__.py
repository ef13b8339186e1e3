"""Texas Hold'em tables on the platform (DESIGN.md, "Texas Hold'em tables"; "Two games,
one house"): conditions, seats and money, the hand on the clock, pushes and reads. The
rules are the engine's (``tables.engine.holdem``)."""

from __future__ import annotations

from tables.holdem.records import replay, structure_of
from tables.holdem.services.conditions import create_holdem_table, validate_holdem_config
from tables.holdem.services.deal import advance_holdem_table
from tables.holdem.services.hands import cancel_holdem_hand
from tables.holdem.services.player import (
    act_in_hand,
    add_chips,
    leave_holdem_table,
    sit_in_holdem,
    sit_out_holdem,
    take_seat,
)

__all__ = [
    "act_in_hand",
    "add_chips",
    "advance_holdem_table",
    "cancel_holdem_hand",
    "create_holdem_table",
    "leave_holdem_table",
    "replay",
    "sit_in_holdem",
    "sit_out_holdem",
    "structure_of",
    "take_seat",
    "validate_holdem_config",
]
