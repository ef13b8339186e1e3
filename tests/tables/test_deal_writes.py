"""A deal writes only what a deal must (issue 23, item 2): the entries, the antes and their
ledger legs. The players' gaming and play sessions count the hand after the deal's commit
and its change frame (tables/widerpoker/services/sessions.py), or at settlement when that did not
happen; what reads them (free items, the session time limit, the reality check) and the
loss limit still hold. Outside the test transaction: the deal's commit is what is tested."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from handhistory.verification import verify_hand
from tables.models import Entry, GamingSession, Hand, PlayerClientSeed, Seat, SeatStatus, Table
from tables.realtime import bus
from tables.services.seating import touch_presence
from tables.widerpoker.services import lifecycle, sessions
from tests.conftest import make_player
from tests.helpers import create_fun_table, deal, seat_players, settle
from wallet import protection
from wallet.models import LedgerEntry, LimitKind, PlaySession, Transfer
from wallet.selectors import check_books

pytestmark = pytest.mark.django_db(transaction=True)

WRITE = re.compile(r'(?<!FOR )(?<!KEY )\b(?:INSERT INTO|UPDATE|DELETE FROM)\s+"?(\w+)"?', re.IGNORECASE)
"""The table each ``INSERT``, ``UPDATE`` or ``DELETE`` of a statement writes (row locks aside)."""

SESSION_TABLES = {GamingSession._meta.db_table, PlaySession._meta.db_table, PlayerClientSeed._meta.db_table}


def _next_deal(table: Table, players: list[Any], *, at_least: Any = None) -> Hand:
    """Settle the running hand, then deal the next one when the results phase ends (or at
    ``at_least``, if later), every player seen then."""
    settle(table)
    table.refresh_from_db()
    at = table.phase_deadline
    assert at is not None
    if at_least is not None and at_least > at:
        at = at_least
    for user in players:
        touch_presence(table_id=table.pk, user_id=user.pk, now=at)
    return deal(table, at)


def test_the_deal_writes_entries_antes_and_legs_and_the_sessions_follow_its_change_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = create_fun_table("Lean Deal")
    players = [make_player(f"lean-{i}") for i in range(5)]
    now = timezone.now().replace(microsecond=0)
    seat_players(table, players, now)
    # Joining made each player's client seed: the deal creates none.
    assert PlayerClientSeed.objects.filter(user__in=players).count() == 5
    events: list[str] = []
    statements: list[tuple[str, str]] = []
    real_count, real_publish = sessions.count_hand_sessions, bus.publish_table_frame

    def count(*, hand_id: int) -> bool:
        events.append("count")
        # The deal is committed: another connection would see its entries, and no session yet.
        assert Entry.objects.filter(hand_id=hand_id).count() == 5
        assert not GamingSession.objects.filter(table=table).exists()
        assert not PlaySession.objects.filter(user__in=players).exists()
        return real_count(hand_id=hand_id)

    def publish(table_id: int, frame: str, **kwargs: Any) -> None:
        events.append("frame")
        real_publish(table_id, frame, **kwargs)

    def record(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append(("count" if "count" in events else "deal", sql))
        return execute(sql, params, many, context)

    monkeypatch.setattr(lifecycle, "count_hand_sessions", count)
    monkeypatch.setattr(bus, "publish_table_frame", publish)
    with connection.execute_wrapper(record):
        hand = deal(table, now)

    assert events[0] == "frame" and events.count("count") == 1  # the change frame first
    written = {table_name for step, sql in statements if step == "deal" for table_name in WRITE.findall(sql)}
    assert {Hand._meta.db_table, "wallet_account"} <= written  # the hand, the ante's balances
    assert not written & SESSION_TABLES, written
    assert {table_name for step, sql in statements if step == "count" for table_name in WRITE.findall(sql)} & {
        GamingSession._meta.db_table,
        PlaySession._meta.db_table,
    }
    # Per entry: the entry, its ante leg (and the escrow's one leg), nothing else.
    ante = Transfer.objects.get(reference=f"ante:{hand.pk}")
    assert LedgerEntry.objects.filter(transfer=ante).count() == 5 + 1
    assert Entry.objects.filter(hand=hand).count() == 5
    hand.refresh_from_db()
    assert hand.sessions_counted
    # Counted once, as of the deal: what the free items, the session limit and the reality check read.
    assert sorted(GamingSession.objects.filter(table=table).values_list("hands_played", flat=True)) == [1] * 5
    assert set(PlaySession.objects.filter(user__in=players).values_list("started_at", flat=True)) == {now}
    summary = protection.get_session_summary(user_id=players[0].pk, now=now + timedelta(seconds=10))
    assert summary is not None and summary.started_at == now
    assert not sessions.count_hand_sessions(hand_id=hand.pk)  # a second count changes nothing
    assert sorted(GamingSession.objects.filter(table=table).values_list("hands_played", flat=True)) == [1] * 5


def test_a_session_time_limit_still_sits_a_player_out(now: Any) -> None:
    table = create_fun_table("Session Limit Rail")
    alice, bob, carol = (make_player(name) for name in ("sl-alice", "sl-bob", "sl-carol"))
    protection.set_limit(user_id=alice.pk, kind=LimitKind.SESSION, value=1, now=now)  # one minute
    seat_players(table, [alice, bob, carol], now)
    deal(table, now)
    hand = _next_deal(table, [alice, bob, carol], at_least=now + timedelta(minutes=1, seconds=5))
    assert sorted(Entry.objects.filter(hand=hand).values_list("user_id", flat=True)) == sorted([bob.pk, carol.pk])
    seat = Seat.objects.get(table=table, user=alice)
    assert (seat.status, seat.status_reason) == (SeatStatus.SITTING_OUT, "session limit")
    assert check_books().ok


def test_a_loss_limit_still_counts_every_ante_on_every_table(now: Any) -> None:
    first, second = create_fun_table("Loss Rail A"), create_fun_table("Loss Rail B")
    alice, bob, carol = (make_player(name) for name in ("ll-alice", "ll-bob", "ll-carol"))
    ante = first.widerpoker.ante_minor
    protection.set_limit(user_id=alice.pk, kind=LimitKind.LOSS, currency="FUN", value=2 * ante - 1, now=now)
    seat_players(first, [alice, bob], now)
    seat_players(second, [alice, carol, bob], now)
    dealt = deal(first, now)
    assert Entry.objects.filter(hand=dealt, user=alice).exists()  # one ante: within the limit
    hand = deal(second, now)  # a second ante at once would pass it
    assert not Entry.objects.filter(hand=hand, user=alice).exists()
    seat = Seat.objects.get(table=second, user=alice)
    assert (seat.status, seat.status_reason) == (SeatStatus.SITTING_OUT, "loss limit")
    assert check_books().ok


def test_first_and_steady_hands_settle_balanced_and_a_missed_count_is_made_at_settlement(
    monkeypatch: pytest.MonkeyPatch, now: Any
) -> None:
    table = create_fun_table("Books Rail")
    players = [make_player(f"books-{i}") for i in range(4)]
    seat_players(table, players, now)
    first = deal(table, now)
    assert first.number == 1
    second = _next_deal(table, players)  # the first hand settles; the next is dealt
    first.refresh_from_db()
    assert first.status == "settled" and verify_hand(hand_id=first.pk).ok
    assert check_books().ok
    assert sorted(GamingSession.objects.filter(table=table).values_list("hands_played", flat=True)) == [2] * 4

    def fail(*, hand_id: int) -> bool:
        raise RuntimeError("the process died after the deal's commit")

    monkeypatch.setattr(lifecycle, "count_hand_sessions", fail)
    third = _next_deal(table, players)  # dealt; the sessions are not counted
    assert second.pk != third.pk
    third.refresh_from_db()
    assert not third.sessions_counted
    assert sorted(GamingSession.objects.filter(table=table).values_list("hands_played", flat=True)) == [2] * 4
    settled = settle(table)  # settlement counts the hand first, once
    assert settled.pk == third.pk and settled.status == "settled" and settled.sessions_counted
    assert sorted(GamingSession.objects.filter(table=table).values_list("hands_played", flat=True)) == [3] * 4
    assert verify_hand(hand_id=settled.pk).ok
    assert check_books().ok
