"""No project module over 500 lines but the wallet's services (issue 21): ``bin/long_modules``
prints the offenders (tests/importgraph.py)."""

from __future__ import annotations

from tests.importgraph import MAX_LINES, long_modules


def test_no_module_is_over_the_limit() -> None:
    found = long_modules()
    assert found == [], f"modules over {MAX_LINES} lines: {found}"
