"""CSV cells a spreadsheet reads as data, never as a formula (security audit 2026-11-26, L5).

Every CSV the back-office writes goes through ``csv_writer``. A text cell that starts with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return is written with a leading ``'``, as
OWASP's "CSV injection" advice says and as spreadsheets show it (the apostrophe marks the
cell as text and is not displayed). Numbers are never changed: integers, decimals and text
that is a plain decimal number (``-12.34``, the amounts of the rake report) stay numbers, so
a negative amount still sums. A username such as ``-2+3`` or ``@SUM`` becomes ``'-2+3``.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from typing import Any, Protocol

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula (or shift it)."""

_NUMBER = re.compile(r"-?\d+(\.\d+)?\Z")


class _Writable(Protocol):
    def write(self, text: str, /) -> Any: ...


def safe_cell(value: Any) -> Any:
    """``value`` as a CSV cell a spreadsheet cannot run: text starting with one of
    ``FORMULA_STARTS`` gets a leading ``'`` unless it is a plain decimal number; anything
    else is returned unchanged.

    >>> safe_cell("-2+3"), safe_cell("@SUM(A1)"), safe_cell("-12.34"), safe_cell(-5), safe_cell("alice")
    ("'-2+3", "'@SUM(A1)", '-12.34', -5, 'alice')
    """
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _NUMBER.match(value):
        return "'" + value
    return value


class SafeWriter:
    """``csv.writer`` over ``out`` whose rows pass through ``safe_cell``."""

    def __init__(self, out: _Writable) -> None:
        self._writer = csv.writer(out)

    def writerow(self, row: Iterable[Any]) -> Any:
        """Write one row, each cell through ``safe_cell``."""
        return self._writer.writerow([safe_cell(value) for value in row])


def csv_writer(out: _Writable) -> SafeWriter:
    """The CSV writer of every back-office export: ``csv.writer`` with ``safe_cell``."""
    return SafeWriter(out)
