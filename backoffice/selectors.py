"""Reads behind the back-office reports: hand totals by table and day, the configuration
audit log. Money stays in minor units, per currency; days are UTC days of settlement."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from django.db.models import Count, F, Q, QuerySet, Sum
from django.db.models.functions import Coalesce, TruncDate

from tables.models import (
    Hand,
    HandStatus,
    HoldemHand,
    HoldemHandPlayer,
    HoldemHandStatus,
    Table,
    TableConfigChange,
)

_SETTLED = Q(status=HandStatus.SETTLED)


@dataclass(frozen=True, slots=True)
class TableDayTotals:
    """What one table's hands of one day added up to (settled hands; cancelled ones are
    counted apart, their wagers having been refunded)."""

    day: date | None
    table_id: int
    table_name: str
    currency: str
    hands: int
    cancelled: int
    entries: int
    gross_minor: int
    rake_minor: int
    prizes_minor: int
    breakage_minor: int


@dataclass(frozen=True, slots=True)
class CurrencyTotals:
    """The sum of report rows of one currency."""

    currency: str
    hands: int
    cancelled: int
    entries: int
    gross_minor: int
    rake_minor: int
    prizes_minor: int
    breakage_minor: int


def day_bounds(start: date, end: date) -> tuple[datetime, datetime]:
    """The UTC instants [start 00:00, end+1 00:00) covering days ``start`` to ``end``."""
    return (
        datetime.combine(start, time.min, tzinfo=UTC),
        datetime.combine(end + timedelta(days=1), time.min, tzinfo=UTC),
    )


def list_table_day_totals(
    *, start: date, end: date, by_day: bool = True, practice: bool = False
) -> list[TableDayTotals]:
    """Totals per table and UTC day of settlement (or per table over the whole range when
    ``by_day`` is False), for hands ended from ``start`` to ``end`` inclusive; most recent
    day first, then table name. Prizes are the pool less the breakage carried forward.
    Practice games (private play-chip tables, seed 004) are not the operator's figures:
    left out, or alone counted with ``practice=True``."""
    since, until = day_bounds(start, end)
    hands = Hand.objects.filter(
        status__in=[HandStatus.SETTLED, HandStatus.CANCELLED],
        settled_at__gte=since,
        settled_at__lt=until,
        table__practice__isnull=not practice,
    )
    group = ["table_id", "table__name", "table__currency"]
    if by_day:
        hands = hands.annotate(day=TruncDate("settled_at", tzinfo=UTC))
        group.insert(0, "day")
    rows = (
        hands.values(*group)
        .annotate(
            hands=Count("id", filter=_SETTLED),
            cancelled=Count("id", filter=Q(status=HandStatus.CANCELLED)),
            entries=Coalesce(Sum("entry_count", filter=_SETTLED), 0),
            gross=Coalesce(Sum("gross_minor", filter=_SETTLED), 0),
            rake=Coalesce(Sum("rake_minor", filter=_SETTLED), 0),
            prizes=Coalesce(Sum(F("pool_minor") - F("breakage_minor"), filter=_SETTLED), 0),
            breakage=Coalesce(Sum("breakage_minor", filter=_SETTLED), 0),
        )
        .order_by(*(["-day"] if by_day else []), "table__name")
    )
    widerpoker = [
        TableDayTotals(
            day=row["day"] if by_day else None,
            table_id=row["table_id"],
            table_name=row["table__name"],
            currency=row["table__currency"],
            hands=row["hands"],
            cancelled=row["cancelled"],
            entries=row["entries"],
            gross_minor=row["gross"],
            rake_minor=row["rake"],
            prizes_minor=row["prizes"],
            breakage_minor=row["breakage"],
        )
        for row in rows
    ]
    combined = widerpoker + _holdem_table_day_totals(since=since, until=until, by_day=by_day, practice=practice)
    combined.sort(key=lambda row: row.table_name)
    if by_day:
        combined.sort(key=lambda row: row.day or date.min, reverse=True)
    return combined


def _holdem_table_day_totals(
    *, since: datetime, until: datetime, by_day: bool, practice: bool = False
) -> list[TableDayTotals]:
    """Hold'em tables' rows of ``list_table_day_totals``: the pots as gross, their rake,
    prizes = pot - rake (what the winners took), entries = players dealt in; no breakage."""
    hands = HoldemHand.objects.filter(
        status__in=[HoldemHandStatus.SETTLED, HoldemHandStatus.CANCELLED],
        settled_at__gte=since,
        settled_at__lt=until,
        table__practice__isnull=not practice,
    )
    group = ["table_id", "table__name", "table__currency"]
    if by_day:
        hands = hands.annotate(day=TruncDate("settled_at", tzinfo=UTC))
        group.insert(0, "day")
    settled = Q(status=HoldemHandStatus.SETTLED)
    rows = hands.values(*group).annotate(
        hands=Count("id", filter=settled),
        cancelled=Count("id", filter=Q(status=HoldemHandStatus.CANCELLED)),
        gross=Coalesce(Sum("pot_minor", filter=settled), 0),
        rake=Coalesce(Sum("rake_minor", filter=settled), 0),
    )
    players = HoldemHandPlayer.objects.filter(
        hand__status=HoldemHandStatus.SETTLED,
        hand__settled_at__gte=since,
        hand__settled_at__lt=until,
        hand__table__practice__isnull=not practice,
    )
    player_group = ["hand__table_id"]
    if by_day:
        players = players.annotate(day=TruncDate("hand__settled_at", tzinfo=UTC))
        player_group.insert(0, "day")
    counts = {
        (row.get("day"), row["hand__table_id"]): row["n"]
        for row in players.values(*player_group).annotate(n=Count("id"))
    }
    return [
        TableDayTotals(
            day=row["day"] if by_day else None,
            table_id=row["table_id"],
            table_name=row["table__name"],
            currency=row["table__currency"],
            hands=row["hands"],
            cancelled=row["cancelled"],
            entries=counts.get((row.get("day"), row["table_id"]), 0),
            gross_minor=row["gross"],
            rake_minor=row["rake"],
            prizes_minor=row["gross"] - row["rake"],
            breakage_minor=0,
        )
        for row in rows
    ]


def sum_by_currency(rows: list[TableDayTotals]) -> list[CurrencyTotals]:
    """Report rows summed per currency (never across currencies), by currency code."""
    totals: dict[str, list[int]] = {}
    for row in rows:
        acc = totals.setdefault(row.currency, [0] * 7)
        for i, value in enumerate(
            (
                row.hands,
                row.cancelled,
                row.entries,
                row.gross_minor,
                row.rake_minor,
                row.prizes_minor,
                row.breakage_minor,
            )
        ):
            acc[i] += value
    return [CurrencyTotals(currency, *values) for currency, values in sorted(totals.items())]


def list_config_changes(*, table_id: int | None = None) -> QuerySet[TableConfigChange]:
    """The configuration audit log, newest first, optionally of one table."""
    changes = TableConfigChange.objects.select_related("table", "changed_by")
    if table_id is not None:
        changes = changes.filter(table_id=table_id)
    return changes.order_by("-changed_at", "-id")


def list_table_choices(*, practice: bool = False) -> list[tuple[int, str]]:
    """(id, name) of the operator's tables, by name, for report filters; practice games
    (seed 004) only with ``practice=True``, and then those alone."""
    tables = Table.objects.filter(practice__isnull=not practice)
    return list(tables.order_by("name").values_list("id", "name"))
