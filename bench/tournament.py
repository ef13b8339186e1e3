"""Benchmark: a tournament of ``--entrants`` players through its hands, on the production path.

Creates ``--entrants`` players with FUN chips (one bulk insert and one funding transfer),
schedules a fun tournament of ``--hands`` hands, registers every player through the service
the page and the REST API call (``tables.tournaments.services.register``: protection
checks and a hold each), then runs the production clock's task (``tables.tasks.
advance_due_tables``, what Celery beat sends every second) with an injected time, one
tick per second of game time, until the tournament is over. Runs against ``DATABASE_URL``
(dropped and re-created: a ``bench_*`` name), e.g.:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_tourney \\
        .venv/bin/python bench/tournament.py --entrants 10000 --hands 5

Prints the registrations per second, the duration of each clock step that did work (the
start with its first deal; each step between hands: standings, eliminations, the deal;
each settlement), the whole run, the books check, and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("POKER_BEACON_ALLOW_LOCAL", "1")  # the local beacon on PostgreSQL (docs/deployment.md)
os.environ.setdefault("TABLE_CLOCK", "off")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-never-used-in-production-0123456789abcdef")
os.environ.setdefault("DJANGO_HTTPS", "off")
os.environ.setdefault("POKER_BEACON_PERIOD_SECONDS", "1")


def main(entrants: int, hands: int) -> None:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        raise SystemExit("set DATABASE_URL to a scratch PostgreSQL database")
    from bench.fanout import recreate_database

    recreate_database(url)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)

    import numpy as np
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import User
    from django.utils import timezone

    from tables import clock, tasks
    from tables.models import Hand, Table
    from tables.tournaments import services as tournaments
    from tables.tournaments.models import Tournament, TournamentState
    from wallet import services as wallet_services
    from wallet.models import AccountKind, TransferKind
    from wallet.selectors import check_books

    load_before = os.getloadavg()
    password = make_password(None)
    users = User.objects.bulk_create(
        [User(username=f"bench{i}", password=password) for i in range(entrants)], batch_size=5000
    )
    accounts = wallet_services.ensure_player_accounts(user_ids=[user.pk for user in users], currency="FUN")
    cashier = wallet_services.ensure_house_account(kind=AccountKind.CASHIER, currency="FUN")
    wallet_services.post_transfer_arrays(
        reference="bench:funding",
        kind=TransferKind.FUN_GRANT,
        currency="FUN",
        account_ids=np.array([cashier.pk, *(accounts[user.pk] for user in users)], dtype=np.int64),
        deltas=np.array([-100_000 * entrants, *([100_000] * entrants)], dtype=np.int64),
    )
    now = timezone.now().replace(microsecond=0)
    tournament = tournaments.schedule_tournament(
        staff_user_id=None,
        now=now,
        name="Bench Wide",
        starts_at=now + timedelta(minutes=30),
        mode="fun",
        currency="FUN",
        buy_in_minor=1000,
        starting_chips_minor=10_000,
        hands=hands,
        change_seconds=10,
        results_seconds=3,
        redeal_seconds=10,
        antes=[{"from_hand": 1, "ante_minor": 1000}, {"from_hand": 3, "ante_minor": 2000}],
        max_entrants=100_000,
    )
    assert tournament.table_id is not None
    table_id = tournament.table_id
    started = time.perf_counter()
    for user in users:
        tournaments.register(tournament_id=tournament.pk, user_id=user.pk, now=now)
    registering = time.perf_counter() - started

    moment = tournament.starts_at

    class _Zone:
        @staticmethod
        def now() -> object:
            return moment

    setattr(clock, "timezone", _Zone)  # noqa: B010  # the clock's time, moved by this loop
    steps: list[tuple[str, float]] = []
    run_started = time.perf_counter()
    while Tournament.objects.values_list("state", flat=True).get(pk=tournament.pk) not in (
        TournamentState.FINISHED,
        TournamentState.CANCELLED,
    ):
        table = Table.objects.get(pk=table_id)
        before = (table.phase, table.hands_dealt)
        tick_started = time.perf_counter()
        tasks.advance_due_tables()
        elapsed = time.perf_counter() - tick_started
        after = Table.objects.values_list("phase", "hands_dealt").get(pk=table_id)
        if after != before:
            steps.append((f"{before[0]} #{before[1]} -> {after[0]} #{after[1]}", elapsed))
        moment += timedelta(seconds=1)
    run = time.perf_counter() - run_started
    books_started = time.perf_counter()
    books = check_books()
    books_seconds = time.perf_counter() - books_started
    load_after = os.getloadavg()
    tournament.refresh_from_db()
    dealt = list(Hand.objects.filter(table_id=table_id).order_by("number").values_list("entry_count", flat=True))
    print(f"entrants {entrants}, hands {hands}, entries dealt per hand {dealt}")
    print(f"registration: {registering:.1f} s ({entrants / registering:.0f} a second)")
    for name, seconds in steps:
        print(f"  step {name}: {seconds:.2f} s")
    game_seconds = int((moment - tournament.starts_at).total_seconds())
    print(f"the tournament's ticks in all (game time {game_seconds} s): {run:.1f} s")
    print(f"paid places {tournament.results.get('paid_places')}, pool {tournament.prize_pool_minor}")
    print(f"books check: {'ok' if books.ok else books} in {books_seconds:.1f} s")
    print(
        f"load average before {load_before[0]:.2f} {load_before[1]:.2f}, after {load_after[0]:.2f} {load_after[1]:.2f}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entrants", type=int, default=10_000)
    parser.add_argument("--hands", type=int, default=5)
    arguments = parser.parse_args()
    main(arguments.entrants, arguments.hands)
