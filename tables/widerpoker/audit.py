"""WiderPoker's totals for the auditor reports (its ``GameAudit``, tables/gamespec.py;
backoffice/auditing.py turns the rows into report lines). Money in minor units."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Count, F, Q, Sum
from django.db.models.functions import Coalesce

from tables.audit_filters import grouped, narrowed
from tables.models import Entry, Hand, HandStatus

_TERMINAL = [HandStatus.SETTLED, HandStatus.CANCELLED]
_SETTLED = Q(status=HandStatus.SETTLED)


def terminal_hands(
    *,
    since: datetime,
    until: datetime,
    table_id: int | None = None,
    currency: str | None = None,
    player: str | None = None,
    practice: bool = False,
) -> Any:
    """WiderPoker's terminal hands (settled or cancelled) that ended in [since, until) (a
    player's: those he was dealt in). WiderPoker has no practice games, so
    ``practice=True`` gives none."""
    return narrowed(
        Hand.objects.filter(status__in=_TERMINAL),
        Entry.objects,
        since=since,
        until=until,
        table_id=table_id,
        currency=currency,
        player=player,
        practice=practice,
    )


def totals(group_by: str, **filters: Any) -> list[dict[str, Any]]:
    """The terminal hands' totals by ``"day"`` (UTC) or ``"table"`` (``GameAudit.totals``):
    gross = antes, draws and redeals; prizes = the pool less the tie-split cents carried on."""
    hands, keys = grouped(terminal_hands(**filters), group_by)
    return list(
        hands.values(*keys)
        .annotate(
            hands=Count("id", filter=_SETTLED),
            cancelled=Count("id", filter=Q(status=HandStatus.CANCELLED)),
            entries=Coalesce(Sum("entry_count", filter=_SETTLED), 0),
            gross=Coalesce(Sum("gross_minor", filter=_SETTLED), 0),
            rake=Coalesce(Sum("rake_minor", filter=_SETTLED), 0),
            prizes=Coalesce(Sum(F("pool_minor") - F("breakage_minor"), filter=_SETTLED), 0),
            contributions=Coalesce(Sum("jackpot_contributions_minor", filter=_SETTLED), 0),
            awards=Coalesce(Sum("jackpot_awards_minor", filter=_SETTLED), 0),
        )
        .order_by()
    )


def player_totals(
    *,
    since: datetime,
    until: datetime,
    table_id: int | None,
    currency: str | None,
    player: str | None,
    practice: bool,
) -> list[dict[str, Any]]:
    """The settled hands by player (``GameAudit.player_totals``): ``paid`` what his entries
    paid, ``won`` their prizes; most won first, then by username."""
    if practice:
        return []  # WiderPoker has no practice games
    entries = Entry.objects.filter(
        hand__status=HandStatus.SETTLED, hand__settled_at__gte=since, hand__settled_at__lt=until
    )
    if table_id is not None:
        entries = entries.filter(hand__table_id=table_id)
    if currency:
        entries = entries.filter(hand__table__currency=currency)
    if player:
        entries = entries.filter(user__username=player)
    rows = (
        entries.values("user_id", "user__username", "hand__table__currency")
        .annotate(
            hands=Count("hand_id", distinct=True),
            entries=Count("id"),
            paid=Coalesce(Sum("paid_minor"), 0),
            won=Coalesce(Sum("prize_minor"), 0),
        )
        .order_by("-won", "user__username")
    )
    return [
        {
            "user_id": row["user_id"],
            "username": row["user__username"],
            "currency": row["hand__table__currency"],
            "hands": row["hands"],
            "entries": row["entries"],
            "paid": row["paid"],
            "won": row["won"],
        }
        for row in rows
    ]
