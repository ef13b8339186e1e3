"""Production path for Hold'em: a real Celery worker and beat play house-bot hands on
PostgreSQL + Redis (bots act from the clock; the books stay exact; every PHH replays)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from tables.models import HoldemHand, HoldemHandStatus, Seat
from tables.services.holdem import sit_out_holdem, take_seat
from tests.conftest import make_player
from tests.tables.holdem_helpers import assert_books, assert_phh_replays, holdem_table
from tests.tables.test_celery_integration import wait_for

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
    pytest.mark.skipif(
        not (settings.USING_POSTGRES and settings.REDIS_URL),
        reason="needs PostgreSQL and Redis (DATABASE_URL, REDIS_URL)",
    ),
]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def holdem_celery(tmp_path: Path) -> Iterator[None]:
    """A Celery worker and one beat against the test database, the broker on the Redis
    database of REDIS_URL (each developer's own index)."""
    db = connection.settings_dict
    broker = str(settings.REDIS_URL)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": "postgres://{}@{}:{}/{}".format(
            db["USER"] or "postgres", db["HOST"] or "127.0.0.1", db["PORT"] or 5432, db["NAME"]
        ),
        "CELERY_BROKER_URL": broker,
        "TABLE_CLOCK": "beat",
    }
    celery = [sys.executable, "-m", "celery", "-A", "config"]
    subprocess.run(["redis-cli", "-u", broker, "flushdb"], check=False, capture_output=True)
    worker = subprocess.Popen(
        [
            *celery,
            "worker",
            "--pool=solo",
            "--loglevel=WARNING",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "worker.log").open("w"),
    )
    beat = subprocess.Popen(
        [*celery, "beat", "--loglevel=WARNING", f"--schedule={tmp_path / 'beat-schedule'}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "beat.log").open("w"),
    )
    try:
        yield
    finally:
        for process in (beat, worker):
            process.terminate()
        for process in (beat, worker):
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


def test_beat_and_worker_play_house_bot_hands(holdem_celery: None) -> None:
    table = holdem_table("Celery Hold'em", bot_seats=3)
    host = make_player("celery-host")
    take_seat(table_id=table.pk, user_id=host.pk, position=0, buy_in_minor=1_000, now=timezone.now())
    # The host watches: the bots play among themselves, on the clock only.
    sit_out_holdem(table_id=table.pk, user_id=host.pk, now=timezone.now())

    def three_settled() -> bool:
        Seat.objects.filter(table=table, is_bot=False).update(last_seen_at=timezone.now())
        return HoldemHand.objects.filter(table=table, status=HoldemHandStatus.SETTLED).count() >= 3

    # Wake the table: beat advances it from here.
    from tables.models import Table

    Table.objects.filter(pk=table.pk).update(phase_deadline=timezone.now())
    wait_for(three_settled, 150, "three Hold'em hands played by the bots")
    hands = list(HoldemHand.objects.filter(table=table, status=HoldemHandStatus.SETTLED))
    assert all(len(hand.players) >= 2 and all(p["bot"] for p in hand.players) for hand in hands)
    assert all(hand.actions for hand in hands)
    table.refresh_from_db()
    # Between two steps of the worker the books hold; wait for a pause between hands.
    wait_for(lambda: not HoldemHand.objects.filter(table=table, status="playing").exists(), 60, "a pause")
    assert_books(table)
    assert assert_phh_replays(table) >= 1
