"""Streamed exports come in pieces of many rows (not one ASGI message per row) and still
join into exactly the CSV / JSON of every row."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime

from backoffice.audit_exports import STREAM_PIECE, stream_csv, stream_json

HEADER = ("id", "account_key", "delta_minor", "created_at")


def rows(n: int) -> list[tuple[object, ...]]:
    return [(i, f"player:{i}:EUR", -i * 7, datetime(2026, 6, 11, 12, 0, i % 60, tzinfo=UTC)) for i in range(n)]


def test_csv_pieces_hold_many_rows_and_join_into_every_row() -> None:
    data = rows(5000)
    pieces = list(stream_csv(HEADER, iter(data)))
    assert 1 < len(pieces) < 100  # ~230 KB of CSV: a handful of pieces, not 5,001
    assert all(len(piece) < STREAM_PIECE + 200 for piece in pieces)
    parsed = list(csv.reader(io.StringIO("".join(pieces))))
    assert parsed[0] == list(HEADER)
    assert len(parsed) == 5001
    assert parsed[4243] == ["4242", "player:4242:EUR", "-29694", "2026-06-11T12:00:42+00:00"]


def test_json_pieces_join_into_one_array_of_every_row() -> None:
    for n in (0, 1, 5000):
        pieces = list(stream_json(HEADER, iter(rows(n))))
        assert len(pieces) < 100
        parsed = json.loads("".join(pieces))
        assert len(parsed) == n
        if n:
            assert parsed[-1] == {
                "id": n - 1,
                "account_key": f"player:{n - 1}:EUR",
                "delta_minor": -(n - 1) * 7,
                "created_at": datetime(2026, 6, 11, 12, 0, (n - 1) % 60, tzinfo=UTC).isoformat(),
            }
