"""Player protection (issue #11): limits a player sets on himself, breaks he takes, and
suspensions by staff. The wallet's and the tables' services call the checks below before
they move money or deal a hand; a refusal raises a DomainError with a stable code and
changes nothing.

* **Deposit and loss limits** per currency over a rolling 24 hours; **session time limit**
  and **reality check** interval in minutes. A loss counts what the player put at risk and
  has not got back: the play transfers of the window (``GAME_KINDS``) and his purchases
  still on hold (``held_minor``: draws and redeals the clock has not captured yet), so the
  limit holds at every moment, on every table together (``losses_minor``). Lowering (or
  setting a first limit) takes effect at once; raising or removing one waits
  ``LIMIT_COOLING_HOURS`` (24 h).
* **Time-out and self-exclusion**: nobody ends them early, staff included (no service does,
  and the admin is read-only). A second break never shortens the first.
* **Suspension** by staff with a reason (seed 001, Notes 4: players found using bots): no
  play, no deposit, no login, until staff lift it with a reason.

Every change is written to ``ProtectionLog``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import BigIntegerField, OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce

from config.infra.errors import DomainError
from wallet.errors import (
    DepositLimitError,
    InvalidLimitError,
    LossLimitError,
    SelfExcludedError,
    SessionLimitError,
    SuspendedError,
    TimeOutError,
)
from wallet.lookups import IntArray, int_array_literal
from wallet.models import (
    Account,
    AccountKind,
    Exclusion,
    ExclusionKind,
    LedgerEntry,
    LimitKind,
    PlayerLimit,
    PlaySession,
    ProtectionLog,
    Suspension,
    TransferKind,
)
from wallet.money import format_minor

WINDOW = timedelta(hours=24)
# Transfers that are play: what the player staked and what came back to him.
GAME_KINDS = (
    TransferKind.ANTE,
    TransferKind.DRAW,
    TransferKind.REDEAL,
    TransferKind.SETTLEMENT,
    TransferKind.REFUND,
    # Draws and redeals of several players captured in one batch (a batch of one kind keeps
    # that kind): the player's leg is his purchase.
    TransferKind.CAPTURE,
    # Hold'em: chips bought count as staked until they come back (a cash-out).
    TransferKind.BUY_IN,
    TransferKind.CASH_OUT,
    # Tournaments: the entries' buy-ins and fees (held, then captured), prizes and refunds.
    TransferKind.TOURNAMENT_BUY_IN,
    TransferKind.TOURNAMENT_PRIZE,
    TransferKind.TOURNAMENT_REFUND,
)
MONEY_LIMITS = (LimitKind.DEPOSIT, LimitKind.LOSS)
TIME_OUT_DAYS = (1, 7, 30)
SELF_EXCLUSION_DAYS = (182, 365, 1825)
MAX_LIMIT_MINOR = 10**12
MAX_MINUTES = 24 * 60


# --- reads -----------------------------------------------------------------------------------


def effective_value(limit: PlayerLimit, *, now: datetime) -> int | None:
    """The limit in force at ``now``: a pending raise counts once its cooling period ended."""
    if limit.pending_at is not None and limit.pending_at <= now:
        return limit.pending_value
    return limit.value


@dataclass(frozen=True, slots=True)
class LimitView:
    kind: str
    currency: str
    value: int | None
    pending_value: int | None
    pending_at: datetime | None


def list_limits(*, user_id: int, now: datetime) -> dict[tuple[str, str], LimitView]:
    """The player's limits by ``(kind, currency)`` (currency ``""`` for time limits)."""
    views = {}
    for limit in PlayerLimit.objects.filter(user_id=user_id):
        due = limit.pending_at is not None and limit.pending_at <= now
        views[(limit.kind, limit.currency)] = LimitView(
            kind=limit.kind,
            currency=limit.currency,
            value=effective_value(limit, now=now),
            pending_value=None if due else limit.pending_value,
            pending_at=None if due else limit.pending_at,
        )
    return views


def find_exclusion(*, user_id: int, now: datetime) -> Exclusion | None:
    """The player's break in force at ``now`` that ends last, if any."""
    return Exclusion.objects.filter(user_id=user_id, starts_at__lte=now, ends_at__gt=now).order_by("-ends_at").first()


