"""Benchmark: Hold'em hands played on the platform's clock (database, ledger, bots).

Fun tables of one seated person (sitting out) and five house bots, advanced by
``tables.clock.advance_due_tables`` with an injected clock that jumps to each deadline,
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

``--realtime SECONDS`` plays the same tables on the real clock instead (issue 23, item 6:
"six-player tables with bots at human pace, clock never late"): the bots think ``--think``
seconds (``BOT_THINK``, 1 s on the platform; 5 s makes about a hand a minute, a human
table's pace), the tables' first deals are spread over ``--stagger`` seconds, and
``--workers`` clock processes each call ``advance_due_tables(now=<the real time>)`` at every
tick of their share of a 1-second beat (as Celery workers share beat's ticks). Each
table's first deal (it seats the bots) is done in the set-up. After
``--warmup`` seconds it measures, for ``SECONDS``, how late each table advance was (the
moment it was done minus its deadline: the clock is late when a deadline waits for it), the
steps and hands per second, the SQL statements per step, the workers' CPU and the load
average, then checks the books:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_holdem \
        .venv/bin/python bench/holdem_tables.py --tables 500 --realtime 180 --workers 2
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("POKER_BEACON_ALLOW_LOCAL", "1")  # the local beacon on PostgreSQL (docs/deployment.md)
os.environ.setdefault("TABLE_CLOCK", "off")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-never-used-in-production-0123456789abcdef")
os.environ.setdefault("DJANGO_HTTPS", "off")


from bench.fanout import recreate_database


def create_tables(tables: int) -> list[int]:
    """``tables`` fun six-max tables of five house bots and one person sitting out (Django
    set up, database migrated); returns their ids."""
    from django.contrib.auth.models import User
    from django.utils import timezone

    from tables.holdem.services import create_holdem_table, sit_out_holdem, take_seat
    from wallet import services as wallet_services

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
    return ids


def clock_worker(index: int, workers: int, think: float, start: float, stop: float, results: Any) -> None:
    """One clock process: from ``start`` to ``stop`` (epoch s), at its share of a 1-second
    beat (tick ``k`` when ``k % workers == index``, ticks ``1 / workers`` s apart), advance the
    due tables at the real time, recording each advanced table's lateness (done minus its
    deadline, s), the statements of each advance, and this process's CPU; reports
    ``(lateness with their epoch second, statements per advance, cpu seconds, steps)``."""
    import django

    django.setup()
    from django.db import connection
    from django.utils import timezone

    from tables import clock
    from tables.holdem.services import hands
    from tables.models import Table

    hands.BOT_THINK = timedelta(seconds=think)
    original = clock.advance_table
    deadlines: dict[int, float] = {}
    late: list[tuple[float, float]] = []
    sent = [0]
    per_step: list[int] = []

    def advance_table(*, table_id: int, now: Any) -> bool:
        before = sent[0]
        done = original(table_id=table_id, now=now)
        if done:
            moment = time.time()
            late.append((moment, moment - deadlines.get(table_id, moment)))
            per_step.append(sent[0] - before)
        return done

    def count(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        sent[0] += 1
        return execute(sql, params, many, context)

    clock.advance_table = advance_table
    cpu = time.process_time()
    period = 1.0 / workers
    tick = int(time.time() / period) + 1
    while time.time() < stop:
        if tick % workers != index:
            tick += 1
            continue
        pause = tick * period - time.time()
        if pause > 0:
            time.sleep(pause)
        tick = max(tick + 1, int(time.time() / period) + 1)  # a long tick skips the ticks it overran
        now = timezone.now()
        deadlines = {
            pk: deadline.timestamp()
            for pk, deadline in Table.objects.filter(phase_deadline__lte=now).values_list("pk", "phase_deadline")
            if deadline is not None
        }
        with connection.execute_wrapper(count):
            clock.advance_due_tables(now=now)
    results.put((late, per_step, time.process_time() - cpu, len(per_step)))


def realtime(tables: int, seconds: float, workers: int, think: float, warmup: float, stagger: float) -> None:
    """Play ``tables`` bot tables on the real clock (see the module's docstring) and print
    the clock's lateness, its throughput and cost, and the books."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        raise SystemExit("set DATABASE_URL to a scratch PostgreSQL database")
    recreate_database(url)
    import django

    django.setup()
    from django.core.management import call_command
    from django.utils import timezone

    from tables.clock import advance_table
    from tables.models import HoldemHand, HoldemHandStatus, Table
    from wallet.selectors import check_books

    call_command("migrate", verbosity=0)
    made = time.perf_counter()
    ids = create_tables(tables)
    # Each table's first deal seats its bots (about 200 statements and a fun top-up per bot,
    # each taking the currency's ledger head): a room does it once, when it opens, so it is
    # set-up here, not part of what is measured.
    for pk in ids:
        advance_table(table_id=pk, now=timezone.now())
    print(f"{tables} tables set up and dealt in {time.perf_counter() - made:.0f} s", flush=True)
    now = timezone.now()
    for i, pk in enumerate(ids):  # the tables open over ``stagger`` seconds, not all at once
        Table.objects.filter(pk=pk).update(phase_deadline=now + timedelta(seconds=stagger * i / tables))
    start = time.time()
    measured_from = start + warmup
    stop = measured_from + seconds
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    processes = [
        context.Process(target=clock_worker, args=(i, workers, think, start, stop, results)) for i in range(workers)
    ]
    for process in processes:
        process.start()
    settled_at_start: int | None = None
    loads = []
    while time.time() < stop:
        time.sleep(5)
        if settled_at_start is None and time.time() >= measured_from:
            settled_at_start = HoldemHand.objects.filter(status=HoldemHandStatus.SETTLED).count()
        if time.time() >= measured_from:
            loads.append(os.getloadavg()[0])
    reports = [results.get(timeout=600) for _ in processes]
    for process in processes:
        process.join(timeout=60)
    settled = HoldemHand.objects.filter(status=HoldemHandStatus.SETTLED).count() - (settled_at_start or 0)
    lateness = sorted(delay for report in reports for moment, delay in report[0] if moment >= measured_from)
    steps = len(lateness)
    statements = sorted(n for report in reports for n in report[1])
    cpu = sum(report[2] for report in reports)
    books = check_books().ok
    dealt = Table.objects.filter(pk__in=ids, holdem_hands__isnull=False).distinct().count()
    print(f"\n## {tables} six-max tables of 5 bots, bots think {think:g} s, {workers} clock workers, {seconds:.0f} s\n")
    print("| figure | measured |")
    print("| --- | --- |")
    print(f"| tables that dealt | {dealt} of {tables} |")
    print(f"| table advances (steps), per second | {steps} in {seconds:.0f} s: {steps / seconds:.1f}/s |")
    print(f"| hands settled, per second | {settled}: {settled / seconds:.2f}/s |")
    if lateness:
        over1 = sum(1 for d in lateness if d > 1.0)
        over5 = sum(1 for d in lateness if d > 5.0)
        print(
            f"| lateness of a step (done - deadline) p50 / p95 / p99 / max | {statistics.median(lateness):.2f} / "
            f"{lateness[int(0.95 * steps)]:.2f} / {lateness[int(0.99 * steps)]:.2f} / {lateness[-1]:.2f} s |"
        )
        print(f"| steps more than 1 s late / more than 5 s (CLOCK_LATE_SECONDS) | {over1} / {over5} |")
    if statements:
        print(f"| SQL statements per step, median / mean | {statements[len(statements) // 2]} / "
              f"{sum(statements) / len(statements):.1f} |")  # fmt: skip
    all_steps = sum(report[3] for report in reports)
    print(f"| clock workers' CPU (all steps, warm-up included) | {cpu:.0f} s: {1000 * cpu / max(all_steps, 1):.1f} ms "
          f"per step ({all_steps} steps) |")  # fmt: skip
    if loads:
        print(f"| load average (1 min) while measured, min / max | {min(loads):.1f} / {max(loads):.1f} |")
    print(f"| books | {'ok' if books else 'FAILED'} |")
    if not books:
        raise SystemExit(1)


def main(tables: int, hands: int) -> None:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        raise SystemExit("set DATABASE_URL to a scratch PostgreSQL database")
    recreate_database(url)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.db.models import Sum
    from django.utils import timezone

    from tables.clock import advance_due_tables
    from tables.engine.holdem import replay_phh
    from tables.holdem.services.money import escrow_key
    from tables.models import HoldemHand, HoldemHandStatus, Seat, SeatStatus, Table
    from wallet.models import Account
    from wallet.selectors import check_books

    call_command("migrate", verbosity=0)
    now = timezone.now()
    ids = create_tables(tables)
    steps: list[float] = []
    cpu = [0.0]  # this process's CPU in the clock's calls (pushes included), seconds
    advances = [0]  # tables advanced
    sent: list[int] = []  # statements of one advance_due_tables call, push included
    step_statements: list[float] = []

    def count_statement(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        sent[-1] += 1
        return execute(sql, params, many, context)

    from tables import clock

    per_advance: list[int] = []  # statements of each table advance, its push included
    original_advance = clock.advance_table

    def advance_table(*, table_id: int, now: Any) -> bool:
        before = sent[-1]
        done = original_advance(table_id=table_id, now=now)
        if done:
            per_advance.append(sent[-1] - before)
        return done

    clock.advance_table = advance_table
    started = time.perf_counter()
    opening: int | None = None  # statements until every table settled its first hand (bots seated)
    while HoldemHand.objects.filter(status=HoldemHandStatus.SETTLED).count() < hands * tables:
        if opening is None and HoldemHand.objects.filter(number=1, status=HoldemHandStatus.SETTLED).count() >= tables:
            opening = sum(sent)
        deadlines = [d for d in Table.objects.filter(pk__in=ids).values_list("phase_deadline", flat=True) if d]
        now = max(now, min(deadlines)) if deadlines else now + timedelta(seconds=1)
        Seat.objects.filter(table_id__in=ids, is_bot=False).update(last_seen_at=now)
        t0, c0 = time.perf_counter(), time.process_time()
        sent.append(0)
        with connection.execute_wrapper(count_statement):
            advanced = advance_due_tables(now=now)
        cpu[0] += time.process_time() - c0
        advances[0] += advanced
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
    print(f"| load average (1 min) at the end | {os.getloadavg()[0]:.1f} |")
    print(f"| tables x hands | {tables} x {count // tables} ({count} hands) |")
    print(f"| hands per second (server work only) | {count / elapsed:.1f} |")
    print(f"| clock steps (table advances) | {len(steps)} ({len(steps) / elapsed:.0f}/s) |")
    mean, p95 = 1000 * sum(steps) / len(steps), 1000 * steps[int(0.95 * len(steps))]
    print(f"| step, mean / p95 | {mean:.1f} ms / {p95:.1f} ms |")
    print(f"| clock CPU per table advance (this process, pushes included) | {1000 * cpu[0] / advances[0]:.2f} ms |")
    step_statements.sort()
    median_statements = step_statements[len(step_statements) // 2]
    print(f"| SQL statements per hand (clock steps and their pushes) | {sum(sent) / count:.0f} |")
    # Issue 23, item 6's measure: every statement of whole hands (freezes, deals, betting and
    # settling actions, pushes, bots seated) over the bot actions played (auto show/muck aside).
    actions = sum(1 for moves in settled.values_list("actions", flat=True) for move in moves if not move.get("auto"))
    print(f"| SQL statements per bot action over whole hands (all steps / bot actions) | {sum(sent) / actions:.1f} |")
    later = sum(
        1
        for moves in settled.filter(number__gt=1).values_list("actions", flat=True)
        for move in moves
        if not move.get("auto")
    )
    if opening is not None and later:
        print(
            f"| the same after each table's first hand (about: the room open) | {(sum(sent) - opening) / later:.1f} |"
        )
    print(f"| SQL statements per advance_due_tables call / tables advanced, median | {median_statements:.0f} |")
    per_advance.sort()
    print(
        f"| SQL statements per table advance, median / p95 / max (push included) | {per_advance[len(per_advance) // 2]}"
        f" / {per_advance[int(0.95 * len(per_advance))]} / {per_advance[-1]} |"
    )
    print(f"| PHH replayed to the stored stacks | {replayed}/{count} |")
    print("| books (ledger, escrow = stacks) | ok |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--hands", type=int, default=50)
    parser.add_argument("--realtime", type=float, default=0, help="seconds measured on the real clock (0: no)")
    parser.add_argument("--workers", type=int, default=2, help="clock processes (--realtime)")
    parser.add_argument("--think", type=float, default=5.0, help="a bot's turn, seconds (--realtime)")
    parser.add_argument("--warmup", type=float, default=90.0, help="seconds before measuring (--realtime)")
    parser.add_argument("--stagger", type=float, default=60.0, help="first deals spread over (--realtime)")
    arguments = parser.parse_args()
    if arguments.realtime:
        realtime(
            arguments.tables,
            arguments.realtime,
            arguments.workers,
            arguments.think,
            arguments.warmup,
            arguments.stagger,
        )
    else:
        main(arguments.tables, arguments.hands)
