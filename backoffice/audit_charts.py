"""The auditor reports' charts: per currency, return to player, rake and gross by day
(from backoffice.auditing's totals) and the distribution of WiderPoker prizes by size in
antes. The same rules as the totals: terminal hands by the UTC instant they ended, integer
minor units per currency, practice games only on request."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.db.models import Case, CharField, Count, F, Q, Value, When

from backoffice.auditing import list_audit_totals, rtp
from backoffice.selectors import day_bounds
from tables.models import Entry, HandStatus

# Prize sizes, in antes: the prize distribution chart's buckets (upper bounds, inclusive).
PRIZE_BUCKETS: tuple[tuple[str, int | None], ...] = (
    ("up to 1 ante", 1),
    ("1-2 antes", 2),
    ("2-5 antes", 5),
    ("5-10 antes", 10),
    ("10-50 antes", 50),
    ("over 50 antes", None),
)


@dataclass(frozen=True, slots=True)
class ChartSeries:
    """Per currency, the daily series of the "return to player and rake over time" chart
    (oldest day first) and the prize distribution by size in antes."""

    currency: str
    days: tuple[str, ...]
    rtp_percent: tuple[float | None, ...]
    rake_minor: tuple[int, ...]
    gross_minor: tuple[int, ...]
    prize_buckets: tuple[str, ...]
    prize_counts: tuple[int, ...]


def list_chart_series(
    *,
    start: date,
    end: date,
    table_id: int | None = None,
    currency: str | None = None,
    player: str | None = None,
    practice: bool = False,
) -> list[ChartSeries]:
    """The charts' data for the range, one ``ChartSeries`` per currency, by currency code.

    RTP per day is a percentage with two decimals (for display only; the report's exact
    figures are the minor-unit totals), over both games' hands of the day. Prize sizes are
    measured in antes of their hand (WiderPoker's; Hold'em has no ante to measure by).
    """
    rows = list_audit_totals(
        start=start,
        end=end,
        group_by="day",
        table_id=table_id,
        currency=currency,
        player=player,
        practice=practice,
    )
    by_currency: dict[str, dict[str, list[int]]] = {}
    for row in rows:
        day = by_currency.setdefault(row.currency, {}).setdefault(str(row.key), [0, 0, 0])
        day[0] += row.gross_minor
        day[1] += row.rake_minor or 0
        day[2] += row.prizes_minor
    buckets = _prize_buckets(
        start=start, end=end, table_id=table_id, currency=currency, player=player, practice=practice
    )
    series = []
    for code in sorted(set(by_currency) | set(buckets)):
        days = sorted(by_currency.get(code, {}).items())
        counts = buckets.get(code, {})
        series.append(
            ChartSeries(
                currency=code,
                days=tuple(day for day, _ in days),
                rtp_percent=tuple(
                    None if (value := rtp(prizes, gross)) is None else round(float(value) * 100, 2)
                    for _, (gross, _rake, prizes) in days
                ),
                rake_minor=tuple(rake for _, (_gross, rake, _prizes) in days),
                gross_minor=tuple(gross for _, (gross, _rake, _prizes) in days),
                prize_buckets=tuple(label for label, _ in PRIZE_BUCKETS),
                prize_counts=tuple(counts.get(label, 0) for label, _ in PRIZE_BUCKETS),
            )
        )
    return series


def _prize_buckets(
    *,
    start: date,
    end: date,
    table_id: int | None,
    currency: str | None,
    player: str | None = None,
    practice: bool = False,
) -> dict[str, dict[str, int]]:
    """Winning entries counted by prize size in antes, per currency, in one query.

    An entry's ante is its hand's antes over its entries; a prize of ``p`` is in the bucket
    with the smallest bound ``b`` such that ``p * entry_count <= b * antes``.
    """
    since, until = day_bounds(start, end)
    entries = Entry.objects.filter(
        hand__status=HandStatus.SETTLED,
        hand__settled_at__gte=since,
        hand__settled_at__lt=until,
        prize_minor__gt=0,
        hand__antes_minor__gt=0,
    )
    if practice:
        return {}  # WiderPoker has no practice games
    if table_id is not None:
        entries = entries.filter(hand__table_id=table_id)
    if currency:
        entries = entries.filter(hand__table__currency=currency)
    if player:
        entries = entries.filter(user__username=player)
    scaled = F("prize_minor") * F("hand__entry_count")
    whens = [
        When(Q(scaled_prize__lte=F("hand__antes_minor") * bound), then=Value(label))
        for label, bound in PRIZE_BUCKETS
        if bound is not None
    ]
    rows = (
        entries.annotate(scaled_prize=scaled)
        .annotate(bucket=Case(*whens, default=Value(PRIZE_BUCKETS[-1][0]), output_field=CharField()))
        .values("hand__table__currency", "bucket")
        .annotate(count=Count("id"))
        .order_by()
    )
    result: dict[str, dict[str, int]] = {}
    for row in rows:
        result.setdefault(row["hand__table__currency"], {})[row["bucket"]] = row["count"]
    return result