def find_suspension(*, user_id: int) -> Suspension | None:
    """The suspension in force, if any."""
    return Suspension.objects.filter(user_id=user_id, lifted_at__isnull=True).first()


def is_suspended(*, user_id: int) -> bool:
    return Suspension.objects.filter(user_id=user_id, lifted_at__isnull=True).exists()


def find_play_session(*, user_id: int, now: datetime) -> PlaySession | None:
    """The player's session still open at ``now`` (a hand dealt within the break time)."""
    since = now - timedelta(minutes=settings.SESSION_BREAK_MINUTES)
    return PlaySession.objects.filter(user_id=user_id, last_play_at__gte=since).order_by("-last_play_at").first()


def losses_minor(*, user_ids: Iterable[int], currency: str, since: datetime) -> dict[int, int]:
    """What each of ``user_ids`` lost at the tables in ``currency`` since ``since`` (minor
    units; > 0 a loss, < 0 a gain), counting what is at risk as lost: minus the sum of his
    wallet's legs in play transfers (``GAME_KINDS``: antes, draws, redeals and their batched
    captures, prizes, refunds, Hold'em buy-ins and cash-outs) since ``since``, plus his
    wallet's ``held_minor`` (draws and redeals bought and not yet captured into a hand's
    escrow, ``wallet.services.hold_funds``). Players without a wallet in ``currency`` are
    absent (nothing lost).

    One statement, so one snapshot: a capture (which moves a hold into the ledger in one
    transaction) is seen either before or after, never twice and never missed. A caller that
    decides on it locks the wallet first (``wallet.services.lock_accounts``): no stake of
    the player's at another table can then commit between the read and the decision."""
    ids = list(user_ids)
    if not ids:
        return {}
    played = (
        LedgerEntry.objects.filter(
            account=OuterRef("pk"), transfer__kind__in=GAME_KINDS, transfer__created_at__gte=since
        )
        .order_by()
        .values("account")
        .annotate(total=Sum("delta_minor"))
        .values("total")
    )
    rows = (
        Account.objects.filter(user_id__any_of=IntArray(ids), kind=AccountKind.PLAYER, currency=currency)
        .annotate(net=Coalesce(Subquery(played, output_field=BigIntegerField()), 0))
        .values_list("user_id", "held_minor", "net")
    )
    return {int(user_id): int(held) - int(net) for user_id, held, net in rows if user_id is not None}


def net_result_minor(*, user_id: int, currency: str, since: datetime) -> int:
    """What the player won (> 0) or lost (< 0) at the tables in ``currency`` since
    ``since``, purchases still on hold counted as lost (``losses_minor``)."""
    return -losses_minor(user_ids=[user_id], currency=currency, since=since).get(user_id, 0)


def deposited_minor(*, user_id: int, currency: str, since: datetime) -> int:
    total = LedgerEntry.objects.filter(
        account__user_id=user_id,
        account__kind=AccountKind.PLAYER,
        account__currency=currency,
        transfer__kind=TransferKind.DEPOSIT,
        transfer__created_at__gte=since,
    ).aggregate(total=Sum("delta_minor"))["total"]
    return int(total or 0)


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """What a reality check shows: time played and net result per currency."""

    started_at: datetime
    minutes_played: int
    net_minor: dict[str, int]
    reality_check_minutes: int | None
    next_check_seconds: int | None


def get_session_summary(*, user_id: int, now: datetime) -> SessionSummary | None:
    """The open play session's reality-check figures, or None when the player is not playing."""
    session = find_play_session(user_id=user_id, now=now)
    if session is None:
        return None
    from wallet.models import Currency

    net = {code: net_result_minor(user_id=user_id, currency=code, since=session.started_at) for code in Currency.values}
    elapsed = max(0, int((now - session.started_at).total_seconds()))
    limits = list_limits(user_id=user_id, now=now)
    check = limits.get((LimitKind.REALITY_CHECK, ""))
    interval = check.value if check is not None else None
    next_seconds = None if not interval else interval * 60 - elapsed % (interval * 60)
    return SessionSummary(
        started_at=session.started_at,
        minutes_played=elapsed // 60,
        net_minor={code: amount for code, amount in net.items() if amount},
        reality_check_minutes=interval,
        next_check_seconds=next_seconds,
    )


# --- checks ----------------------------------------------------------------------------------


