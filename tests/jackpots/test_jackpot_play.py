"""Jackpots at the table: contributions, a spin jackpot drawn at the deal and paid by the
hand's allocation, a royal flush winning the royal jackpot, resets, refunds, and the books
exact after every step (seed 001, Jackpots; DESIGN item 12)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import numpy as np
import pytest
from django.contrib.auth.models import User

from backoffice.auditing import list_audit_totals
from handhistory.verification import verify_hand
from jackpots import services as jackpot_services
from jackpots.errors import InvalidJackpotError
from jackpots.models import Jackpot, JackpotEvent, JackpotEventKind, JackpotKind
from tables.engine.widerpoker import (
    MAX_STRENGTH,
    SpinJackpot,
    board_grid,
    combination_index,
    deal_board,
    spin_jackpot_draw,
)
from tables.models import Entry, Table
from tables.widerpoker.services.settlement import cancel_hand
from tests.helpers import create_fun_table, deal_hand, logged_in, settle, steer_next_hand
from wallet.models import Account
from wallet.selectors import check_books

pytestmark = pytest.mark.django_db
HISTORY = "/history/"


def balance(key: str) -> int:
    account = Account.objects.filter(key=key).first()
    return account.balance_minor if account else 0


def assert_books() -> None:
    books = check_books()
    assert books.ok, books


@pytest.fixture
def jackpot_table(db: Any, croupier: User) -> tuple[Table, Jackpot, Jackpot]:
    table = create_fun_table(name="Jackpot Rail", rake_bps=500)
    royal = Jackpot.objects.create(
        name="Royal FUN", kind=JackpotKind.ROYAL, currency="FUN", contribution_bps=100, reset_minor=500
    )
    bronze = Jackpot.objects.create(
        name="Bronze FUN",
        kind=JackpotKind.BRONZE,
        currency="FUN",
        contribution_bps=50,
        reset_minor=200,
        one_in=30,
        spin_overrides={"tips": False},
    )
    table.jackpots.set([royal, bronze])
    jackpot_services.fund_jackpot(
        jackpot_id=bronze.pk, amount_minor=5_000, reference="seed-bronze", staff_user_id=croupier.pk
    )
    jackpot_services.fund_jackpot(
        jackpot_id=royal.pk, amount_minor=20_000, reference="seed-royal", staff_user_id=croupier.pk
    )
    return table, royal, bronze


def seed_where(predicate: Any) -> bytes:
    for i in range(100_000):
        seed = i.to_bytes(32, "big")
        if predicate(seed):
            return seed
    raise AssertionError("no such seed")


def test_every_hand_feeds_the_jackpots_before_rake(
    jackpot_table: tuple[Table, Jackpot, Jackpot], alice: User, bob: User, now: datetime, monkeypatch: Any
) -> None:
    table, royal, bronze = jackpot_table
    steer_next_hand(table, [alice, bob], lambda s: spin_jackpot_draw(s, {SpinJackpot.BRONZE: 30}) is None, now=now)
    hand = deal_hand(table, [alice, bob], now)
    assert sorted(feed["key"] for feed in hand.config["jackpots"]) == sorted([royal.feed_key, bronze.feed_key])
    assert hand.spin_jackpot_id is None
    hand = settle(table)
    gross = hand.gross_minor
    assert hand.jackpot_results["contributions"] == {
        royal.feed_key: gross // 100,
        bronze.feed_key: gross * 50 // 10_000,
    }
    assert hand.rake_minor == gross * 500 // 10_000
    assert hand.pool_minor == gross - gross // 100 - gross * 50 // 10_000 - hand.rake_minor
    assert balance(royal.account_key) == 20_000 + gross // 100
    assert verify_hand(hand_id=hand.pk).ok
    assert_books()


def test_a_spin_jackpot_drawn_at_the_deal_joins_the_pool_and_the_jackpot_restarts(
    jackpot_table: tuple[Table, Jackpot, Jackpot], alice: User, bob: User, now: datetime, monkeypatch: Any
) -> None:
    table, _, bronze = jackpot_table
    steer_next_hand(
        table, [alice, bob], lambda s: spin_jackpot_draw(s, {SpinJackpot.BRONZE: 30}) is SpinJackpot.BRONZE, now=now
    )
    hand = deal_hand(table, [alice, bob], now)
    assert hand.spin_jackpot_id == bronze.pk
    assert hand.spin_award_minor == 5_000
    assert balance(bronze.account_key) == 200  # reset, paid by the house
    assert hand.config["tips"] is False and hand.config["overrides"]["tips"]["source"] == "spin:bronze"
    assert balance(f"escrow:hand:{hand.pk}") == hand.gross_minor + 5_000
    assert_books()
    hand = settle(table)
    assert (
        hand.pool_minor
        == hand.gross_minor - sum(hand.jackpot_results["contributions"].values()) - hand.rake_minor + 5_000
    )
    prizes = sum(Entry.objects.filter(hand=hand).values_list("prize_minor", flat=True))
    assert prizes + hand.breakage_minor == hand.pool_minor
    assert hand.jackpot_awards_minor == 5_000
    assert hand.jackpot_contributions_minor == sum(hand.jackpot_results["contributions"].values()) > 0
    (row,) = list_audit_totals(
        start=now.date(), end=now.date() + timedelta(days=1), group_by="table", table_id=table.pk
    )
    assert (row.jackpot_contributions_minor, row.jackpot_awards_minor) == (hand.jackpot_contributions_minor, 5_000)
    assert JackpotEvent.objects.filter(jackpot=bronze, kind=JackpotEventKind.SPIN_WON, hand_id=hand.pk).exists()
    report = verify_hand(hand_id=hand.pk)
    assert report.ok, report.mismatches
    assert "spin jackpot" in report.checks
    assert_books()
    client = logged_in(alice)
    export = client.get(f"{HISTORY}hands/{hand.pk}/export.json").json()["hand"]
    assert (export["spin_jackpot"], export["spin_award_minor"]) == ("bronze", 5_000)
    assert export["jackpot_results"]["contributions"] == hand.jackpot_results["contributions"]
    page = client.get(f"{HISTORY}hands/{hand.pk}/").content.decode()
    assert 'data-testid="spin-award"' in page and "50.00 FUN" in page


def test_a_cancelled_spin_hand_returns_the_award_to_its_jackpot(
    jackpot_table: tuple[Table, Jackpot, Jackpot], alice: User, bob: User, now: datetime, monkeypatch: Any
) -> None:
    table, _, bronze = jackpot_table
    spin = seed_where(lambda s: spin_jackpot_draw(s, {SpinJackpot.BRONZE: 30}) is SpinJackpot.BRONZE)
    monkeypatch.setattr("tables.widerpoker.services.deal.derive_hand_seed", lambda *args: spin)
    hand = deal_hand(table, [alice, bob], now)
    assert cancel_hand(hand_id=hand.pk, reason="test malfunction", now=now)
    assert balance(bronze.account_key) == 200 + 5_000
    assert balance(f"escrow:hand:{hand.pk}") == 0
    assert_books()


def test_a_royal_flush_wins_the_whole_royal_jackpot(
    jackpot_table: tuple[Table, Jackpot, Jackpot], alice: User, bob: User, now: datetime, monkeypatch: Any
) -> None:
    table, royal, _ = jackpot_table

    def royal_possible(seed: bytes) -> bool:
        return spin_jackpot_draw(seed, {SpinJackpot.BRONZE: 30}) is None and bool(
            (board_grid(deal_board(seed)).strengths == MAX_STRENGTH).any()
        )

    seed = seed_where(royal_possible)
    monkeypatch.setattr("tables.widerpoker.services.deal.derive_hand_seed", lambda *args: seed)
    hand = deal_hand(table, [alice, bob], now)
    positions = tuple(int(p) for p in np.argwhere(board_grid(deal_board(seed)).strengths == MAX_STRENGTH)[0])
    # A chosen combination: the test gives alice the royal flush the board holds.
    Entry.objects.filter(hand=hand, user=alice).update(combination=combination_index(positions), hold_mask=31)
    hand = settle(table)
    contribution = hand.jackpot_results["contributions"][royal.feed_key]
    (award,) = hand.jackpot_results["royal"]
    assert award["amount_minor"] == 20_000 + contribution
    assert award["winners"] == [0]
    alice_entry = Entry.objects.get(hand=hand, user=alice)
    assert alice_entry.jackpot_minor == 20_000 + contribution
    assert alice_entry.place == 1
    assert balance(royal.account_key) == 500
    assert JackpotEvent.objects.filter(jackpot=royal, kind=JackpotEventKind.ROYAL_WON, hand_id=hand.pk).exists()
    assert_books()


def test_a_cash_reset_is_paid_only_as_far_as_the_reserve_holds(croupier: User) -> None:
    jackpot = Jackpot.objects.create(name="Royal EUR", kind=JackpotKind.ROYAL, currency="EUR", reset_minor=1_000)
    account = jackpot_services.jackpot_account(jackpot)
    assert jackpot_services.reset_legs(jackpot_account_id=account.pk, currency="EUR", reset_minor=1_000).paid_minor == 0
    jackpot_services.fund_house_account(
        kind="reserve", currency="EUR", amount_minor=300, reference="reserve-1", staff_user_id=croupier.pk
    )
    assert (
        jackpot_services.reset_legs(jackpot_account_id=account.pk, currency="EUR", reset_minor=1_000).paid_minor == 300
    )


def test_table_jackpots_are_validated(jackpot_table: tuple[Table, Jackpot, Jackpot]) -> None:
    _, royal, bronze = jackpot_table
    other = Jackpot.objects.create(name="Royal 2", kind=JackpotKind.ROYAL, currency="FUN", contribution_bps=10)
    with pytest.raises(InvalidJackpotError, match="already has"):
        jackpot_services.validate_table_jackpots(table_currency="FUN", jackpots=[royal, other])
    euro = Jackpot.objects.create(name="Royal EUR", kind=JackpotKind.ROYAL, currency="EUR")
    with pytest.raises(InvalidJackpotError, match="EUR"):
        jackpot_services.validate_table_jackpots(table_currency="FUN", jackpots=[euro])
    with pytest.raises(InvalidJackpotError, match="drawn 1 in N"):
        jackpot_services.validate_jackpot(kind="gold", currency="FUN", contribution_bps=10, reset_minor=0, one_in=1)
    with pytest.raises(InvalidJackpotError, match="10%"):
        jackpot_services.validate_jackpot(
            kind="royal", currency="FUN", contribution_bps=1001, reset_minor=0, one_in=None
        )
    jackpot_services.validate_table_jackpots(table_currency="FUN", jackpots=[royal, bronze])
