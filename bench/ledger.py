"""Benchmark: raked settlements per second in one currency, from many tables at once (issue
23, item 7: the ledger's chain head must not serialise the house).

Runs against the database of ``DATABASE_URL`` (PostgreSQL; the database named in the URL is
dropped and re-created, so it must be named ``bench_*``), e.g.:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_ledger \\
        .venv/bin/python bench/ledger.py --procs 4 --threads 4 --seconds 10

Each worker (``--procs`` processes of ``--threads`` threads, each thread with its own
database connection) plays its own table: it settles one hand after another, each in its
own transaction, with the settlement transfer ``settle_hand`` writes (``post_transfer_arrays``:
the hand's escrow pays the rake account, the table's carry account and two winners; the
rake is 10 %). Every configuration runs for ``--seconds`` in the same invocation:

- ``before``: ``POKER_LEDGER_SEAL=wait`` and one rake account (main's approach: every
  transfer waits for the currency's chain head, and every raked hand for the one rake row);
- ``wait + shards``: the head still waited for, the rake spread over ``--rake-accounts``;
- ``tail``: seals at the transfer's tail with ``SKIP LOCKED``, one rake account;
- ``after``: ``tail`` and ``--rake-accounts`` rake accounts (this branch's default path
  with ``POKER_RAKE_ACCOUNTS`` set).

A thread of the main process calls ``seal_pending`` every second, as the clock does.

For each it prints settlements per second, p50/p95 latency of one settlement, the lock
waits seen by a sampler (``pg_locks`` not granted, sampled every 50 ms), the unsealed
transfers left at the end and their oldest age, and whether ``verify_chain`` accepts the
chain after ``seal_pending`` (it must); then ``/proc/loadavg``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("TABLE_CLOCK", "off")
os.environ.setdefault("POKER_BEACON_ALLOW_LOCAL", "1")  # as bench/settlement.py (docs/deployment.md)
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-never-used-in-production-0123456789abcdef")
os.environ.setdefault("DJANGO_HTTPS", "off")
os.environ.setdefault("DB_POOL_MAX_SIZE", "40")

from bench.fanout import recreate_database

CONFIGS: dict[str, tuple[str, bool]] = {
    "before": ("wait", False),
    "wait + shards": ("wait", True),
    "tail": ("tail", False),
    "after": ("tail", True),
}


def setup_django() -> None:
    import django

    django.setup()


def prepare(tables: int) -> dict[int, list[int]]:
    """Accounts for ``tables`` tables: {table: [escrow, carry, winner 1, winner 2]}, every
    escrow funded from the cashier (one transfer each)."""
    import numpy as np

    from wallet import services
    from wallet.models import AccountKind, Currency, TransferKind

    cashier = services.ensure_house_account(kind=AccountKind.CASHIER, currency=Currency.FUN)
    accounts: dict[int, list[int]] = {}
    for table in range(1, tables + 1):
        escrow = services.ensure_account(key=f"escrow:bench:{table}", kind=AccountKind.ESCROW, currency=Currency.FUN)
        carry = services.ensure_account(key=f"carry:bench:{table}", kind=AccountKind.CARRY, currency=Currency.FUN)
        winners = [
            services.ensure_account(key=f"player:bench:{table}:{n}", kind=AccountKind.PLAYER, currency=Currency.FUN).pk
            for n in (1, 2)
        ]
        services.post_transfer_arrays(
            reference=f"fund:{table}",
            kind=TransferKind.FUN_TOP_UP,
            currency=Currency.FUN,
            account_ids=np.array([cashier.pk, escrow.pk], dtype=np.int64),
            deltas=np.array([-(10**12), 10**12], dtype=np.int64),
        )
        accounts[table] = [escrow.pk, carry.pk, *winners]
    return accounts


def worker(
    args: tuple[str, str, bool, list[int], dict[int, list[int]], dict[int, int], float, float, int],
) -> list[float]:
    """One process: a thread per table, settling hands until ``stop_at``; returns each
    settlement's latency (seconds)."""
    label, mode, _shards, tables, accounts, rake_ids, start_at, stop_at, rake_accounts = args
    setup_django()
    import numpy as np
    from django.conf import settings
    from django.db import connection, transaction

    from wallet import services
    from wallet.models import Currency, TransferKind

    settings.LEDGER_SEAL = mode
    latencies: list[float] = []
    lock = threading.Lock()

    def play(table: int) -> None:
        escrow, carry, first, second = accounts[table]
        rake = rake_ids[table]
        mine: list[float] = []
        hand = 0
        while time.time() < start_at:
            time.sleep(0.001)
        while time.time() < stop_at:
            hand += 1
            started = time.perf_counter()
            with transaction.atomic():
                services.post_transfer_arrays(
                    reference=f"settle:{label}:{table}:{hand}",
                    kind=TransferKind.SETTLEMENT,
                    currency=Currency.FUN,
                    account_ids=np.array([escrow, carry, rake, first, second], dtype=np.int64),
                    deltas=np.array([-1000, 1, 100, 600, 299], dtype=np.int64),
                    memo=f"Settlement of hand {table}#{hand}: rake 1.00 FUN, pool 9.00 FUN",
                )
            mine.append(time.perf_counter() - started)
        connection.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=play, args=(table,)) for table in tables]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    del rake_accounts
    return latencies