def barred_players(
    *, user_ids: Iterable[int], currency: str, stake_minor: int | None, now: datetime
) -> dict[int, DomainError]:
    """The players among ``user_ids`` who may not stake ``stake_minor`` in ``currency`` now,
    each with the error that says why. A handful of queries whatever the number of players
    (the deal calls it for every seat).

    ``stake_minor``: the money the player would newly put at risk (minor units). A loss
    limit refuses when his losses of the last 24 hours (``losses_minor``: purchases on hold
    included) plus the stake pass it: with a stake of 0 (a Hold'em hand played with chips
    already bought), only a player already past his limit (he lowered it) is refused.
    None: nothing is staked (a deposit, a free draw or redeal); loss limits do not apply."""
    ids = list(user_ids)
    barred: dict[int, DomainError] = {}
    if not ids:
        return barred
    players = IntArray(ids)  # its array literal made once for the three reads
    for suspension in Suspension.objects.filter(user_id__any_of=players, lifted_at__isnull=True):
        barred[suspension.user_id] = SuspendedError(
            "this account is suspended: contact support", reason=suspension.reason
        )
    exclusions = Exclusion.objects.filter(user_id__any_of=players, starts_at__lte=now, ends_at__gt=now)
    for exclusion in exclusions.order_by("ends_at"):
        if exclusion.user_id in barred and barred[exclusion.user_id].code == "suspended":
            continue
        until = exclusion.ends_at.strftime("%Y-%m-%d %H:%M UTC")
        if exclusion.kind == ExclusionKind.SELF_EXCLUSION:
            barred[exclusion.user_id] = SelfExcludedError(f"you excluded yourself from play until {until}", until=until)
        elif exclusion.user_id not in barred:
            barred[exclusion.user_id] = TimeOutError(f"you took a time-out from play until {until}", until=until)
    limits = PlayerLimit.objects.filter(
        user_id__any_of=IntArray([i for i in ids if i not in barred]) if barred else players,
        kind__in=[LimitKind.LOSS, LimitKind.SESSION],
    ).filter(currency__in=[currency, ""])
    loss_limits: dict[int, int] = {}
    session_limits: dict[int, int] = {}
    for limit in limits:
        value = effective_value(limit, now=now)
        if value is None:
            continue
        if limit.kind == LimitKind.LOSS and limit.currency == currency:
            loss_limits[limit.user_id] = value
        elif limit.kind == LimitKind.SESSION:
            session_limits[limit.user_id] = value
    if session_limits:
        since = now - timedelta(minutes=settings.SESSION_BREAK_MINUTES)
        for session in PlaySession.objects.filter(user_id__in=list(session_limits), last_play_at__gte=since):
            minutes = session_limits[session.user_id]
            if now - session.started_at >= timedelta(minutes=minutes):
                barred[session.user_id] = SessionLimitError(
                    f"your session time limit of {minutes} minutes is reached: play again after a break "
                    f"of {settings.SESSION_BREAK_MINUTES} minutes",
                    limit_minutes=minutes,
                )
    if loss_limits and stake_minor is not None:
        losses = losses_minor(
            user_ids=[i for i in loss_limits if i not in barred], currency=currency, since=now - WINDOW
        )
        for user_id, limit_minor in loss_limits.items():
            if user_id in barred:
                continue
            loss_after = losses.get(user_id, 0) + stake_minor
            if loss_after > limit_minor:
                said = (
                    f"this would take your losses of the last 24 hours to {format_minor(loss_after, currency)}"
                    if stake_minor
                    else f"your losses of the last 24 hours are {format_minor(loss_after, currency)}"
                )
                barred[user_id] = LossLimitError(
                    f"{said}, over your loss limit of {format_minor(limit_minor, currency)}",
                    limit_minor=limit_minor,
                    loss_minor=loss_after - stake_minor,
                )
    return barred


def check_can_play(*, user_id: int, currency: str, stake_minor: int | None, now: datetime) -> None:
    """Raise why the player may not stake ``stake_minor`` now (SuspendedError,
    SelfExcludedError, TimeOutError, SessionLimitError, LossLimitError); None if he may.
    ``stake_minor`` as in ``barred_players`` (None: nothing staked). A caller about to move
    the stake locks the player's wallet first, so that two stakes at once (two tables)
    cannot both pass the loss limit."""
    refusal = barred_players(user_ids=[user_id], currency=currency, stake_minor=stake_minor, now=now).get(user_id)
    if refusal is not None:
        raise refusal


