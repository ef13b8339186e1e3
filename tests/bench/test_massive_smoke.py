"""A small run of the load harness (bench/massive.py), only when asked:

    POKER_BENCH_SMOKE=1 DATABASE_URL=postgres://postgres@127.0.0.1:5432/massive \\
    REDIS_URL=redis://127.0.0.1:6379/7 .venv/bin/python -m pytest tests/bench -q

50 players with real sockets (two daphne processes, Redis, PostgreSQL) are dealt a hand, buy
holds, draws and redeals through REST, and the hand is settled; the harness exits non-zero
unless every socket got the change phase, the books check out and every confirmed purchase
is in the settlement. It recreates its own scratch database (``massive_smoke`` on the
server of ``DATABASE_URL``), never the test database. About a minute.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.skipif(
        not (
            os.environ.get("POKER_BENCH_SMOKE")
            and os.environ.get("DATABASE_URL", "").startswith("postgres")
            and os.environ.get("REDIS_URL")
        ),
        reason="opt-in: POKER_BENCH_SMOKE=1 with DATABASE_URL (PostgreSQL) and REDIS_URL",
    ),
]


def test_fifty_players_play_one_hand_end_to_end() -> None:
    server = os.environ["DATABASE_URL"].rsplit("/", 1)[0]
    env = {**os.environ, "DATABASE_URL": f"{server}/massive_smoke"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    run = subprocess.run(
        [sys.executable, "bench/massive.py", "50", "--sockets", "50", "--purchases", "120", "--buyers", "8"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "| books check; purchases in the settlement | ok; ok |" in run.stdout
    assert "50 sockets, from broadcast" in run.stdout
    # Holds, draws and redeals were confirmed, not all refused.
    assert "confirmed/s" in run.stdout and " 0 confirmed/s" not in run.stdout
