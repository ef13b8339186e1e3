"""CSV exports never hand a spreadsheet a formula (security audit 2026-11-26, L5): usernames
may start with ``-``, ``+`` or ``@`` and a table's name with anything; the auditor's
``entries.csv`` and the rake report wrote them raw. Text cells that start with
``= + - @``, a tab or a CR get a leading ``'`` (backoffice/spreadsheet.py); numbers,
negative ones included, stay numbers."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from backoffice.spreadsheet import safe_cell
from tests.conftest import make_player
from tests.helpers import create_fun_table, deal_hand, logged_in, settle

pytestmark = pytest.mark.django_db


def _rows(response: Any) -> list[list[str]]:
    content = getattr(response, "streaming_content", None)
    body = b"".join(content).decode() if content is not None else response.content.decode()
    return list(csv.reader(io.StringIO(body)))


def test_the_auditors_csv_exports_escape_formulas_and_keep_numbers(auditor: User) -> None:
    minus, at = make_player("-2+3"), make_player("@SUM")
    table = create_fun_table(name="=1+2")
    base = timezone.now() - timedelta(seconds=31)
    deal_hand(table, [minus, at], base)
    hand = settle(table)
    assert hand.settled_at is not None
    day = hand.settled_at.date().isoformat()
    client = logged_in(auditor)

    entries = _rows(client.get("/backoffice/audit/entries.csv", {"start": day, "end": day}))
    cells = {cell for row in entries[1:] for cell in row}
    assert {"'-2+3", "'@SUM"} <= cells
    assert not {"-2+3", "@SUM"} & cells

    legs = _rows(client.get("/backoffice/audit/transfers.csv", {"start": day, "end": day}))
    change = legs[0].index("delta_minor")
    assert any(row[change] == "-100" for row in legs[1:])  # an ante leaving a wallet: a number

    rake = _rows(client.get("/backoffice/rake.csv", {"start": day, "end": day}))
    assert [row[2] for row in rake[1:]] == ["'=1+2"]


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("=HYPERLINK(1)", "'=HYPERLINK(1)"),
        ("+1", "'+1"),
        ("\tcmd", "'\tcmd"),
        ("\rcmd", "'\rcmd"),
        ("-12.34", "-12.34"),
        ("-5", "-5"),
        ("-", "'-"),
        ("bob-2", "bob-2"),
        (-250, -250),
        (None, None),
    ],
)
def test_a_cell_is_escaped_only_when_it_is_text_a_spreadsheet_would_run(value: Any, written: Any) -> None:
    assert safe_cell(value) == written
