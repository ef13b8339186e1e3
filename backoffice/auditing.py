"""Reads behind the auditor reports: totals by day, table or player over any date range,
series for the charts, and streamed row exports of hands, entries and ledger legs.

Only terminal hands count (settled, or cancelled and refunded), by the UTC instant they
ended (``settled_at``): their seeds are public, so nothing here reveals a running hand.
Money is in integer minor units, per currency, never summed across currencies.

Return to player (RTP) is prizes / gross: for a table or a day, the prizes paid (the pool
less the tie-split cents carried to the table's next hand) over everything staked (antes,
draws, redeals); for a player, what they won over what they paid.

Both games count. A Texas Hold'em hand's gross is its pot (every chip the players put in),
its prizes the pot less the rake; a Hold'em player's "paid" is what he put in the pots and
"won" what he took from them (docs/auditing.md). Every report and export narrows to one
player (by username) on request. Practice games (private BigHoldem practice tables, seed
004) are kept apart: left out unless ``practice=True`` asks for them alone.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any, Literal

from django.db.models import Case, CharField, Count, Exists, F, OuterRef, Q, Sum, Value, When
from django.db.models.functions import Coalesce, TruncDate

from backoffice.selectors import day_bounds
from backoffice.spreadsheet import csv_writer
from handhistory.holdem_export import build_holdem_export
from tables.models import Entry, Hand, HandStatus, HoldemHand, HoldemHandPlayer, HoldemHandStatus, TableGame
from wallet.models import LedgerEntry

GroupBy = Literal["day", "table", "player"]
GROUPINGS: tuple[GroupBy, ...] = ("day", "table", "player")
ExportKind = Literal["hands", "entries", "transfers", "holdem_hands", "holdem_players", "holdem_records"]
EXPORT_KINDS: tuple[ExportKind, ...] = (
    "hands",
    "entries",
    "transfers",
    "holdem_hands",
    "holdem_players",
    "holdem_records",
)
JSON_ONLY_KINDS: frozenset[str] = frozenset({"holdem_records"})
"""Exports that exist as JSON only: ``holdem_records`` is one whole hand document per hand."""
EXPORT_CHUNK = 2000
STREAM_PIECE = 64 * 1024  # characters of CSV or JSON per piece of a streamed export
_TERMINAL = [HandStatus.SETTLED, HandStatus.CANCELLED]
_SETTLED = Q(status=HandStatus.SETTLED)
_HOLDEM_TERMINAL = [HoldemHandStatus.SETTLED, HoldemHandStatus.CANCELLED]
_HOLDEM_SETTLED = Q(status=HoldemHandStatus.SETTLED)

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

    ``label`` is the day (ISO), the table's name or the player's username; ``game`` the
    game (``widerpoker`` or ``holdem``: each game has its own rows); ``hands`` counts
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
    game: str = TableGame.WIDERPOKER

    @property
    def rtp(self) -> Decimal | None:
        """Prizes over gross (a fraction, four decimals), None when nothing was staked."""
        return rtp(self.prizes_minor, self.gross_minor)

    @property
    def rtp_percent(self) -> Decimal | None:
        """``rtp`` as a percentage with two decimals, for people."""
        value = self.rtp
        return None if value is None else (value * 100).quantize(Decimal("0.01"))


def _narrowed(
    hands: Any,
    dealt_in: Any,
    *,
    start: date,
    end: date,
    table_id: int | None,
    currency: str | None,
    player: str | None,
    practice: bool,
) -> Any:
    """``hands`` (terminal hands of one game) that ended in the range, of real tables (or of
    practice games only, when ``practice``), optionally of one table, currency or player
    (username: the hands he was dealt in, a row of ``dealt_in`` naming him)."""
    since, until = day_bounds(start, end)
    hands = hands.filter(settled_at__gte=since, settled_at__lt=until, table__practice__isnull=not practice)
    if table_id is not None:
        hands = hands.filter(table_id=table_id)
    if currency:
        hands = hands.filter(table__currency=currency)
    if player:
        hands = hands.filter(Exists(dealt_in.filter(hand_id=OuterRef("pk"), user__username=player)))
    return hands


def _terminal_hands(
    *,
    start: date,
    end: date,
    table_id: int | None = None,
    currency: str | None = None,
    player: str | None = None,
    practice: bool = False,
) -> Any:
    """WiderPoker's terminal hands that ended in the range (a player's: those he was dealt
    in). WiderPoker has no practice games, so ``practice=True`` gives none."""
    return _narrowed(
        Hand.objects.filter(status__in=_TERMINAL),
        Entry.objects,
        start=start,
        end=end,
        table_id=table_id,
        currency=currency,
        player=player,
        practice=practice,
    )


def _terminal_holdem_hands(
    *,
    start: date,
    end: date,
    table_id: int | None = None,
    currency: str | None = None,
    player: str | None = None,
    practice: bool = False,
) -> Any:
    """Hold'em's terminal hands that ended in the range, of real tables (or of practice
    games only, when ``practice``); a player's: those he was dealt in."""
    return _narrowed(
        HoldemHand.objects.filter(status__in=_HOLDEM_TERMINAL),
        HoldemHandPlayer.objects,
        start=start,
        end=end,
        table_id=table_id,
        currency=currency,
        player=player,
        practice=practice,
    )


