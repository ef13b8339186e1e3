"""Back-office test fixtures: the hand-history fixtures (rate-limit counters, clock, settled hand)."""

from __future__ import annotations

from tests.handhistory.conftest import (  # noqa: F401  # re-exported fixtures
    _fresh_throttle_counters,
    base,
    settled_hand,
)
