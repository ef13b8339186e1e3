"""Texas Hold'em's totals for the auditor reports (its ``GameAudit``, tables/gamespec.py;
backoffice/auditing.py turns the rows into report lines). A hand's gross is its pot (every
chip the players put in), its prizes the pot less the rake; no jackpots. Minor units."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db.models import Count, F, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce

from tables.audit_filters import grouped, narrowed
from tables.models import HoldemHand, HoldemHandPlayer, HoldemHandStatus, Table

_TERMINAL = [HoldemHandStatus.SETTLED, HoldemHandStatus.CANCELLED]
_SETTLED = Q(status=HoldemHandStatus.SETTLED)
_CHUNK = 2000


def terminal_hands(
    *,
    since: datetime,
    until: datetime,
    table_id: int | None = None,
    currency: str | None = None,
    player: str | None = None,
    practice: bool = False,
) -> Any:
    """Hold'em's terminal hands that ended in [since, until), of real tables (or of
    practice games only, when ``practice``); a player's: those he was dealt in."""
    return narrowed(
        HoldemHand.objects.filter(status__in=_TERMINAL),
        HoldemHandPlayer.objects,
        since=since,
        until=until,
        table_id=table_id,
        currency=currency,
        player=player,
        practice=practice,
    )


def totals(group_by: str, **filters: Any) -> list[dict[str, Any]]:
    """The terminal hands' totals by ``"day"`` (UTC) or ``"table"`` (``GameAudit.totals``):
    gross = pots, prizes = pots less rake, entries = players dealt in, no jackpots."""
    hands, keys = grouped(terminal_hands(**filters), group_by)
    # Counted with the players' join (one row per player dealt in), summed without it.
    rows: list[dict[str, Any]] = list(
        hands.values(*keys)
        .annotate(
            hands=Count("id", filter=_SETTLED, distinct=True),
            cancelled=Count("id", filter=Q(status=HoldemHandStatus.CANCELLED), distinct=True),
            entries=Count("seat_rows", filter=_SETTLED),
        )
        .order_by()
    )
    money = {
        "gross": Coalesce(Sum("pot_minor", filter=_SETTLED), 0),
        "rake": Coalesce(Sum("rake_minor", filter=_SETTLED), 0),
        "prizes": Coalesce(Sum(F("pot_minor") - F("rake_minor"), filter=_SETTLED), 0),
    }
    sums = {tuple(row[k] for k in keys): row for row in hands.values(*keys).annotate(**money).order_by()}
    for row in rows:
        row.update({name: sums[tuple(row[k] for k in keys)][name] for name in ("gross", "rake", "prizes")})
        row["contributions"] = row["awards"] = None
    return rows


def player_totals(
    *,
    since: datetime,
    until: datetime,
    table_id: int | None,
    currency: str | None,
    player: str | None,
    practice: bool,
) -> list[dict[str, Any]]:
    """The settled hands by player (``GameAudit.player_totals``): hands dealt in, what he put
    in the pots (``paid``: starting less finishing stack plus what he won) and what he won
    from them (the hand's ``results["won"]``), per currency."""
    hands = terminal_hands(since=since, until=until, table_id=table_id, currency=currency, practice=practice).filter(
        status=HoldemHandStatus.SETTLED
    )
    seats = HoldemHandPlayer.objects.filter(hand__in=hands.values("id"))
    if player:
        seats = seats.filter(user__username=player)
    acc_by: dict[tuple[int, str, str], list[int]] = {}
    rows = seats.values_list(
        "user_id",
        "user__username",
        "hand__table__currency",
        "seat",
        "starting_minor",
        "finishing_minor",
        "hand__results",
    )
    for user_id, username, code, seat, starting, finishing, results in rows.iterator(chunk_size=_CHUNK):
        won = int((results or {}).get("won", {}).get(str(seat), 0))
        paid = int(starting) - int(finishing if finishing is not None else starting) + won
        acc = acc_by.setdefault((user_id, username, code), [0, 0, 0])
        acc[0] += 1
        acc[1] += paid
        acc[2] += won
    return [
        {"user_id": user_id, "username": username, "currency": code, "hands": n, "entries": n, "paid": paid, "won": won}
        for (user_id, username, code), (n, paid, won) in acc_by.items()
    ]


def running_hands_started(tables: Sequence[Any]) -> dict[int, datetime]:
    """When each table's latest hand started, for the tables whose latest hand is still
    being played (one read for all; the others left out)."""
    latest = HoldemHand.objects.filter(table=OuterRef("pk")).order_by("-number")
    rows = (
        Table.objects.filter(pk__in=[table.pk for table in tables])
        .annotate(
            status=Subquery(latest.values("status")[:1]),
            started=Subquery(latest.values("started_at")[:1]),
        )
        .values_list("pk", "status", "started")
    )
    return {pk: started for pk, status, started in rows if status == HoldemHandStatus.PLAYING}
