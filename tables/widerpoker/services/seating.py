"""A WiderPoker player's seat: join, leave, sit out, sit in (rules A.3, A.5). Presence and
sockets are the house's (tables/services/seating.py)."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.urls import reverse

from tables.errors import NotSeatedError, TableClosedError, TournamentLeaveError, WrongGameError
from tables.models import Seat, SeatStatus, Table, TableGame, TablePhase
from tables.realtime.push import broadcast_table_on_commit, push_private_on_commit
from tables.selectors import get_table
from tables.services import fairness as fairness_services
from tables.tournaments.models import Tournament
from tables.widerpoker.services import powerups
from wallet import guests, protection
from wallet import selectors as wallet_selectors
from wallet import services as wallet_services
from wallet.errors import StakeNotCoveredError
from wallet.money import format_minor


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
    table = get_table(table_id)
    if table.game != TableGame.WIDERPOKER:
        raise WrongGameError(f"{table.name} is not a WiderPoker table: take a seat there", table_id=table_id)
    if not table.is_open or table.phase == TablePhase.CLOSED:
        raise TableClosedError(f"{table.name} is closed", table_id=table_id)
    guests.refuse_guest(user_id=user_id)
    protection.check_can_play(
        user_id=user_id, currency=table.currency, stake_minor=table.widerpoker.ante_minor, now=now
    )
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
    ante_minor = table.widerpoker.ante_minor
    if balance < ante_minor:
        raise StakeNotCoveredError(
            f"{table.name} takes an ante of {format_minor(ante_minor, table.currency, language='en')} a hand:"
            f" your wallet holds {format_minor(balance, table.currency, language='en')}",
            table_id=table.pk,
            needed_minor=table.widerpoker.ante_minor,
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
    table = get_table(table_id)
    protection.check_can_play(
        user_id=user_id, currency=table.currency, stake_minor=table.widerpoker.ante_minor, now=now
    )
    _check_stake_covered(table, user_id)
    seat.status = SeatStatus.ACTIVE
    seat.status_reason = ""
    seat.last_seen_at = now
    seat.save(update_fields=["status", "status_reason", "last_seen_at"])
    _wake_waiting_table(table_id, now=now)
    broadcast_table_on_commit(table_id)
    push_private_on_commit(table_id, user_id)
    return seat