def list_audit_totals(
    *,
    start: date,
    end: date,
    group_by: GroupBy,
    table_id: int | None = None,
    currency: str | None = None,
    player: str | None = None,
    practice: bool = False,
) -> list[AuditRow]:
    """Totals of the terminal hands of both games that ended from ``start`` to ``end`` (UTC
    days, both included), grouped by UTC day, table or player, optionally of one table,
    currency or player (username: the hands he was dealt in; by player, his row alone).
    Practice games are left out, or alone counted with ``practice=True``.

    Days come newest first (WiderPoker before Hold'em on a day); tables by name; players by
    what they won, most first. Each game has its own rows.

    Raises:
        ValueError: ``group_by`` is not one of ``GROUPINGS``.
    """
    if group_by not in GROUPINGS:
        raise ValueError(f"group_by must be one of {GROUPINGS}, not {group_by!r}")
    filters: dict[str, Any] = {
        "start": start,
        "end": end,
        "table_id": table_id,
        "currency": currency,
        "player": player,
        "practice": practice,
    }
    if group_by == "player":
        rows = _player_totals(**filters) + _holdem_player_totals(**filters)
        rows.sort(key=lambda row: row.label)
        rows.sort(key=lambda row: row.prizes_minor, reverse=True)
        return rows
    rows = _game_totals(_terminal_hands(**filters), group_by=group_by, game=TableGame.WIDERPOKER)
    rows += _game_totals(_terminal_holdem_hands(**filters), group_by=group_by, game=TableGame.HOLDEM)
    if group_by == "day":
        rows.sort(key=lambda row: (row.currency, row.game != TableGame.WIDERPOKER))
        rows.sort(key=lambda row: str(row.key), reverse=True)
    else:
        rows.sort(key=lambda row: row.label)
    return rows


