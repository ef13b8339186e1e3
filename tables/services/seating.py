"""Seats and presence: join, leave, sit out, sit in, sockets opening and closing."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import BooleanField, ExpressionWrapper, F, Q, QuerySet, Value
from django.db.models.functions import Greatest
from django.urls import reverse

from tables.errors import NotSeatedError, TableClosedError, TableNotFoundError, TournamentLeaveError, WrongGameError
from tables.models import Seat, SeatSockets, SeatStatus, Table, TableGame, TablePhase
from tables.realtime.push import broadcast_table_on_commit, kick_player_on_commit, push_private_on_commit
from tables.services import fairness as fairness_services
from tables.tournaments.models import Tournament
from tables.widerpoker.services import powerups
from wallet import guests, protection
from wallet import selectors as wallet_selectors
from wallet import services as wallet_services
from wallet.errors import StakeNotCoveredError
from wallet.money import format_minor


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
    seat. Pairs of (the ``seat_presence`` tuple, the ``extra`` values in their order)."""
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
    return [
        (
            (pk, user_id, status, bool(fresh if sockets > 0 else (closed_recently if closed_last else fresh))),
            tuple(more),
        )
        for pk, user_id, status, sockets, fresh, closed_last, closed_recently, *more in rows
    ]


def connected_users(seats: QuerySet[Seat], *, now: datetime) -> dict[int, bool]:
    """``{user_id: connected and not left}`` for ``seats`` (``seat_presence``)."""
    return {
        user_id: status != SeatStatus.LEFT and connected
        for _, user_id, status, connected in seat_presence(seats, now=now)
    }


def _get_table(table_id: int, *, lock: bool = False) -> Table:
    queryset = Table.objects.select_for_update() if lock else Table.objects.all()
    table = queryset.filter(pk=table_id).first()
    if table is None:
        raise TableNotFoundError(f"no table {table_id}", table_id=table_id)
    return table


@transaction.atomic(durable=True)
def join_table(*, table_id: int, user_id: int, now: datetime) -> Seat:
    """Seat the player at the table (or bring a seat that left back). The player plays from
    the next hand that starts (rules A.3: a hand needs at least two players).

    Raises TableNotFoundError, WrongGameError (a Hold'em table), TableClosedError, and the player protection's refusals
    (wallet/protection.py: SuspendedError, SelfExcludedError, TimeOutError, SessionLimitError,
    LossLimitError when the ante would pass his loss limit), StakeNotCoveredError
    (``insufficient_funds``: his wallet cannot pay the ante; ``extra`` has the amount needed
    and the wallet's URL), GuestPracticeOnlyError (``guest_practice_only``: a guest, seed 004,
    plays practice games only); nothing changes then.
    """
    table = _get_table(table_id)
    if table.game != TableGame.WIDERPOKER:
        raise WrongGameError(f"{table.name} is not a WiderPoker table: take a seat there", table_id=table_id)
    if not table.is_open or table.phase == TablePhase.CLOSED:
        raise TableClosedError(f"{table.name} is closed", table_id=table_id)
    guests.refuse_guest(user_id=user_id)
    protection.check_can_play(user_id=user_id, currency=table.currency, stake_minor=table.ante_minor, now=now)
    _check_stake_covered(table, user_id)
    wallet_services.ensure_player_account(user_id=user_id, currency=table.currency)
    # His client seed exists before his first hand: a deal of 100,000 new players then
    # creates none (issue 23; a seed he sets later still counts from the next hand).
    fairness_services.client_seeds([user_id], now=now)
    seat, created = Seat.objects.get_or_create(
        table_id=table_id, user_id=user_id, defaults={"joined_at": now, "last_seen_at": now}
    )
    if not created and seat.status != SeatStatus.ACTIVE:
        seat.status = SeatStatus.ACTIVE
        seat.status_reason = ""
        seat.joined_at = now if seat.left_at is not None else seat.joined_at
        seat.left_at = None
        seat.last_seen_at = now
        seat.save(update_fields=["status", "status_reason", "joined_at", "left_at", "last_seen_at"])
    _wake_waiting_table(table_id, now=now)
    broadcast_table_on_commit(table_id)
    push_private_on_commit(table_id, user_id)
    return seat


def _check_stake_covered(table: Table, user_id: int) -> None:
    """Raise StakeNotCoveredError (code ``insufficient_funds``) when the player's wallet
    cannot pay the table's ante (rules A.3: each hand starts with the ante): he would be sat
    out at the next deal while his opponent waits (UX audit 2026-11-26, N8). A read without
    lock: the deal still checks, under lock, what he holds then."""
    balance = wallet_selectors.get_balance_minor(user_id=user_id, currency=table.currency)
    if balance < table.ante_minor:
        raise StakeNotCoveredError(
            f"{table.name} takes an ante of {format_minor(table.ante_minor, table.currency, language='en')} a hand:"
            f" your wallet holds {format_minor(balance, table.currency, language='en')}",
            table_id=table.pk,
            needed_minor=table.ante_minor,
            balance_minor=balance,
            currency=table.currency,
            wallet_url=reverse("wallet"),
        )


def _wake_waiting_table(table_id: int, *, now: datetime) -> None:
    """A waiting table re-checks for players at the next tick instead of at its deadline."""
    Table.objects.filter(pk=table_id, phase=TablePhase.WAITING).update(phase_deadline=now)


def _get_seat(table_id: int, user_id: int) -> Seat:
    seat = Seat.objects.filter(table_id=table_id, user_id=user_id).first()
    if seat is None:
        raise NotSeatedError("join the table first", table_id=table_id)
    return seat


