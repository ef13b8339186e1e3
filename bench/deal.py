"""Benchmark: the deal and the settlement of one hand of N entries, timed as the issue's
targets are (issue 23): a deal from the previous hand's deadline to the change frame sent,
a settlement with its ledger writes, for a table's first hand and its next (steady) hand,
and the books check after each.

Runs against the database of ``DATABASE_URL`` (a PostgreSQL server; the database, named
``bench_*``, is dropped and re-created), e.g.:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_deal \\
        .venv/bin/python bench/deal.py 100000

``--compare DIR`` runs the same measurement alternately from this checkout and from the
checkout ``DIR`` (a baseline, e.g. the main branch), ``--rounds`` times each, each in a
fresh process and database, and prints both with their ratio: on a shared box only the
ratio of the same run means much. ``--code DIR`` measures the code of ``DIR`` (what
``--compare`` runs for the baseline). Prints markdown rows with ``/proc/loadavg``.

Importable: ``measure(size)`` returns the figures as a ``DealFigures``.

What is timed:

* **deal**: ``advance_table`` at the deadline, from the call to the change frame handed to
  the hub (``tables.realtime.bus.publish_table_frame``); ``deal, whole step``: to
  ``advance_table``'s return (with the sessions counted after the commit, where the code
  does that).
* **settle**: ``advance_table`` at the change deadline (beacon round released), to its
  return: evaluation, ranking, prizes, the ledger transfer, the results of every entry.

The players are seated as ``join_table`` seats them in the code measured: their wallets
exist, and their client seeds too where joining makes them (``tables.widerpoker.services.sessions``
present: the code of issue 23). No purchases (``bench/settlement.py`` has them).
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True, slots=True)
class DealFigures:
    """One table of ``size`` entries. ``steps``: for "first deal", "first settle", "next
    deal" and "next settle", four figures in seconds: wall time to the change frame handed
    to the hub (a settlement: to its end), CPU time to then (this process, both threads, plus
    its PostgreSQL backend: much less sensitive to a shared box's load than the wall), wall
    and CPU time of the whole step (a deal's includes the sessions counted after its commit).
    ``load``: /proc/loadavg's 1-minute figure before each step; ``books``: the books check
    after both settlements."""

    size: int
    steps: dict[str, list[float]]
    books: bool
    load: list[float]


def _load() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except OSError:
        return -1.0


def measure(size: int) -> DealFigures:
    """Deal and settle a table's first and next hand of ``size`` players (Django set up by
    the caller, on a scratch database migrated); see the module docstring."""
    import importlib.util

    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import User
    from django.utils import timezone

    from tables.clock import advance_table
    from tables.models import Hand, PlayerClientSeed, Seat, Table
    from tables.realtime import bus
    from tables.services import beacon
    from tables.widerpoker.services.create import create_table
    from wallet import services as wallet_services
    from wallet.models import AccountKind, Currency, TransferKind
    from wallet.selectors import check_books

    now = timezone.now()
    users = User.objects.bulk_create(
        [User(username=f"d{size}_{i}", password=make_password(None)) for i in range(size)], batch_size=5000
    )
    cashier = wallet_services.ensure_house_account(kind=AccountKind.CASHIER, currency=Currency.FUN)
    accounts = wallet_services.ensure_player_accounts(user_ids=[u.pk for u in users], currency=Currency.FUN)
    legs = [wallet_services.Leg(account_id, 10_000) for account_id in accounts.values()]
    legs.append(wallet_services.Leg(cashier.pk, -10_000 * size))
    wallet_services.post_transfer(
        reference=f"bench-deal-grant-{size}", kind=TransferKind.FUN_GRANT, currency=Currency.FUN, legs=legs
    )
    if importlib.util.find_spec("tables.widerpoker.services.sessions") is not None:  # joining makes the client seed
        PlayerClientSeed.objects.bulk_create(
            [PlayerClientSeed(user=u, seed=f"{u.pk:032x}", updated_at=now) for u in users], batch_size=5000
        )
    table = create_table(
        name=f"Deal {size}",
        mode="fun",
        currency="FUN",
        ante_minor=100,
        draw_price_bps=5000,
        redeal_price_minor=80,
        change_seconds=30,
    )
    Seat.objects.bulk_create(
        [Seat(table=table, user=u, joined_at=now, last_seen_at=now) for u in users], batch_size=5000
    )
    Table.objects.filter(pk=table.pk).update(phase_deadline=now)

    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()
    tick = os.sysconf("SC_CLK_TCK")

    def cpu() -> float:
        """This process's CPU time plus its PostgreSQL backend's (same box: /proc)."""
        fields = Path(f"/proc/{backend}/stat").read_text().rsplit(")", 1)[1].split()
        return time.process_time() + (int(fields[11]) + int(fields[12])) / tick

    sent: list[tuple[float, float]] = []
    real_publish = bus.publish_table_frame

    def publish(table_id: int, frame: str, **kwargs: Any) -> None:
        sent.append((time.perf_counter(), cpu()))
        real_publish(table_id, frame, **kwargs)

    bus.publish_table_frame = publish  # type: ignore[assignment]
    load: list[float] = []
    steps: dict[str, list[float]] = {}

    def step(label: str, at: Any) -> None:
        load.append(_load())
        sent.clear()
        start, start_cpu = time.perf_counter(), cpu()
        assert advance_table(table_id=table.pk, now=at)
        end, end_cpu = time.perf_counter(), cpu()
        frame, frame_cpu = sent[0] if sent and "deal" in label else (end, end_cpu)
        steps[label] = [frame - start, frame_cpu - start_cpu, end - start, end_cpu - start_cpu]

    def settle_time(dealt_at: Any) -> Any:
        hand = Hand.objects.get(pk=Table.objects.values_list("current_hand_id", flat=True).get(pk=table.pk))
        return max(dealt_at + timedelta(seconds=31), beacon.time_of(int(hand.beacon_round or 0)))

    try:
        step("first deal", now)
        settle_at = settle_time(now)
        step("first settle", settle_at)
        books = check_books().ok
        next_at = settle_at + timedelta(seconds=table.widerpoker.results_seconds)
        Seat.objects.filter(table=table).update(last_seen_at=next_at)
        step("next deal", next_at)
        settle_at = settle_time(next_at)
        step("next settle", settle_at)
        books = books and check_books().ok
    finally:
        bus.publish_table_frame = real_publish
    return DealFigures(size, steps, books, load)


def _run_here(size: int) -> DealFigures:
    """``measure`` in this process, on a re-created database (``DATABASE_URL``)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("POKER_BEACON_ALLOW_LOCAL", "1")
    os.environ.setdefault("TABLE_CLOCK", "off")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-never-used-in-production-0123456789abcdef")
    os.environ.setdefault("DJANGO_HTTPS", "off")
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        raise SystemExit("DATABASE_URL must name a scratch PostgreSQL database (bench_*)")
    from bench.fanout import recreate_database

    recreate_database(url)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return measure(size)


def _run_in(code: Path, size: int) -> DealFigures:
    """``measure`` in a fresh process importing the code of ``code`` (this file's
    ``measure``, that checkout's ``tables``, ``wallet``…)."""
    script = (
        "import json, sys; from dataclasses import asdict; "
        f"sys.path.insert(0, {str(code)!r}); sys.path.insert(1, {str(ROOT / 'bench')!r}); "
        "import deal; print('FIGURES ' + json.dumps(asdict(deal._run_here(%d))))" % size
    )
    output = subprocess.run(
        [sys.executable, "-c", script], cwd=code, check=True, stdout=subprocess.PIPE, text=True
    ).stdout
    line = next(line for line in output.splitlines() if line.startswith("FIGURES "))
    return DealFigures(**json.loads(line.removeprefix("FIGURES ")))


STEPS = ("first deal", "first settle", "next deal", "next settle")


def _row(label: str, figures: DealFigures) -> str:
    cells = " | ".join(
        f"{figures.steps[name][0]:.2f} s (CPU {figures.steps[name][1]:.2f}; step {figures.steps[name][2]:.2f})"
        for name in STEPS
    )
    load = " / ".join(f"{x:.1f}" for x in figures.load)
    return f"| {label} | {figures.size:,} | {cells} | {'ok' if figures.books else 'BROKEN'} | {load} |"


def _ratio(before: DealFigures, after: DealFigures) -> str:
    cells = " | ".join(
        f"{after.steps[name][0] / before.steps[name][0]:.2f}x (CPU {after.steps[name][1] / before.steps[name][1]:.2f}x)"
        for name in STEPS
    )
    return f"| after / before | | {cells} | | |"


HEADER = (
    "| code | entries | first deal: to the frame (CPU; whole step) | first settle (CPU) "
    "| next deal: to the frame (CPU; whole step) | next settle (CPU) | books | load before each step |\n"
    "|---|---:|---:|---:|---:|---:|---|---|"
)


def main(argv: list[str]) -> None:
    sizes = [int(arg) for arg in argv if arg.isdigit()] or [100_000]
    options = dict(itertools.pairwise(argv))
    rounds = int(options.get("--rounds", "1"))
    print(HEADER)
    for size in sizes:
        if "--compare" in options:
            baseline = Path(options["--compare"]).resolve()
            for _ in range(rounds):
                before = _run_in(baseline, size)
                after = _run_in(ROOT, size)
                print(_row(f"baseline {baseline.name}", before), flush=True)
                print(_row("this checkout", after), flush=True)
                print(_ratio(before, after), flush=True)
        elif "--code" in options:
            print(_row(options["--code"], _run_in(Path(options["--code"]).resolve(), size)), flush=True)
        else:
            print(_row("this checkout", _run_here(size)), flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main(sys.argv[1:])
