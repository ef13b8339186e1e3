"""Settlement in one pass of set-based writes (issue 23, item 3): the entries read by one
statement, the presence rule evaluated by the database, every entry's results written by
one binary COPY and one UPDATE. Through the clock (``advance_table``), committed
(``transaction=True``): what is stored is what the verifier recomputes, ties share their
places, the minimum prize holds, the royal jackpot's winner is paid in the same pass, and
a settlement that fails in its writes leaves nothing behind but the refund."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models import Sum
from django.utils import timezone

from handhistory.verification import verify_hand
from jackpots import services as jackpot_services
from jackpots.models import Jackpot, JackpotKind
from tables.bulk import update_rows_by_copy
from tables.clock import advance_due_tables
from tables.engine.widerpoker import MAX_STRENGTH, board_grid, combination_index, deal_board, spin_jackpot_draw
from tables.models import Entry, Hand, HandStatus, Seat, SeatStatus
from tables.services.seating import connected_user_ids, connected_users
from tables.widerpoker.records import board_from_json
from tables.widerpoker.services.play import buy_draw, set_hold
from tests.conftest import make_player, postgres_only
from tests.helpers import create_fun_table, deal, seat_players, settle
from wallet.lookups import binary_copy_rows, read_int_columns
from wallet.models import Account, Currency, Transfer
from wallet.selectors import check_books, get_balance_minor

pytestmark = [postgres_only(), pytest.mark.django_db(transaction=True)]


def fun(user: User) -> int:
    return get_balance_minor(user_id=user.pk, currency=Currency.FUN)


def players(prefix: str, count: int) -> list[User]:
    return [make_player(f"{prefix}{i}") for i in range(count)]


def assert_verified(hand: Hand) -> None:
    report = verify_hand(hand_id=hand.pk)
    assert report.ok, [str(m) for m in report.mismatches]


def test_every_result_written_in_one_pass_is_what_the_verifier_recomputes(now: datetime) -> None:
    table = create_fun_table("One Pass")
    people = players("op", 12)
    seat_players(table, people, now)
    hand = deal(table, now)
    for i, player in enumerate(people[:6]):  # 1 to 3 draws bought, some holds sent
        for _ in range(1 + i % 3):
            buy_draw(table_id=table.pk, user_id=player.pk, now=now + timedelta(seconds=1))
        if i % 2:
            set_hold(table_id=table.pk, user_id=player.pk, hold=[True, False, i % 4 == 1, False, True], now=now)
    # Four players' pages closed long ago: they keep their cards (or their last hold).
    gone = [p.pk for p in people[8:]]
    Seat.objects.filter(table=table, user_id__in=gone).update(ws_connections=0, last_seen_at=now - timedelta(hours=1))
    Seat.objects.filter(table=table).exclude(user_id__in=gone).update(
        ws_connections=1, last_seen_at=now + timedelta(seconds=25)
    )
    hand = settle(table)
    assert hand.status == HandStatus.SETTLED
    entries = list(Entry.objects.filter(hand=hand).order_by("join_order"))
    assert {e.user_id: e.connected_at_end for e in entries} == {p.pk: p.pk not in gone for p in people}
    assert all(isinstance(e.draw_strengths, list) and len(e.draw_strengths) == 5 for e in entries)
    assert all(e.strength == (e.draw_strengths or [])[e.best_draw or 0] for e in entries)
    assert_verified(hand)  # holds, five draws, places, prizes, rake, pool: recomputed from the seeds
    prizes = sum(e.prize_minor for e in entries)
    assert prizes + hand.breakage_minor == hand.pool_minor
    assert sum(fun(p) for p in people) + hand.rake_minor + hand.breakage_minor == 12 * fun_grant()
    assert Account.objects.get(key=f"escrow:hand:{hand.pk}").balance_minor == 0
    assert check_books().ok


def fun_grant() -> int:
    from django.conf import settings

    return int(settings.FUN_SIGNUP_GRANT_MINOR)


def chosen_combinations(board_json: Any, taken: set[int]) -> tuple[list[int], list[int]]:
    """Two combinations whose five cards (all held) tie at the highest strength two unused
    combinations share, and two more of lower, different strengths."""
    strengths = board_grid(board_from_json(board_json)).strengths.reshape(-1).astype(np.int64)
    free = np.array([c for c in range(strengths.size) if c not in taken], dtype=np.int64)
    values, counts = np.unique(strengths[free], return_counts=True)
    top = int(values[counts >= 2].max())
    tied = free[strengths[free] == top][:2].tolist()
    lower = [int(v) for v in values[values < top][-2:]]
    others = [int(free[strengths[free] == v][0]) for v in reversed(lower)]
    return tied, others


def test_tied_final_hands_share_their_places_and_the_minimum_prize_holds(monkeypatch: Any, now: datetime) -> None:
    # Everybody paid, a minimum prize: the allocation's two rules on the one-pass path.
    table = create_fun_table("Ties", paid_fraction_bps=10_000, min_prize_minor=50)
    people = players("tie", 4)
    seat_players(table, people, now)
    hand = deal(table, now)
    taken = set(Entry.objects.filter(hand=hand).values_list("combination", flat=True))
    tied, others = chosen_combinations(hand.board, taken)
    # Chosen combinations (the test's hand): the first two players tie, all hold every card.
    for player, combination in zip(people, tied + others, strict=True):
        Entry.objects.filter(hand=hand, user=player).update(combination=combination, hold_mask=31)
    hand = settle(table)
    entries = {e.user_id: e for e in Entry.objects.filter(hand=hand)}
    first, second, third, fourth = (entries[p.pk] for p in people)
    assert first.strength == second.strength
    assert (first.place, second.place) == (1, 1)
    assert third.place == 3 and fourth.place == 4
    assert first.prize_minor == second.prize_minor  # the split's odd cent is carried, not given
    assert all(e.prize_minor >= 50 for e in entries.values() if e.prize_minor)
    assert sum(e.prize_minor for e in entries.values()) + hand.breakage_minor == hand.pool_minor
    assert Entry.objects.filter(hand=hand).aggregate(total=Sum("prize_minor"))["total"] > 0
    for player in people:
        assert fun(player) == fun_grant() - 100 + entries[player.pk].prize_minor
    assert check_books().ok


def test_a_royal_flush_is_paid_with_the_prizes_in_the_one_pass(croupier: User, monkeypatch: Any, now: datetime) -> None:
    table = create_fun_table(name="Royal Pass", rake_bps=500)
    royal = Jackpot.objects.create(
        name="Royal FUN", kind=JackpotKind.ROYAL, currency="FUN", contribution_bps=100, reset_minor=500
    )
    table.jackpots.set([royal])
    jackpot_services.fund_jackpot(
        jackpot_id=royal.pk, amount_minor=20_000, reference="seed-royal-pass", staff_user_id=croupier.pk
    )
    seed = next(
        s
        for s in (i.to_bytes(32, "big") for i in range(100_000))
        if spin_jackpot_draw(s, {}) is None and bool((board_grid(deal_board(s)).strengths == MAX_STRENGTH).any())
    )
    monkeypatch.setattr("tables.widerpoker.services.deal.derive_hand_seed", lambda *args: seed)
    people = players("royal", 3)
    seat_players(table, people, now)
    hand = deal(table, now)
    positions = tuple(int(p) for p in np.argwhere(board_grid(deal_board(seed)).strengths == MAX_STRENGTH)[0])
    Entry.objects.filter(hand=hand, user=people[0]).update(combination=combination_index(positions), hold_mask=31)
    hand = settle(table)
    contribution = hand.jackpot_results["contributions"][royal.feed_key]
    winner = Entry.objects.get(hand=hand, user=people[0])
    assert winner.jackpot_minor == 20_000 + contribution
    assert winner.place == 1
    assert fun(people[0]) == fun_grant() - 100 + winner.prize_minor + winner.jackpot_minor
    assert Entry.objects.filter(hand=hand).exclude(user=people[0]).aggregate(j=Sum("jackpot_minor"))["j"] == 0
    assert Account.objects.get(key=royal.account_key).balance_minor == 500
    assert check_books().ok


def test_a_settlement_failing_in_its_results_write_is_refunded_whole(monkeypatch: Any, now: datetime) -> None:
    """The results' COPY and UPDATE come after the ledger transfer: a failure there rolls the
    whole settlement back (the transfer too) and the clock cancels and refunds the hand."""
    table = create_fun_table("Failing Pass")
    people = players("fail", 3)
    seat_players(table, people, now)
    hand = deal(table, now)
    buy_draw(table_id=table.pk, user_id=people[0].pk, now=now)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the disk is full")

    monkeypatch.setattr("tables.widerpoker.services.settlement.update_rows_by_copy", broken)
    advance_due_tables(now=hand.change_deadline + timedelta(seconds=1))
    hand.refresh_from_db()
    assert hand.status == HandStatus.CANCELLED
    assert not Transfer.objects.filter(reference=f"settle:{hand.pk}").exists()
    assert Transfer.objects.filter(reference=f"refund:{hand.pk}").exists()
    assert not Entry.objects.filter(hand=hand, place__isnull=False).exists()
    assert [fun(p) for p in people] == [fun_grant()] * 3
    assert check_books().ok


def test_the_database_evaluates_the_presence_rule_as_python_does(now: datetime) -> None:
    from django.conf import settings

    table = create_fun_table("Presence Rule")
    people = players("pr", 8)
    seat_players(table, people, now)
    timeout = timedelta(seconds=settings.PRESENCE_TIMEOUT_SECONDS)
    grace = timedelta(seconds=settings.PRESENCE_RECONNECT_GRACE_SECONDS)
    cases = [
        {"ws_connections": 1, "last_seen_at": now, "socket_closed_at": None},  # socket open, fresh
        {"ws_connections": 2, "last_seen_at": now - 2 * timeout, "socket_closed_at": None},  # open, stale
        {"ws_connections": 0, "last_seen_at": now - 2 * timeout, "socket_closed_at": now - grace / 2},  # reload
        {"ws_connections": 0, "last_seen_at": now - 4 * grace, "socket_closed_at": now - 2 * grace},  # closed page
        {"ws_connections": 0, "last_seen_at": now, "socket_closed_at": now - timeout / 2},  # REST after a socket
        {"ws_connections": 0, "last_seen_at": now - 2 * timeout, "socket_closed_at": None},  # gone quiet
        {"ws_connections": 0, "last_seen_at": now, "socket_closed_at": None},  # REST heartbeat
        {"ws_connections": 1, "last_seen_at": now, "socket_closed_at": None, "status": SeatStatus.LEFT},
    ]
    for player, fields in zip(people, cases, strict=True):
        Seat.objects.filter(table=table, user=player).update(**fields)
    seats = Seat.objects.filter(table=table)
    expected = {user_id for user_id, connected in connected_users(seats, now=now).items() if connected}
    assert set(connected_user_ids(seats, now=now)) == expected
    assert expected == {people[i].pk for i in (0, 2, 4, 6)}


def test_binary_copy_helpers_refuse_what_they_cannot_write_exactly(db: Any) -> None:
    with pytest.raises(ValueError, match="range of smallint"):
        binary_copy_rows({"x": ("smallint", np.array([1, 40_000]))})
    with pytest.raises(ValueError, match="different lengths"):
        binary_copy_rows({"x": ("integer", np.array([1, 2])), "y": ("integer", np.array([1]))})
    with pytest.raises(ValueError, match="NULL"):
        read_int_columns("SELECT 1 AS a, NULL::integer AS b", [], ["a", "b"])
    read = read_int_columns(
        "SELECT g AS a, -g * 3000000000 AS b FROM generate_series(1, %s) AS g ORDER BY g DESC", [3], ["a", "b"]
    )
    assert read["a"].tolist() == [3, 2, 1]
    assert read["b"].tolist() == [-9_000_000_000, -6_000_000_000, -3_000_000_000]
    table = create_fun_table("Copy Rail")
    seat_players(table, players("copy", 2), timezone.now())
    seats = list(Seat.objects.filter(table=table).order_by("pk").values_list("pk", flat=True))
    with transaction.atomic():
        update_rows_by_copy(
            Seat._meta.db_table,
            np.array(seats),
            {"count": ("integer", np.array([3, 4])), "open": ("boolean", np.array([True, False]))},
            sets={"ws_connections": "v.count * 2 + v.open::integer"},
            scope={"table_id": table.pk},
        )
        with connection.cursor() as cursor:  # the temporary table is gone: a second call works
            cursor.execute("SELECT to_regclass('pg_temp.copy_tables_seat')")
            assert cursor.fetchone() == (None,)
    assert list(Seat.objects.filter(pk__in=seats).order_by("pk").values_list("ws_connections", flat=True)) == [7, 8]