def check_deposit(*, user_id: int, currency: str, amount_minor: int, now: datetime) -> None:
    """Raise SuspendedError, SelfExcludedError, TimeOutError or DepositLimitError when the
    deposit may not be made; None when it may. Loss limits never refuse a deposit.

    The caller locks the player's wallet first (``deposit_cash``): deposits are booked at
    once (no hold), so two deposits at once are counted one after the other."""
    check_can_play(user_id=user_id, currency=currency, stake_minor=None, now=now)
    limit = PlayerLimit.objects.filter(user_id=user_id, kind=LimitKind.DEPOSIT, currency=currency).first()
    value = effective_value(limit, now=now) if limit is not None else None
    if value is None:
        return
    already = deposited_minor(user_id=user_id, currency=currency, since=now - WINDOW)
    if already + amount_minor > value:
        raise DepositLimitError(
            f"the player's deposit limit is {format_minor(value, currency)} in 24 hours; "
            f"{format_minor(already, currency)} already deposited, so at most "
            f"{format_minor(max(0, value - already), currency)} more",
            limit_minor=value,
            deposited_minor=already,
        )


def can_log_in(*, user_id: int) -> bool:
    return not is_suspended(user_id=user_id)


# --- writes ----------------------------------------------------------------------------------


def _describe(kind: str, currency: str, value: int | None) -> str:
    if value is None:
        return "none"
    if kind in MONEY_LIMITS:
        return format_minor(value, currency)
    return f"{value} min"


@transaction.atomic(durable=True)
def set_limit(
    *, user_id: int, kind: str, currency: str = "", value: int | None, now: datetime, actor_id: int | None = None
) -> LimitView:
    """The player sets one of his limits (``value`` None removes it). Lowering, or setting a
    first limit, applies at once; raising or removing waits ``LIMIT_COOLING_HOURS``. A
    reality check interval applies at once either way (it protects, it never permits).

    Raises InvalidLimitError for an unknown kind, a non-positive or absurd value, or a money
    limit without a currency.
    """
    if kind not in LimitKind.values:
        raise InvalidLimitError(f"unknown limit {kind!r}", kind=kind)
    money = kind in MONEY_LIMITS
    if money and not currency:
        raise InvalidLimitError("a money limit needs a currency", kind=kind)
    currency = currency if money else ""
    top = MAX_LIMIT_MINOR if money else MAX_MINUTES
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= top):
        shown = f"{format_minor(top, currency)}" if money else f"{top} minutes"
        raise InvalidLimitError(f"a limit is a positive amount of at most {shown}", kind=kind)
    limit, _ = PlayerLimit.objects.select_for_update().get_or_create(user_id=user_id, kind=kind, currency=currency)
    current = effective_value(limit, now=now)
    limit.value, limit.pending_value, limit.pending_at = current, None, None
    raising = current is not None and (value is None or value > current)
    if raising and kind != LimitKind.REALITY_CHECK:
        limit.pending_value = value
        limit.pending_at = now + timedelta(hours=settings.LIMIT_COOLING_HOURS)
        detail = (
            f"{LimitKind(kind).label}: {_describe(kind, currency, current)} -> {_describe(kind, currency, value)} "
            f"from {limit.pending_at:%Y-%m-%d %H:%M}"
        )
    else:
        limit.value = value
        detail = f"{LimitKind(kind).label}: {_describe(kind, currency, current)} -> {_describe(kind, currency, value)}"
    limit.updated_at = now
    limit.save()
    ProtectionLog.objects.create(user_id=user_id, actor_id=actor_id or user_id, action="limit", detail=detail[:255])
    return LimitView(kind, currency, limit.value, limit.pending_value, limit.pending_at)


