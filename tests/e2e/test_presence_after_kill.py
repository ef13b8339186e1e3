"""Security audit F11, end to end: kill -9 the daphne process holding a player's game
socket; the clock takes the socket off the seat and the player counts as disconnected once
the reconnect grace has run from the process's last heartbeat."""

from __future__ import annotations

import asyncio
import json
import os
import signal

import pytest
import websockets

from tests.e2e.server import SERVER_PROCESSES, TABLE, manage

pytestmark = [pytest.mark.slow]
E2E_TABLE_CLOCK = "off"  # no hands: only presence moves

SEAT_GHOST = f"""
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore
from django.utils import timezone
from tables.widerpoker.services.seating import join_table
from tables.models import Table
from wallet.services import grant_signup_fun_chips
user = User.objects.create_user(username="ghost", password="!")
grant_signup_fun_chips(user_id=user.pk)
table = Table.objects.get(name={TABLE!r})
join_table(table_id=table.pk, user_id=user.pk, now=timezone.now())
session = SessionStore()
session.update({{SESSION_KEY: str(user.pk), BACKEND_SESSION_KEY: "django.contrib.auth.backends.ModelBackend",
                HASH_SESSION_KEY: user.get_session_auth_hash()}})
session.create()
print(table.pk, session.session_key)
"""
SEAT_STATE = """
from tables.models import AsgiProcess, Seat
seat = Seat.objects.get(user__username="ghost")
print(seat.ws_connections, AsgiProcess.objects.count())
"""
REAP = """
from datetime import timedelta
from django.conf import settings
from django.utils import timezone
from tables.models import Seat
from tables.services.presence import is_connected
from tables.services.presence import reap_dead_processes
# As the clock would, once the dead process has been silent for the timeout.
later = timezone.now() + timedelta(seconds=settings.PRESENCE_PROCESS_TIMEOUT_SECONDS + 1)
reaped = reap_dead_processes(now=later)
seat = Seat.objects.get(user__username="ghost")
print(reaped, seat.ws_connections, is_connected(seat, now=later), seat.socket_closed_at is not None)
"""


def last_line(server: str, script: str) -> list[str]:
    """The words of the last line a ``manage.py shell`` script printed (logging may precede it)."""
    return manage(server, "shell", "-c", script).strip().splitlines()[-1].split()


def test_killing_the_process_that_holds_a_socket_does_not_leave_the_seat_connected(server: str) -> None:
    table_id, session_key = last_line(server, SEAT_GHOST)
    host = server.removeprefix("http://")

    async def hold_a_socket_until_the_kill() -> None:
        async with websockets.connect(
            f"ws://{host}/ws/tables/{table_id}/",
            additional_headers={"Cookie": f"sessionid={session_key}", "Origin": server},
        ) as socket:
            assert json.loads(await socket.recv())["type"] == "table_state"
            assert json.loads(await socket.recv())["type"] == "entry_state"
            assert last_line(server, SEAT_STATE) == ["1", "1"]
            process = SERVER_PROCESSES[server]
            os.kill(process.pid, signal.SIGKILL)  # no disconnect handler runs
            process.wait(timeout=10)
            with pytest.raises(websockets.ConnectionClosed):
                await asyncio.wait_for(socket.recv(), timeout=10)

    asyncio.run(hold_a_socket_until_the_kill())
    assert last_line(server, SEAT_STATE) == ["1", "1"]  # the leak the audit saw
    assert last_line(server, REAP) == ["1", "0", "False", "True"]
