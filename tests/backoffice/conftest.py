"""Back-office test fixtures: the hand-history fixtures (tables, dealt and settled hands)."""

from __future__ import annotations

from tests.handhistory.conftest import (  # noqa: F401  # re-exported fixtures
    _fresh_throttle_counters,
    base,
    fun_table,
    settled_hand,
)
