"""Hold'em's own push: the public frame of a clock step or a player's action that played an
action, froze or dealt a hand, built from the rows the step holds (no statement, no second
replay), handed to
every process's hub (tables/realtime/bus.py) with each seated socket's private state. A
betting action that left the hand running sends no lobby line (it changes only the line's
``version`` and ``deadline``; perf audit 2026-11-26, section 3); the freeze, the deal
and the action that settled the hand send it, built from the table and seats held (only the jackpots read). The
house's pushes (tables/realtime/push.py) cover everything else."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from tables import selectors
from tables.holdem.selectors import HoldemTableRows, build_holdem_table_frame
from tables.models import SeatStatus, Table
from tables.realtime import bus, push
from tables.realtime.frames import dumps


def broadcast_holdem_action_on_commit(table: Table, rows: HoldemTableRows) -> None:
    """After commit, push the public frame of a Hold'em table whose clock step (or a
    player) played an action, built from what the step holds: ``table`` as saved (its new
    ``version`` and ``phase_deadline``) and ``rows`` (conditions, hand, replayed state,
    seats, all as written). Byte for byte the frame a fresh read gives (its
    ``server_time`` aside), without the 5 statements and the second replay of that read.
    Seated sockets get their private state (``refresh_private``). The lobby line only when
    the step froze or dealt a hand (``rows.lobby_line``) or the hand is over (settled):
    between a deal and a settlement only its ``version`` and ``deadline`` change, and the
    lobby re-reads its list over HTTP (perf audit 2026-11-26, section 3). At a Hold'em table
    every seat not left has a position,
    so the held seats count the line's players."""
    lobby = rows.lobby_line or (rows.hand is not None and rows.hand.is_terminal)
    players = sum(1 for seat in rows.seats if seat.position is not None and seat.status != SeatStatus.LEFT)

    def send() -> None:
        frame = build_holdem_table_frame(table, rows, now=timezone.now())
        bus.publish_table_frame(table.pk, dumps(frame), refresh_private=True)
        if lobby:
            table.holdem = rows.conditions  # the line's game side reads them (lobby.lobby_row): held, not read again
            push.publish_lobby_line(table.pk, row=selectors.lobby_table_row(table, players=players))

    transaction.on_commit(send, robust=True)
