"""CPU per purchase of the purchase writer's own work, in one process (issue 23, item 1).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_purchase_cpu REDIS_URL=redis://127.0.0.1:6379/3 \\
        .venv/bin/python bench/purchase_cpu.py 20000 --batch 50 --purchases 6000

What a daphne process spends on a purchase besides its socket or request: the batch's
transaction (``commit_batch``) and the buyer's answer, the ``entry_state`` frame serialised
as the socket consumer sends it. On a box shared with other work, wall time says little:
this reports the process's CPU time (``time.process_time``: every thread of the process),
the CPU time of its PostgreSQL backend (``/proc/<pid>/stat``) and the SQL statements per
batch (counted at Django's cursor), each per purchase.

1. recreates the scratch database (``bench_*`` only), makes N funded players seated at one
   fun table (``bench/massive.py``'s set-up) and deals the hand (algorithm 3: frozen, then
   dealt at its beacon round);
2. computes each buyer's private frame once, as his socket's process did at the deal's push
   (the probability panels cached);
3. commits ``--purchases`` draws in batches of ``--batch`` (each player at most 4), then
   ``--redeals`` redeals (each player at most 2), each answer's frame text built;
4. settles the hand and checks the books and that every committed purchase is in it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.fanout import recreate_database  # noqa: E402

STATEMENTS: dict[str, tuple[float, float, int]] = {}
"""Wall seconds, PostgreSQL CPU seconds (``/proc``, in ticks: a sum over many is what
counts) and count of each statement (its first 90 characters), with ``--statements``."""
STATEMENTS_ON = "--statements" in sys.argv
BACKEND: list[int] = []  # the PostgreSQL backend's pid, with ``--statements``


def backend_cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def counted() -> Iterator[list[int]]:
    """Count the statements sent through Django's cursor and the batch's own (``[count]``)."""
    from django.db import connection

    count = [0]

    def wrapper(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        count[0] += 1
        began, cpu = time.perf_counter(), backend_cpu(BACKEND[0]) if BACKEND else 0.0
        try:
            return execute(sql, params, many, context)
        finally:
            key = " ".join(sql.split())[:90]
            spent, used, times = STATEMENTS.get(key, (0.0, 0.0, 0))
            used += backend_cpu(BACKEND[0]) - cpu if BACKEND else 0.0
            STATEMENTS[key] = (spent + time.perf_counter() - began, used, times + 1)

    from tables.widerpoker.services import purchase_statements

    sent = purchase_statements.run

    def run(sql: str, params: Any) -> Any:  # the batch's own statements (server-side parameters)
        return wrapper(lambda sql, params, many, context: sent(sql, params), sql, params, False, None)

    purchase_statements.run = run
    try:
        with connection.execute_wrapper(wrapper):
            yield count
    finally:
        purchase_statements.run = sent


def answer_text(outcome: Any) -> str:
    """The text a socket sends after the ack: the writer's pre-serialised frame."""
    return str(outcome.text)


