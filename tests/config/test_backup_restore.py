"""Backups (issue 26): bin/backup dumps a database with settled hands of both games,
bin/restore puts it into a fresh database and proves it there with verify_books (the heads
recorded at the backup included) and verify_hands. PostgreSQL only: the procedure is
pg_dump/pg_restore."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone

from tables.holdem.services.player import take_seat
from tables.models import Hand, HandStatus, HoldemHand, HoldemHandStatus, Table
from tests.helpers import deal_hand, settle
from tests.tables.holdem_helpers import holdem_table, run_until
from wallet.models import LedgerEntry, LedgerHead, Transfer

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="pg_dump and pg_restore: PostgreSQL only"),
    pytest.mark.postgres,
    pytest.mark.slow,
]


def database_url(name: str) -> str:
    """A URL for database ``name`` on the test database's server, as the test's role."""
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{name}"


def run(*command: str, **env: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        command, cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, f"{command[0]} failed:\n{result.stdout}\n{result.stderr}"
    return result


def psql(url: str, sql: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["psql", url, "-XAtc", sql], capture_output=True, text=True, timeout=60, check=False)


@pytest.fixture
def fresh_database() -> Iterator[str]:
    """An empty database beside the test database, dropped afterwards."""
    name = f"{connection.settings_dict['NAME']}_restored"
    admin = database_url("postgres")
    psql(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    assert psql(admin, f'CREATE DATABASE "{name}"').returncode == 0
    yield database_url(name)
    psql(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.django_db(transaction=True)
def test_a_backup_restores_into_a_fresh_database_with_intact_books_and_verified_hands(
    fun_table: Table, alice: User, bob: User, carol: User, fresh_database: str, tmp_path: Path, capsys: Any
) -> None:
    # A settled WiderPoker hand and a settled Hold'em hand, through the real services.
    deal_hand(fun_table, [alice, bob], timezone.now() - timedelta(seconds=31))
    assert settle(fun_table).status == HandStatus.SETTLED
    holdem = holdem_table()
    now = timezone.now()
    take_seat(table_id=holdem.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    take_seat(table_id=holdem.pk, user_id=carol.pk, position=3, buy_in_minor=1_000, now=now)
    run_until(holdem, now, hands=1)
    assert HoldemHand.objects.filter(table=holdem, status=HoldemHandStatus.SETTLED).exists()
    counts = {
        "hands": Hand.objects.count(),
        "holdem hands": HoldemHand.objects.count(),
        "transfers": Transfer.objects.count(),
        "ledger legs": LedgerEntry.objects.count(),
    }
    heads = sorted(f"{h.currency}:{h.sequence}:{h.chain_hash}" for h in LedgerHead.objects.all())
    env = {
        "PYTHON": sys.executable,
        "DJANGO_SETTINGS_MODULE": "config.settings_test",
        "DJANGO_SECRET_KEY": settings.SECRET_KEY,
        "POKER_LEDGER_KEY": settings.LEDGER_KEY,
    }

    started = time.perf_counter()
    backup = run("bin/backup", str(tmp_path), BACKUP_DATABASE_URL=database_url(connection.settings_dict["NAME"]), **env)
    archive = Path(backup.stdout.strip().splitlines()[-1])
    backed_up = time.perf_counter()
    assert archive.exists() and archive.stat().st_size > 0
    assert sorted(Path(f"{archive}.heads").read_text().split()) == heads
    restore = run("bin/restore", str(archive), RESTORE_DATABASE_URL=fresh_database, **env)
    restored = time.perf_counter()

    assert "Books intact." in restore.stdout
    for head in heads:
        assert head in restore.stdout  # verify_books prints the same heads
    assert "verified in" in restore.stderr
    for table, count in (
        ("tables_hand", counts["hands"]),
        ("tables_holdemhand", counts["holdem hands"]),
        ("wallet_transfer", counts["transfers"]),
        ("wallet_ledgerentry", counts["ledger legs"]),
    ):
        assert psql(fresh_database, f"SELECT count(*) FROM {table}").stdout.strip() == str(count), table
    # The triggers came back with the data: the restored ledger is still append-only.
    tampered = psql(fresh_database, "UPDATE wallet_ledgerentry SET delta_minor = delta_minor + 1")
    assert tampered.returncode != 0
    # A second restore into the same, now full, database is refused: nothing is overwritten.
    again = subprocess.run(
        ["bin/restore", str(archive)],
        cwd=ROOT,
        env={**os.environ, **env, "RESTORE_DATABASE_URL": fresh_database},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert again.returncode == 2 and "restore only into an empty database" in again.stderr
    with capsys.disabled():
        print(
            f"\nbackup {backed_up - started:.1f} s, restore and verify {restored - backed_up:.1f} s "
            f"({archive.stat().st_size} bytes, {counts})"
        )
