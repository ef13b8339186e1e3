"""A small run of the load harness (bench/massive.py), only when asked:

    POKER_BENCH_SMOKE=1 DATABASE_URL=postgres://postgres@127.0.0.1:5432/massive \\
    REDIS_URL=redis://127.0.0.1:6379/7 .venv/bin/python -m pytest tests/bench -q

60 players, 50 of them with real sockets and 10 simulated (two daphne processes, Redis,
PostgreSQL), play two consecutive hands: each is dealt, the sockets buy redeals and draws
with their ``redeal`` and ``buy_draw`` frames, and the hand is settled; the harness exits
non-zero unless every socket got each change phase, the books check out and every confirmed
purchase is in its settlement. It recreates its own scratch database
(``massive_smoke_<the database's name>`` on the server of ``DATABASE_URL``), never the test
database. About a minute.
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
    server, name = os.environ["DATABASE_URL"].rsplit("/", 1)
    env = {**os.environ, "DATABASE_URL": f"{server}/massive_smoke_{name}"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    run = subprocess.run(
        [sys.executable, "bench/massive.py", "60", "--sockets", "50", "--purchases", "60", "--hands", "2"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "| books check; every confirmed purchase in its settlement | ok; ok |" in run.stdout
    assert "## 60 players, 50 sockets (10 simulated)" in run.stdout
    rows = [line for line in run.stdout.splitlines() if line.startswith("| ") and line.endswith("| ok |")]
    assert len(rows) == 2, run.stdout  # two hands, each checked
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert cells[1] == "60"  # every player dealt in, simulated or not
        assert cells[3].endswith(" s") and cells[4] != "-"  # pushed; measured at the clients and servers
        confirmed, sent = cells[5].split(",")[0].split(" / ")
        assert int(sent) == 60 and int(confirmed) > 0  # purchases over the sockets were confirmed