def measure(label: str, table_id: int, kind: str, users: list[int], batch: int) -> dict[str, Any]:
    from django.db import connection
    from django.utils import timezone

    from tables.widerpoker.services.purchase_batch import commit_batch
    from tables.widerpoker.services.purchases import Order

    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = int(cursor.fetchone()[0])
    BACKEND[:] = [pid] if STATEMENTS_ON else []
    confirmed = refused = batches = 0
    cpu, pg, wall = time.process_time(), backend_cpu(pid), time.perf_counter()
    with counted() as statements:
        for start in range(0, len(users), batch):
            orders = [
                Order(kind=kind, table_id=table_id, user_id=user_id, now=timezone.now(), ref=f"{label}-{user_id}")
                for user_id in users[start : start + batch]
            ]
            for outcome in commit_batch(orders):
                if outcome.error is None:
                    confirmed += 1
                    answer_text(outcome)
                else:
                    refused += 1
            batches += 1
    cpu, pg, wall = time.process_time() - cpu, backend_cpu(pid) - pg, time.perf_counter() - wall
    row = {
        "label": label,
        "confirmed": confirmed,
        "refused": refused,
        "batches": batches,
        "statements_per_batch": statements[0] / batches,
        "cpu_ms": 1000 * cpu / max(confirmed, 1),
        "pg_ms": 1000 * pg / max(confirmed, 1),
        "wall_ms": 1000 * wall / max(confirmed, 1),
        "load": os.getloadavg()[0],
    }
    print(
        f"{label}: {confirmed} confirmed ({refused} refused) in {batches} batches of {batch}: "
        f"{row['statements_per_batch']:.1f} statements/batch, CPU {row['cpu_ms']:.3f} ms + PostgreSQL "
        f"{row['pg_ms']:.3f} ms per purchase (wall {row['wall_ms']:.3f} ms), load {row['load']:.1f}",
        flush=True,
    )
    return row


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    database_url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/bench_purchase_cpu")
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "POKER_BEACON_ALLOW_LOCAL": "1",
            "POKER_BEACON_PERIOD_SECONDS": "1",
            "POKER_REDIS_PREFIX": f"purchasecpu{os.getpid()}",
            "DJANGO_SECRET_KEY": "bench-only-key-never-used-in-production-0123456789abcdef",
            "DJANGO_HTTPS": "off",
            "TABLE_CLOCK": "off",
            "POKER_PURCHASE_CAPTURE": "batch",
        }
    )
    recreate_database(database_url)
    import django

    django.setup()
    from django.utils import timezone

    from bench.massive import DRAW_PRICE, REDEAL_PRICE, funded_table
    from tables.clock import advance_table
    from tables.models import Entry, Hand, HandStatus, Table, TablePhase
    from tables.widerpoker.selectors import get_entry_state
    from wallet.selectors import check_books

    started = time.perf_counter()
    table, players, _tokens = funded_table(args.players, prefix="c", change_seconds=600, reference="cpu-funding")
    user_ids = [user.pk for user in players]
    Table.objects.filter(pk=table.pk).update(phase_deadline=timezone.now())
    deadline = time.monotonic() + 120
    while Table.objects.get(pk=table.pk).phase != TablePhase.CHANGE:
        if time.monotonic() > deadline:
            raise RuntimeError("the table did not reach its change phase")
        advance_table(table_id=table.pk, now=timezone.now())
        time.sleep(0.1)
    hand = Hand.objects.get(table_id=table.pk)
    print(f"{args.players:,} players dealt in {time.perf_counter() - started:.1f} s", flush=True)

    draws_each = 4
    buyers = user_ids[: -(-args.purchases // draws_each)]
    redeal_buyers = user_ids[len(buyers) : len(buyers) + args.redeals]
    for user_id in buyers + redeal_buyers:  # the panels his socket's process computed at the deal
        get_entry_state(table_id=table.pk, user_id=user_id)
    rows = []
    bought = 0
    for draw in range(draws_each):
        users = buyers[: max(0, min(len(buyers), args.purchases - draw * len(buyers)))]
        if users:
            rows.append(measure(f"draws, round {draw + 1}", table.pk, "draw", users, args.batch))
            bought += rows[-1]["confirmed"]
    redealt = 0
    if redeal_buyers:  # one each: under algorithm 3 a second waits for the first's beacon round
        rows.append(measure("redeals", table.pk, "redeal", redeal_buyers, args.batch))
        redealt += rows[-1]["confirmed"]

    moved = timezone.now()
    from tables.services import beacon

    Hand.objects.filter(pk=hand.pk).update(
        change_deadline=moved, redeal_deadline=moved, beacon_round=beacon.round_after(moved)
    )
    Table.objects.filter(pk=table.pk).update(phase_deadline=moved)
    deadline = time.monotonic() + 300
    while Table.objects.get(pk=table.pk).phase != TablePhase.RESULTS and time.monotonic() < deadline:
        advance_table(table_id=table.pk, now=timezone.now())
        time.sleep(0.2)
    hand.refresh_from_db()
    entries = Entry.objects.filter(hand=hand)
    stored = sum(entries.values_list("draws_bought", flat=True)) - hand.entry_count
    paid = sum(entries.values_list("paid_minor", flat=True))
    expected = hand.entry_count * 100 + DRAW_PRICE * bought + REDEAL_PRICE * redealt
    failures = []
    if hand.status != HandStatus.SETTLED:
        failures.append(f"not settled: {hand.status}")
    if stored != bought or paid != expected:
        failures.append(f"committed {bought} draws and {redealt} redeals; settled {stored} draws, paid {paid}")
    if not check_books().ok:
        failures.append("books do not balance")
    if args.statements:
        for key, (spent, used, times) in sorted(STATEMENTS.items(), key=lambda item: -item[1][1])[:20]:
            print(f"wall {1000 * spent:8.1f} ms, PostgreSQL CPU {1000 * used:7.1f} ms, {times:6d}x  {key}")
    print("settled; books ok; every purchase in the settlement" if not failures else f"FAILED: {failures}")
    if failures:
        sys.exit(1)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("players", type=int, nargs="?", default=20_000)
    parser.add_argument("--batch", type=int, default=50, help="purchases per batch")
    parser.add_argument("--purchases", type=int, default=6000, help="draws (each buyer at most 4)")
    parser.add_argument("--redeals", type=int, default=1000, help="redeals (one per buyer)")
    parser.add_argument("--statements", action="store_true", help="list the statements by wall time")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
