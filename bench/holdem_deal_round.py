"""What the Hold'em deal round costs between hands (algorithm 3, docs/provably-fair.md
section 12; docs/benchmarks.md, "Hold'em deal round").

The clock's rule, computed on 100,000 random moments: the first hand at a waiting table is
dealt at the first beacon round after its freeze; a hand after a hand freezes ``freeze_lead``
before the 4 s pause ends and is dealt at ``max(round time, end of the pause)``. Then the time
of the beacon work of the deal tick: the local beacon's HMAC, and drand's BLS check of a
recorded round (``tables.drand``). No database, no network.

    DJANGO_SETTINGS_MODULE=config.settings_test python bench/holdem_deal_round.py
"""

from __future__ import annotations

import os
import random
import statistics
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings_test")
import django

django.setup()

from datetime import UTC, datetime, timedelta  # noqa: E402

from django.test import override_settings  # noqa: E402

from tables import drand  # noqa: E402
from tables.holdem.services.hands import RESULTS_PAUSE  # noqa: E402
from tables.services import beacon  # noqa: E402

rng = random.Random(7)
for period in (3, 1):
    with override_settings(BEACON_PERIOD_SECONDS=period):
        lead = min(RESULTS_PAUSE, timedelta(seconds=period))
        first, between = [], []
        for _ in range(100_000):
            t = datetime(2026, 11, 26, tzinfo=UTC) + timedelta(seconds=rng.uniform(0, 86400))
            r = beacon.round_after(t)
            first.append((beacon.time_of(r) - t).total_seconds())
            freeze = t + RESULTS_PAUSE - lead  # t = the previous hand's end
            deal = max(beacon.time_of(beacon.round_after(freeze)), freeze + lead)
            between.append((deal - t).total_seconds())
        print(
            f"period {period}s: first hand wait mean {statistics.mean(first):.3f} max {max(first):.3f};",
            f"between hands mean {statistics.mean(between):.3f} min {min(between):.3f} max {max(between):.3f}",
        )
n = 20000
t0 = time.perf_counter()
for r in range(n):
    beacon.local_value(r + 1)
print(f"local beacon value: {(time.perf_counter() - t0) / n * 1e6:.1f} us")
sig = bytes.fromhex("b44679b9a59af2ec876b1a6b1ad52ea9b1615fc3982b19576350f93447cb1125e342b73a8dd2bacbe47e4b6b63ed5e39")
t0 = time.perf_counter()
for _ in range(50):
    assert drand.verify_round(1000, sig)
print(f"drand BLS check: {(time.perf_counter() - t0) / 50 * 1e3:.2f} ms")