@transaction.atomic(durable=True)
def leave_table(*, table_id: int, user_id: int, now: datetime, tournament_ok: bool = False) -> Seat:
    """The player leaves (rules A.5). An entry in the running hand stays in play with the
    choices already received and is paid any prize it wins.

    Raises NotSeatedError, and TournamentLeaveError (``tournament_leave``) at a tournament's
    table unless ``tournament_ok`` (the platform removing him, ``remove_from_tables``): a
    tournament deals every entry still in, so a player stops with Sit out
    (docs/tournaments.md); nothing changes then.
    """
    seat = _get_seat(table_id, user_id)
    if not tournament_ok and Tournament.objects.filter(table_id=table_id).exists():
        raise TournamentLeaveError(
            "a tournament deals every entry still in until the end: use sit_out to stop being dealt and paying antes",
            table_id=table_id,
        )
    seat.status = SeatStatus.LEFT
    seat.status_reason = "left"
    seat.left_at = now
    seat.save(update_fields=["status", "status_reason", "left_at"])
    powerups.end_session(table_id=table_id, user_id=user_id, now=now)
    broadcast_table_on_commit(table_id)
    push_private_on_commit(table_id, user_id)
    return seat


def remove_from_tables(*, user_id: int, reason: str, now: datetime) -> list[int]:
    """Take the player away from every table: each seat he holds is left as by
    ``leave_table`` (rules A.5: an entry in the running hand stays in play with the choices
    already received and is paid any prize it wins; nothing is refunded or forfeited), and
    each of his open game sockets gets ``reason`` and is closed (tables/realtime/frames.py,
    KickedFrame). For a suspension (seed 001, Notes 4) or the start of a time-out or
    self-exclusion (wallet/protection.py). At a Hold'em table he leaves as by
    ``leave_holdem_table`` (his chips return to his wallet). Returns the ids of the tables left; seats
    already left are not touched. Not atomic as a whole: each seat is its own transaction,
    so one table's lock is never held while another's is taken. Raises nothing of its own.
    """
    from tables.holdem.services.player import leave_holdem_table

    left = []
    seats = Seat.objects.filter(user_id=user_id).exclude(status=SeatStatus.LEFT)
    for table_id, game in sorted(seats.values_list("table_id", "table__game")):
        if game == TableGame.HOLDEM:
            # Hold'em: his chips go back to his wallet (after the hand he is in: he folds).
            try:
                leave_holdem_table(table_id=table_id, user_id=user_id, now=now)
            except NotSeatedError:
                Seat.objects.filter(table_id=table_id, user_id=user_id).update(status=SeatStatus.LEFT, left_at=now)
        else:
            leave_table(table_id=table_id, user_id=user_id, now=now, tournament_ok=True)
        left.append(table_id)
    kick_player_on_commit(user_id, reason)
    return left


@transaction.atomic(durable=True)
def sit_out(*, table_id: int, user_id: int, now: datetime) -> Seat:
    """The player watches without playing from the next hand on and pays no ante (rules A.5,
    glossary "Sit out"). The running hand is not affected."""
    seat = _get_seat(table_id, user_id)
    if seat.status == SeatStatus.LEFT:
        raise NotSeatedError("join the table first", table_id=table_id)
    seat.status = SeatStatus.SITTING_OUT
    seat.status_reason = "sit out"
    seat.last_seen_at = now
    seat.save(update_fields=["status", "status_reason", "last_seen_at"])
    broadcast_table_on_commit(table_id)
    push_private_on_commit(table_id, user_id)
    return seat


@transaction.atomic(durable=True)
def sit_in(*, table_id: int, user_id: int, now: datetime) -> Seat:
    """A sitting-out player plays again from the next hand; refused as join_table is by the
    player's protection."""
    seat = _get_seat(table_id, user_id)
    if seat.status == SeatStatus.LEFT:
        raise NotSeatedError("join the table first", table_id=table_id)
    table = _get_table(table_id)
    protection.check_can_play(user_id=user_id, currency=table.currency, stake_minor=table.ante_minor, now=now)
    _check_stake_covered(table, user_id)
    seat.status = SeatStatus.ACTIVE
    seat.status_reason = ""
    seat.last_seen_at = now
    seat.save(update_fields=["status", "status_reason", "last_seen_at"])
    _wake_waiting_table(table_id, now=now)
    broadcast_table_on_commit(table_id)
    push_private_on_commit(table_id, user_id)
    return seat


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
    seat = Seat.objects.select_for_update().filter(table_id=table_id, user_id=user_id).first()
    if seat is None:
        return False
    if opened:
        beat(now=now, process_id=process)
        held, _ = SeatSockets.objects.get_or_create(process_id=process, seat=seat)
        SeatSockets.objects.filter(pk=held.pk).update(count=F("count") + 1)
        Seat.objects.filter(pk=seat.pk).update(ws_connections=F("ws_connections") + 1, last_seen_at=now)
        return True
    # A socket whose process was reaped meanwhile was already taken off.
    if not SeatSockets.objects.filter(process_id=process, seat=seat, count__gt=0).update(count=F("count") - 1):
        return False
    Seat.objects.filter(pk=seat.pk).update(
        ws_connections=Greatest(Value(0), F("ws_connections") - 1), socket_closed_at=now
    )
    return True


def touch_presence(*, table_id: int, user_id: int, now: datetime) -> None:
    """Note that the player is still there (a request or a heartbeat)."""
    Seat.objects.filter(table_id=table_id, user_id=user_id).update(last_seen_at=now)
