"""The hand lifecycle through the database: ante, deal, choices, settlement, next hand."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import Sum
from django.utils import timezone

from tables import clock
from tables.clock import advance_due_tables, advance_table, recover_table
from tables.engine import fairness
from tables.engine.widerpoker import change_keys, deal_board
from tables.errors import LimitReachedError, NotInHandError, PhaseClosedError, RedealClosedError
from tables.games import change_table_config
from tables.gamespec import MALFUNCTION_PAUSE
from tables.models import Entry, HandStatus, Seat, SeatStatus, Table, TableConfigChange, TablePhase
from tables.services.presence import is_connected
from tables.services.seating import record_socket, touch_presence
from tables.widerpoker.records import board_to_json
from tables.widerpoker.services.play import buy_draw, buy_redeal, set_hold
from tables.widerpoker.services.seating import sit_out
from tables.widerpoker.services.settlement import settle_hand
from tests.conftest import make_player, postgres_only
from tests.helpers import create_fun_table, deal, seat_players, settle
from wallet.errors import InsufficientFundsError
from wallet.models import Account, Currency, LedgerEntry, Transfer
from wallet.selectors import check_books, get_balance_minor

pytestmark = pytest.mark.django_db
GRANT = settings.FUN_SIGNUP_GRANT_MINOR


def fun(user: User) -> int:
    return get_balance_minor(user_id=user.pk, currency=Currency.FUN)


def test_a_hand_needs_at_least_two_players(table: Table, alice: User, now: datetime) -> None:
    seat_players(table, [alice], now)
    assert not advance_table(table_id=table.pk, now=now)
    table.refresh_from_db()
    assert table.phase == TablePhase.WAITING
    assert table.current_hand is None
    assert fun(alice) == GRANT


def test_dealing_collects_the_ante_and_publishes_the_commitment(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    seat_players(table, [alice, bob], now)
    hand = deal(table, now)
    assert table.phase == TablePhase.CHANGE
    assert table.phase_deadline == now + timedelta(seconds=30)
    # Algorithm 2: the commitment is the hash of the hand's chain element, which links back
    # to the table's published anchor; the hand seed mixes in the players' client seeds.
    assert hand.commitment == hashlib.sha256(bytes.fromhex(hand.chain_seed)).hexdigest()
    assert hand.chain is not None and hand.chain_index == 1 and hand.commitment == hand.chain.anchor
    assert hand.board == board_to_json(deal_board(bytes.fromhex(hand.server_seed)))
    assert (fun(alice), fun(bob)) == (GRANT - 100, GRANT - 100)
    assert Account.objects.get(key=f"escrow:hand:{hand.pk}").balance_minor == 200
    entries = list(Entry.objects.filter(hand=hand).order_by("join_order").select_related("user"))
    assert sorted(e.user_id for e in entries) == [alice.pk, bob.pk]
    # The order entries receive combinations in comes from the hand seed, not the server.
    names = [e.user.username for e in entries]
    assert fairness.entry_order(bytes.fromhex(hand.server_seed), names) == [0, 1]
    assert entries[0].combination != entries[1].combination
    assert check_books().ok


def test_sitting_out_player_pays_no_ante(table: Table, alice: User, bob: User, carol: User, now: datetime) -> None:
    seat_players(table, [alice, bob, carol], now)
    sit_out(table_id=table.pk, user_id=carol.pk, now=now)
    hand = deal(table, now)
    assert fun(carol) == GRANT
    assert not Entry.objects.filter(hand=hand, user=carol).exists()
    assert hand.entry_count == 2


def test_disconnected_player_is_removed_before_the_hand(
    table: Table, alice: User, bob: User, carol: User, now: datetime
) -> None:
    seat_players(table, [alice, bob, carol], now - timedelta(minutes=5))
    Seat.objects.filter(user__in=[alice, bob]).update(last_seen_at=now)
    hand = deal(table, now)
    seat = Seat.objects.get(table=table, user=carol)
    assert (seat.status, seat.status_reason) == (SeatStatus.LEFT, "disconnected")
    assert fun(carol) == GRANT
    assert hand.entry_count == 2


def test_player_who_cannot_pay_the_ante_sits_out(
    table: Table, alice: User, bob: User, carol: User, now: datetime
) -> None:
    from wallet import services as wallet_services
    from wallet.models import AccountKind, TransferKind

    seat_players(table, [alice, bob, carol], now)  # she could pay when she sat down (join refuses otherwise)
    wallet = wallet_services.ensure_player_account(user_id=carol.pk, currency=Currency.FUN)
    rake = wallet_services.ensure_house_account(kind=AccountKind.RAKE, currency=Currency.FUN)
    wallet_services.transfer_between(
        source=wallet, destination=rake, amount_minor=GRANT - 99, kind=TransferKind.ANTE, reference="drain"
    )
    hand = deal(table, now)
    seat = Seat.objects.get(table=table, user=carol)
    assert (seat.status, seat.status_reason) == (SeatStatus.SITTING_OUT, "insufficient funds")
    assert fun(carol) == 99
    assert hand.entry_count == 2


def test_settlement_pays_the_pool_minus_the_rake_and_balances_the_books(table: Table, now: datetime) -> None:
    players = [make_player(f"p{i}") for i in range(20)]
    seat_players(table, players, now)
    hand = deal(table, now)
    for player in players[:5]:
        buy_draw(table_id=table.pk, user_id=player.pk, now=now + timedelta(seconds=1))
    hand = settle(table)
    assert hand.status == HandStatus.SETTLED
    gross = 20 * 100 + 5 * 50
    assert hand.gross_minor == gross
    assert hand.rake_minor == gross * 500 // 10_000
    assert hand.pool_minor == gross - hand.rake_minor
    prizes = Entry.objects.filter(hand=hand).aggregate(total=Sum("prize_minor"))["total"]
    assert prizes + hand.breakage_minor == hand.pool_minor
    assert Entry.objects.filter(hand=hand, prize_minor__gt=0).count() >= 3  # 15% of 20
    assert Account.objects.get(key=f"escrow:hand:{hand.pk}").balance_minor == 0
    total_after = sum(fun(p) for p in players)
    assert total_after == 20 * GRANT - hand.rake_minor - hand.breakage_minor
    assert check_books().ok
    table.refresh_from_db()
    assert table.phase == TablePhase.RESULTS


def test_every_entry_gets_five_draw_results_and_a_place(
    table: Table, alice: User, bob: User, carol: User, now: datetime
) -> None:
    seat_players(table, [alice, bob, carol], now)
    deal(table, now)
    hand = settle(table)
    entries = list(Entry.objects.filter(hand=hand))
    strengths = [e.draw_strengths or [] for e in entries]
    assert all(len(draws) == 5 for draws in strengths)
    assert all(e.best_draw == 0 for e in entries)  # one draw bought: the first counts
    assert all(e.strength == draws[0] for e, draws in zip(entries, strengths, strict=True))
    best = max(e.strength or 0 for e in entries)
    assert {e.place for e in entries if e.strength == best} == {1}
    # Algorithm 2: the keys come from the hand seed and its beacon round's value.
    keys_seed = fairness.keys_seed(bytes.fromhex(hand.server_seed), bytes.fromhex(hand.beacon_value))
    assert hand.change_keys == [list(key) for key in change_keys(keys_seed)]


def test_best_of_the_draws_bought_is_the_final_hand(table: Table, alice: User, bob: User, now: datetime) -> None:
    seat_players(table, [alice, bob], now)
    deal(table, now)
    for _ in range(4):
        buy_draw(table_id=table.pk, user_id=alice.pk, now=now)
    hand = settle(table)
    entry = Entry.objects.get(hand=hand, user=alice)
    draws: list[int] = entry.draw_strengths or []
    assert entry.draws_bought == 5
    assert entry.best_draw is not None
    assert entry.strength == max(draws)
    assert draws[entry.best_draw] == entry.strength
    assert entry.best_draw == draws.index(entry.strength)  # earliest on ties
    assert fun(alice) == GRANT - 100 - 4 * 50 + entry.prize_minor


def test_settling_twice_pays_once(table: Table, alice: User, bob: User, now: datetime) -> None:
    seat_players(table, [alice, bob], now)
    deal(table, now)
    hand = settle(table)
    before = (fun(alice), fun(bob), LedgerEntry.objects.count())
    assert not settle_hand(hand_id=hand.pk, now=now + timedelta(minutes=1))
    late = hand.change_deadline + timedelta(seconds=1)
    assert not advance_table(table_id=table.pk, now=late)  # a duplicated tick: not due
    assert (fun(alice), fun(bob), LedgerEntry.objects.count()) == before
    assert Transfer.objects.filter(reference=f"settle:{hand.pk}").count() == 1


def test_connected_player_with_no_choice_has_all_cards_changed(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    seat_players(table, [alice, bob], now)
    deal(table, now)
    Seat.objects.filter(table=table).update(ws_connections=1, last_seen_at=now + timedelta(seconds=25))  # pings
    hand = settle(table)
    assert set(Entry.objects.filter(hand=hand).values_list("hold_used", flat=True)) == {0}


def test_disconnected_player_with_no_choice_keeps_all_cards(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    seat_players(table, [alice, bob], now)
    deal(table, now)
    set_hold(table_id=table.pk, user_id=bob.pk, hold=[True, False, True, False, False], now=now)
    Seat.objects.filter(table=table).update(ws_connections=0, last_seen_at=now - timedelta(minutes=10))
    hand = settle(table)
    alice_entry = Entry.objects.get(hand=hand, user=alice)
    bob_entry = Entry.objects.get(hand=hand, user=bob)
    assert (alice_entry.hold_used, alice_entry.connected_at_end) == (0b11111, False)
    assert (bob_entry.hold_used, bob_entry.connected_at_end) == (0b00101, False)  # last choice received


def test_choices_after_the_deadline_are_refused(table: Table, alice: User, bob: User, now: datetime) -> None:
    seat_players(table, [alice, bob], now)
    hand = deal(table, now)
    with pytest.raises(PhaseClosedError):
        set_hold(table_id=table.pk, user_id=alice.pk, hold=[True] * 5, now=hand.change_deadline)
    with pytest.raises(PhaseClosedError):
        buy_draw(table_id=table.pk, user_id=alice.pk, now=hand.change_deadline + timedelta(seconds=3))
    assert fun(alice) == GRANT - 100


def test_buying_beyond_the_maximum_draws_is_refused(table: Table, alice: User, bob: User, now: datetime) -> None:
    seat_players(table, [alice, bob], now)
    deal(table, now)
    for _ in range(4):
        buy_draw(table_id=table.pk, user_id=alice.pk, now=now)
    with pytest.raises(LimitReachedError) as caught:
        buy_draw(table_id=table.pk, user_id=alice.pk, now=now)
    assert caught.value.code == "limit_reached"
    assert fun(alice) == GRANT - 100 - 200


def test_a_purchase_without_funds_is_refused_and_changes_nothing(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    from wallet import services as wallet_services
    from wallet.models import AccountKind, TransferKind

    seat_players(table, [alice, bob], now)
    hand = deal(table, now)
    wallet = wallet_services.ensure_player_account(user_id=alice.pk, currency=Currency.FUN)
    rake = wallet_services.ensure_house_account(kind=AccountKind.RAKE, currency=Currency.FUN)
    wallet_services.transfer_between(
        source=wallet, destination=rake, amount_minor=fun(alice) - 49, kind=TransferKind.ANTE, reference="drain"
    )
    with pytest.raises(InsufficientFundsError):
        buy_draw(table_id=table.pk, user_id=alice.pk, now=now)
    entry = Entry.objects.get(hand=hand, user=alice)
    hand.refresh_from_db()
    assert (entry.draws_bought, entry.paid_minor, hand.gross_minor, fun(alice)) == (1, 100, 200, 49)
    assert check_books().ok


def test_redeal_gives_an_unused_combination_and_resets_the_hold(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    seat_players(table, [alice, bob], now)
    hand = deal(table, now)
    set_hold(table_id=table.pk, user_id=alice.pk, hold=[True] * 5, now=now)
    before = Entry.objects.get(hand=hand, user=alice)
    after = buy_redeal(table_id=table.pk, user_id=alice.pk, now=now)
    in_use = set(Entry.objects.filter(hand=hand).exclude(pk=after.pk).values_list("combination", flat=True))
    assert after.combination != before.combination
    assert after.combination not in in_use
    assert after.redeals == [[0, after.combination]]
    assert after.hold_mask is None
    assert fun(alice) == GRANT - 100 - 80
    again = buy_redeal(table_id=table.pk, user_id=alice.pk, now=now)
    assert again.combination not in {before.combination, after.combination}
    with pytest.raises(LimitReachedError):
        buy_redeal(table_id=table.pk, user_id=alice.pk, now=now)


def test_redeal_is_refused_after_its_time_limit(table: Table, alice: User, bob: User, now: datetime) -> None:
    seat_players(table, [alice, bob], now)
    hand = deal(table, now)
    with pytest.raises(RedealClosedError):
        buy_redeal(table_id=table.pk, user_id=alice.pk, now=hand.redeal_deadline)


def test_player_not_in_the_hand_cannot_act(table: Table, alice: User, bob: User, carol: User, now: datetime) -> None:
    seat_players(table, [alice, bob], now)
    deal(table, now)
    with pytest.raises(NotInHandError):
        buy_draw(table_id=table.pk, user_id=carol.pk, now=now)


def test_next_hand_starts_after_the_results(table: Table, alice: User, bob: User, now: datetime) -> None:
    seat_players(table, [alice, bob], now)
    deal(table, now)
    first = settle(table)
    table.refresh_from_db()
    later = table.phase_deadline
    assert later is not None
    Seat.objects.filter(table=table).update(last_seen_at=later)
    assert advance_table(table_id=table.pk, now=later)
    table.refresh_from_db()
    assert table.phase == TablePhase.CHANGE
    assert table.current_hand is not None
    assert table.current_hand.number == first.number + 1


def test_rake_change_applies_after_the_running_hand_and_restarts_the_table(
    table: Table, alice: User, bob: User, croupier: User, now: datetime
) -> None:
    seat_players(table, [alice, bob], now)
    deal(table, now)
    change_table_config(
        table_id=table.pk, changes={"rake_bps": 200}, staff_user_id=croupier.pk, reason="promo", now=now
    )
    table.refresh_from_db()
    assert table.widerpoker.rake_bps == 500
    hand = settle(table)
    assert hand.rake_minor == 200 * 500 // 10_000  # the old rake
    table.refresh_from_db()
    assert table.phase_deadline is not None
    assert advance_table(table_id=table.pk, now=table.phase_deadline)
    table.refresh_from_db()
    assert table.widerpoker.rake_bps == 200
    assert table.phase == TablePhase.WAITING
    assert set(Seat.objects.filter(table=table).values_list("status_reason", flat=True)) == {"table restarted"}
    change = TableConfigChange.objects.get(table=table)
    assert (change.field, change.old_value, change.new_value, change.reason) == ("rake_bps", 500, 200, "promo")
    assert change.applied_at is not None


def test_rake_above_ten_percent_is_refused(table: Table, croupier: User, now: datetime) -> None:
    from tables.errors import InvalidTableConfigError

    with pytest.raises(InvalidTableConfigError):
        change_table_config(
            table_id=table.pk, changes={"rake_bps": 1001}, staff_user_id=croupier.pk, reason="x", now=now
        )
    assert not TableConfigChange.objects.exists()


def test_cancelled_hand_returns_every_wager_in_full(table: Table, alice: User, bob: User, now: datetime) -> None:
    seat_players(table, [alice, bob], now)
    hand = deal(table, now)
    buy_draw(table_id=table.pk, user_id=alice.pk, now=now)
    buy_redeal(table_id=table.pk, user_id=bob.pk, now=now)
    recover_table(table_id=table.pk, now=now, reason="test malfunction")
    hand.refresh_from_db()
    assert hand.status == HandStatus.CANCELLED
    assert (fun(alice), fun(bob)) == (GRANT, GRANT)
    assert check_books().ok


def test_a_failing_settlement_cancels_the_hand_and_refunds(
    table: Table, alice: User, bob: User, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    seat_players(table, [alice, bob], now)
    hand = deal(table, now)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("evaluator exploded")

    monkeypatch.setattr("tables.widerpoker.services.settlement.hand_outcome", broken)
    advance_due_tables(now=hand.change_deadline + timedelta(seconds=1))
    hand.refresh_from_db()
    assert hand.status == HandStatus.CANCELLED
    assert (fun(alice), fun(bob)) == (GRANT, GRANT)
    assert check_books().ok


def test_a_table_that_cannot_even_be_recovered_does_not_stall_the_others(
    alice: User,
    bob: User,
    carol: User,
    now: datetime,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Security audit F13: one failing table must not skip the tables after it in a tick."""
    broken_table = create_fun_table("Broken Rail")
    healthy = create_fun_table("Healthy Rail")
    seat_players(broken_table, [alice, bob], now)
    seat_players(healthy, [carol, bob], now)
    first, second = deal(broken_table, now), deal(healthy, now)
    # The broken table is due first (earlier deadline), so it comes first in the tick.
    Table.objects.filter(pk=broken_table.pk).update(phase_deadline=first.change_deadline - timedelta(seconds=1))
    real_advance = clock.advance_table

    def advance(*, table_id: int, now: datetime) -> bool:
        if table_id == broken_table.pk:
            raise RuntimeError("evaluator exploded")
        return real_advance(table_id=table_id, now=now)

    def recover(**kwargs: object) -> None:
        raise RuntimeError("database said no")

    monkeypatch.setattr(clock, "advance_table", advance)
    monkeypatch.setattr(clock, "recover_table", recover)
    tick = second.change_deadline + timedelta(seconds=1)
    assert advance_due_tables(now=tick) == 1
    second.refresh_from_db()
    assert second.status == HandStatus.SETTLED
    broken_table.refresh_from_db()
    assert broken_table.phase_deadline == tick + MALFUNCTION_PAUSE  # retried later
    assert "could not be recovered" in caplog.text