@transaction.atomic(durable=True)
def take_break(*, user_id: int, kind: str, days: int, now: datetime) -> Exclusion:
    """The player stops playing for ``days`` (time-out: 1, 7 or 30; self-exclusion: 182, 365
    or 1825). It starts at once and nobody can end it early; a second break that would end
    sooner than one in force changes nothing (the later end stands).

    Raises InvalidLimitError for another kind or length.
    """
    allowed = TIME_OUT_DAYS if kind == ExclusionKind.TIME_OUT else SELF_EXCLUSION_DAYS
    if kind not in ExclusionKind.values or days not in allowed:
        raise InvalidLimitError(f"a {kind} lasts {', '.join(map(str, allowed))} days", kind=kind, days=days)
    ends_at = now + timedelta(days=days)
    current = find_exclusion(user_id=user_id, now=now)
    if current is not None and current.ends_at >= ends_at:
        return current
    exclusion = Exclusion.objects.create(user_id=user_id, kind=kind, starts_at=now, ends_at=ends_at, created_at=now)
    ProtectionLog.objects.create(
        user_id=user_id, actor_id=user_id, action=kind, detail=f"{days} days, until {ends_at:%Y-%m-%d %H:%M}"
    )
    return exclusion


@transaction.atomic(durable=True)
def suspend_player(*, user_id: int, reason: str, staff_user_id: int, now: datetime) -> Suspension:
    """Staff suspend an account with a reason. Suspending a suspended account changes nothing.

    Raises InvalidLimitError without a reason.
    """
    if not reason.strip():
        raise InvalidLimitError("a suspension needs a reason")
    current = Suspension.objects.select_for_update().filter(user_id=user_id, lifted_at__isnull=True).first()
    if current is not None:
        return current
    suspension = Suspension.objects.create(
        user_id=user_id, reason=reason.strip()[:255], suspended_by_id=staff_user_id, suspended_at=now
    )
    ProtectionLog.objects.create(
        user_id=user_id, actor_id=staff_user_id, action="suspended", detail=reason.strip()[:255], created_at=now
    )
    return suspension


@transaction.atomic(durable=True)
def lift_suspension(*, user_id: int, reason: str, staff_user_id: int, now: datetime) -> Suspension | None:
    """Staff lift the suspension in force, with a reason; None when there is none. Breaks the
    player took himself are not affected.

    Raises InvalidLimitError without a reason.
    """
    if not reason.strip():
        raise InvalidLimitError("lifting a suspension needs a reason")
    current = Suspension.objects.select_for_update().filter(user_id=user_id, lifted_at__isnull=True).first()
    if current is None:
        return None
    current.lifted_at = now
    current.lifted_by_id = staff_user_id
    current.lift_reason = reason.strip()[:255]
    current.save(update_fields=["lifted_at", "lifted_by", "lift_reason"])
    ProtectionLog.objects.create(
        user_id=user_id, actor_id=staff_user_id, action="unsuspended", detail=reason.strip()[:255], created_at=now
    )
    return current


def record_play(*, user_ids: Iterable[int], now: datetime) -> None:
    """Count a hand dealt to each player in his play session (opening one after a break).
    Called inside the deal; set-based whatever the number of players: on PostgreSQL one
    statement (the open sessions' ``UPDATE`` and the new ones' ``INSERT`` in one), elsewhere
    three with the ids as one array parameter."""
    ids = list(user_ids)
    if not ids:
        return
    since = now - timedelta(minutes=settings.SESSION_BREAK_MINUTES)
    if connection.vendor == "postgresql":
        table = PlaySession._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute(
                f"WITH open AS (UPDATE {table} SET last_play_at = %(now)s "
                "WHERE user_id = ANY(%(ids)s::integer[]) AND last_play_at >= %(since)s RETURNING user_id) "
                f"INSERT INTO {table} (user_id, started_at, last_play_at) "
                "SELECT u, %(now)s, %(now)s FROM unnest(%(ids)s::integer[]) AS u "
                "WHERE NOT EXISTS (SELECT 1 FROM open WHERE open.user_id = u)",
                {"now": now, "since": since, "ids": int_array_literal(ids)},
            )
        return
    open_ids = set(
        PlaySession.objects.filter(user_id__any_of=IntArray(ids), last_play_at__gte=since).values_list(
            "user_id", flat=True
        )
    )
    if open_ids:
        PlaySession.objects.filter(user_id__any_of=IntArray(open_ids), last_play_at__gte=since).update(last_play_at=now)
    PlaySession.objects.bulk_create(
        [PlaySession(user_id=user_id, started_at=now, last_play_at=now) for user_id in ids if user_id not in open_ids],
        batch_size=2000,
    )
