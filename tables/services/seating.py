"""Seats' presence, the house's part of every game's seats: who is connected (rules Notes 2),
sockets opening and closing, heartbeats. Each game seats its players itself
(``tables/<game>/services/``)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import BooleanField, Case, ExpressionWrapper, F, Q, QuerySet, Value, When
from django.db.models.functions import Greatest

from tables.models import Seat, SeatSockets, SeatStatus


def seat_presence(seats: QuerySet[Seat], *, now: datetime) -> list[tuple[int, int, str, bool]]:
    """(seat id, user id, status, connected) for ``seats``, in the queryset's order; the
    comparisons done by the database (reading 100,000 seats' timestamps into Python cost
    seconds): the rule of ``presence_rule``, on three booleans per seat."""
    return [presence for presence, _ in seat_presence_with(seats, now=now)]


def seat_presence_with(
    seats: QuerySet[Seat], *, now: datetime, extra: tuple[str, ...] = ()
) -> list[tuple[tuple[int, int, str, bool], tuple[Any, ...]]]:
    """``seat_presence`` with the values of the ``extra`` fields or lookups of each seat
    (e.g. ``"user__username"``, or annotations of ``seats``), read by the same query: a deal
    reads each of its 100,000 players once, his name and client seed joined to his
    seat. Pairs of (the ``seat_presence`` tuple, the ``extra`` values in their order, as the
    database gives them: no ORM conversion, so for text and integers, not dates)."""
    seen_after = now - timedelta(seconds=settings.PRESENCE_TIMEOUT_SECONDS)
    closed_after = now - timedelta(seconds=settings.PRESENCE_RECONNECT_GRACE_SECONDS)
    rows = seats.annotate(
        fresh=ExpressionWrapper(Q(last_seen_at__gte=seen_after), output_field=BooleanField()),
        closed_last=ExpressionWrapper(
            Q(socket_closed_at__isnull=False, socket_closed_at__gte=F("last_seen_at")), output_field=BooleanField()
        ),
        closed_recently=ExpressionWrapper(
            Q(socket_closed_at__isnull=False, socket_closed_at__gte=closed_after), output_field=BooleanField()
        ),
    ).values_list("pk", "user_id", "status", "ws_connections", "fresh", "closed_last", "closed_recently", *extra)
    # Fetched as the database's plain tuples: the ORM's row iteration (converters, one
    # tuple rebuilt per seat) took a quarter of the read of 100,000 seats. The values are
    # integers, text and truth values (0/1 on SQLite: only their truth is used).
    sql, params = rows.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        fetched = cursor.fetchall()
    return [
        (
            (pk, user_id, status, bool(fresh if sockets > 0 else (closed_recently if closed_last else fresh))),
            tuple(more),
        )
        for pk, user_id, status, sockets, fresh, closed_last, closed_recently, *more in fetched
    ]


def presence_expression(now: datetime) -> Case:
    """Whether a seat's player is connected at ``now`` as one SQL boolean (``presence_rule``:
    the socket count, then a socket closed after the last sign of life and its grace, else
    the heartbeat), for ``alias``/``annotate`` on seats."""
    seen_after = now - timedelta(seconds=settings.PRESENCE_TIMEOUT_SECONDS)
    closed_after = now - timedelta(seconds=settings.PRESENCE_RECONNECT_GRACE_SECONDS)
    fresh = Q(last_seen_at__gte=seen_after)
    return Case(
        When(ws_connections__gt=0, then=ExpressionWrapper(fresh, output_field=BooleanField())),
        When(
            Q(socket_closed_at__isnull=False, socket_closed_at__gte=F("last_seen_at")),
            then=ExpressionWrapper(Q(socket_closed_at__gte=closed_after), output_field=BooleanField()),
        ),
        default=ExpressionWrapper(fresh, output_field=BooleanField()),
        output_field=BooleanField(),
    )


def connected_user_ids(seats: QuerySet[Seat], *, now: datetime) -> list[int]:
    """The users of ``seats`` connected and not left (``connected_users``' true ones), the
    whole rule evaluated by the database (``presence_expression``), so a settlement of
    100,000 reads only the ids of those connected, not four values a seat."""
    return list(
        seats.exclude(status=SeatStatus.LEFT)
        .alias(connected=presence_expression(now))
        .filter(connected=True)
        .values_list("user_id", flat=True)
    )


def connected_users(seats: QuerySet[Seat], *, now: datetime) -> dict[int, bool]:
    """``{user_id: connected and not left}`` for ``seats`` (``seat_presence``)."""
    return {
        user_id: status != SeatStatus.LEFT and connected
        for _, user_id, status, connected in seat_presence(seats, now=now)
    }


@transaction.atomic
def record_socket(*, table_id: int, user_id: int, opened: bool, now: datetime, process_id: str | None = None) -> bool:
    """Count a game socket of a seated player opening or closing (presence, rules Notes 2).

    The socket counts against its seat and against the ASGI process that holds it
    (``process_id``, by default this process: tables/services/presence.py), so the sockets
    of a process that dies are taken off by the clock. Returns whether a seat was counted
    (on opening) or uncounted (on closing). The caller closes only what it opened (a socket
    opened before its player sat down was not counted), so the count stays exact whatever
    order the opening of a new page and the closing of the old one arrive in.
    """
    from tables.services.presence import PROCESS_ID, beat

    process = process_id or PROCESS_ID
    seat_id = (
        Seat.objects.select_for_update().filter(table_id=table_id, user_id=user_id).values_list("pk", flat=True).first()
    )
    if seat_id is None:
        return False
    if opened:
        beat(now=now, process_id=process)
        # The process's row for the seat, made if missing (INSERT ... ON CONFLICT DO NOTHING:
        # one statement, where get_or_create took a read, a savepoint and an insert at each
        # player's first socket in the process, a connect storm's every connect), then counted.
        SeatSockets.objects.bulk_create([SeatSockets(process_id=process, seat_id=seat_id)], ignore_conflicts=True)
        SeatSockets.objects.filter(process_id=process, seat_id=seat_id).update(count=F("count") + 1)
        Seat.objects.filter(pk=seat_id).update(ws_connections=F("ws_connections") + 1, last_seen_at=now)
        return True
    # A socket whose process was reaped meanwhile was already taken off.
    if not SeatSockets.objects.filter(process_id=process, seat_id=seat_id, count__gt=0).update(count=F("count") - 1):
        return False
    Seat.objects.filter(pk=seat_id).update(
        ws_connections=Greatest(Value(0), F("ws_connections") - 1), socket_closed_at=now
    )
    return True


def touch_presence(*, table_id: int, user_id: int, now: datetime) -> None:
    """Note that the player is still there (a request or a heartbeat)."""
    Seat.objects.filter(table_id=table_id, user_id=user_id).update(last_seen_at=now)
