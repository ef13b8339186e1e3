"""Benchmark: Hold'em hands played on the platform's clock (database, ledger, bots).

Fun tables of one seated person (sitting out) and five house bots, advanced by
``tables.services.advance_due_tables`` with an injected clock that jumps to each deadline,
so no real time passes between steps: what is measured is the server's own work per
step (replaying the hand through the engine, the bot's decision, the action stored,
settlement with its rake transfer, the next deal from the seed chain). Runs against
``DATABASE_URL`` (dropped and re-created: point it at a scratch name), e.g.:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_holdem \\
        .venv/bin/python bench/holdem_tables.py --tables 4 --hands 50

Prints hands per second, clock steps per second, the mean and 95th percentile of a step,
the SQL statements sent by the clock's steps and their pushes (per hand, and the median
per table advance, which is a betting action: most steps are), and checks the books
(ledger intact, each escrow = the seats' stacks) and that every stored hand's PHH replays
to its finishing stacks.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("POKER_BEACON_ALLOW_LOCAL", "1")  # the local beacon on PostgreSQL (docs/deployment.md)
os.environ.setdefault("TABLE_CLOCK", "off")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-never-used-in-production-0123456789abcdef")
os.environ.setdefault("DJANGO_HTTPS", "off")


from bench.fanout import recreate_database


def main(tables: int, hands: int) -> None:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        raise SystemExit("set DATABASE_URL to a scratch PostgreSQL database")
    recreate_database(url)
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection
    from django.db.models import Sum
    from django.utils import timezone

    from tables import services
    from tables.engine.holdem import replay_phh
    from tables.models import HoldemHand, HoldemHandStatus, Seat, SeatStatus, Table
    from tables.services.holdem import create_holdem_table, sit_out_holdem, take_seat
    from tables.services.holdem.money import escrow_key
    from wallet import services as wallet_services
    from wallet.models import Account
    from wallet.selectors import check_books

    call_command("migrate", verbosity=0)
    now = timezone.now()
    ids = []
    for k in range(tables):
        table = create_holdem_table(
            name=f"Bench {k}", mode="fun", currency="FUN", small_blind_minor=5, big_blind_minor=10,
            min_buy_in_minor=200, max_buy_in_minor=2_000, seats=6, bot_seats=5,
        )  # fmt: skip
        host = User.objects.create_user(username=f"host{k}")
        wallet_services.grant_signup_fun_chips(user_id=host.pk)
        take_seat(table_id=table.pk, user_id=host.pk, position=0, buy_in_minor=1_000, now=now)
        sit_out_holdem(table_id=table.pk, user_id=host.pk, now=now)
        ids.append(table.pk)
    steps: list[float] = []
    sent: list[int] = []  # statements of one advance_due_tables call, push included
    step_statements: list[float] = []

    def count_statement(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        sent[-1] += 1
        return execute(sql, params, many, context)

    started = time.perf_counter()
    while HoldemHand.objects.filter(status=HoldemHandStatus.SETTLED).count() < hands * tables:
        deadlines = [d for d in Table.objects.filter(pk__in=ids).values_list("phase_deadline", flat=True) if d]
        now = max(now, min(deadlines)) if deadlines else now + timedelta(seconds=1)
        Seat.objects.filter(table_id__in=ids, is_bot=False).update(last_seen_at=now)
        t0 = time.perf_counter()
        sent.append(0)
        with connection.execute_wrapper(count_statement):
            advanced = services.advance_due_tables(now=now)
        if advanced:
            steps.append((time.perf_counter() - t0) / advanced)
            step_statements.append(sent[-1] / advanced)
    elapsed = time.perf_counter() - started
    settled = HoldemHand.objects.filter(status=HoldemHandStatus.SETTLED)
    replayed = 0
    for hand in settled.exclude(phh=""):
        finishing = hand.results["finishing_stacks"]
        button, count = int(hand.setup["button"]), len(hand.setup["stacks"])
        order = sorted((int(s) for s in finishing), key=lambda s: (s - button - 1) % count)
        assert replay_phh(hand.phh) == tuple(finishing[str(s)] for s in order), hand.pk
        replayed += 1
    for table_id in ids:
        stacks = Seat.objects.filter(table_id=table_id).exclude(status=SeatStatus.LEFT, stack_minor=0)
        total = stacks.aggregate(t=Sum("stack_minor"))["t"] or 0
        assert Account.objects.get(key=escrow_key(table_id)).balance_minor == total
    assert check_books().ok
    steps.sort()
    count = settled.count()
    print("| figure | measured |")
    print("| --- | --- |")
    print(f"| tables x hands | {tables} x {count // tables} ({count} hands) |")
    print(f"| hands per second (server work only) | {count / elapsed:.1f} |")
    print(f"| clock steps (table advances) | {len(steps)} ({len(steps) / elapsed:.0f}/s) |")
    mean, p95 = 1000 * sum(steps) / len(steps), 1000 * steps[int(0.95 * len(steps))]
    print(f"| step, mean / p95 | {mean:.1f} ms / {p95:.1f} ms |")
    step_statements.sort()
    median_statements = step_statements[len(step_statements) // 2]
    print(f"| SQL statements per hand (clock steps and their pushes) | {sum(sent) / count:.0f} |")
    print(f"| SQL statements per table advance, median (a betting action) | {median_statements:.0f} |")
    print(f"| PHH replayed to the stored stacks | {replayed}/{count} |")
    print("| books (ledger, escrow = stacks) | ok |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--hands", type=int, default=50)
    arguments = parser.parse_args()
    main(arguments.tables, arguments.hands)