def _game_totals(hands: Any, *, group_by: GroupBy, game: str) -> list[AuditRow]:
    """Rows by day or table of one game's terminal hands. Hold'em: gross = pots, prizes =
    pots less rake, entries = players dealt in, no jackpots."""
    holdem = game == TableGame.HOLDEM
    if group_by == "day":
        hands = hands.annotate(group=TruncDate("settled_at", tzinfo=UTC))
        keys = ["group", "table__currency"]
    else:
        hands = hands.annotate(group=F("table_id"), group_name=F("table__name"))
        keys = ["group", "group_name", "table__currency"]
    settled = _HOLDEM_SETTLED if holdem else _SETTLED
    cancelled = HoldemHandStatus.CANCELLED if holdem else HandStatus.CANCELLED
    if holdem:
        # Counted with the players' join (one row per player dealt in), summed without it.
        rows = list(
            hands.values(*keys)
            .annotate(
                hands=Count("id", filter=settled, distinct=True),
                cancelled=Count("id", filter=Q(status=cancelled), distinct=True),
                entries=Count("seat_rows", filter=settled),
            )
            .order_by()
        )
        money = {
            "gross": Coalesce(Sum("pot_minor", filter=settled), 0),
            "rake": Coalesce(Sum("rake_minor", filter=settled), 0),
            "prizes": Coalesce(Sum(F("pot_minor") - F("rake_minor"), filter=settled), 0),
        }
        sums = {tuple(row[k] for k in keys): row for row in hands.values(*keys).annotate(**money).order_by()}
        for row in rows:
            row.update({name: sums[tuple(row[k] for k in keys)][name] for name in ("gross", "rake", "prizes")})
            row["contributions"] = row["awards"] = None
    else:
        rows = list(
            hands.values(*keys)
            .annotate(
                hands=Count("id", filter=settled),
                cancelled=Count("id", filter=Q(status=cancelled)),
                entries=Coalesce(Sum("entry_count", filter=settled), 0),
                gross=Coalesce(Sum("gross_minor", filter=settled), 0),
                rake=Coalesce(Sum("rake_minor", filter=settled), 0),
                prizes=Coalesce(Sum(F("pool_minor") - F("breakage_minor"), filter=settled), 0),
                contributions=Coalesce(Sum("jackpot_contributions_minor", filter=settled), 0),
                awards=Coalesce(Sum("jackpot_awards_minor", filter=settled), 0),
            )
            .order_by()
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
            game=game,
        )
        for row in rows
    ]


def _player_totals(
    *,
    start: date,
    end: date,
    table_id: int | None,
    currency: str | None,
    player: str | None,
    practice: bool,
) -> list[AuditRow]:
    if practice:
        return []  # WiderPoker has no practice games
    since, until = day_bounds(start, end)
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


