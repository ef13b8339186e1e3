"""The auditor reports' streamed exports (CSV or JSON, read in chunks and written in
pieces): WiderPoker's hands and entries, Hold'em's hands, players and staff hand documents,
and the ledger's legs. The same rules as backoffice.auditing's totals: terminal hands by
the UTC instant they ended, integer minor units, one player or practice games on request."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Sequence
from datetime import date, datetime
from typing import Any, Literal

from django.db.models import Count

from backoffice.auditing import EXPORT_CHUNK, _terminal_hands, _terminal_holdem_hands
from backoffice.selectors import day_bounds
from backoffice.spreadsheet import csv_writer
from handhistory.holdem_export import build_holdem_export
from tables.models import Entry, HoldemHandPlayer, HoldemHandStatus
from wallet.models import LedgerEntry

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
STREAM_PIECE = 64 * 1024  # characters of CSV or JSON per piece of a streamed export


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