@postgres_only()
@pytest.mark.django_db(transaction=True)
def test_holds_share_the_hand_lock_while_settlement_waits_for_them(db: Any) -> None:
    """A transaction holding the hand FOR SHARE (as a hold in flight does) lets other holds
    through at once, but settlement waits until it ends."""
    import threading
    import time

    from django.db import connection, transaction

    table = create_fun_table("Lock Rail")
    alice, bob = make_player("lock-alice"), make_player("lock-bob")
    now = timezone.now()
    seat_players(table, [alice, bob], now)
    hand = deal(table, now)
    holding, release, settled = threading.Event(), threading.Event(), threading.Event()

    def hold_in_flight() -> None:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT id FROM tables_hand WHERE id = %s FOR SHARE", [hand.pk])
            holding.set()
            release.wait(10)
        connection.close()

    def settle() -> None:
        advance_table(table_id=table.pk, now=hand.change_deadline + timedelta(seconds=1))
        settled.set()
        connection.close()

    first = threading.Thread(target=hold_in_flight)
    first.start()
    assert holding.wait(5)
    started = time.monotonic()
    set_hold(table_id=table.pk, user_id=bob.pk, hold=[True] * 5, now=now)  # not blocked
    assert time.monotonic() - started < 2
    settler = threading.Thread(target=settle)
    settler.start()
    assert not settled.wait(1.0)  # settlement waits for the hold in flight
    release.set()
    first.join()
    settler.join()
    assert settled.is_set()
    assert Entry.objects.get(hand=hand, user=bob).hold_used == 0b11111


