"""Admin of tables, seats, hands, entries and the configuration audit log.

The admin is an adapter: every change goes through a service. A table's conditions change
only on the "Change conditions" page, with a mandatory reason, through
``change_table_config`` (audit-logged; a running hand finishes under the old conditions).
Opening, closing and cancelling a running hand (malfunction, with full refunds) are list
actions that ask for a reason. Hands (both games), entries, seats and the audit log are read-only.
Staff with only view permissions (auditors) see everything and change nothing.
"""

from __future__ import annotations

from tables.admin.hands import EntryAdmin, HandAdmin, SeatAdmin, TableConfigChangeAdmin
from tables.admin.tables import TableAdmin
from tables.admin.tournaments import TournamentAdmin, TournamentRoundAdmin
from tables.holdem.admin import HoldemHandAdmin, HoldemHandPlayerAdmin
from tables.widerpoker.admin import SpecialHandScheduleAdmin

__all__ = [
    "EntryAdmin",
    "HandAdmin",
    "HoldemHandAdmin",
    "HoldemHandPlayerAdmin",
    "SeatAdmin",
    "SpecialHandScheduleAdmin",
    "TableAdmin",
    "TableConfigChangeAdmin",
    "TournamentAdmin",
    "TournamentRoundAdmin",
]
