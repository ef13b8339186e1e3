"""Benchmark: deal and settle one hand of N entries, ledger writes included.

Runs against the database of ``DATABASE_URL`` (a PostgreSQL server; the database named in
the URL is dropped and re-created, so point it at a scratch name), e.g.:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_settlement \
        .venv/bin/python bench/settlement.py 1000 10000

Prints a markdown table: players, deal (ante transfer + entries), settlement (evaluation,
ranking, allocation, one settlement transfer, entry results), and the books check.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("TABLE_CLOCK", "off")
# A production-path database on loopback: a throwaway key, plain HTTP.
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-never-used-in-production-0123456789abcdef")
os.environ.setdefault("DJANGO_HTTPS", "off")


def recreate_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    admin_url = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def main(sizes: list[int]) -> None:
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

    from tables import services
    from tables.models import Seat, Table
    from wallet import services as wallet_services
    from wallet.models import AccountKind, Currency, TransferKind
    from wallet.selectors import check_books

    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor}\n")
    print("| entries | create players | deal (ante + entries) | settle (incl. ledger) | books |")
    print("|---:|---:|---:|---:|---|")
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
        table = services.create_table(
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
        assert services.advance_table(table_id=table.pk, now=now)
        dealt = time.perf_counter() - start
        for u in users[: size // 5]:
            services.buy_draw(table_id=table.pk, user_id=u.pk, now=now)

        start = time.perf_counter()
        assert services.advance_table(table_id=table.pk, now=now + timedelta(seconds=31))
        settled = time.perf_counter() - start
        books = "ok" if check_books().ok else "BROKEN"
        print(f"| {size:,} | {created:.2f} s | {dealt:.2f} s | {settled:.2f} s | {books} |")


if __name__ == "__main__":
    main([int(arg) for arg in sys.argv[1:]] or [1000, 10000])
