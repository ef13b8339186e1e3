"""Presence that survives the death of an ASGI process (security audit F11).

A seat's ``ws_connections`` counted open game sockets; when a daphne process was killed or a
consumer crashed, its sockets were never uncounted and the seat looked connected for good
(falling back to the 30 s timeout instead of the 10 s reconnect grace). Now:

- each process has an id (``PROCESS_ID``) and an ``AsgiProcess`` row it stamps every
  ``PRESENCE_HEARTBEAT_SECONDS`` (``beat``, run by the process's table hub in a thread of
  its own: a process whose thread for sync code is busy is alive, not dead);
- ``record_socket`` counts a socket against the seat and against its process
  (``SeatSockets``);
- the clock calls ``reap_dead_processes``: a process silent for
  ``PRESENCE_PROCESS_TIMEOUT_SECONDS`` is dead; its sockets are taken off their seats'
  counts, and each seat's ``socket_closed_at`` becomes the process's last heartbeat, so the
  reconnect grace runs from when the sockets were last known alive. A player whose page
  reconnected to another process meanwhile is counted there and stays connected.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce, Greatest

from tables.models import AsgiProcess, Seat, SeatSockets

logger = logging.getLogger(__name__)

PROCESS_ID = uuid.uuid4().hex
"""This Python process's id among ASGI processes (new at every start)."""


def beat(*, now: datetime, process_id: str = PROCESS_ID) -> None:
    """Record that ``process_id`` is alive at ``now`` (creates its row the first time)."""
    updated = AsgiProcess.objects.filter(pk=process_id).update(beat_at=now)
    if not updated:
        AsgiProcess.objects.get_or_create(
            pk=process_id,
            defaults={"hostname": socket.gethostname()[:100], "pid": os.getpid(), "started_at": now, "beat_at": now},
        )


def reap_dead_processes(*, now: datetime) -> int:
    """Take the sockets of every dead ASGI process off their seats; return how many
    processes were reaped. Safe to run from several clocks at once (rows are locked)."""
    cutoff = now - timedelta(seconds=settings.PRESENCE_PROCESS_TIMEOUT_SECONDS)
    reaped = 0
    for process_id in AsgiProcess.objects.filter(beat_at__lt=cutoff).values_list("pk", flat=True):
        with transaction.atomic():
            process = (
                AsgiProcess.objects.select_for_update(skip_locked=True)
                .filter(pk=process_id, beat_at__lt=cutoff)
                .first()
            )
            if process is None:
                continue  # another clock is reaping it, or it came back
            counts = dict(SeatSockets.objects.filter(process=process, count__gt=0).values_list("seat_id", "count"))
            for seat_id in sorted(counts):
                Seat.objects.filter(pk=seat_id).update(
                    ws_connections=Greatest(Value(0), F("ws_connections") - counts[seat_id]),
                    socket_closed_at=Greatest(
                        Coalesce(F("socket_closed_at"), Value(process.beat_at)), Value(process.beat_at)
                    ),
                )
            label = str(process)
            process.delete()  # its SeatSockets rows go with it
            reaped += 1
            logger.warning(
                "ASGI process %s silent since %s: took %d socket(s) off %d seat(s)",
                label,
                process.beat_at.isoformat(),
                sum(counts.values()),
                len(counts),
            )
    return reaped


# --- the presence rule (also read by the selectors: no push behind it) ---------------------


def is_connected(seat: Seat, *, now: datetime) -> bool:
    """Whether the player is at the table now (rules, Notes 2: disconnected players are
    removed before a hand; one disconnected before choosing keeps all cards).

    * Open game sockets ping every 10 s: a seat with sockets is connected while it was seen
      within ``PRESENCE_TIMEOUT_SECONDS`` (a count left by an ASGI process that died expires).
    * A seat whose last socket closed after its last sign of life stays connected for
      ``PRESENCE_RECONNECT_GRACE_SECONDS``: a page reload or a brief drop is not a
      disconnection, a closed page is.
    * Otherwise (REST clients, no socket) requests are the heartbeat.
    """
    return presence_rule(now)(seat.last_seen_at, seat.ws_connections, seat.socket_closed_at)


def presence_rule(now: datetime) -> Callable[[datetime, int, datetime | None], bool]:
    """``is_connected`` as a function of a seat's (last_seen_at, ws_connections,
    socket_closed_at), with the thresholds computed once: for 100,000 seats read as tuples."""
    seen_after = now - timedelta(seconds=settings.PRESENCE_TIMEOUT_SECONDS)
    closed_after = now - timedelta(seconds=settings.PRESENCE_RECONNECT_GRACE_SECONDS)

    def connected(last_seen_at: datetime, ws_connections: int, socket_closed_at: datetime | None) -> bool:
        if ws_connections > 0:
            return last_seen_at >= seen_after
        if socket_closed_at is not None and socket_closed_at >= last_seen_at:
            return socket_closed_at >= closed_after
        return last_seen_at >= seen_after

    return connected
