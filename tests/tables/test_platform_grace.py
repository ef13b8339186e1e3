"""Platform grace (security audit L7, fault 7): a person is not timed out for a Hold'em turn
the platform could not take. When a process saw Redis unreachable during the turn, or the
clock finds itself late, the turn gets ``PLATFORM_GRACE_SECONDS`` more instead of seed 003's
timeout rule, and again while the faults go on, but never more than
``PLATFORM_GRACE_MAX_SECONDS`` in all."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from tables.clock import advance_due_tables
from tables.holdem.records import turn_deadline
from tables.holdem.services import act_in_hand, replay, take_seat
from tables.models import HoldemHand, PlatformFault, PlatformFaultKind, Table
from tables.services import degradation
from tests.tables.holdem_helpers import assert_books, holdem_table, tick

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_faults(settings: Any) -> Iterator[None]:
    settings.PLATFORM_GRACE_SECONDS = 15
    settings.PLATFORM_GRACE_MAX_SECONDS = 60
    settings.CLOCK_LATE_SECONDS = 5
    degradation.forget_recent()
    yield
    degradation.forget_recent()


def dealt(alice: User, bob: User) -> tuple[Table, HoldemHand, datetime]:
    """A heads-up hand dealt at a fun Hold'em table; returns it and the first turn's deadline."""
    table = holdem_table()
    now = timezone.now()
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    take_seat(table_id=table.pk, user_id=bob.pk, position=3, buy_in_minor=1_000, now=now)
    tick(table, now)
    hand = HoldemHand.objects.get(table=table)
    assert table.phase_deadline == turn_deadline(hand, hand.config)
    return table, hand, table.phase_deadline


def test_a_turn_that_runs_out_after_redis_was_unreachable_gets_more_time(alice: User, bob: User) -> None:
    table, hand, deadline = dealt(alice, bob)
    degradation.record_degradation(kind=degradation.REDIS, now=deadline - timedelta(seconds=12))
    tick(table, deadline)
    hand.refresh_from_db()
    assert hand.actions == []  # not timed out
    assert table.phase_deadline == deadline + timedelta(seconds=15)
    assert turn_deadline(hand, hand.config) == table.phase_deadline  # what the screens and act_in_hand read
    actor = alice if replay(hand).to_act == 0 else bob
    act_in_hand(table_id=table.pk, user_id=actor.pk, kind="call", now=deadline + timedelta(seconds=5))
    hand.refresh_from_db()
    assert [a["kind"] for a in hand.actions] == ["call"] and "timeout" not in hand.actions[0]
    assert hand.turn_grace_until is None  # the next turn starts with none
    assert_books(table)


def test_a_fault_before_the_turn_started_gives_no_grace(alice: User, bob: User) -> None:
    table, hand, deadline = dealt(alice, bob)
    assert hand.turn_started_at is not None
    degradation.record_degradation(kind=degradation.REDIS, now=hand.turn_started_at - timedelta(seconds=1))
    tick(table, deadline)
    hand.refresh_from_db()
    assert hand.actions[0]["timeout"] is True


def test_grace_goes_on_with_the_faults_but_never_past_its_maximum(alice: User, bob: User) -> None:
    table, hand, deadline = dealt(alice, bob)
    moments = []
    for _ in range(10):
        assert table.phase_deadline is not None
        degradation.forget_recent()
        degradation.record_degradation(kind=degradation.REDIS, now=table.phase_deadline - timedelta(seconds=1))
        tick(table, table.phase_deadline)
        hand.refresh_from_db()
        if hand.actions:
            break
        moments.append(table.phase_deadline - deadline)
    assert moments == [timedelta(seconds=s) for s in (15, 30, 45, 60)]
    assert hand.actions[0]["timeout"] is True  # at the maximum, seed 003's rule applies
    assert_books(table)


def test_a_late_clock_gives_the_turn_more_time(alice: User, bob: User) -> None:
    table, hand, deadline = dealt(alice, bob)
    late = deadline + timedelta(seconds=10)
    advance_due_tables(now=late)
    assert PlatformFault.objects.filter(kind=PlatformFaultKind.CLOCK_LATE, seen_at=late).exists()
    hand.refresh_from_db()
    table.refresh_from_db()
    assert hand.actions == []
    assert table.phase_deadline == late + timedelta(seconds=15)


def test_a_clock_on_time_applies_the_timeout_rule(alice: User, bob: User) -> None:
    _, hand, deadline = dealt(alice, bob)
    advance_due_tables(now=deadline + timedelta(seconds=1))
    hand.refresh_from_db()
    assert hand.actions[0]["timeout"] is True
    assert not PlatformFault.objects.exists()
