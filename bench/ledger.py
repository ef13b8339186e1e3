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
- ``batch``: ``POKER_LEDGER_SEAL=batch`` and ``--rake-accounts``: no transfer takes the
  head, the clock's ``seal_pending`` seals every transfer.

A thread of the main process calls ``seal_pending`` every second, as the clock does.

For each it prints settlements per second, p50/p95 latency of one settlement, the sessions
waiting for a lock and the age of the oldest unsealed transfer (sampled every 50 ms), the
unsealed transfers left when the workers stop, and whether ``verify_chain`` accepts the
chain after ``seal_pending`` (it must); the client CPU per settlement (the workers'
``time.process_time``) and the server CPU per settlement (the backends of the database,
``/proc/<pid>/stat``, sampled every 50 ms: the server must run on this machine), and two
cores divided by the latter (the rate with the clients on another machine); then
``/proc/loadavg``. ``--profile N`` instead settles N hands on one connection and prints
statements, client and server CPU per settlement (``--top K``: cProfile's K first functions). ``--rest-ms`` keeps each
settlement's transaction open that long after its transfer (``pg_sleep``: the rest of
``settle_hand``'s writes, results and hand row, while its locks are held).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("TABLE_CLOCK", "off")
os.environ.setdefault("POKER_BEACON_ALLOW_LOCAL", "1")  # as bench/settlement.py (docs/deployment.md)
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-never-used-in-production-0123456789abcdef")
os.environ.setdefault("DJANGO_HTTPS", "off")
os.environ.setdefault("DB_POOL_MAX_SIZE", "40")

from bench.fanout import recreate_database

CONFIGS: dict[str, tuple[str, bool]] = {
    "batch": ("batch", True),
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
    args: tuple[str, str, list[int], dict[int, list[int]], dict[int, int], float, float],
    ready: Any,
    results: Any,
) -> None:
    """One process: sets Django up and opens a connection per table, waits at ``ready`` (a
    barrier of every worker and the main process), then a thread per table settles hands
    for ``seconds``; puts each settlement's latency (seconds) on ``results``."""
    label, mode, tables, accounts, rake_ids, seconds, rest_ms = args
    setup_django()
    import numpy as np
    from django.conf import settings
    from django.db import connection, transaction

    from wallet import services
    from wallet.models import Currency, TransferKind

    settings.LEDGER_SEAL = mode
    latencies: list[float] = []
    lock = threading.Lock()

    connected, gate = threading.Barrier(len(tables) + 1), threading.Barrier(len(tables) + 1)
    clock: dict[str, float] = {}

    def play(table: int) -> None:
        escrow, carry, first, second = accounts[table]
        rake = rake_ids[table]
        mine: list[float] = []
        hand = 0
        connection.ensure_connection()
        connected.wait()
        gate.wait()
        while time.time() < clock["stop_at"]:
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
                if rest_ms:  # the rest of settle_hand's transaction (results, hand row), locks held
                    with connection.cursor() as cursor:
                        cursor.execute("SELECT pg_sleep(%s)", [rest_ms / 1000])
            mine.append(time.perf_counter() - started)
        connection.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=play, args=(table,)) for table in tables]
    for thread in threads:
        thread.start()
    connected.wait()
    ready.wait()
    clock["stop_at"] = time.time() + seconds
    cpu = time.process_time()
    gate.wait()
    for thread in threads:
        thread.join()
    results.put((latencies, time.process_time() - cpu))


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (None when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sample_lock_waits(
    stop: threading.Event, seen: list[int], lags: list[float], url: str, backends: dict[int, list[float]]
) -> None:
    """Every 50 ms: the sessions of this database waiting for a lock, the age of the oldest
    unsealed transfer (seconds), and the CPU seconds of each backend of this database (the
    server runs on this machine): ``backends`` maps a backend's pid to its first and last
    reading."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        while not stop.is_set():
            row = conn.execute(
                "SELECT (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock'), "
                "(SELECT coalesce(extract(epoch FROM clock_timestamp() - min(created_at)), 0) "
                "FROM wallet_transfer WHERE sequence IS NULL), "
                "(SELECT array_agg(pid) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid())"
            ).fetchone()
            if row:
                seen.append(int(row[0]))
                lags.append(float(row[1]))
                for pid in row[2] or []:
                    used = cpu_seconds(pid)
                    if used is not None:
                        backends.setdefault(pid, [used, used])[1] = used
            time.sleep(0.05)


def seal_every_second(stop: threading.Event) -> None:
    """The clock's part of sealing (``tables.clock.tick`` calls ``seal_pending``), every second
    until the run ends."""
    from django.db import connection

    from wallet.services import seal_pending

    while not stop.is_set():
        seal_pending()
        stop.wait(1.0)
    connection.close()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def run(label: str, config: tuple[str, bool], options: argparse.Namespace, accounts: dict[int, list[int]]) -> str:
    from django.db import connection

    from wallet import services
    from wallet.chain import verify_chain
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
    context = multiprocessing.get_context("spawn")
    ready = context.Barrier(options.procs + 1)
    queue = context.Queue()
    processes = [
        context.Process(
            target=worker,
            args=(
                (label.replace(" ", ""), mode, chunk, accounts, rake_ids, options.seconds, options.rest_ms),
                ready,
                queue,
            ),
        )
        for chunk in per_proc
    ]
    for process in processes:
        process.start()
    ready.wait()  # every worker set up and connected: the run starts now
    waits: list[int] = []
    lags: list[float] = []
    stop = threading.Event()
    backends: dict[int, list[float]] = {}
    sampler = threading.Thread(target=sample_lock_waits, args=(stop, waits, lags, os.environ["DATABASE_URL"], backends))
    sampler.start()
    clock = threading.Thread(target=seal_every_second, args=(stop,))
    clock.start()
    results = [queue.get() for _ in processes]
    stop.set()
    sampler.join()
    clock.join()
    for process in processes:
        process.join()
    latencies = [x for chunk, _ in results for x in chunk]
    client_cpu = sum(cpu for _, cpu in results)
    server_cpu = sum(last - first for first, last in backends.values())
    done = max(len(latencies), 1)
    unsealed = Transfer.objects.filter(sequence__isnull=True).count()
    services.seal_pending()
    problems = verify_chain(currency=Currency.FUN)
    load = Path("/proc/loadavg").read_text().split()[:3]
    mean_waits = sum(waits) / len(waits) if waits else 0.0
    return (
        f"| {label} | {mode} | {options.rake_accounts if shards else 1} | {options.procs}x{options.threads} "
        f"| {len(latencies) / options.seconds:,.0f} "
        f"| {pct(latencies, 0.5) * 1000:.1f} | {pct(latencies, 0.95) * 1000:.1f} "
        f"| {mean_waits:.1f} | {max(lags, default=0.0):.2f} s | {unsealed} "
        f"| {'yes' if not problems else f'NO: {problems[:2]}'} "
        f"| {client_cpu / done * 1000:.2f} | {server_cpu / done * 1000:.2f} "
        f"| {2 / max(server_cpu / done, 1e-9):,.0f} "
        f"| {' '.join(load)} |"
    )


def profile(count: int, accounts: dict[int, list[int]], rake_accounts: int, top: int) -> None:
    """One process, one connection: ``count`` raked settlements (as ``worker`` writes them,
    round-robin over the tables), each in its own transaction. Prints SQL statements per
    settlement (``BEGIN``/``COMMIT`` included, counted by an execute wrapper), the client's
    CPU per settlement (``time.process_time``), the server backend's CPU per settlement
    (``/proc/<backend pid>/stat``, user + system: the database is on this machine) and,
    with ``top``, cProfile's ``top`` functions by cumulative time."""
    import cProfile
    import pstats

    import numpy as np
    from django.db import connection, transaction

    from wallet import services
    from wallet.models import AccountKind, Currency, TransferKind

    tables = sorted(accounts)
    rakes = {
        table: services.ensure_account(
            key=f"rake:FUN:{table % rake_accounts}" if table % rake_accounts else "rake:FUN",
            kind=AccountKind.RAKE,
            currency=Currency.FUN,
        ).pk
        for table in tables
    }
    statements: list[str] = []

    def count_statement(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append(sql.split(None, 1)[0].upper())
        return execute(sql, params, many, context)

    def settle(hand: int) -> None:
        table = tables[hand % len(tables)]
        escrow, carry, first, second = accounts[table]
        with transaction.atomic():
            services.post_transfer_arrays(
                reference=f"settle:profile:{hand}",
                kind=TransferKind.SETTLEMENT,
                currency=Currency.FUN,
                account_ids=np.array([escrow, carry, rakes[table], first, second], dtype=np.int64),
                deltas=np.array([-1000, 1, 100, 600, 299], dtype=np.int64),
                memo=f"Settlement of hand {table}#{hand}: rake 1.00 FUN, pool 9.00 FUN",
            )

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()

    def server_cpu() -> float:
        fields = Path(f"/proc/{backend}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    for hand in range(50):  # warm up: caches, prepared plans, the head row
        settle(-1 - hand)
    services.seal_pending()
    with connection.execute_wrapper(count_statement):
        settle(-1000)
    statements.clear()
    client, server, wall = time.process_time(), server_cpu(), time.perf_counter()
    with connection.execute_wrapper(count_statement):
        for hand in range(count):
            settle(hand)
    client, server, wall = time.process_time() - client, server_cpu() - server, time.perf_counter() - wall
    kinds: dict[str, int] = {}
    for statement in statements:
        kinds[statement] = kinds.get(statement, 0) + 1
    print(
        f"{count} settlements, one connection: {len(statements) / count:.2f} statements each "
        f"({', '.join(f'{k} {v / count:.2f}' for k, v in sorted(kinds.items()))}); "
        f"client CPU {client / count * 1000:.3f} ms, server CPU {server / count * 1000:.3f} ms, "
        f"wall {wall / count * 1000:.3f} ms per settlement"
    )
    if top:
        profiler = cProfile.Profile()
        profiler.enable()
        for hand in range(count):
            settle(count + hand)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(top)
    services.seal_pending()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--procs", type=int, default=4)
    parser.add_argument("--threads", type=int, default=4, help="tables per process")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rake-accounts", type=int, default=16)
    parser.add_argument(
        "--rest-ms", type=float, default=0.0, help="time the transaction stays open after the transfer (pg_sleep)"
    )
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated, of: " + ", ".join(CONFIGS))
    parser.add_argument(
        "--profile", type=int, default=0, help="instead: this many settlements on one connection, profiled"
    )
    parser.add_argument("--top", type=int, default=0, help="with --profile: cProfile's top functions")
    options = parser.parse_args()
    recreate_database(os.environ["DATABASE_URL"])
    setup_django()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    accounts = prepare(options.procs * options.threads)
    if options.profile:
        profile(options.profile, accounts, options.rake_accounts, options.top)
        return
    print(
        "| config | seal | rake accounts | procs x tables | settlements/s | p50 ms | p95 ms "
        "| sessions waiting for a lock (mean) | oldest unsealed (max) | unsealed at the end "
        "| verify_chain after seal_pending | client CPU ms/settlement | server CPU ms/settlement "
        "| 2 cores / server CPU (settlements/s) | loadavg |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for label in options.configs.split(","):
        print(run(label.strip(), CONFIGS[label.strip()], options, accounts), flush=True)


if __name__ == "__main__":
    main()
