"""Benchmark: the deal and the settlement of one hand of N entries, timed as the issue's
targets are (issue 23): a deal from the previous hand's deadline to the change frame sent,
a settlement with its ledger writes, for a table's first hand and its next (steady) hand,
and the books check after each.

Runs against the database of ``DATABASE_URL`` (a PostgreSQL server; the database, named
``bench_*``, is dropped and re-created), e.g.:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_deal \\
        .venv/bin/python bench/deal.py 100000

``--algorithm N`` deals with algorithm ``N`` (``POKER_DEAL_ALGORITHM``; by default the
settings', 3 in production): with algorithm 3 a deal is two clock steps, the freeze and
the deal at the deal round; its figures are the freeze's whole step plus the round step to
the change frame, the wait for the round (0-3 s, docs/provably-fair.md) left out, and both
steps are printed apart after the table. Since 2026-11-27 the next hand freezes one beacon
period before the previous hand's results end and is dealt at their end: the next deal's
wall figures then count the round step, plus whatever of the freeze's step overran the
results (none when it takes less than the period); its CPU still counts both steps.

Before each deal the database is analyzed (untimed), as autovacuum does in production and
this box's PostgreSQL, with autovacuum off, does not; ``--no-analyze`` skips it.

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
    algorithm: int = 2


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
    from tables.models import Hand, HandFreeze, PlayerClientSeed, Seat, Table
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

    def one_step(at: Any, *, deal: bool) -> list[float]:
        sent.clear()
        start, start_cpu = time.perf_counter(), cpu()
        assert advance_table(table_id=table.pk, now=at)
        end, end_cpu = time.perf_counter(), cpu()
        frame, frame_cpu = sent[0] if sent and deal else (end, end_cpu)
        return [frame - start, frame_cpu - start_cpu, end - start, end_cpu - start_cpu]

    def analyze() -> None:
        """The planner's statistics, as production's autovacuum keeps them (it analyzes a
        table once a tenth of its rows changed; 100,000 players join over minutes and a
        hand lasts more than 30 s). This box's PostgreSQL runs without autovacuum, so a
        freshly filled table is planned as if it had a few hundred rows: the freeze's seat
        read took 0.52 s in a nested loop instead of 0.10 s. Untimed; ``--no-analyze``
        leaves the statistics as they are."""
        if os.environ.get("BENCH_DEAL_ANALYZE", "1") == "1":
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")

    # A freeze's ``deal_at`` (since 2026-11-27) where the code measured has it.
    timed = ["pk", "deal_round"] + [f.name for f in HandFreeze._meta.fields if f.name == "deal_at"]

    def step(label: str, at: Any, *, results_end: Any = None) -> None:
        if "deal" in label:
            analyze()
        load.append(_load())
        steps[label] = one_step(at, deal="deal" in label)
        # Not the 6 MB of frozen players: 0.5 s of JSON between the timed steps.
        freeze = HandFreeze.objects.filter(table=table, abandoned_at__isnull=True).only(*timed).first()
        if "deal" in label and freeze is not None:
            # Algorithm 3: that step froze the inputs; the deal round's step deals, at the
            # round's time or the freeze's ``deal_at`` (the results' end), whichever is later.
            # The deal's wall figures start at the previous hand's deadline (``results_end``;
            # the step's own time by default): a freeze run before it (``freeze_lead``) counts
            # only for what it overran; the wait for the round is left out; CPU counts both
            # steps whole.
            frozen = steps[label + " (freeze)"] = steps[label]
            due = beacon.time_of(int(freeze.deal_round))
            dealt = steps[label + " (round)"] = one_step(max(due, getattr(freeze, "deal_at", None) or due), deal=True)
            ahead = max(0.0, ((results_end or at) - at).total_seconds())
            steps[label + " (ahead)"] = [ahead, 0.0, 0.0, 0.0]
            overrun = max(0.0, frozen[2] - ahead)
            steps[label] = [overrun + dealt[0], frozen[3] + dealt[1], overrun + dealt[2], frozen[3] + dealt[3]]

    def settle_time(dealt_at: Any) -> Any:
        hand = Hand.objects.get(pk=Table.objects.values_list("current_hand_id", flat=True).get(pk=table.pk))
        return max(hand.change_deadline + timedelta(seconds=1), beacon.time_of(int(hand.beacon_round or 0)))

    try:
        step("first deal", now)
        settle_at = settle_time(now)
        step("first settle", settle_at)
        books = check_books().ok
        results_end = settle_at + timedelta(seconds=table.widerpoker.results_seconds)
        # The table is due at the results' end, or ``freeze_lead`` before it (algorithm 3
        # since 2026-11-27: the next hand freezes then and is dealt at their end).
        next_at = Table.objects.values_list("phase_deadline", flat=True).get(pk=table.pk) or results_end
        Seat.objects.filter(table=table).update(last_seen_at=results_end)
        step("next deal", next_at, results_end=results_end)
        settle_at = settle_time(next_at)
        step("next settle", settle_at)
        books = books and check_books().ok
    finally:
        bus.publish_table_frame = real_publish
    from django.conf import settings

    return DealFigures(size, steps, books, load, settings.DEAL_ALGORITHM)


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


def _split(label: str, figures: DealFigures) -> str:
    """Algorithm 3's deals, step by step: the freeze's whole step and the deal round's step
    to the change frame (wall, CPU)."""
    cells = []
    for name in ("first deal", "next deal"):
        if f"{name} (freeze)" in figures.steps:
            frozen, dealt = figures.steps[f"{name} (freeze)"], figures.steps[f"{name} (round)"]
            ahead = figures.steps.get(f"{name} (ahead)", [0.0])[0]
            cells.append(
                f"{name}: freeze {frozen[2]:.2f} s (CPU {frozen[3]:.2f}"
                + (f"; run {ahead:.0f} s before the results' end" if ahead else "")
                + f") + round step {dealt[0]:.2f} s (CPU {dealt[1]:.2f})"
            )
    return f"  - {label}, algorithm {figures.algorithm}: " + "; ".join(cells) if cells else ""


def main(argv: list[str]) -> None:
    options = dict(itertools.pairwise(argv))
    values = {value for option, value in options.items() if option.startswith("--")}
    sizes = [int(arg) for arg in argv if arg.isdigit() and arg not in values] or [100_000]
    rounds = int(options.get("--rounds", "1"))
    if "--no-analyze" in argv:  # measure on the statistics left by the preparation (none)
        os.environ["BENCH_DEAL_ANALYZE"] = "0"
    if "--algorithm" in options:  # the deal algorithm (POKER_DEAL_ALGORITHM) of every run
        os.environ["POKER_DEAL_ALGORITHM"] = options["--algorithm"]
    details: list[str] = []
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
                details += [_split(f"baseline {baseline.name}", before), _split("this checkout", after)]
        elif "--code" in options:
            figures = _run_in(Path(options["--code"]).resolve(), size)
            print(_row(options["--code"], figures), flush=True)
            details.append(_split(options["--code"], figures))
        else:
            figures = _run_here(size)
            print(_row("this checkout", figures), flush=True)
            details.append(_split("this checkout", figures))
    for line in filter(None, details):
        print(line)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main(sys.argv[1:])
