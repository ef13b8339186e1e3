"""Hold'em's own push: the public frame of a clock step or a player's action that played a
betting action and left the hand running, built from the rows the step holds (no statement,
no second replay), handed to every process's hub (tables/realtime/bus.py) with each seated
socket's private state, and no lobby line (an action changes only the line's ``version``
and ``deadline``; perf audit 2026-11-26, section 3). The house's pushes
(tables/realtime/push.py) cover everything else."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from tables.holdem.selectors import HoldemTableRows, build_holdem_table_frame
from tables.models import Table
from tables.realtime import bus
from tables.realtime.frames import dumps


def broadcast_holdem_action_on_commit(table: Table, rows: HoldemTableRows) -> None:
    """After commit, push the public frame of a Hold'em table whose clock step played a
    betting action and left the hand running, built from what the step holds: ``table``
    as saved (its new ``version`` and ``phase_deadline``) and ``rows`` (conditions, hand,
    replayed state, seats). Byte for byte the frame a fresh read gives (its
    ``server_time`` aside), without the 5 statements and the second replay of that read.
    Seated sockets get their private state (``refresh_private``). No lobby line: between a
    deal and a settlement only its ``version`` and ``deadline`` change, and the lobby
    re-reads its list over HTTP (perf audit 2026-11-26, section 3)."""

    def push() -> None:
        frame = build_holdem_table_frame(table, rows, now=timezone.now())
        bus.publish_table_frame(table.pk, dumps(frame), refresh_private=True)

    transaction.on_commit(push, robust=True)
