"""A player's first visit to the commitments page draws his client seed (security audit
2026-11-26, L2): the page answered 500 on PostgreSQL, because the set-based insert made a
temporary table ``ON COMMIT DROP`` outside a transaction (tables/bulk.py)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone

from tables.bulk import insert_missing_rows
from tables.models import PlayerClientSeed
from tests.helpers import logged_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_player_with_no_client_seed_yet_opens_the_commitments_page(alice: User) -> None:
    assert not PlayerClientSeed.objects.filter(user=alice).exists()
    response = logged_in(alice).get("/history/commitments/")
    assert response.status_code == 200
    seed = PlayerClientSeed.objects.get(user=alice).seed
    assert seed in response.content.decode()


def test_insert_missing_rows_works_in_autocommit(alice: User, bob: User) -> None:
    assert connection.get_autocommit()
    now = timezone.now()
    PlayerClientSeed.objects.create(user=alice, seed="kept", updated_at=now)
    insert_missing_rows(
        PlayerClientSeed._meta.db_table,
        {"user_id": [alice.pk, bob.pk], "seed": ["replaced?", "new"], "updated_at": [now, now]},
    )
    assert dict(PlayerClientSeed.objects.values_list("user__username", "seed")) == {"alice": "kept", "bob": "new"}
