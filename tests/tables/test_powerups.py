"""Power-ups (seed 001, E; DESIGN item 17): sessions, levels, free draws and redeals paid by
house promotions, so the pool is never diluted and the books stay exact."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from handhistory.verification import verify_hand
from tables.clock import advance_table
from tables.models import Entry, GamingSession, Hand, PowerUpRules, Table
from tables.services.seating import touch_presence
from tables.widerpoker.selectors import get_entry_state
from tables.widerpoker.services import powerups
from tables.widerpoker.services.create import create_table
from tables.widerpoker.services.play import buy_draw, buy_redeal
from tables.widerpoker.services.powerups import NoFreeItemError, PromotionUnavailableError, release_every
from tables.widerpoker.services.seating import leave_table
from tests.helpers import deal, seat_players, settle
from wallet.models import Account, Currency
from wallet.selectors import check_books, get_balance_minor

pytestmark = pytest.mark.django_db


def generous_rules(**fields: Any) -> PowerUpRules:
    """A free draw and a free redeal every hand from level 1, to keep tests short."""
    return powerups.save_rules(
        **{
            "draw_every_hands": 1,
            "redeal_every_hands": 1,
            "points_per_level": 3,
            "max_level": 4,
            "draw_step": 0,
            "redeal_step": 0,
            **fields,
        }
    )


def next_hand(table: Table, players: list[User]) -> Hand:
    settle(table)
    table.refresh_from_db()
    at = table.phase_deadline
    assert at is not None
    for user in players:
        touch_presence(table_id=table.pk, user_id=user.pk, now=at)
    assert advance_table(table_id=table.pk, now=at)
    table.refresh_from_db()
    assert table.current_hand is not None
    return table.current_hand


def test_release_rate_rises_with_the_level() -> None:
    assert [release_every(level, 10, 2) for level in (1, 2, 3, 4, 5, 6)] == [10, 8, 6, 4, 2, 1]


def test_a_free_draw_is_paid_by_promotions_and_the_wallet_is_unchanged(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    generous_rules()
    seat_players(table, [alice, bob], now)
    hand = deal(table, now)
    powerups = get_entry_state(table_id=table.pk, user_id=alice.pk)["powerups"]
    assert powerups is not None and powerups["free_draws"] == 1 and powerups["level"] == 1
    wallet = get_balance_minor(user_id=alice.pk, currency=Currency.FUN)
    gross = hand.gross_minor
    buy_draw(table_id=table.pk, user_id=alice.pk, now=now, free=True)
    assert get_balance_minor(user_id=alice.pk, currency=Currency.FUN) == wallet
    hand.refresh_from_db()
    price = hand.config["draw_price_minor"]
    assert hand.gross_minor == gross + price  # the pool grows as for a bought draw
    entry = Entry.objects.get(hand=hand, user=alice)
    assert (entry.draws_bought, entry.paid_minor, entry.promo_minor) == (2, hand.config["ante_minor"] + price, price)
    with pytest.raises(NoFreeItemError):  # used twice: refused once, nothing changes
        buy_draw(table_id=table.pk, user_id=alice.pk, now=now, free=True)
    assert Entry.objects.get(hand=hand, user=alice).draws_bought == 2
    assert get_balance_minor(user_id=alice.pk, currency=Currency.FUN) == wallet
    hand = settle(table)
    assert verify_hand(hand_id=hand.pk).ok
    assert check_books().ok


def test_levels_rise_with_hands_and_purchases_and_free_redeals_work(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    generous_rules()
    seat_players(table, [alice, bob], now)
    hand = deal(table, now)
    buy_draw(table_id=table.pk, user_id=alice.pk, now=now)  # bought: +1 point
    buy_redeal(table_id=table.pk, user_id=alice.pk, now=now, free=True)
    session = GamingSession.objects.get(table=table, user=alice, ended_at__isnull=True)
    assert (session.hands_played, session.draws_bought, session.redeals_bought, session.free_redeals_used) == (
        1,
        1,
        0,
        1,
    )
    hand = next_hand(table, [alice, bob])
    state = get_entry_state(table_id=table.pk, user_id=alice.pk)["powerups"]
    assert state is not None
    assert state["points"] == 3 and state["level"] == 2  # 2 hands + 1 draw, 3 points a level
    assert state["free_draws"] == 2  # one a hand, none used
    assert hand.number == 2
    assert check_books().ok


def test_leaving_ends_the_session_and_its_free_items(table: Table, alice: User, bob: User, now: datetime) -> None:
    generous_rules()
    seat_players(table, [alice, bob], now)
    deal(table, now)
    leave_table(table_id=table.pk, user_id=alice.pk, now=now)
    assert not GamingSession.objects.filter(user=alice, ended_at__isnull=True).exists()
    with pytest.raises(NoFreeItemError):
        buy_draw(table_id=table.pk, user_id=alice.pk, now=now + timedelta(seconds=1), free=True)


def test_a_cash_promotion_without_money_refuses_the_free_item_and_charges_nothing(
    alice: User, bob: User, croupier: User, now: datetime
) -> None:
    from wallet import services as wallet_services

    generous_rules()
    table = create_table(name="Cash Promo", mode="cash", currency="EUR", ante_minor=100, redeal_price_minor=80)
    for user in (alice, bob):
        wallet_services.deposit_cash(
            user_id=user.pk,
            currency="EUR",
            amount_minor=10_000,
            reference=f"dep-{user.pk}",
            staff_user_id=croupier.pk,
            reason="test",
        )
    seat_players(table, [alice, bob], now)
    deal(table, now)
    with pytest.raises(PromotionUnavailableError):
        buy_draw(table_id=table.pk, user_id=alice.pk, now=now, free=True)
    assert GamingSession.objects.get(table=table, user=alice, ended_at__isnull=True).free_draws == 1  # kept
    from jackpots import services as jackpot_services

    jackpot_services.fund_house_account(
        kind="promotions", currency="EUR", amount_minor=1_000, reference="promo-1", staff_user_id=croupier.pk
    )
    buy_draw(table_id=table.pk, user_id=alice.pk, now=now, free=True)
    assert Account.objects.get(key="promotions:EUR").balance_minor == 1_000 - 50
    assert check_books().ok


def test_the_api_takes_free_as_a_boolean_only(table: Table, alice: User, bob: User, now: datetime) -> None:
    generous_rules()
    seat_players(table, [alice, bob], now)
    deal(table, now)
    client = Client()
    client.force_login(alice)
    bad = client.post(f"/api/tables/{table.pk}/draws/", {"free": 1}, content_type="application/json")
    assert bad.status_code == 400 and bad.json()["code"] == "invalid_field"
    ok = client.post(f"/api/tables/{table.pk}/draws/", {"free": True}, content_type="application/json")
    assert ok.status_code == 200 and ok.json()["entry"]["promo_minor"] == 50
    again = client.post(f"/api/tables/{table.pk}/draws/", {"free": True}, content_type="application/json")
    assert again.status_code == 409 and again.json()["code"] == "no_free_item"
