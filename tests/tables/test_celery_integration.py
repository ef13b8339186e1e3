"""Production path end to end: a real Celery worker and beat drive hands on PostgreSQL + Redis."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.utils import timezone

from tables.models import Entry, Hand, HandStatus, Seat
from tables.widerpoker.services.play import buy_draw
from tables.widerpoker.services.seating import join_table
from tests.conftest import make_player
from tests.helpers import create_fun_table
from tests.tables.conftest import wait_for
from wallet.selectors import check_books

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
    pytest.mark.skipif(
        not (settings.USING_POSTGRES and settings.REDIS_URL),
        reason="needs PostgreSQL and Redis (DATABASE_URL, REDIS_URL)",
    ),
]


def test_beat_and_worker_play_hands_from_ante_to_settlement(celery_processes: None) -> None:
    table = create_fun_table("Celery Rail", change_seconds=5, results_seconds=1, redeal_seconds=3)
    players = [make_player(f"celery{i}") for i in range(3)]
    for player in players:
        join_table(table_id=table.pk, user_id=player.pk, now=timezone.now())

    def keep_present() -> None:
        Seat.objects.filter(table=table).update(last_seen_at=timezone.now())

    def hand_in_change() -> bool:
        keep_present()
        return Hand.objects.filter(table=table, status=HandStatus.CHANGE).exists()

    wait_for(hand_in_change, 90, "beat to deal a hand")  # a loaded machine starts Celery slowly
    buy_draw(table_id=table.pk, user_id=players[0].pk, now=timezone.now())

    def two_settled() -> bool:
        keep_present()
        return Hand.objects.filter(table=table, status=HandStatus.SETTLED).count() >= 2

    wait_for(two_settled, 90, "two hands settled by the worker")
    first = Hand.objects.filter(table=table).order_by("number").first()
    assert first is not None
    assert first.gross_minor == 3 * 100 + 50
    assert Entry.objects.filter(hand=first, place__isnull=False).count() == 3
    assert check_books().ok
