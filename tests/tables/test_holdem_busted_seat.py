"""A Hold'em player who loses his last chip (UX audit 2026-11-26, N16): he keeps his seat to
add chips while he is at the table, sitting in is refused until he does, and once his page
is closed (past the presence rules of tables/services/presence.py) the next deal frees his
seat instead of keeping "0.00 FUN · Sitting out · Disconnected" for good."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.utils import timezone

from tables.clock import advance_table
from tables.errors import BuyInOutOfRangeError
from tables.holdem.services import act_in_hand, replay, sit_in_holdem, take_seat
from tables.models import HoldemHand, HoldemHandStatus, Seat, SeatStatus, Table
from tables.services.seating import touch_presence
from tests.tables.holdem_helpers import assert_books, holdem_table, passive_kind

pytestmark = pytest.mark.django_db(transaction=True)


def advance(table: Table, now: datetime, present: list[User]) -> None:
    """The clock at ``now``, with only ``present`` showing signs of life."""
    for user in present:
        touch_presence(table_id=table.pk, user_id=user.pk, now=now)
    advance_table(table_id=table.pk, now=now)
    table.refresh_from_db()


def bust(table: Table, alice: User, others: list[User], now: datetime) -> datetime | None:
    """Alice, the short stack, goes all in every hand and the others call, until she has
    lost everything; returns the clock. None when the cards let her bust one of the others
    first (three all-in wins in a row, a few runs in a hundred): the scenario needs two
    players with chips left, so the caller deals it again at a new table."""
    users = {seat.position: seat.user for seat in Seat.objects.filter(table=table).select_related("user")}
    for _ in range(30):
        assert table.phase_deadline is not None
        now = max(now, table.phase_deadline) + timedelta(milliseconds=1)
        advance(table, now, [alice, *others])
        hand = HoldemHand.objects.filter(table=table, status=HoldemHandStatus.PLAYING).first()
        while hand is not None and hand.status == HoldemHandStatus.PLAYING:
            legal = replay(hand).legal_actions()
            user = users[legal.seat]
            kind = "all_in" if user == alice and "all_in" in legal.kinds else passive_kind(legal.kinds)
            act_in_hand(table_id=table.pk, user_id=user.pk, kind=kind, now=now)
            hand.refresh_from_db()
        table.refresh_from_db()
        if Seat.objects.filter(table=table, user__in=others, stack_minor=0).exists():
            return None
        if Seat.objects.get(table=table, user=alice).stack_minor == 0:
            return now
    raise AssertionError("alice never busted")


def busted_table(alice: User, bob: User, carol: User) -> tuple[Table, datetime]:
    """A table where Alice has just lost her last chip to Bob and Carol, who both have chips
    left; returns it with the clock."""
    for attempt in range(1, 6):
        table = holdem_table(f"Hold'em Rail {attempt}")
        now = timezone.now()
        take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=200, now=now)
        take_seat(table_id=table.pk, user_id=bob.pk, position=1, buy_in_minor=2_000, now=now)
        take_seat(table_id=table.pk, user_id=carol.pk, position=2, buy_in_minor=2_000, now=now)
        table.refresh_from_db()
        busted_at = bust(table, alice, [bob, carol], now)
        if busted_at is not None:
            return table, busted_at
    raise AssertionError("alice busted one of the others first in five deals")


def test_a_busted_player_keeps_his_seat_while_there_and_loses_it_once_gone(alice: User, bob: User, carol: User) -> None:
    table, now = busted_table(alice, bob, carol)
    seat = Seat.objects.get(table=table, user=alice)
    assert (seat.status, seat.status_reason, seat.position) == (SeatStatus.SITTING_OUT, "no chips", 0)
    with pytest.raises(BuyInOutOfRangeError):
        sit_in_holdem(table_id=table.pk, user_id=alice.pk, now=now)

    # Still at the table (her page is open): the next deal keeps her seat for her to add chips.
    assert table.phase_deadline is not None
    now = table.phase_deadline + timedelta(milliseconds=1)
    advance(table, now, [alice, bob, carol])
    assert Seat.objects.get(table=table, user=alice).position == 0

    # She closed her page: past the presence timeout, the next deal frees the seat.
    gone_at = now + timedelta(seconds=settings.PRESENCE_TIMEOUT_SECONDS + 1)
    for _ in range(200):
        table.refresh_from_db()
        now = max(gone_at, (table.phase_deadline or now) + timedelta(milliseconds=1))
        advance(table, now, [bob, carol])
        if Seat.objects.get(table=table, user=alice).status == SeatStatus.LEFT:
            break
        for hand in HoldemHand.objects.filter(table=table, status=HoldemHandStatus.PLAYING):
            while hand.status == HoldemHandStatus.PLAYING:
                legal = replay(hand).legal_actions()
                user = bob if Seat.objects.get(table=table, position=legal.seat).user_id == bob.pk else carol
                kind = passive_kind(legal.kinds)
                act_in_hand(table_id=table.pk, user_id=user.pk, kind=kind, now=now)
                hand.refresh_from_db()
    seat = Seat.objects.get(table=table, user=alice)
    assert (seat.status, seat.status_reason, seat.position) == (SeatStatus.LEFT, "no chips", None)
    assert Seat.objects.filter(table=table, status=SeatStatus.ACTIVE).count() == 2
    assert_books(table)
