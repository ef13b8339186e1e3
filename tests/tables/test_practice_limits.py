"""Practice games within limits (security audit M2, L4): running games are capped per player
and on the site, a player who may not play cannot start one, and the clock serves the
tables with money on them before the bots' practice tables. Through the REST door and the
setup page, logged in as a player."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from rest_framework.test import APIClient

from tables import clock
from tables.holdem.practice.services import start_practice_game
from tables.holdem.practice.setup import PracticeSetup
from tables.models import PracticeGame, PracticeStatus, Table
from tests.conftest import make_player, postgres_only
from tests.helpers import logged_in
from tests.tables.holdem_helpers import holdem_table
from wallet import protection

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_throttle_counters")]

BOTS_ONLY = {"players": 3, "max_hands": 5, "max_minutes": 5}


def player_client(user: User) -> APIClient:
    """An API client logged in with the player's session, as the site's pages call the API."""
    client = APIClient()
    client.force_login(user)
    return client


def start(client: APIClient) -> Any:
    return client.post("/api/practice/", BOTS_ONLY, format="json")


def test_a_player_runs_at_most_the_practice_games_his_account_allows(alice: User, settings: Any) -> None:
    settings.PRACTICE_GAMES_PER_PLAYER = 2
    client = player_client(alice)
    first, second = start(client), start(client)
    assert (first.status_code, second.status_code) == (201, 201)
    third = start(client)
    assert third.status_code == 409
    assert third.json()["code"] == "practice_limit" and third.json()["extra"] == {"limit": 2}
    assert PracticeGame.objects.filter(owner=alice).count() == 2
    # Stopping one frees a place.
    assert client.post(f"/api/practice/{first.json()['game_id']}/stop/").status_code == 200
    assert start(client).status_code == 201
    assert PracticeGame.objects.filter(owner=alice, status=PracticeStatus.RUNNING).count() == 2


def test_the_site_runs_at_most_the_practice_games_it_takes(alice: User, bob: User, carol: User, settings: Any) -> None:
    settings.PRACTICE_GAMES_PER_PLAYER = 2
    settings.PRACTICE_GAMES_MAX = 3
    assert [start(player_client(user)).status_code for user in (alice, alice, bob)] == [201, 201, 201]
    refused = start(player_client(carol))
    assert refused.status_code == 503
    assert refused.json()["code"] == "practice_full" and refused.json()["extra"] == {"limit": 3}
    assert PracticeGame.objects.count() == 3


def test_the_setup_page_shows_the_limit_with_its_code(alice: User, settings: Any) -> None:
    settings.PRACTICE_GAMES_PER_PLAYER = 1
    assert start(player_client(alice)).status_code == 201
    page = logged_in(alice).post(
        "/practice/",
        {
            "nickname": "Ada", "players": 3, "max_hands": 5, "max_minutes": 5, "max_raises": 3,
            "currency_label": "chips", "action_seconds": 30, "betting": "pot-limit", "stakes": "standard",
            "felt": "green",
        },
    )  # fmt: skip
    assert page.status_code == 200 and "[practice_limit]" in page.content.decode()
    assert PracticeGame.objects.filter(owner=alice).count() == 1


def test_a_self_excluded_player_cannot_start_a_practice_game(alice: User, now: datetime) -> None:
    protection.take_break(user_id=alice.pk, kind="self_exclusion", days=182, now=now)
    refused = start(player_client(alice))
    assert refused.status_code == 403 and refused.json()["code"] == "self_excluded"
    page = logged_in(alice).post(
        "/practice/",
        {
            "nickname": "Ada", "players": 3, "max_hands": 5, "max_minutes": 5, "max_raises": 3,
            "currency_label": "chips", "action_seconds": 30, "betting": "pot-limit", "stakes": "standard",
            "felt": "green",
        },
    )  # fmt: skip
    assert page.status_code == 200 and "[self_excluded]" in page.content.decode()
    assert not PracticeGame.objects.exists()


@postgres_only()
@pytest.mark.django_db(transaction=True)
def test_concurrent_starts_of_one_player_stay_within_his_limit(settings: Any) -> None:
    settings.PRACTICE_GAMES_PER_PLAYER = 1
    alice = make_player("alice")
    barrier = threading.Barrier(4)
    codes: list[int] = []

    def one() -> None:
        try:
            client = player_client(alice)
            barrier.wait()
            codes.append(start(client).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(codes) == [201, 409, 409, 409]
    assert PracticeGame.objects.filter(owner=alice).count() == 1


# --- the clock ------------------------------------------------------------------------------


def _due_tables(now: datetime) -> tuple[Table, Table, list[Table]]:
    """A cash and a fun Hold'em table due at ``now - 1 s``, and three practice games'
    tables due earlier (``now - 10 s``)."""
    practice = [
        start_practice_game(user_id=None, setup=replace(PracticeSetup(), players=2), now=now).table for _ in range(3)
    ]
    Table.objects.filter(pk__in=[t.pk for t in practice]).update(phase_deadline=now - timedelta(seconds=10))
    cash = holdem_table("Cash Rail", mode="cash", currency="EUR")
    fun = holdem_table("Fun Rail")
    Table.objects.filter(pk__in=[cash.pk, fun.pk]).update(phase_deadline=now - timedelta(seconds=1))
    return cash, fun, practice


def recorder(order: list[int]) -> Callable[..., bool]:
    """A stand-in for ``advance_table`` that notes which tables the clock steps, in order."""

    def advance_table(*, table_id: int, now: datetime) -> bool:
        order.append(table_id)
        return True

    return advance_table


def test_the_clock_advances_cash_tables_first_and_practice_tables_last(
    db: Any, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    cash, fun, practice = _due_tables(now)
    order: list[int] = []
    monkeypatch.setattr(clock, "advance_table", recorder(order))
    clock.advance_due_tables(now=now, limit=2)
    assert order == [cash.pk, fun.pk]  # the practice tables, due earlier, wait for the next tick
    order.clear()
    clock.advance_due_tables(now=now)
    assert order == [cash.pk, fun.pk, *[t.pk for t in practice]]


def test_practice_tables_get_at_most_their_time_budget_of_a_tick(
    db: Any, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    cash, fun, practice = _due_tables(now)
    order: list[int] = []
    monkeypatch.setattr(clock, "advance_table", recorder(order))
    seconds = iter(range(100))  # each look at the timer: one more second spent
    clock.advance_due_tables(now=now, practice_budget_seconds=1.5, timer=lambda: float(next(seconds)))
    assert order == [cash.pk, fun.pk, practice[0].pk, practice[1].pk]
