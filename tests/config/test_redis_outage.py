"""A web process that cannot reach Redis keeps serving players (security audit L7, fault 7):
the REST calls a player makes during a hand (his state, a WiderPoker purchase, a Hold'em
action) answer as usual, the rate limits go on counting in the process, a push that fails
after the commit does not turn the committed action into a 500, and any other request that
fails on Redis answers 503 ``busy``. Redis is a closed port on this machine."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.test import APIClient

from config.infra.throttles import ApiThrottles, UserThrottle
from tables.holdem.services import replay, take_seat
from tables.models import Entry, HoldemHand, PlatformFault, PlatformFaultKind
from tables.realtime import bus
from tables.services import degradation
from tests.conftest import make_player
from tests.helpers import create_fun_table, deal_hand
from tests.tables.holdem_helpers import deal_now, holdem_table

UNREACHABLE = "redis://127.0.0.1:1/0"


@pytest.fixture
def redis_down(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process's cache, channel layer and pushes point at a Redis nobody listens on."""
    settings.REDIS_URL = UNREACHABLE
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": UNREACHABLE,
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [UNREACHABLE]}}
    }
    monkeypatch.setattr(bus, "_publisher", None)
    degradation.forget_recent()
    yield
    degradation.forget_recent()


def player_client(user: User) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


@pytest.mark.django_db(transaction=True)
def test_a_player_reads_his_state_and_buys_a_draw_while_redis_is_unreachable(redis_down: None) -> None:
    alice, bob = make_player("alice"), make_player("bob")
    table = create_fun_table()
    hand = deal_hand(table, [alice, bob], timezone.now())
    client = player_client(alice)
    state = client.get(f"/api/tables/{table.pk}/me/")
    assert state.status_code == 200, state.content
    bought = client.post(f"/api/tables/{table.pk}/draws/")
    assert bought.status_code == 200, bought.content
    assert bought.json()["entry"]["draws_bought"] == 2
    assert Entry.objects.get(hand=hand, user=alice).draws_bought == 2
    assert PlatformFault.objects.filter(kind=PlatformFaultKind.REDIS).exists()  # the clock will know


@pytest.mark.django_db(transaction=True)
def test_a_holdem_action_is_taken_while_redis_is_unreachable(redis_down: None) -> None:
    alice, bob = make_player("alice"), make_player("bob")
    table = holdem_table()
    now = timezone.now()
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    take_seat(table_id=table.pk, user_id=bob.pk, position=3, buy_in_minor=1_000, now=now)
    assert deal_now(table, now)
    hand = HoldemHand.objects.get(table=table)
    actor = alice if replay(hand).to_act == 0 else bob
    called = player_client(actor).post(f"/api/tables/{table.pk}/holdem/call/", {}, format="json")
    assert called.status_code == 200, called.content
    hand.refresh_from_db()
    assert [a["kind"] for a in hand.actions] == ["call"]


@pytest.mark.django_db(transaction=True)
def test_a_push_that_fails_after_the_commit_does_not_turn_the_action_into_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    alice, bob = make_player("alice"), make_player("bob")
    table = holdem_table()
    now = timezone.now()
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    take_seat(table_id=table.pk, user_id=bob.pk, position=3, buy_in_minor=1_000, now=now)
    assert deal_now(table, now)
    hand = HoldemHand.objects.get(table=table)
    actor = alice if replay(hand).to_act == 0 else bob

    def broken(*args: Any, **kwargs: Any) -> None:
        raise redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:1. Connection refused.")

    monkeypatch.setattr(bus, "publish_table_frame", broken)
    monkeypatch.setattr(bus, "publish_player", broken)
    called = player_client(actor).post(f"/api/tables/{table.pk}/holdem/call/", {}, format="json")
    assert called.status_code == 200, called.content
    hand.refresh_from_db()
    assert [a["kind"] for a in hand.actions] == ["call"]


@pytest.mark.django_db
def test_the_rate_limits_still_count_in_the_process_while_redis_is_unreachable(
    redis_down: None, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(UserThrottle, "THROTTLE_RATES", {"user": "3/min"})
    table = create_fun_table()
    client = player_client(alice)
    codes = [client.get(f"/api/tables/{table.pk}/").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    assert client.get(f"/api/tables/{table.pk}/").json()["code"] == "rate_limited"


@pytest.mark.django_db
def test_any_other_request_that_fails_on_redis_answers_503_busy(alice: User, monkeypatch: pytest.MonkeyPatch) -> None:
    degradation.forget_recent()

    def unreachable(self: Any, request: Any, view: Any) -> bool:
        raise redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:1. Connection refused.")

    monkeypatch.setattr(ApiThrottles, "allow_request", unreachable)
    response = player_client(alice).get("/api/tables/")
    assert response.status_code == 503
    assert response.json()["code"] == "busy" and response["Retry-After"] == "2"
    assert PlatformFault.objects.filter(kind=PlatformFaultKind.REDIS).exists()
