"""Benchmark: deal and settle one hand of N entries, ledger writes included.

Runs against the database of ``DATABASE_URL`` (a PostgreSQL server; the database named in
the URL is dropped and re-created, so point it at a scratch name), e.g.:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_settlement \
        .venv/bin/python bench/settlement.py 1000 10000

Prints a markdown table: players, deal (ante transfer + entries), purchases (a fifth of
the players buy a draw and a tenth a redeal, from 4 processes of 4 threads, each thread with
its own database connection, while a clock thread captures the holds every second, as the clock
does), settlement (evaluation, ranking, allocation, the last capture, one settlement
transfer, entry results), and the books check; then the same table's next hand, dealt and
settled without purchases (the players' client seeds and sessions exist by then: a table's
steady state), and the books check again.

``--profile`` prints, for each step, the SQL statements that took longest and cProfile's
top functions (stderr), and saves the profiles as /tmp/bench_settlement_<step>.prof.
``--no-purchases`` skips the purchases.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import sys
import threading
import time
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("POKER_BEACON_ALLOW_LOCAL", "1")  # the local beacon on PostgreSQL (docs/deployment.md)
os.environ.setdefault("TABLE_CLOCK", "off")
# One clock step deals (algorithm 2): algorithm 3 writes the same rows one step later, after
# its deal round (docs/provably-fair.md, 1.9; bench/deal_wait.py measures the wait).
os.environ.setdefault("POKER_DEAL_ALGORITHM", "2")
# A production-path database on loopback: a throwaway key, plain HTTP.
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-never-used-in-production-0123456789abcdef")
os.environ.setdefault("DJANGO_HTTPS", "off")
os.environ.setdefault("DB_POOL_MAX_SIZE", "24")  # the buyer threads, the clock thread and the main one


from bench.fanout import recreate_database


class Profile:
    """``--profile``: cProfile of a step (top functions by cumulative time) and the time of
    each SQL statement it sent (top statements), printed after the step."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def run(self, label: str, step: Any) -> Any:
        if not self.enabled:
            return step()
        import cProfile
        import pstats

        from django.db import connection

        statements: list[tuple[float, str]] = []

        def timed(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
            start = time.perf_counter()
            try:
                return execute(sql, params, many, context)
            finally:
                statements.append((time.perf_counter() - start, " ".join(str(sql).split())[:160]))

        profiler = cProfile.Profile()
        with connection.execute_wrapper(timed):
            result = profiler.runcall(step)
        print(
            f"\n--- {label}: {len(statements)} statements, {sum(t for t, _ in statements):.2f} s in SQL",
            file=sys.stderr,
        )
        for seconds, sql in sorted(statements, reverse=True)[:15]:
            print(f"{seconds:8.3f} s  {sql}", file=sys.stderr)
        profiler.dump_stats(f"/tmp/bench_settlement_{label.replace(' ', '_')}.prof")  # for pstats' callers/callees
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(35)
        return result


def main(sizes: list[int], *, profile: bool = False, purchases: bool = True) -> None:
    profiler = Profile(profile)
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith("postgres"):
        recreate_database(url)
    import django

    django.setup()
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone

    from tables.clock import advance_table
    from tables.models import Hand, Seat, Table
    from tables.services import beacon
    from tables.widerpoker.services.create import create_table
    from wallet import services as wallet_services
    from wallet.models import AccountKind, Currency, TransferKind
    from wallet.selectors import check_books

    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor}\n")
    print(
        "| entries | create players | deal (ante + entries) | purchases | settle (incl. ledger) | books "
        "| next hand: deal | next hand: settle | books |"
    )
    print("|---:|---:|---:|---:|---:|---|---:|---:|---|")
    password = make_password("bench-password")
    for size in sizes:
        now = timezone.now()
        start = time.perf_counter()
        users = User.objects.bulk_create(
            [User(username=f"b{size}_{i}", password=password) for i in range(size)], batch_size=2000
        )
        cashier = wallet_services.ensure_house_account(kind=AccountKind.CASHIER, currency=Currency.FUN)
        accounts = wallet_services.ensure_player_accounts(user_ids=[u.pk for u in users], currency=Currency.FUN)
        legs = [wallet_services.Leg(account_id, 10_000) for account_id in accounts.values()] + [
            wallet_services.Leg(cashier.pk, -10_000 * size)
        ]
        wallet_services.post_transfer(
            reference=f"bench-grant-{size}", kind=TransferKind.FUN_GRANT, currency=Currency.FUN, legs=legs
        )
        table = create_table(
            name=f"Bench {size}",
            mode="fun",
            currency="FUN",
            ante_minor=100,
            draw_price_bps=5000,
            redeal_price_minor=80,
            change_seconds=30,
        )
        Seat.objects.bulk_create(
            [Seat(table=table, user=u, joined_at=now, last_seen_at=now) for u in users], batch_size=2000
        )
        Table.objects.filter(pk=table.pk).update(phase_deadline=now)
        created = time.perf_counter() - start

        start = time.perf_counter()
        assert profiler.run("deal", partial(advance_table, table_id=table.pk, now=now))
        dealt = time.perf_counter() - start
        # Every redeal needs a combination nobody holds: none is left in a hand of 100,000.
        redealers = users[size - min(size // 10, 100_000 - size) :] if size < 100_000 else []
        plan = [(u.pk, "draw") for u in users[: size // 5]] + [(u.pk, "redeal") for u in redealers]
        random.Random(size).shuffle(plan)
        rate = buy_concurrently(table.pk, plan, now=now) if purchases else 0.0
        # Settle once the deadline has passed and the hand's beacon round is out (algorithm 2).
        hand = Hand.objects.get(pk=Table.objects.values_list("current_hand_id", flat=True).get(pk=table.pk))
        settle_at = max(now + timedelta(seconds=31), beacon.time_of(int(hand.beacon_round or 0)))
        start = time.perf_counter()
        assert profiler.run("settle", partial(advance_table, table_id=table.pk, now=settle_at))
        settled = time.perf_counter() - start
        books = "ok" if check_books().ok else "BROKEN"
        # The next hand, as a table deals every minute: the players' client seeds, play and
        # gaming sessions exist now (updated, not created). Seats seen just before.
        next_at = settle_at + timedelta(seconds=table.widerpoker.results_seconds)
        Seat.objects.filter(table=table).update(last_seen_at=next_at)
        start = time.perf_counter()
        assert profiler.run("next deal", partial(advance_table, table_id=table.pk, now=next_at))
        dealt_next = time.perf_counter() - start
        hand = Hand.objects.get(pk=Table.objects.values_list("current_hand_id", flat=True).get(pk=table.pk))
        settle_at = max(next_at + timedelta(seconds=31), beacon.time_of(int(hand.beacon_round or 0)))
        start = time.perf_counter()
        assert profiler.run("next settle", partial(advance_table, table_id=table.pk, now=settle_at))
        settled_next = time.perf_counter() - start
        books_next = "ok" if check_books().ok else "BROKEN"
        print(
            f"| {size:,} | {created:.2f} s | {dealt:.2f} s | {rate:,.0f}/s | {settled:.2f} s | {books} "
            f"| {dealt_next:.2f} s | {settled_next:.2f} s | {books_next} |"
        )


PROCESSES, THREADS = 4, 4  # buyers: 4 processes (Python runs one thread at a time) x 4 threads


def buyer_process(table_id: int, plan: list[tuple[int, str]], now: datetime, ready: Any, go: Any, out: Any) -> None:
    """One buyer process: ``THREADS`` threads, each with its own database connection, run
    its share of ``plan``; reports (purchases, failures) on ``out``."""
    import django

    django.setup()
    from django.db import connection

    from tables.widerpoker.services.play import buy_draw, buy_redeal

    failures: list[str] = []

    def buyer(share: list[tuple[int, str]]) -> None:
        try:
            for user_id, action in share:
                buy = buy_draw if action == "draw" else buy_redeal
                buy(table_id=table_id, user_id=user_id, now=now)
        except Exception as error:
            failures.append(repr(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=buyer, args=(plan[i::THREADS],)) for i in range(THREADS)]
    ready.release()
    go.wait()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    out.put((len(plan), failures))


def buy_concurrently(table_id: int, plan: list[tuple[int, str]], *, now: datetime) -> float:
    """Run ``plan`` ((user id, "draw" or "redeal") pairs) from ``PROCESSES`` x ``THREADS``
    buyers while a clock thread captures holds every second; return confirmed purchases per
    second (from the start signal to the last buyer's end; process start-up excluded)."""
    from django.db import connection

    from tables.widerpoker.services.settlement import capture_running_purchases

    context = multiprocessing.get_context("spawn")
    ready, go, out = context.Semaphore(0), context.Event(), context.Queue()
    processes = [
        context.Process(target=buyer_process, args=(table_id, plan[i::PROCESSES], now, ready, go, out))
        for i in range(PROCESSES)
    ]
    for process in processes:
        process.start()
    for _ in processes:
        ready.acquire()
    done = threading.Event()

    def clock() -> None:
        try:
            while not done.wait(1.0):
                capture_running_purchases()
        finally:
            connection.close()

    ticker = threading.Thread(target=clock)
    ticker.start()
    start = time.perf_counter()
    go.set()
    results = [out.get() for _ in processes]
    elapsed = time.perf_counter() - start
    done.set()
    ticker.join()
    for process in processes:
        process.join()
    failures = [failure for _, errors in results for failure in errors]
    if failures:
        raise RuntimeError(f"{len(failures)} buyers failed, first: {failures[0]}")
    bought: int = sum(count for count, _ in results)
    return bought / elapsed


if __name__ == "__main__":
    flags = {arg for arg in sys.argv[1:] if arg.startswith("--")}
    main(
        [int(arg) for arg in sys.argv[1:] if not arg.startswith("--")] or [1000, 10000],
        profile="--profile" in flags,
        purchases="--no-purchases" not in flags,
    )
