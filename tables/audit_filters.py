"""The auditor reports' narrowing of one game's terminal hands, shared by the games' audit
hooks (tables/widerpoker/audit.py, tables/holdem/audit.py; backoffice/auditing.py runs them)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.db.models import Exists, F, OuterRef
from django.db.models.functions import TruncDate


def narrowed(
    hands: Any,
    dealt_in: Any,
    *,
    since: datetime,
    until: datetime,
    table_id: int | None,
    currency: str | None,
    player: str | None,
    practice: bool,
) -> Any:
    """``hands`` (a queryset of one game's terminal hands) that ended (``settled_at``) in
    [since, until), of real tables (or of practice games only, when ``practice``),
    optionally of one table, currency or player (username: the hands he was dealt in, a
    row of the queryset ``dealt_in`` naming him)."""
    hands = hands.filter(settled_at__gte=since, settled_at__lt=until, table__practice__isnull=not practice)
    if table_id is not None:
        hands = hands.filter(table_id=table_id)
    if currency:
        hands = hands.filter(table__currency=currency)
    if player:
        hands = hands.filter(Exists(dealt_in.filter(hand_id=OuterRef("pk"), user__username=player)))
    return hands


def grouped(hands: Any, group_by: str) -> tuple[Any, list[str]]:
    """``hands`` annotated with the report's ``group`` and the keys to group them by:
    ``"day"`` (the UTC day they ended, per currency) or ``"table"`` (``group`` the table's id,
    ``group_name`` its name, per currency)."""
    if group_by == "day":
        return hands.annotate(group=TruncDate("settled_at", tzinfo=UTC)), ["group", "table__currency"]
    return hands.annotate(group=F("table_id"), group_name=F("table__name")), ["group", "group_name", "table__currency"]
