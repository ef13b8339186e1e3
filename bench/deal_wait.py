"""Benchmark: what algorithm 3's wait for the deal round costs a player (issue 22, item 1;
docs/provably-fair.md, "Algorithm 3").

For each sample a fresh fun table seats two players and the clock runs as the in-process
clock does (``tables.clock.tick``, then one second of sleep, starting at a random fraction of
a second): the first tick freezes the hand's inputs, a later one deals it once the deal round
(the first beacon round after the freeze) is out. The wait is ``started_at - frozen_at``.
Beacon rounds every ``POKER_BEACON_PERIOD_SECONDS`` (3 by default, drand quicknet's period;
the local beacon, so no network). Runs against ``DATABASE_URL`` (dropped and re-created), e.g.:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_fair \\
        .venv/bin/python bench/deal_wait.py --samples 20

Prints each wait, their mean and maximum, and the load average.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("POKER_BEACON_ALLOW_LOCAL", "1")
os.environ.setdefault("TABLE_CLOCK", "off")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-never-used-in-production-0123456789abcdef")
os.environ.setdefault("DJANGO_HTTPS", "off")


def main(samples: int) -> None:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        raise SystemExit("set DATABASE_URL to a scratch PostgreSQL database")
    from bench.fanout import recreate_database

    recreate_database(url)
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.utils import timezone

    from tables import clock
    from tables.models import Hand
    from tables.services.seating import touch_presence
    from tables.widerpoker.services.create import create_table
    from tables.widerpoker.services.seating import join_table
    from wallet import services as wallet_services

    call_command("migrate", verbosity=0)
    assert settings.DEAL_ALGORITHM == 3
    users = get_user_model()
    waits: list[float] = []
    for sample in range(samples):
        players = [users.objects.create_user(f"wait{sample}-{i}", password="x") for i in range(2)]
        for user in players:
            wallet_services.grant_signup_fun_chips(user_id=user.pk)
        table = create_table(
            name=f"Wait {sample}",
            mode="fun",
            currency="FUN",
            ante_minor=100,
            draw_price_bps=5000,
            redeal_price_minor=80,
        )
        time.sleep(random.random())
        for user in players:
            join_table(table_id=table.pk, user_id=user.pk, now=timezone.now())
        while not Hand.objects.filter(table=table).exists():
            for user in players:
                touch_presence(table_id=table.pk, user_id=user.pk, now=timezone.now())
            clock.tick()
            time.sleep(clock.TICK_SECONDS)
        hand = Hand.objects.get(table=table)
        assert hand.frozen_at is not None
        waits.append((hand.started_at - hand.frozen_at).total_seconds())
        print(f"sample {sample}: {waits[-1]:.3f} s", flush=True)
    print(f"period {settings.BEACON_PERIOD_SECONDS} s, clock tick {clock.TICK_SECONDS} s, {samples} samples")
    print(f"wait from freeze to deal: mean {statistics.mean(waits):.2f} s, max {max(waits):.2f} s")
    print("loadavg", Path("/proc/loadavg").read_text().strip())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=20)
    main(parser.parse_args().samples)
