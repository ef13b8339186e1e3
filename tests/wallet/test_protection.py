"""Player protection (issue #11): limits refuse what they must and nothing else, breaks hold
against staff, suspended players cannot play, deposit or log in; refusals change nothing."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from tables.clock import advance_table
from tables.models import Entry, Seat, SeatStatus, Table
from tables.services.seating import touch_presence
from tables.widerpoker.services.create import create_table
from tables.widerpoker.services.play import buy_draw, set_hold
from tables.widerpoker.services.seating import join_table, sit_in
from tests.helpers import deal, logged_in, seat_players, settle
from wallet import protection
from wallet import services as wallet_services
from wallet.errors import (
    DepositLimitError,
    InvalidLimitError,
    LossLimitError,
    SelfExcludedError,
    SessionLimitError,
    StakeNotCoveredError,
    SuspendedError,
    TimeOutError,
)
from wallet.models import Currency, Exclusion, LedgerEntry, ProtectionLog, Suspension
from wallet.selectors import check_books, get_balance_minor

pytestmark = pytest.mark.django_db


def eur(user: User) -> int:
    return get_balance_minor(user_id=user.pk, currency=Currency.EUR)


def fun(user: User) -> int:
    return get_balance_minor(user_id=user.pk, currency=Currency.FUN)


def deposit(user: User, staff: User, amount_minor: int, now: datetime | None = None) -> None:
    wallet_services.deposit_cash(
        user_id=user.pk,
        currency=Currency.EUR,
        amount_minor=amount_minor,
        reason="bank transfer",
        staff_user_id=staff.pk,
        now=now,
    )


# --- deposit limits ---------------------------------------------------------------------------


def test_a_deposit_past_the_players_limit_is_refused_and_changes_nothing(
    alice: User, croupier: User, now: datetime
) -> None:
    protection.set_limit(user_id=alice.pk, kind="deposit", currency="EUR", value=5_000, now=now)
    deposit(alice, croupier, 3_000, now)
    entries = LedgerEntry.objects.count()
    with pytest.raises(DepositLimitError) as refused:
        deposit(alice, croupier, 2_001, now)
    assert refused.value.code == "deposit_limit"
    assert "50.00 EUR" in str(refused.value) and "20.00 EUR" in str(refused.value)
    assert (eur(alice), LedgerEntry.objects.count()) == (3_000, entries)
    deposit(alice, croupier, 2_000, now)  # exactly up to the limit
    assert eur(alice) == 5_000
    assert check_books().ok


def test_the_deposit_limit_counts_the_last_24_hours_and_never_blocks_withdrawals(
    alice: User, croupier: User, now: datetime
) -> None:
    protection.set_limit(user_id=alice.pk, kind="deposit", currency="EUR", value=1_000, now=now)
    deposit(alice, croupier, 1_000, now)
    with pytest.raises(DepositLimitError):
        deposit(alice, croupier, 1, now + timedelta(hours=23))
    deposit(alice, croupier, 1_000, now + timedelta(hours=25))
    wallet_services.withdraw_cash(
        user_id=alice.pk, currency="EUR", amount_minor=1_500, reason="payout", staff_user_id=croupier.pk
    )
    assert eur(alice) == 500


def test_lowering_a_limit_applies_at_once_and_raising_it_after_the_cooling_period(
    alice: User, croupier: User, now: datetime
) -> None:
    protection.set_limit(user_id=alice.pk, kind="deposit", currency="EUR", value=10_000, now=now)
    view = protection.set_limit(user_id=alice.pk, kind="deposit", currency="EUR", value=1_000, now=now)
    assert (view.value, view.pending_at) == (1_000, None)
    view = protection.set_limit(user_id=alice.pk, kind="deposit", currency="EUR", value=20_000, now=now)
    assert (view.value, view.pending_value, view.pending_at) == (1_000, 20_000, now + timedelta(hours=24))
    with pytest.raises(DepositLimitError):
        deposit(alice, croupier, 1_001, now + timedelta(hours=23))
    deposit(alice, croupier, 15_000, now + timedelta(hours=24))
    assert eur(alice) == 15_000


def test_removing_a_limit_also_waits_for_the_cooling_period(alice: User, croupier: User, now: datetime) -> None:
    protection.set_limit(user_id=alice.pk, kind="deposit", currency="EUR", value=1_000, now=now)
    protection.set_limit(user_id=alice.pk, kind="deposit", currency="EUR", value=None, now=now)
    with pytest.raises(DepositLimitError):
        deposit(alice, croupier, 2_000, now + timedelta(hours=1))
    deposit(alice, croupier, 2_000, now + timedelta(hours=25))
    assert ProtectionLog.objects.filter(user=alice, action="limit").count() == 2


@pytest.mark.parametrize("value", [0, -5, True, 10**13])
def test_a_limit_out_of_range_is_refused(alice: User, now: datetime, value: int) -> None:
    with pytest.raises(InvalidLimitError):
        protection.set_limit(user_id=alice.pk, kind="loss", currency="EUR", value=value, now=now)


# --- loss limits ------------------------------------------------------------------------------


def test_a_draw_past_the_loss_limit_is_refused_and_changes_nothing(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    protection.set_limit(user_id=alice.pk, kind="loss", currency="FUN", value=150, now=now)
    seat_players(table, [alice, bob], now)
    hand = deal(table, now)  # ante 1.00: loss 1.00
    with pytest.raises(LossLimitError) as refused:
        buy_draw(table_id=table.pk, user_id=alice.pk, now=now)  # 0.50 more: 1.50, at the limit
        buy_draw(table_id=table.pk, user_id=alice.pk, now=now)  # 2.00: over
    assert refused.value.code == "loss_limit"
    assert "2.00 FUN" in str(refused.value) and "1.50 FUN" in str(refused.value)
    entry = Entry.objects.get(hand=hand, user=alice)
    assert (entry.draws_bought, entry.paid_minor) == (2, 150)
    set_hold(table_id=table.pk, user_id=alice.pk, hold=[True] * 5, now=now)  # holds are not stakes
    buy_draw(table_id=table.pk, user_id=bob.pk, now=now)  # bob has no limit
    assert check_books().ok


def test_a_player_at_his_loss_limit_sits_out_the_next_hand_and_cannot_sit_in(
    table: Table, alice: User, bob: User, carol: User, now: datetime
) -> None:
    from wallet.models import AccountKind, TransferKind

    wallet = wallet_services.ensure_player_account(user_id=alice.pk, currency=Currency.FUN)
    rake = wallet_services.ensure_house_account(kind=AccountKind.RAKE, currency=Currency.FUN)
    wallet_services.transfer_between(  # 5.00 lost at the tables earlier today
        source=wallet, destination=rake, amount_minor=500, kind=TransferKind.ANTE, reference="earlier-hands"
    )
    seat_players(table, [alice, bob, carol], now)
    protection.set_limit(user_id=alice.pk, kind="loss", currency="FUN", value=550, now=now)
    with pytest.raises(LossLimitError):  # an ante of 1.00 would make 6.00
        join_table(table_id=table.pk, user_id=alice.pk, now=now)
    hand = deal(table, now)
    seat = Seat.objects.get(table=table, user=alice)
    assert (seat.status, seat.status_reason) == (SeatStatus.SITTING_OUT, "loss limit")
    assert sorted(hand.entries.values_list("user__username", flat=True)) == ["bob", "carol"]
    assert fun(alice) == 100_000 - 500
    with pytest.raises(LossLimitError):
        sit_in(table_id=table.pk, user_id=alice.pk, now=now)
    euro = create_table(
        name="Euro", mode="cash", currency="EUR", ante_minor=100, redeal_price_minor=80, change_seconds=30
    )
    with pytest.raises(StakeNotCoveredError):  # the limit is per currency: only her empty EUR wallet refuses
        join_table(table_id=euro.pk, user_id=alice.pk, now=now)


# --- session time limits and reality checks -----------------------------------------------------


def test_the_session_time_limit_refuses_play_until_a_break(table: Table, alice: User, bob: User, now: datetime) -> None:
    protection.record_play(user_ids=[alice.pk], now=now - timedelta(minutes=25))  # hands elsewhere
    protection.record_play(user_ids=[alice.pk], now=now - timedelta(minutes=12))
    seat_players(table, [alice, bob], now)
    deal(table, now)
    protection.set_limit(user_id=alice.pk, kind="session", value=30, now=now)
    buy_draw(table_id=table.pk, user_id=alice.pk, now=now)  # 25 minutes: under the limit
    protection.set_limit(user_id=alice.pk, kind="session", value=25, now=now)
    with pytest.raises(SessionLimitError) as refused:
        buy_draw(table_id=table.pk, user_id=alice.pk, now=now)
    assert refused.value.code == "session_limit"
    set_hold(table_id=table.pk, user_id=alice.pk, hold=[False] * 5, now=now)
    with pytest.raises(SessionLimitError):
        join_table(table_id=table.pk, user_id=alice.pk, now=now + timedelta(minutes=14))
    # After a break of 15 minutes without a hand the session is over: she may play again.
    join_table(table_id=table.pk, user_id=alice.pk, now=now + timedelta(minutes=16))


def test_the_session_summary_gives_time_played_and_the_net_result(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    protection.set_limit(user_id=alice.pk, kind="reality_check", value=20, now=now)
    assert protection.get_session_summary(user_id=alice.pk, now=now) is None
    seat_players(table, [alice, bob], now)
    deal(table, now)
    summary = protection.get_session_summary(user_id=alice.pk, now=now + timedelta(minutes=12))
    assert summary is not None
    assert (summary.minutes_played, summary.net_minor, summary.next_check_seconds) == (12, {"FUN": -100}, 8 * 60)
    client = logged_in(alice)
    body = client.get(reverse("responsible-gaming-session")).json()
    assert body["playing"] and body["net"] == {"FUN": "-1.00 FUN"} and body["reality_check_minutes"] == 20


# --- time-out, self-exclusion ---------------------------------------------------------------------


def test_a_self_excluded_player_cannot_join_buy_or_deposit(
    table: Table, alice: User, bob: User, croupier: User, now: datetime
) -> None:
    seat_players(table, [alice, bob], now)
    deal(table, now)
    protection.take_break(user_id=alice.pk, kind="self_exclusion", days=182, now=now)
    with pytest.raises(SelfExcludedError):
        buy_draw(table_id=table.pk, user_id=alice.pk, now=now)
    with pytest.raises(SelfExcludedError):
        join_table(table_id=table.pk, user_id=alice.pk, now=now)
    with pytest.raises(SelfExcludedError) as refused:
        deposit(alice, croupier, 1_000, now)
    assert refused.value.code == "self_excluded"
    assert eur(alice) == 0
    with pytest.raises(SelfExcludedError):
        join_table(table_id=table.pk, user_id=alice.pk, now=now + timedelta(days=181))
    join_table(table_id=table.pk, user_id=alice.pk, now=now + timedelta(days=183))


def test_self_exclusion_holds_against_staff(alice: User, croupier: User, now: datetime) -> None:
    exclusion = protection.take_break(user_id=alice.pk, kind="self_exclusion", days=365, now=now)
    staff = logged_in(croupier)
    delete = staff.post(reverse("admin:wallet_exclusion_delete", args=[exclusion.pk]), {"post": "yes"})
    change = staff.post(reverse("admin:wallet_exclusion_change", args=[exclusion.pk]), {"ends_at": "2000-01-01"})
    assert (delete.status_code, change.status_code) == (403, 403)
    # Lifting a suspension does not touch the player's own break; a shorter break changes nothing.
    protection.lift_suspension(user_id=alice.pk, reason="mistake", staff_user_id=croupier.pk, now=now)
    protection.take_break(user_id=alice.pk, kind="time_out", days=1, now=now)
    assert protection.find_exclusion(user_id=alice.pk, now=now + timedelta(days=300)) == exclusion
    assert Exclusion.objects.filter(user=alice).count() == 1
    with pytest.raises(SelfExcludedError):
        protection.check_can_play(user_id=alice.pk, currency="FUN", stake_minor=0, now=now + timedelta(days=364))


def test_a_time_out_refuses_play_with_its_own_code_until_it_ends(table: Table, alice: User, now: datetime) -> None:
    protection.take_break(user_id=alice.pk, kind="time_out", days=1, now=now)
    with pytest.raises(TimeOutError) as refused:
        join_table(table_id=table.pk, user_id=alice.pk, now=now + timedelta(hours=23))
    assert refused.value.code == "time_out"
    join_table(table_id=table.pk, user_id=alice.pk, now=now + timedelta(hours=25))


def test_the_player_takes_a_break_from_his_page(table: Table, alice: User, now: datetime) -> None:
    client = logged_in(alice)
    unconfirmed = client.post(reverse("responsible-gaming"), {"action": "break", "kind": "time_out", "days": "7"})
    assert unconfirmed.status_code == 302 and not Exclusion.objects.exists()
    client.post(reverse("responsible-gaming"), {"action": "break", "kind": "time_out", "days": "7", "confirm": "on"})
    assert Exclusion.objects.get(user=alice).kind == "time_out"
    page = client.get(reverse("responsible-gaming"))
    assert page.status_code == 200 and b"exclusion-notice" in page.content


# --- suspension -----------------------------------------------------------------------------------


def test_a_suspended_player_cannot_join_buy_deposit_or_log_in(
    table: Table, alice: User, bob: User, carol: User, croupier: User, now: datetime
) -> None:
    seat_players(table, [alice, bob, carol], now)
    hand = deal(table, now)
    protection.suspend_player(
        user_id=alice.pk, reason="bot play (seed 001, Notes 4)", staff_user_id=croupier.pk, now=now
    )
    with pytest.raises(SuspendedError) as refused:
        buy_draw(table_id=table.pk, user_id=alice.pk, now=now)
    assert refused.value.code == "suspended"
    with pytest.raises(SuspendedError):
        join_table(table_id=table.pk, user_id=alice.pk, now=now)
    with pytest.raises(SuspendedError):
        deposit(alice, croupier, 1_000, now)
    assert Entry.objects.get(hand=hand, user=alice).draws_bought == 1
    settled = settle(table)
    later = settled.change_deadline + timedelta(minutes=1)
    for player in (alice, bob, carol):
        touch_presence(table_id=table.pk, user_id=player.pk, now=later)
    advance_table(table_id=table.pk, now=later)
    seat = Seat.objects.get(table=table, user=alice)
    assert (seat.status, seat.status_reason) == (SeatStatus.SITTING_OUT, "suspended")
    login = Client().post(reverse("login"), {"username": "alice", "password": "correct horse battery"})
    assert login.status_code == 200 and b"suspended" in login.content
    token = Client().post("/api/auth/token/", {"username": "alice", "password": "correct horse battery"})
    assert (token.status_code, token.json()["code"]) == (403, "suspended")


def test_staff_suspend_and_lift_with_a_reason_in_the_audit_log(alice: User, croupier: User, auditor: User) -> None:
    staff = logged_in(croupier)
    url = reverse("admin:wallet_suspension_add")
    staff.post(url, {"username": "alice", "action": "suspend", "reason": "bot detected"})
    assert Suspension.objects.get(user=alice).reason == "bot detected"
    no_reason = staff.post(url, {"username": "alice", "action": "lift", "reason": ""})
    assert no_reason.status_code == 200 and protection.is_suspended(user_id=alice.pk)
    assert logged_in(auditor).post(url, {"username": "alice", "action": "lift", "reason": "x"}).status_code == 403
    staff.post(url, {"username": "alice", "action": "lift", "reason": "appeal upheld"})
    assert not protection.is_suspended(user_id=alice.pk)
    log = list(ProtectionLog.objects.filter(user=alice).values_list("action", "detail", "actor__username"))
    assert log == [("suspended", "bot detected", "croupier"), ("unsuspended", "appeal upheld", "croupier")]
    assert (
        Client().post(reverse("login"), {"username": "alice", "password": "correct horse battery"}).status_code == 302
    )


# --- the player's page ----------------------------------------------------------------------------


def test_the_wallet_links_to_the_limits_page_where_a_raise_shows_when_it_applies(alice: User) -> None:
    client = logged_in(alice)
    assert reverse("responsible-gaming").encode() in client.get(reverse("wallet")).content
    client.post(reverse("responsible-gaming"), {"action": "limit", "kind": "loss", "currency": "EUR", "value": "20"})
    client.post(reverse("responsible-gaming"), {"action": "limit", "kind": "loss", "currency": "EUR", "value": "80.50"})
    page = client.get(reverse("responsible-gaming")).content.decode()
    assert "In force: <strong>20.00 EUR</strong>" in page
    assert "80.50 EUR from" in page
    bad = client.post(reverse("responsible-gaming"), {"action": "limit", "kind": "session", "value": "-3"}, follow=True)
    assert "whole number" in bad.content.decode()
