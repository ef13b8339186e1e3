"""Reads behind the auditor reports: totals by day, table or player over any date range,
series for the charts, and streamed row exports of hands, entries and ledger legs.

Only terminal hands count (settled, or cancelled and refunded), by the UTC instant they
ended (``settled_at``): their seeds are public, so nothing here reveals a running hand.
Money is in integer minor units, per currency, never summed across currencies.

Return to player (RTP) is prizes / gross: for a table or a day, the prizes paid (the pool
less the tie-split cents carried to the table's next hand) over everything staked (antes,
draws, redeals); for a player, what they won over what they paid.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any, Literal

from django.db.models import Case, CharField, Count, F, Q, Sum, Value, When
from django.db.models.functions import Coalesce, TruncDate

from backoffice.selectors import day_bounds
from backoffice.spreadsheet import csv_writer
from tables.models import Entry, Hand, HandStatus
from wallet.models import LedgerEntry

GroupBy = Literal["day", "table", "player"]
GROUPINGS: tuple[GroupBy, ...] = ("day", "table", "player")
ExportKind = Literal["hands", "entries", "transfers"]
EXPORT_KINDS: tuple[ExportKind, ...] = ("hands", "entries", "transfers")
EXPORT_CHUNK = 2000
STREAM_PIECE = 64 * 1024  # characters of CSV or JSON per piece of a streamed export
_TERMINAL = [HandStatus.SETTLED, HandStatus.CANCELLED]
_SETTLED = Q(status=HandStatus.SETTLED)

# Prize sizes, in antes: the prize distribution chart's buckets (upper bounds, inclusive).
PRIZE_BUCKETS: tuple[tuple[str, int | None], ...] = (
    ("up to 1 ante", 1),
    ("1-2 antes", 2),
    ("2-5 antes", 5),
    ("5-10 antes", 10),
    ("10-50 antes", 50),
    ("over 50 antes", None),
)


def rtp(prizes_minor: int, staked_minor: int) -> Decimal | None:
    """Return to player as a fraction with four decimals, None when nothing was staked.

    >>> rtp(8500, 10000)
    Decimal('0.8500')
    >>> rtp(0, 0) is None
    True
    """
    if staked_minor <= 0:
        return None
    return (Decimal(prizes_minor) / Decimal(staked_minor)).quantize(Decimal("0.0001"))


@dataclass(frozen=True, slots=True)
class AuditRow:
    """One line of an auditor report.

    ``label`` is the day (ISO), the table's name or the player's username; ``hands`` counts
    settled hands (a player's: hands played), ``cancelled`` the refunded ones. For a player,
    ``gross_minor`` is what they paid, ``prizes_minor`` what they won, and ``rake_minor`` is
    None (rake is taken per hand, not per player).
    """

    label: str
    key: int | str
    currency: str
    hands: int
    cancelled: int
    entries: int
    gross_minor: int
    rake_minor: int | None
    prizes_minor: int
    jackpot_contributions_minor: int | None = None
    jackpot_awards_minor: int | None = None

    @property
    def rtp(self) -> Decimal | None:
        """Prizes over gross (a fraction, four decimals), None when nothing was staked."""
        return rtp(self.prizes_minor, self.gross_minor)

    @property
    def rtp_percent(self) -> Decimal | None:
        """``rtp`` as a percentage with two decimals, for people."""
        value = self.rtp
        return None if value is None else (value * 100).quantize(Decimal("0.01"))


def _terminal_hands(*, start: date, end: date, table_id: int | None = None, currency: str | None = None) -> Any:
    since, until = day_bounds(start, end)
    hands = Hand.objects.filter(status__in=_TERMINAL, settled_at__gte=since, settled_at__lt=until)
    if table_id is not None:
        hands = hands.filter(table_id=table_id)
    if currency:
        hands = hands.filter(table__currency=currency)
    return hands


def list_audit_totals(
    *,
    start: date,
    end: date,
    group_by: GroupBy,
    table_id: int | None = None,
    currency: str | None = None,
) -> list[AuditRow]:
    """Totals of the terminal hands that ended from ``start`` to ``end`` (UTC days, both
    included), grouped by UTC day, table or player, optionally of one table or currency.

    Days come newest first; tables by name; players by what they won, most first.

    Raises:
        ValueError: ``group_by`` is not one of ``GROUPINGS``.
    """
    if group_by not in GROUPINGS:
        raise ValueError(f"group_by must be one of {GROUPINGS}, not {group_by!r}")
    if group_by == "player":
        return _player_totals(start=start, end=end, table_id=table_id, currency=currency)
    hands = _terminal_hands(start=start, end=end, table_id=table_id, currency=currency)
    if group_by == "day":
        hands = hands.annotate(group=TruncDate("settled_at", tzinfo=UTC))
        keys = ["group", "table__currency"]
        order = ["-group", "table__currency"]
    else:
        hands = hands.annotate(group=F("table_id"), group_name=F("table__name"))
        keys = ["group", "group_name", "table__currency"]
        order = ["group_name"]
    rows = (
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
        .order_by(*order)
    )
    return [
        AuditRow(
            label=row["group"].isoformat() if group_by == "day" else row["group_name"],
            key=row["group"].isoformat() if group_by == "day" else row["group"],
            currency=row["table__currency"],
            hands=row["hands"],
            cancelled=row["cancelled"],
            entries=row["entries"],
            gross_minor=row["gross"],
            rake_minor=row["rake"],
            prizes_minor=row["prizes"],
            jackpot_contributions_minor=row["contributions"],
            jackpot_awards_minor=row["awards"],
        )
        for row in rows
    ]


def _player_totals(*, start: date, end: date, table_id: int | None, currency: str | None) -> list[AuditRow]:
    since, until = day_bounds(start, end)
    entries = Entry.objects.filter(
        hand__status=HandStatus.SETTLED, hand__settled_at__gte=since, hand__settled_at__lt=until
    )
    if table_id is not None:
        entries = entries.filter(hand__table_id=table_id)
    if currency:
        entries = entries.filter(hand__table__currency=currency)
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
        AuditRow(
            label=row["user__username"],
            key=row["user_id"],
            currency=row["hand__table__currency"],
            hands=row["hands"],
            cancelled=0,
            entries=row["entries"],
            gross_minor=row["paid"],
            rake_minor=None,
            prizes_minor=row["won"],
        )
        for row in rows
    ]


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
    *, start: date, end: date, table_id: int | None = None, currency: str | None = None
) -> list[ChartSeries]:
    """The charts' data for the range, one ``ChartSeries`` per currency, by currency code.

    RTP per day is a percentage with two decimals (for display only; the report's exact
    figures are the minor-unit totals). Prize sizes are measured in antes of their hand.
    """
    rows = list_audit_totals(start=start, end=end, group_by="day", table_id=table_id, currency=currency)
    by_currency: dict[str, list[AuditRow]] = {}
    for row in rows:
        by_currency.setdefault(row.currency, []).append(row)
    buckets = _prize_buckets(start=start, end=end, table_id=table_id, currency=currency)
    series = []
    for code in sorted(set(by_currency) | set(buckets)):
        days = sorted(by_currency.get(code, []), key=lambda row: str(row.key))
        counts = buckets.get(code, {})
        series.append(
            ChartSeries(
                currency=code,
                days=tuple(str(row.key) for row in days),
                rtp_percent=tuple(None if row.rtp is None else round(float(row.rtp) * 100, 2) for row in days),
                rake_minor=tuple(row.rake_minor or 0 for row in days),
                gross_minor=tuple(row.gross_minor for row in days),
                prize_buckets=tuple(label for label, _ in PRIZE_BUCKETS),
                prize_counts=tuple(counts.get(label, 0) for label, _ in PRIZE_BUCKETS),
            )
        )
    return series


def _prize_buckets(*, start: date, end: date, table_id: int | None, currency: str | None) -> dict[str, dict[str, int]]:
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
    if table_id is not None:
        entries = entries.filter(hand__table_id=table_id)
    if currency:
        entries = entries.filter(hand__table__currency=currency)
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


# --- Streamed exports ---------------------------------------------------------------------

HAND_COLUMNS: tuple[str, ...] = (
    "id",
    "table_id",
    "table__name",
    "table__currency",
    "number",
    "status",
    "commitment",
    "server_seed",
    "started_at",
    "settled_at",
    "entry_count",
    "redeal_count",
    "antes_minor",
    "draws_minor",
    "redeals_minor",
    "gross_minor",
    "rake_minor",
    "carry_in_minor",
    "pool_minor",
    "breakage_minor",
    "jackpot_contributions_minor",
    "jackpot_awards_minor",
    "spin_award_minor",
    "algorithm",
    "cancel_reason",
)
ENTRY_COLUMNS: tuple[str, ...] = (
    "hand_id",
    "hand__table_id",
    "hand__number",
    "hand__table__currency",
    "user_id",
    "user__username",
    "join_order",
    "initial_combination",
    "combination",
    "hold_mask",
    "draws_bought",
    "paid_minor",
    "best_draw",
    "strength",
    "category",
    "place",
    "prize_minor",
)
TRANSFER_COLUMNS: tuple[str, ...] = (
    "transfer_id",
    "transfer__reference",
    "transfer__kind",
    "transfer__currency",
    "transfer__created_at",
    "transfer__memo",
    "id",
    "account__key",
    "delta_minor",
    "balance_after_minor",
)


def export_header(kind: ExportKind) -> tuple[str, ...]:
    """The column names of an export, as written in its CSV header and JSON objects
    (``table__name`` becomes ``table_name``; ``id`` of a ledger row is ``leg_id``).

    >>> export_header("hands")[:3]
    ('id', 'table_id', 'table_name')
    """
    columns = {"hands": HAND_COLUMNS, "entries": ENTRY_COLUMNS, "transfers": TRANSFER_COLUMNS}[kind]
    names = []
    for column in columns:
        if kind == "transfers" and column == "id":
            names.append("leg_id")
            continue
        names.append(column.replace("transfer__", "").replace("__", "_").replace("hand_table", "table"))
    return tuple(names)


def iter_export_rows(
    kind: ExportKind, *, start: date, end: date, table_id: int | None = None, currency: str | None = None
) -> Iterator[tuple[Any, ...]]:
    """The rows of an export, oldest first, read from the database in chunks of
    ``EXPORT_CHUNK`` (a month of a busy table never sits in memory at once).

    ``hands``: terminal hands that ended in the range; ``entries``: their entries;
    ``transfers``: every ledger leg of the transfers made in the range, one row per leg
    (the transfer's fields repeated), by transfer then leg; the whole ledger, so
    ``table_id`` does not narrow it. Amounts are integer minor units.

    Raises:
        ValueError: an unknown ``kind``.
    """
    if kind == "hands":
        hands = _terminal_hands(start=start, end=end, table_id=table_id, currency=currency)
        yield from hands.order_by("settled_at", "id").values_list(*HAND_COLUMNS).iterator(chunk_size=EXPORT_CHUNK)
    elif kind == "entries":
        hands = _terminal_hands(start=start, end=end, table_id=table_id, currency=currency)
        entries = Entry.objects.filter(hand__in=hands.values("id")).order_by("hand_id", "join_order")
        yield from entries.values_list(*ENTRY_COLUMNS).iterator(chunk_size=EXPORT_CHUNK)
    elif kind == "transfers":
        since, until = day_bounds(start, end)
        legs = LedgerEntry.objects.filter(transfer__created_at__gte=since, transfer__created_at__lt=until)
        if currency:
            legs = legs.filter(transfer__currency=currency)
        yield from legs.order_by("transfer_id", "id").values_list(*TRANSFER_COLUMNS).iterator(chunk_size=EXPORT_CHUNK)
    else:
        raise ValueError(f"unknown export {kind!r}")


def _cell(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def stream_csv(header: Sequence[str], rows: Iterator[tuple[Any, ...]]) -> Iterator[str]:
    """CSV text in pieces of about ``STREAM_PIECE`` characters: the header line, then one
    line per row (ISO times). One piece per row would make every row its own ASGI message
    and HTTP chunk (a day of a busy ledger is 30,000 rows)."""
    buffer = io.StringIO()
    writer = csv_writer(buffer)  # text cells that a spreadsheet would run are escaped
    writer.writerow(header)
    for row in rows:
        writer.writerow([_cell(value) for value in row])
        if buffer.tell() >= STREAM_PIECE:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


def stream_json(header: Sequence[str], rows: Iterator[tuple[Any, ...]]) -> Iterator[str]:
    """A JSON array of objects keyed by ``header``, in pieces of about ``STREAM_PIECE``
    characters (many objects per piece)."""
    piece = ["["]
    size = 0
    for row in rows:
        item = json.dumps({name: _cell(value) for name, value in zip(header, row, strict=True)}, separators=(",", ":"))
        piece.append(item if len(piece) == 1 and size == 0 else "," + item)
        size += len(item) + 1
        if size >= STREAM_PIECE:
            yield "".join(piece)
            piece, size = [""], 1  # later pieces always continue the array
    piece.append("]\n")
    yield "".join(piece)
