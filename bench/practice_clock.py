"""Benchmark: how late the clock serves a table with money on it while practice games of bots
load it (security audit M2).

Starts ``--games`` bots-only BigHoldem practice games of ``--players`` bots each (automatic
games, started through the service as the REST door does) and one cash Hold'em table (EUR).
Then runs the clock as the in-process clock does (``tables.clock.tick``, then a one-second
sleep) for ``--seconds`` of real time. Before each tick, when the cash table has no
deadline, it gets one a random fraction of a second ahead (a probe of a turn, a deal, a
settlement coming due); the time from that deadline to the moment the clock starts
stepping the table is its lateness. The practice tables' bots act every second
(``BOT_THINK``), so each tick has up to ``--games`` of them due. Runs against
``DATABASE_URL`` (dropped and re-created: a ``bench_*`` name), e.g.:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_practice \\
        .venv/bin/python bench/practice_clock.py --games 50 --seconds 60

Prints the cash table's lateness (median, 95th percentile, maximum), the ticks' duration,
the practice steps per second, and the load average. Run it from an older checkout (copy
the file and put the checkout first on ``PYTHONPATH``) for the figure before the clock
ordered its tables.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # after PYTHONPATH: an older checkout may go first
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("POKER_BEACON_ALLOW_LOCAL", "1")  # the local beacon on PostgreSQL (docs/deployment.md)
os.environ.setdefault("TABLE_CLOCK", "off")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-never-used-in-production-0123456789abcdef")
os.environ.setdefault("DJANGO_HTTPS", "off")
os.environ.setdefault("POKER_PRACTICE_GAMES_MAX", "1000")


def main(games: int, players: int, seconds: float) -> None:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        raise SystemExit("set DATABASE_URL to a scratch PostgreSQL database")
    from bench.fanout import recreate_database

    recreate_database(url)
    import django

    django.setup()
    from django.core.management import call_command
    from django.utils import timezone

    from tables import clock
    from tables.holdem.practice.services import start_practice_game
    from tables.holdem.practice.setup import PracticeSetup
    from tables.holdem.services import create_holdem_table
    from tables.models import Table

    call_command("migrate", verbosity=0)
    now = timezone.now()
    setup = PracticeSetup(players=players, max_hands=None, max_minutes=240)
    for _ in range(games):
        start_practice_game(user_id=None, setup=setup, now=now)
    cash = create_holdem_table(
        name="Cash probe", mode="cash", currency="EUR", small_blind_minor=5, big_blind_minor=10,
        min_buy_in_minor=200, max_buy_in_minor=2_000, seats=6,
    )  # fmt: skip

    steps: list[tuple[int, float]] = []  # (table id, wall time the clock started its step)
    real_advance = clock.advance_table

    def timed_advance(*, table_id: int, now: datetime) -> bool:
        steps.append((table_id, time.time()))
        return bool(real_advance(table_id=table_id, now=now))

    clock.advance_table = timed_advance  # the bench's probe: notes when the clock steps each table
    lateness: list[float] = []
    ticks: list[float] = []
    practice_steps = 0
    rng = random.Random(7)
    pending: float | None = None
    started = time.time()
    load_before = os.getloadavg()
    while time.time() - started < seconds:
        if pending is None:
            pending = time.time() + rng.uniform(0.0, 1.0)
            due = datetime.fromtimestamp(pending, tz=UTC)
            Table.objects.filter(pk=cash.pk).update(phase_deadline=due)
        steps.clear()
        t0 = time.time()
        clock.tick()
        ticks.append(time.time() - t0)
        for table_id, at in steps:
            if table_id == cash.pk and pending is not None and at >= pending:
                lateness.append(at - pending)
                pending = None
            elif table_id != cash.pk:
                practice_steps += 1
        time.sleep(clock.TICK_SECONDS)
    elapsed = time.time() - started
    load_after = os.getloadavg()
    lateness.sort()
    ticks.sort()

    def pct(values: list[float], q: float) -> float:
        return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")

    print("| figure | measured |")
    print("| --- | --- |")
    print(f"| practice games x bots | {games} x {players} |")
    print(f"| run | {elapsed:.0f} s, {len(ticks)} ticks |")
    print(
        f"| cash table lateness, median / p95 / max | {pct(lateness, 0.5):.2f} s / {pct(lateness, 0.95):.2f} s / "
        f"{(lateness[-1] if lateness else float('nan')):.2f} s ({len(lateness)} deadlines) |"
    )
    print(f"| tick duration, median / p95 | {pct(ticks, 0.5):.2f} s / {pct(ticks, 0.95):.2f} s |")
    print(f"| practice table steps | {practice_steps} ({practice_steps / elapsed:.1f}/s) |")
    print(f"| load average (1 min) before / after | {load_before[0]:.1f} / {load_after[0]:.1f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--players", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=60.0)
    arguments = parser.parse_args()
    main(arguments.games, arguments.players, arguments.seconds)
