"""Production path for Hold'em: a real Celery worker and beat play house-bot hands on
PostgreSQL + Redis (bots act from the clock; the books stay exact; every PHH replays)."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.utils import timezone

from tables.holdem.services import sit_out_holdem, take_seat
from tables.models import HoldemHand, HoldemHandStatus, Seat
from tests.conftest import make_player
from tests.tables.conftest import wait_for
from tests.tables.holdem_helpers import assert_books, assert_phh_replays, holdem_table

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
    pytest.mark.skipif(
        not (settings.USING_POSTGRES and settings.REDIS_URL),
        reason="needs PostgreSQL and Redis (DATABASE_URL, REDIS_URL)",
    ),
]


def test_beat_and_worker_play_house_bot_hands(celery_processes: None) -> None:
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