def test_player_whose_page_stayed_closed_past_the_grace_is_disconnected(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    seat_players(table, [alice, bob], now)
    deal(table, now)
    for user in (alice, bob):
        record_socket(table_id=table.pk, user_id=user.pk, opened=True, now=now)
    touch_presence(table_id=table.pk, user_id=bob.pk, now=now + timedelta(seconds=25))  # bob's ping
    record_socket(table_id=table.pk, user_id=alice.pk, opened=False, now=now + timedelta(seconds=15))
    hand = settle(table)  # settled 31 s in: alice's page closed 16 s before and never came back
    assert Entry.objects.get(hand=hand, user=alice).hold_used == 0b11111  # kept, rules Notes 2
    assert Entry.objects.get(hand=hand, user=bob).hold_used == 0  # connected: all changed


def test_a_socket_count_left_by_a_dead_process_expires_with_the_heartbeat(
    table: Table, alice: User, now: datetime
) -> None:
    from django.conf import settings as django_settings

    seat_players(table, [alice], now)
    record_socket(table_id=table.pk, user_id=alice.pk, opened=True, now=now)
    seat = Seat.objects.get(table=table, user=alice)
    assert is_connected(seat, now=now + timedelta(seconds=django_settings.PRESENCE_TIMEOUT_SECONDS - 1))
    assert not is_connected(seat, now=now + timedelta(seconds=django_settings.PRESENCE_TIMEOUT_SECONDS + 1))
    touch_presence(table_id=table.pk, user_id=alice.pk, now=now + timedelta(seconds=40))  # a ping
    seat.refresh_from_db()
    assert is_connected(seat, now=now + timedelta(seconds=45))


def test_a_page_reload_is_not_a_disconnection(table: Table, alice: User, now: datetime) -> None:
    from django.conf import settings as django_settings

    grace = django_settings.PRESENCE_RECONNECT_GRACE_SECONDS
    seat_players(table, [alice], now)
    record_socket(table_id=table.pk, user_id=alice.pk, opened=True, now=now)
    record_socket(table_id=table.pk, user_id=alice.pk, opened=False, now=now + timedelta(seconds=1))
    seat = Seat.objects.get(table=table, user=alice)
    assert is_connected(seat, now=now + timedelta(seconds=grace))  # the new page is on its way
    assert not is_connected(seat, now=now + timedelta(seconds=grace + 2))  # it never came
