"""Security audit F11: presence survives the death of an ASGI process. The sockets of a
process that stops beating are taken off their seats, and the reconnect grace runs from
the process's last heartbeat."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.conf import settings
from django.contrib.auth.models import User

from tables.clock import tick
from tables.models import AsgiProcess, Seat, SeatSockets, Table
from tables.services.presence import beat, is_connected, reap_dead_processes
from tables.services.seating import record_socket
from tests.helpers import seat_players

pytestmark = pytest.mark.django_db

A, B = "a" * 32, "b" * 32


def seat_of(table: Table, user: User) -> Seat:
    return Seat.objects.get(table=table, user=user)


def open_socket(table: Table, user: User, process: str, now: datetime) -> None:
    assert record_socket(table_id=table.pk, user_id=user.pk, opened=True, now=now, process_id=process)


def test_a_dead_process_s_sockets_are_taken_off_and_the_grace_runs_from_its_last_beat(
    table: Table, alice: User, now: datetime
) -> None:
    seat_players(table, [alice], now)
    open_socket(table, alice, A, now)
    assert seat_of(table, alice).ws_connections == 1
    # The process dies: no more heartbeats after ``now``.
    grace = settings.PRESENCE_RECONNECT_GRACE_SECONDS
    assert reap_dead_processes(now=now + timedelta(seconds=settings.PRESENCE_PROCESS_TIMEOUT_SECONDS - 1)) == 0
    later = now + timedelta(seconds=settings.PRESENCE_PROCESS_TIMEOUT_SECONDS + 1)
    assert reap_dead_processes(now=later) == 1
    seat = seat_of(table, alice)
    assert (seat.ws_connections, seat.socket_closed_at) == (0, now)
    assert not AsgiProcess.objects.filter(pk=A).exists() and not SeatSockets.objects.exists()
    assert is_connected(seat, now=now + timedelta(seconds=grace - 1))
    assert not is_connected(seat, now=later)


def test_a_player_who_reconnected_to_a_live_process_stays_connected(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    seat_players(table, [alice, bob], now)
    open_socket(table, alice, A, now)
    open_socket(table, bob, A, now)
    open_socket(table, alice, B, now + timedelta(seconds=2))  # alice's page reconnected to B
    later = now + timedelta(seconds=settings.PRESENCE_PROCESS_TIMEOUT_SECONDS + 5)
    beat(now=later, process_id=B)
    assert reap_dead_processes(now=later) == 1
    assert seat_of(table, alice).ws_connections == 1
    assert is_connected(seat_of(table, alice), now=later)
    assert seat_of(table, bob).ws_connections == 0
    assert not is_connected(seat_of(table, bob), now=later)


def test_closing_a_socket_of_a_reaped_process_changes_nothing(table: Table, alice: User, now: datetime) -> None:
    seat_players(table, [alice], now)
    open_socket(table, alice, A, now)
    open_socket(table, alice, B, now)
    beat(now=now + timedelta(minutes=1), process_id=B)
    reap_dead_processes(now=now + timedelta(minutes=1))
    # The dead process's consumer never ran its disconnect; a late one must not uncount B's.
    closed = record_socket(
        table_id=table.pk, user_id=alice.pk, opened=False, now=now + timedelta(minutes=1), process_id=A
    )
    assert closed is False
    assert seat_of(table, alice).ws_connections == 1
    assert record_socket(
        table_id=table.pk, user_id=alice.pk, opened=False, now=now + timedelta(minutes=1), process_id=B
    )
    assert seat_of(table, alice).ws_connections == 0


@pytest.mark.django_db(transaction=True)  # tick() manages its own connections
def test_the_clock_tick_reaps_dead_processes(table: Table, alice: User, now: datetime) -> None:
    seat_players(table, [alice], now)
    long_ago = now - timedelta(minutes=5)
    open_socket(table, alice, A, long_ago)
    tick()
    assert seat_of(table, alice).ws_connections == 0
    assert not AsgiProcess.objects.exists()


def test_a_beating_process_is_never_reaped(table: Table, alice: User, now: datetime) -> None:
    seat_players(table, [alice], now)
    open_socket(table, alice, A, now)
    for seconds in range(0, 120, 5):
        beat(now=now + timedelta(seconds=seconds), process_id=A)
        assert reap_dead_processes(now=now + timedelta(seconds=seconds + 1)) == 0
    assert seat_of(table, alice).ws_connections == 1
