"""WiderPoker as a game of the house (tables/gamespec.py): its ``GAME``, built from its own
functions, which the registry (``tables.games``) lists."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from tables.gamespec import ConditionsSpec, Game, GameAdmin, GameAudit
from tables.models import CONFIG_FIELDS, HandStatus, Table, TableGame, TablePhase, WiderPokerConditions
from tables.widerpoker import KEY, audit
from tables.widerpoker.commands import COMMANDS, PURCHASES
from tables.widerpoker.forms import ChangeConditionsForm, TableCreateForm
from tables.widerpoker.lobby import LOBBY
from tables.widerpoker.page import table_page
from tables.widerpoker.selectors import get_entry_state, get_table_state, lobby_row, render_entry_states
from tables.widerpoker.services.conditions import validate_table_config
from tables.widerpoker.services.create import create_table
from tables.widerpoker.services.lifecycle import (
    advance_widerpoker_table,
    apply_pending_changes,
    cancel_running_hand,
    publish_live_pools,
)
from tables.widerpoker.services.play import resolve_pending_redeals
from tables.widerpoker.services.seating import leave_table
from tables.widerpoker.services.settlement import capture_running_purchases

logger = logging.getLogger(__name__)


def leave(table_id: int, user_id: int, now: datetime) -> object:
    """Take the player away from the table as ``leave_table`` does (his entry in the running
    hand stays in play), a tournament's table included."""
    return leave_table(table_id=table_id, user_id=user_id, now=now, tournament_ok=True)


def current_conditions(table: Table) -> dict[str, Any]:
    """The conditions in force (``CONFIG_FIELDS``, on the table's conditions row)."""
    return table.widerpoker.values()


def validate(values: Mapping[str, Any], mode: str) -> None:
    """The conditions' rules (the mode changes nothing here). Raises InvalidTableConfigError."""
    validate_table_config(dict(values))


def on_change(table: Table, now: datetime) -> None:
    """A table with no hand running restarts with its new conditions at once; a running
    hand finishes under the old ones and the clock applies them when it ends."""
    if table.phase in (TablePhase.WAITING, TablePhase.CLOSED):
        apply_pending_changes(table, now=now)
        table.phase_deadline = None


def on_tick(now: datetime) -> None:
    """Once per tick: deal the redeals waiting for their beacon round, move the purchases
    confirmed since the last tick into their hands' escrows, push changed prize pools. Each
    failure is logged: the next tick or the settlement does the work."""
    try:
        resolve_pending_redeals(now=now)
    except Exception:
        logger.exception("dealing pending redeals failed; they wait for the next tick or the settlement")
    try:
        capture_running_purchases()
    except Exception:
        logger.exception("capturing purchases failed; the holds wait for the next tick or the settlement")
    publish_live_pools()


def running_hand(table: Table) -> str | None:
    """The label of the hand a malfunction cancel would cancel: the one in its change phase."""
    hand = table.current_hand
    if hand is None or hand.status != HandStatus.CHANGE:
        return None
    return f"hand #{hand.number}"


def running_hands_started(tables: Sequence[Table]) -> dict[int, datetime]:
    """When each table's hand in its change phase started (tables without one left out; no
    query when the tables were read with their ``current_hand``)."""
    started: dict[int, datetime] = {}
    for table in tables:
        hand = table.current_hand
        if hand is not None and hand.status == HandStatus.CHANGE:
            started[table.pk] = hand.started_at
    return started


def changed_message(table: Table, changes: Mapping[str, Any]) -> str:
    """What the admin says once a change of conditions is recorded."""
    if table.pending_changes:
        return (
            f"Recorded {len(changes)} change(s) to {table.name}. A hand is running: it finishes "
            "under the old conditions, then the table restarts with the new ones."
        )
    return f"Recorded {len(changes)} change(s) to {table.name}; the table restarted with them."


GAME = Game(
    key=KEY,
    label=TableGame.WIDERPOKER.label,
    create=create_table,
    conditions=ConditionsSpec(
        fields=CONFIG_FIELDS, current=current_conditions, validate=validate, on_change=on_change, relation=KEY
    ),
    advance=advance_widerpoker_table,
    cancel=cancel_running_hand,
    leave=leave,
    admin=GameAdmin(
        create_form=TableCreateForm,
        create_initial=WiderPokerConditions(ante_minor=100, draw_price_bps=5000, redeal_price_minor=80).values(),
        conditions_form=ChangeConditionsForm,
        running_hand=running_hand,
        add_title="Add table",
        cancelled="cancelled and refunded",
        changed=changed_message,
    ),
    commands=COMMANDS,
    public_frame=lambda table_id: get_table_state(table_id=table_id),
    private_frames=lambda table_id, user_ids: render_entry_states(table_id=table_id, user_ids=user_ids),
    private_frame=lambda table_id, user_id: get_entry_state(table_id=table_id, user_id=user_id),
    page=table_page,
    lobby=LOBBY,
    lobby_row=lobby_row,
    cached_snapshot=True,
    purchases=PURCHASES,
    on_tick=on_tick,
    audit=GameAudit(totals=audit.totals, player_totals=audit.player_totals),
    running_hands_started=running_hands_started,
)
"""WiderPoker (seeds 000 and 001)."""