def _holdem_player_totals(
    *,
    start: date,
    end: date,
    table_id: int | None,
    currency: str | None,
    player: str | None,
    practice: bool,
) -> list[AuditRow]:
    """Hold'em rows by player: hands dealt in, what he put in the pots (``paid``: starting
    less finishing stack plus what he won) and what he won from them (the hand's
    ``results["won"]``), per currency."""
    hands = _terminal_holdem_hands(
        start=start, end=end, table_id=table_id, currency=currency, practice=practice
    ).filter(status=HoldemHandStatus.SETTLED)
    seats = HoldemHandPlayer.objects.filter(hand__in=hands.values("id"))
    if player:
        seats = seats.filter(user__username=player)
    totals: dict[tuple[int, str, str], list[int]] = {}
    rows = seats.values_list(
        "user_id",
        "user__username",
        "hand__table__currency",
        "seat",
        "starting_minor",
        "finishing_minor",
        "hand__results",
    )
    for user_id, username, code, seat, starting, finishing, results in rows.iterator(chunk_size=EXPORT_CHUNK):
        won = int((results or {}).get("won", {}).get(str(seat), 0))
        paid = int(starting) - int(finishing if finishing is not None else starting) + won
        acc = totals.setdefault((user_id, username, code), [0, 0, 0])
        acc[0] += 1
        acc[1] += paid
        acc[2] += won
    return [
        AuditRow(
            label=username,
            key=user_id,
            currency=code,
            hands=count,
            cancelled=0,
            entries=count,
            gross_minor=paid,
            rake_minor=None,
            prizes_minor=won,
            game=TableGame.HOLDEM,
        )
        for (user_id, username, code), (count, paid, won) in totals.items()
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


HOLDEM_HAND_COLUMNS: tuple[str, ...] = (
    "id",
    "table_id",
    "table__name",
    "table__currency",
    "number",
    "status",
    "commitment",
    "chain_id",
    "chain_index",
    "server_seed",
    "started_at",
    "settled_at",
    "players",
    "pot_minor",
    "rake_minor",
    "prizes_minor",
    "board",
    "phh_available",
    "cancel_reason",
)
HOLDEM_PLAYER_COLUMNS: tuple[str, ...] = (
    "hand_id",
    "hand__table_id",
    "hand__number",
    "hand__table__currency",
    "user_id",
    "user__username",
    "seat",
    "is_bot",
    "starting_minor",
    "finishing_minor",
    "net_minor",
    "paid_minor",
    "won_minor",
)
HOLDEM_RECORD_HEADER: tuple[str, ...] = ("document",)


def export_header(kind: ExportKind) -> tuple[str, ...]:
    """The column names of an export, as written in its CSV header and JSON objects
    (``table__name`` becomes ``table_name``; ``id`` of a ledger row is ``leg_id``).

    >>> export_header("hands")[:3]
    ('id', 'table_id', 'table_name')
    """
    columns = {
        "hands": HAND_COLUMNS,
        "entries": ENTRY_COLUMNS,
        "transfers": TRANSFER_COLUMNS,
        "holdem_hands": HOLDEM_HAND_COLUMNS,
        "holdem_players": HOLDEM_PLAYER_COLUMNS,
        "holdem_records": HOLDEM_RECORD_HEADER,
    }[kind]
    names = []
    for column in columns:
        if kind == "transfers" and column == "id":
            names.append("leg_id")
            continue
        names.append(column.replace("transfer__", "").replace("__", "_").replace("hand_table", "table"))
    return tuple(names)


def iter_export_rows(
    kind: ExportKind,
    *,
    start: date,
    end: date,
    table_id: int | None = None,
    currency: str | None = None,
    player: str | None = None,
    practice: bool = False,
) -> Iterator[tuple[Any, ...]]:
    """The rows of an export, oldest first, read from the database in chunks of
    ``EXPORT_CHUNK`` (a month of a busy table never sits in memory at once).

    ``hands``: WiderPoker's terminal hands that ended in the range; ``entries``: their
    entries; ``holdem_hands``: Hold'em's terminal hands (``board`` as space-separated card
    codes, ``prizes_minor`` = pot - rake, ``players`` dealt in); ``holdem_players``: one row
    per player dealt into those hands (``paid_minor`` put in the pots, ``won_minor`` taken
    from them; no hole cards); ``holdem_records``: one ``widerpoker-holdem-hand/1`` staff
    document per Hold'em hand (a one-column row; JSON only, see ``stream_json_documents``);
    ``transfers``: every ledger leg of the transfers made in the range, one row per leg
    (the transfer's fields repeated), by transfer then leg; the whole ledger, so
    ``table_id`` does not narrow it, ``player`` keeps the transfers that move one of his
    accounts. ``player`` (a username) narrows hands to those he was dealt in and entries or
    players' rows to his; ``practice`` gives practice games only (default: none of them;
    the ledger export has no practice filter). Amounts are integer minor units.

    Raises:
        ValueError: an unknown ``kind``.
    """
    filters: dict[str, Any] = {
        "start": start,
        "end": end,
        "table_id": table_id,
        "currency": currency,
        "player": player,
        "practice": practice,
    }
    if kind == "hands":
        hands = _terminal_hands(**filters)
        yield from hands.order_by("settled_at", "id").values_list(*HAND_COLUMNS).iterator(chunk_size=EXPORT_CHUNK)
    elif kind == "entries":
        hands = _terminal_hands(**filters)
        entries = Entry.objects.filter(hand__in=hands.values("id")).order_by("hand_id", "join_order")
        if player:
            entries = entries.filter(user__username=player)
        yield from entries.values_list(*ENTRY_COLUMNS).iterator(chunk_size=EXPORT_CHUNK)
    elif kind == "holdem_hands":
        yield from _holdem_hand_rows(_terminal_holdem_hands(**filters))
    elif kind == "holdem_players":
        yield from _holdem_player_rows(_terminal_holdem_hands(**filters), player=player)
    elif kind == "holdem_records":
        hands = _terminal_holdem_hands(**filters).select_related("table").order_by("settled_at", "id")
        for hand in hands.iterator(chunk_size=EXPORT_CHUNK // 10):
            yield (build_holdem_export(hand, audience="staff"),)
    elif kind == "transfers":
        since, until = day_bounds(start, end)
        legs = LedgerEntry.objects.filter(transfer__created_at__gte=since, transfer__created_at__lt=until)
        if currency:
            legs = legs.filter(transfer__currency=currency)
        if player:
            mine = LedgerEntry.objects.filter(
                transfer__created_at__gte=since, transfer__created_at__lt=until, account__user__username=player
            )
            legs = legs.filter(transfer_id__in=mine.values("transfer_id"))
        yield from legs.order_by("transfer_id", "id").values_list(*TRANSFER_COLUMNS).iterator(chunk_size=EXPORT_CHUNK)
    else:
        raise ValueError(f"unknown export {kind!r}")


_HOLDEM_HAND_FIELDS = (
    "id",
    "table_id",
    "table__name",
    "table__currency",
    "number",
    "status",
    "commitment",
    "chain_id",
    "chain_index",
    "server_seed",
    "started_at",
    "settled_at",
    "pot_minor",
    "rake_minor",
    "board",
    "phh",
    "cancel_reason",
)


def _holdem_hand_rows(hands: Any) -> Iterator[tuple[Any, ...]]:
    counted = hands.annotate(dealt=Count("seat_rows")).order_by("settled_at", "id")
    for row in counted.values_list(*_HOLDEM_HAND_FIELDS, "dealt").iterator(chunk_size=EXPORT_CHUNK):
        values = dict(zip((*_HOLDEM_HAND_FIELDS, "players"), row, strict=True))
        settled = values["status"] == HoldemHandStatus.SETTLED
        values["prizes_minor"] = values["pot_minor"] - values["rake_minor"] if settled else 0
        values["board"] = " ".join(values["board"] or [])
        values["phh_available"] = bool(values.pop("phh"))
        yield tuple(values[column] for column in HOLDEM_HAND_COLUMNS)


def _holdem_player_rows(hands: Any, *, player: str | None) -> Iterator[tuple[Any, ...]]:
    seats = HoldemHandPlayer.objects.filter(hand__in=hands.values("id")).order_by("hand__settled_at", "hand_id", "seat")
    if player:
        seats = seats.filter(user__username=player)
    fields = (*HOLDEM_PLAYER_COLUMNS[:8], "starting_minor", "finishing_minor", "hand__status", "hand__results")
    for row in seats.values_list(*fields).iterator(chunk_size=EXPORT_CHUNK):
        *head, starting, finishing, status, results = row
        settled = status == HoldemHandStatus.SETTLED and finishing is not None
        won = int((results or {}).get("won", {}).get(str(head[6]), 0)) if settled else 0
        end = finishing if settled else starting
        yield (*head, starting, end, end - starting, starting - end + won, won)


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


def stream_json_documents(rows: Iterator[tuple[Any, ...]]) -> Iterator[str]:
    """A JSON array of the documents in the first column of ``rows`` (``holdem_records``),
    in pieces of about ``STREAM_PIECE`` characters."""
    piece: list[str] = ["["]
    size = 0
    first = True
    for (document,) in rows:
        item = json.dumps(document, separators=(",", ":"))
        piece.append(item if first else "," + item)
        first = False
        size += len(item) + 1
        if size >= STREAM_PIECE:
            yield "".join(piece)
            piece, size = [], 0
    piece.append("]\n")
    yield "".join(piece)
