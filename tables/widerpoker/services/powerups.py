"""Power-ups: gaming sessions, levels, and free draws and redeals paid by the house's
promotions account (seed 001, E; DESIGN item 17).

A session starts when a player is dealt a hand with no open session at the table, and ends
when he leaves or plays no hand for ``idle_minutes``. Each hand dealt counts, and may
release a free draw or redeal at the rate of his level (``PowerUpRules``). A free item is
used like a bought one, but the promotions account pays its price into the hand's escrow:
the pool grows exactly as if the player had paid, so other players are never diluted, and
the promotion's cost is in the books. Without money in the promotions account (cash), the
free item cannot be used and stays in stock.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, NamedTuple, Protocol

import numpy as np
from django.db import connection, transaction
from django.db.models import BooleanField, ExpressionWrapper, Q
from django.utils.translation import gettext_lazy as _

from config.infra.errors import DomainError
from tables.bulk import insert_rows, update_rows
from tables.errors import InvalidTableConfigError
from tables.models import GamingSession, PowerUpRules
from wallet import services as wallet_services
from wallet.errors import InsufficientFundsError
from wallet.lookups import IntArray
from wallet.models import Account, AccountKind, Currency, TransferKind


class NoFreeItemError(DomainError):
    """The player asked for a free draw or redeal and has none (already used, or never
    released); nothing changed."""

    code = "no_free_item"
    summary = _("You have no free draw or redeal to use.")
    http_status = 409


class PromotionUnavailableError(DomainError):
    """The house promotions account cannot pay the free item now; it stays in stock."""

    code = "promotion_unavailable"
    summary = _("Free items cannot be paid out now; yours stays in stock.")
    http_status = 409


def rules() -> PowerUpRules:
    """The power-up rules (created with the defaults on first use)."""
    row, _ = PowerUpRules.objects.get_or_create(pk=1)
    return row


def validate_rules(values: dict[str, Any]) -> None:
    """Refuse power-up rules out of range, naming the field (InvalidTableConfigError)."""
    checks = [
        ("points_per_level", values["points_per_level"] >= 1, "a level takes at least 1 point"),
        ("max_level", 1 <= values["max_level"] <= 20, "levels go from 1 to at most 20"),
        ("draw_every_hands", values["draw_every_hands"] >= 1, "a free draw comes at most once a hand"),
        ("redeal_every_hands", values["redeal_every_hands"] >= 1, "a free redeal comes at most once a hand"),
        ("max_stock", 1 <= values["max_stock"] <= 10, "a player holds 1 to 10 free items of each kind"),
        ("idle_minutes", values["idle_minutes"] >= 1, "a session ends after at least a minute idle"),
    ]
    for field, ok, message in checks:
        if not ok:
            raise InvalidTableConfigError(message, field=field, value=values[field])


def level_of(session: SessionCounts, rules: PowerUpRules) -> int:
    """The session's power-up level (PowerUpRules docstring)."""
    return min(rules.max_level, 1 + points_of(session, rules) // rules.points_per_level)


def points_of(session: SessionCounts, rules: PowerUpRules) -> int:
    return (
        session.hands_played * rules.points_per_hand
        + session.draws_bought * rules.points_per_draw
        + session.redeals_bought * rules.points_per_redeal
    )


def release_every(level: int, base: int, step: int) -> int:
    """Hands between two free items at ``level``: ``max(1, base - (level - 1) x step)``.

    >>> release_every(1, 10, 2), release_every(3, 10, 2), release_every(9, 10, 2)
    (10, 6, 1)
    """
    return max(1, base - (level - 1) * step)


def on_hands_dealt(*, table_id: int, user_ids: list[int], now: datetime) -> None:
    """Count a hand dealt for each player: open sessions as needed (ending idle ones), and
    release the free items the players' levels earn. Called inside the deal; set-based (a
    hand of 100,000 players: a few statements, the level arithmetic in numpy)."""
    config = rules()
    if not config.is_active or not user_ids:
        return
    idle = now - timedelta(minutes=config.idle_minutes)
    players = np.unique(np.asarray(user_ids, dtype=np.int64))
    fields = ("id", "user_id", "hands_played", "draws_bought", "redeals_bought", "free_draws", "free_redeals", "idle")
    # The table's open sessions, filtered here: a list of 100,000 ids in the query made
    # PostgreSQL compare every row with every id. Whether each is idle is the database's
    # answer: no timestamp read per row.
    open_sessions = GamingSession.objects.filter(table_id=table_id, ended_at__isnull=True).annotate(
        idle=ExpressionWrapper(Q(last_hand_at__lt=idle), output_field=BooleanField())
    )
    dealt = {int(user_id) for user_id in players.tolist()}
    found = [row for row in open_sessions.values_list(*fields) if row[1] in dealt]
    idle_ids = [row[0] for row in found if row[7]]
    if idle_ids:
        GamingSession.objects.filter(pk__any_of=IntArray(idle_ids)).update(ended_at=now)
    rows: list[tuple[int, ...]] = [tuple(row[:7]) for row in found if not row[7]]
    missing = sorted(dealt - {row[1] for row in rows})
    if missing:
        # New sessions are written already counted: one INSERT, no UPDATE after it.
        zeros = np.zeros(len(missing), dtype=np.int64)
        hands, free_draws, free_redeals = _count_hand(config, zeros, zeros, zeros, zeros, zeros)
        insert_rows(
            GamingSession._meta.db_table,
            {
                "table_id": [table_id] * len(missing),
                "user_id": missing,
                "started_at": [now] * len(missing),
                "last_hand_at": [now] * len(missing),
                "hands_played": hands,
                "draws_bought": zeros,
                "redeals_bought": zeros,
                "free_draws": free_draws,
                "free_redeals": free_redeals,
                "free_draws_used": zeros,
                "free_redeals_used": zeros,
            },
        )
    if not rows:
        return
    ids, _, hands, draws, redeals, free_draws, free_redeals = np.array(rows, dtype=np.int64).T
    hands, free_draws, free_redeals = _count_hand(config, hands, draws, redeals, free_draws, free_redeals)
    update_rows(
        GamingSession._meta.db_table,
        ids,
        {
            "hands_played": ("integer", hands),
            "free_draws": ("smallint", free_draws),
            "free_redeals": ("smallint", free_redeals),
        },
        constants={"last_hand_at": now},
    )


def _count_hand(
    config: PowerUpRules,
    hands: np.ndarray,
    draws: np.ndarray,
    redeals: np.ndarray,
    free_draws: np.ndarray,
    free_redeals: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One more hand for each session (arrays aligned): hands played, and the free items the
    new level releases (``level_of`` and ``release_every``, vectorised)."""
    hands = hands + 1
    points = hands * config.points_per_hand + draws * config.points_per_draw + redeals * config.points_per_redeal
    level = np.minimum(config.max_level, 1 + points // config.points_per_level)
    every_draw = np.maximum(1, config.draw_every_hands - (level - 1) * config.draw_step)
    every_redeal = np.maximum(1, config.redeal_every_hands - (level - 1) * config.redeal_step)
    free_draws = np.where(hands % every_draw == 0, np.minimum(config.max_stock, free_draws + 1), free_draws)
    free_redeals = np.where(hands % every_redeal == 0, np.minimum(config.max_stock, free_redeals + 1), free_redeals)
    return hands, free_draws, free_redeals


def end_session(*, table_id: int, user_id: int, now: datetime) -> None:
    """The player left the table: his session ends (its free items with it)."""
    GamingSession.objects.filter(table_id=table_id, user_id=user_id, ended_at__isnull=True).update(ended_at=now)


def count_purchase(*, table_id: int, user_id: int, kind: str) -> None:
    """A draw or redeal bought with the player's own money raises his level."""
    field = "draws_bought" if kind == "draw" else "redeals_bought"
    from django.db.models import F

    GamingSession.objects.filter(table_id=table_id, user_id=user_id, ended_at__isnull=True).update(
        **{field: F(field) + 1}
    )


def take_free_item(
    *, table_id: int, user_id: int, kind: str, price_minor: int, currency: str, escrow_id: int
) -> list[wallet_services.Leg]:
    """Take one free ``kind`` ("draw" or "redeal") from the player's session and return the
    legs that pay ``price_minor`` into the hand's escrow from promotions (FUN chips are
    virtual: the cashier funds a FUN promotion as it funds sign-up chips). Locks the session,
    so a free item asked for twice is used once. Raises NoFreeItemError or
    PromotionUnavailableError; the caller's transaction rolls back on either."""
    session = (
        GamingSession.objects.select_for_update()
        .filter(table_id=table_id, user_id=user_id, ended_at__isnull=True)
        .first()
    )
    stock_field, used_field = (
        ("free_draws", "free_draws_used") if kind == "draw" else ("free_redeals", "free_redeals_used")
    )
    if session is None or getattr(session, stock_field) < 1:
        raise NoFreeItemError(f"you have no free {kind} now", kind=kind)
    setattr(session, stock_field, getattr(session, stock_field) - 1)
    setattr(session, used_field, getattr(session, used_field) + 1)
    session.save(update_fields=[stock_field, used_field])
    if price_minor <= 0:
        return []
    source = promotions_account(currency)
    return [wallet_services.Leg(source.pk, -price_minor), wallet_services.Leg(escrow_id, price_minor)]


def promotions_account(currency: str) -> Account:
    """The account that pays free items in ``currency``, and gets them back when their hand
    is cancelled: the house promotions account (``promotions:<currency>``), or the FUN
    cashier for FUN chips (virtual: the cashier funds them as it funds sign-up chips)."""
    kind = AccountKind.CASHIER if currency == Currency.FUN else AccountKind.PROMOTIONS
    return wallet_services.ensure_house_account(kind=kind, currency=currency)


def pay_free_item(*, legs: list[wallet_services.Leg], reference: str, currency: str, memo: str) -> None:
    """Post the promotion's payment; a promotions account without the money refuses it."""
    if not legs:
        return
    try:
        wallet_services.post_transfer(
            reference=reference, kind=TransferKind.PROMOTION, currency=currency, legs=legs, memo=memo
        )
    except InsufficientFundsError as error:
        raise PromotionUnavailableError("free items are not available at the moment; buy it or try later") from error


def session_states(
    *, table_id: int, user_ids: set[int], config: PowerUpRules | None = None
) -> dict[int, dict[str, Any] | None]:
    """What the game screen shows of each player's session, in one query: level, points to
    the next level, free items in stock, and hands until the next free draw and redeal.
    ``config``: the rules when the caller has them (they change only between hands), else
    read."""
    config = config or rules()
    states: dict[int, dict[str, Any] | None] = dict.fromkeys(user_ids)
    if not config.is_active:
        return states
    for session in _open_sessions(table_id, user_ids):
        states[session.user_id] = session_state(session, config)
    return states


class SessionCounts(Protocol):
    """What ``session_state`` reads of a session: a ``GamingSession`` or the purchase
    writer's row of one (tables/widerpoker/services/purchase_batch.py), or a tuple of its
    columns (``_open_sessions``): read only."""

    @property
    def hands_played(self) -> int: ...
    @property
    def draws_bought(self) -> int: ...
    @property
    def redeals_bought(self) -> int: ...
    @property
    def free_draws(self) -> int: ...
    @property
    def free_redeals(self) -> int: ...


def session_state(session: SessionCounts, config: PowerUpRules) -> dict[str, Any]:
    """What the game screen shows of one open session (``session_states``' values), from
    its counts and the power-up rules in force (``config`` active)."""
    level = level_of(session, config)
    every_draw = release_every(level, config.draw_every_hands, config.draw_step)
    every_redeal = release_every(level, config.redeal_every_hands, config.redeal_step)
    return {
        "level": level,
        "max_level": config.max_level,
        "points": points_of(session, config),
        "next_level_points": None if level >= config.max_level else level * config.points_per_level,
        "hands_played": session.hands_played,
        "free_draws": session.free_draws,
        "free_redeals": session.free_redeals,
        "hands_to_free_draw": every_draw - session.hands_played % every_draw,
        "hands_to_free_redeal": every_redeal - session.hands_played % every_redeal,
    }


class _OpenSession(NamedTuple):
    """The columns of an open session ``session_states`` reads (``SessionCounts``)."""

    user_id: int
    hands_played: int
    draws_bought: int
    redeals_bought: int
    free_draws: int
    free_redeals: int


def _open_sessions(table_id: int, user_ids: set[int]) -> list[_OpenSession]:
    """The open sessions of ``user_ids`` at ``table_id``, as tuples (no model object: 100 of
    them a slice of private states, tables/realtime/refresh.py). On PostgreSQL one index
    probe per player (``LATERAL``): a plan that stays a few lookups for a few players of a
    table of 100,000 sessions even before the statistics know them (``user_id IN (...)`` was
    planned as a scan of the table's every session then). The ``LIMIT 1`` (at most one open
    session per player and table: ``one_open_session_per_player_and_table``) keeps the
    planner from flattening the subquery into a hash join over the table's every open
    session: 58 ms instead of 0.6 ms for 100 players of a fresh 100,000-player table
    (docs/benchmarks.md, "s6-private")."""
    columns = _OpenSession._fields
    if connection.vendor != "postgresql":
        rows = GamingSession.objects.filter(table_id=table_id, user_id__in=user_ids, ended_at__isnull=True)
        return [_OpenSession(*row) for row in rows.values_list(*columns)]
    table = GamingSession._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {', '.join(f's.{name}' for name in columns)} FROM unnest(%s::bigint[]) AS u(user_id) "
            f"CROSS JOIN LATERAL (SELECT * FROM {table} WHERE table_id = %s AND user_id = u.user_id "
            f"AND ended_at IS NULL LIMIT 1) s",
            [sorted(user_ids), table_id],
        )
        return [_OpenSession(*row) for row in cursor.fetchall()]


@transaction.atomic(durable=True)
def save_rules(**values: Any) -> PowerUpRules:
    """Change some or all power-up rules (validated as a whole); they apply from the next
    hand dealt. Raises InvalidTableConfigError (nothing changes). Staff change them through
    ``tables.widerpoker.services.staff.save_power_up_rules``, which asks for a reason and logs it."""
    return apply_rules(**values)


def apply_rules(**values: Any) -> PowerUpRules:
    """The building block of ``save_rules``: no transaction of its own, call it inside one."""
    row = rules()
    current = {
        field.name: getattr(row, field.name) for field in PowerUpRules._meta.concrete_fields if field.name != "id"
    }
    unknown = set(values) - set(current)
    if unknown:
        raise InvalidTableConfigError(f"unknown power-up rule {sorted(unknown)[0]!r}", field=sorted(unknown)[0])
    validate_rules(current | values)
    for field, value in values.items():
        setattr(row, field, value)
    row.save()
    return row
