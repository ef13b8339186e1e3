"""The Hold'em turn clock on the platform (seed 003; tables/engine/holdem/clocks.py):
10 s + the time bank, the timeout rule, disconnection protection, duplicated ticks."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from tables.clock import advance_table
from tables.holdem.records import replay
from tables.holdem.services import act_in_hand, take_seat
from tables.models import HoldemHand, Seat, Table
from tests.tables.holdem_helpers import assert_books, deal_now, holdem_table

pytestmark = pytest.mark.django_db


def heads_up(alice: User, bob: User) -> tuple[Table, HoldemHand, datetime]:
    table = holdem_table()
    now = timezone.now()
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    take_seat(table_id=table.pk, user_id=bob.pk, position=1, buy_in_minor=1_000, now=now)
    assert deal_now(table, now)
    return table, HoldemHand.objects.get(table=table), now


def user_at(seat: int, alice: User, bob: User) -> User:
    return alice if seat == 0 else bob


def test_a_player_who_reconnects_in_his_turn_gets_twenty_seconds_more(alice: User, bob: User) -> None:
    table, hand, start = heads_up(alice, bob)
    seat_no = replay(hand).to_act
    Seat.objects.filter(table=table, position=seat_no).update(
        socket_closed_at=start + timedelta(seconds=5), last_seen_at=start + timedelta(seconds=8), ws_connections=1
    )
    assert advance_table(table_id=table.pk, now=start + timedelta(seconds=30))
    hand.refresh_from_db()
    table.refresh_from_db()
    assert hand.actions == [] and hand.turn_extended
    assert table.phase_deadline == start + timedelta(seconds=50)
    Seat.objects.filter(table=table, position=seat_no).update(last_seen_at=start + timedelta(seconds=45))
    assert not advance_table(table_id=table.pk, now=start + timedelta(seconds=49))
    assert advance_table(table_id=table.pk, now=start + timedelta(seconds=50))
    hand.refresh_from_db()
    assert hand.actions[0]["timeout"] is True and hand.actions[0]["seat"] == seat_no
    assert_books(table)


def test_a_disconnected_player_goes_all_in_even_when_he_could_check(alice: User, bob: User) -> None:
    table, hand, start = heads_up(alice, bob)
    small = replay(hand).to_act
    assert small is not None
    act_in_hand(table_id=table.pk, user_id=user_at(small, alice, bob).pk, kind="call", now=start)
    big = 1 - small
    Seat.objects.filter(table=table, position=big).update(last_seen_at=start - timedelta(minutes=5), ws_connections=0)
    table.refresh_from_db()
    assert table.phase_deadline is not None
    advance_table(table_id=table.pk, now=table.phase_deadline)
    hand.refresh_from_db()
    played = [entry for entry in hand.actions if not entry.get("auto")]  # the run-out's shows are the house's
    assert played[-1] == {**played[-1], "kind": "timeout_all_in", "seat": big, "timeout": True}
    assert_books(table)


def test_a_connected_player_out_of_time_checks_when_checking_is_free(alice: User, bob: User) -> None:
    table, hand, start = heads_up(alice, bob)
    small = replay(hand).to_act
    assert small is not None
    act_in_hand(table_id=table.pk, user_id=user_at(small, alice, bob).pk, kind="call", now=start)
    table.refresh_from_db()
    deadline = table.phase_deadline
    assert deadline is not None
    Seat.objects.filter(table=table).update(last_seen_at=deadline, ws_connections=1)
    advance_table(table_id=table.pk, now=deadline)
    hand.refresh_from_db()
    assert hand.actions[-1]["kind"] == "check" and hand.actions[-1]["timeout"] is True


def test_a_duplicated_tick_plays_the_timeout_once(alice: User, bob: User) -> None:
    table, hand, start = heads_up(alice, bob)
    deadline = start + timedelta(seconds=30)
    Seat.objects.filter(table=table).update(last_seen_at=deadline, ws_connections=1)
    assert advance_table(table_id=table.pk, now=deadline)
    assert not advance_table(table_id=table.pk, now=deadline)
    hand.refresh_from_db()
    assert len(hand.actions) == 1
    assert_books(table)


def test_a_stale_action_after_the_timeout_is_refused(alice: User, bob: User) -> None:
    table, hand, start = heads_up(alice, bob)
    actor = replay(hand).to_act
    assert actor is not None
    deadline = start + timedelta(seconds=30)
    Seat.objects.filter(table=table).update(last_seen_at=deadline, ws_connections=1)
    advance_table(table_id=table.pk, now=deadline)
    from tables.errors import HoldemActionError, NoHandError

    with pytest.raises((HoldemActionError, NoHandError)):
        act_in_hand(table_id=table.pk, user_id=user_at(actor, alice, bob).pk, kind="call", now=deadline)
