"""A Hold'em action after the player's turn deadline is refused with ``turn_over`` (issue 19;
audit 2026-11-26 L3: a call 350 ms after ``act_deadline`` was accepted, and with the clock
down the player to act had unlimited time). The deadline is the turn's: 10 s to act, then
the table's time bank, plus the reconnection time once (seed 003); the clock's timeout
rule then plays as usual. Over REST and the socket, as players send them."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.utils import timezone

from tables.clock import advance_table
from tables.errors import TurnOverError
from tables.holdem.records import replay, turn_deadline
from tables.holdem.services import act_in_hand, take_seat
from tables.models import HoldemHand, Seat, Table
from tests.conftest import make_player
from tests.helpers import logged_in
from tests.tables.holdem_helpers import assert_books, deal_now, holdem_table
from tests.tables.test_consumers import open_socket, receive

LATE = timedelta(milliseconds=350)


def heads_up(alice: User, bob: User, start: datetime, **config: Any) -> tuple[Table, HoldemHand, User]:
    """Alice and Bob dealt a hand at ``start``; returns the table, the hand, the player to act."""
    table = holdem_table(**config)
    for user, position in ((alice, 0), (bob, 1)):
        take_seat(table_id=table.pk, user_id=user.pk, position=position, buy_in_minor=1_000, now=start)
    assert deal_now(table, start)
    hand = HoldemHand.objects.get(table=table)
    return table, hand, alice if replay(hand).to_act == 0 else bob


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("fresh_throttle_counters")
def test_a_call_350_ms_after_the_deadline_is_refused_over_rest_and_the_clock_plays_the_turn(
    alice: User, bob: User
) -> None:
    start = timezone.now() - timedelta(seconds=30) - LATE  # the deadline passed 350 ms ago
    table, hand, actor = heads_up(alice, bob, start)
    assert turn_deadline(hand, hand.config) == start + timedelta(seconds=30)
    refused = logged_in(actor).post(f"/api/tables/{table.pk}/holdem/call/", {}, content_type="application/json")
    assert refused.status_code == 409 and refused.json()["code"] == "turn_over", refused.json()
    hand.refresh_from_db()
    assert hand.actions == []
    Seat.objects.filter(table=table).update(last_seen_at=timezone.now(), ws_connections=1)
    assert advance_table(table_id=table.pk, now=timezone.now())  # the clock's tick, late
    hand.refresh_from_db()
    actor_seat = 0 if actor == alice else 1
    assert (hand.actions[0]["seat"], hand.actions[0]["timeout"]) == (actor_seat, True)
    assert_books(table)


@pytest.mark.django_db
def test_the_deadline_is_the_turn_with_the_tables_time_bank(alice: User, bob: User) -> None:
    start = timezone.now()
    table, hand, actor = heads_up(alice, bob, start, time_bank_seconds=60)
    deadline = start + timedelta(seconds=10 + 60)
    with pytest.raises(TurnOverError) as refused:
        act_in_hand(table_id=table.pk, user_id=actor.pk, kind="call", now=deadline)
    assert refused.value.code == "turn_over"
    act_in_hand(table_id=table.pk, user_id=actor.pk, kind="call", now=deadline - timedelta(milliseconds=1))
    hand.refresh_from_db()
    assert hand.actions[0]["kind"] == "call" and "timeout" not in hand.actions[0]


@pytest.mark.django_db
def test_a_player_who_came_back_in_his_turn_has_the_reconnection_time(alice: User, bob: User) -> None:
    """Seed 003: 20 s more once he reconnects during his turn, granted by the clock at the
    deadline; his action before the clock's tick counts them already."""
    start = timezone.now()
    table, hand, actor = heads_up(alice, bob, start)
    Seat.objects.filter(table=table, user=actor).update(
        socket_closed_at=start + timedelta(seconds=5), last_seen_at=start + timedelta(seconds=8), ws_connections=1
    )
    with pytest.raises(TurnOverError):
        act_in_hand(table_id=table.pk, user_id=actor.pk, kind="call", now=start + timedelta(seconds=50))
    act_in_hand(table_id=table.pk, user_id=actor.pk, kind="call", now=start + timedelta(seconds=40))
    hand.refresh_from_db()
    assert hand.actions[0]["kind"] == "call"


@pytest.mark.django_db
def test_out_of_turn_stays_not_your_turn_after_the_deadline(alice: User, bob: User) -> None:
    start = timezone.now()
    table, _, actor = heads_up(alice, bob, start)
    other = bob if actor == alice else alice
    from tables.errors import HoldemActionError

    with pytest.raises(HoldemActionError) as refused:
        act_in_hand(table_id=table.pk, user_id=other.pk, kind="call", now=start + timedelta(seconds=31))
    assert refused.value.code == "not_your_turn"


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_late_action_on_the_socket_gets_a_turn_over_error_frame() -> None:
    alice = await sync_to_async(make_player)("alice")
    bob = await sync_to_async(make_player)("bob")
    start = timezone.now() - timedelta(seconds=30) - LATE
    table, hand, actor = await sync_to_async(heads_up)(alice, bob, start)
    socket = await open_socket(actor, table.pk)
    await receive(socket, "holdem_private")
    await socket.send_to(text_data=json.dumps({"type": "call", "ref": 7}))
    error = await receive(socket, "error")
    assert error["code"] == "turn_over"
    await sync_to_async(hand.refresh_from_db)()
    assert hand.actions == []
    await socket.disconnect()