def sample_lock_waits(stop: threading.Event, seen: list[int], url: str) -> None:
    """Every 50 ms, the number of row and transaction locks waited for in the database."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        while not stop.is_set():
            (waiting,) = conn.execute("SELECT count(*) FROM pg_locks WHERE NOT granted").fetchone() or (0,)
            seen.append(int(waiting))
            time.sleep(0.05)


def seal_every_second(stop: threading.Event, stop_at: float) -> None:
    """The clock's part of sealing (``tables.clock.tick`` calls ``seal_pending``), every second
    until the run ends."""
    from django.db import connection

    from wallet.services import seal_pending

    while not stop.is_set() and time.time() < stop_at:
        seal_pending()
        time.sleep(1.0)
    connection.close()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def run(label: str, config: tuple[str, bool], options: argparse.Namespace, accounts: dict[int, list[int]]) -> str:
    from django.db import connection

    from wallet import services
    from wallet.chain import oldest_unsealed_age, verify_chain
    from wallet.models import AccountKind, Currency, Transfer

    mode, shards = config
    tables = sorted(accounts)
    rake_ids = {
        table: services.ensure_account(
            key=f"rake:FUN:{table % options.rake_accounts}" if shards and table % options.rake_accounts else "rake:FUN",
            kind=AccountKind.RAKE,
            currency=Currency.FUN,
        ).pk
        for table in tables
    }
    connection.close()
    per_proc = [tables[i :: options.procs] for i in range(options.procs)]
    start_at = time.time() + 8.0  # spawned workers set Django up first
    stop_at = start_at + options.seconds
    waits: list[int] = []
    stop = threading.Event()
    sampler = threading.Thread(target=sample_lock_waits, args=(stop, waits, os.environ["DATABASE_URL"]))
    sampler.start()
    clock = threading.Thread(target=seal_every_second, args=(stop, stop_at))
    clock.start()
    context = multiprocessing.get_context("spawn")
    with context.Pool(options.procs) as pool:
        results = pool.map(
            worker,
            [
                (
                    label.replace(" ", ""),
                    mode,
                    shards,
                    chunk,
                    accounts,
                    rake_ids,
                    start_at,
                    stop_at,
                    options.rake_accounts,
                )
                for chunk in per_proc
            ],
        )
    stop.set()
    sampler.join()
    clock.join()
    latencies = [x for chunk in results for x in chunk]
    unsealed = Transfer.objects.filter(sequence__isnull=True).count()
    age = oldest_unsealed_age()
    services.seal_pending()
    problems = verify_chain(currency=Currency.FUN)
    load = Path("/proc/loadavg").read_text().split()[:3]
    mean_waits = sum(waits) / len(waits) if waits else 0.0
    return (
        f"| {label} | {mode} | {options.rake_accounts if shards else 1} | {options.procs}x{options.threads} "
        f"| {len(latencies) / options.seconds:,.0f} "
        f"| {pct(latencies, 0.5) * 1000:.1f} | {pct(latencies, 0.95) * 1000:.1f} "
        f"| {mean_waits:.1f} | {unsealed} ({age:.2f} s) | {'yes' if not problems else f'NO: {problems[:2]}'} "
        f"| {' '.join(load)} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--procs", type=int, default=4)
    parser.add_argument("--threads", type=int, default=4, help="tables per process")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rake-accounts", type=int, default=16)
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated, of: " + ", ".join(CONFIGS))
    options = parser.parse_args()
    recreate_database(os.environ["DATABASE_URL"])
    setup_django()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    accounts = prepare(options.procs * options.threads)
    print(
        "| config | seal | rake accounts | procs x tables | settlements/s | p50 ms | p95 ms "
        "| lock waits (mean) | unsealed at end (oldest) | verify_chain after seal_pending | loadavg |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for label in options.configs.split(","):
        print(run(label.strip(), CONFIGS[label.strip()], options, accounts), flush=True)


if __name__ == "__main__":
    main()
