"""A cancelled hand returns every cent to whoever paid it (seed 001, "Malfunctions"; issue
19): the player his ante and the draws and redeals he bought, the house promotions account
the free ones it paid (seed 001, E). Before, a free draw came back to the player as cash.

Through the doors people use: purchases over REST, the cancellation by a croupier (the
Croupiers group, not a superuser) in the tables admin; outside Django's test transaction,
with purchases on hold until the cancellation captures them (PostgreSQL's default)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.utils import timezone

from jackpots import services as jackpot_services
from tables.clock import advance_table
from tables.models import HandStatus
from tables.widerpoker.services import powerups
from tables.widerpoker.services.create import create_table
from tests.helpers import create_fun_table, deal, logged_in, seat_players
from wallet import services as wallet_services
from wallet.models import Account, LedgerEntry, Transfer, TransferKind
from wallet.selectors import check_books, get_balance_minor

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_throttle_counters")]

ANTE, DRAW, REDEAL, PROMOTIONS = 50, 25, 40, 1_000


@pytest.fixture(autouse=True)
def _purchases_on_hold(settings: Any) -> None:
    settings.PURCHASE_CAPTURE = "batch"


def eur(user: User) -> int:
    return get_balance_minor(user_id=user.pk, currency="EUR")


def fun(user: User) -> int:
    return get_balance_minor(user_id=user.pk, currency="FUN")


def test_a_cancelled_hand_returns_a_free_draw_to_promotions_not_to_the_player(
    alice: User, bob: User, croupier: User
) -> None:
    powerups.save_rules(draw_every_hands=1, redeal_every_hands=1, draw_step=0, redeal_step=0)
    for user in (alice, bob):
        wallet_services.deposit_cash(
            user_id=user.pk, currency="EUR", amount_minor=5_000, reason="bank transfer", staff_user_id=croupier.pk
        )
    jackpot_services.fund_house_account(
        kind="promotions", currency="EUR", amount_minor=PROMOTIONS, reference="promo-1", staff_user_id=croupier.pk
    )
    table = create_table(
        name="Euro",
        mode="cash",
        currency="EUR",
        ante_minor=ANTE,
        draw_price_bps=5000,
        redeal_price_minor=REDEAL,
        change_seconds=30,
    )
    now = timezone.now()
    seat_players(table, [alice, bob], now)
    hand = deal(table, now)
    a, b = logged_in(alice), logged_in(bob)
    draws, redeals = f"/api/tables/{table.pk}/draws/", f"/api/tables/{table.pk}/redeals/"
    for client, url, body in (
        (a, draws, {"free": True}),  # paid by promotions
        (a, draws, {}),  # paid by alice, on hold
        (b, redeals, {"free": True}),
        (b, redeals, {}),
    ):
        response = client.post(url, body, content_type="application/json")
        assert response.status_code == 200, response.json()
    promotions = Account.objects.get(key="promotions:EUR")
    assert promotions.balance_minor == PROMOTIONS - DRAW - REDEAL
    assert (eur(alice), eur(bob)) == (5_000 - ANTE - DRAW, 5_000 - ANTE - REDEAL)

    call_command("create_staff_groups", verbosity=0)
    cris = User.objects.create_user(username="cris", password="x", is_staff=True)
    cris.groups.add(*Group.objects.filter(name="Croupiers"))
    page = logged_in(cris).post(
        "/admin/tables/table/",
        {"action": "cancel_running_hands", "_selected_action": [table.pk], "apply": "yes", "reason": "frozen screen"},
        follow=True,
    )
    assert page.status_code == 200 and "cancelled and refunded" in page.content.decode()
    hand.refresh_from_db()
    assert hand.status == HandStatus.CANCELLED

    assert (eur(alice), eur(bob)) == (5_000, 5_000)  # their own money, every cent, and no more
    promotions.refresh_from_db()
    assert promotions.balance_minor == PROMOTIONS  # the free draw and redeal went back where they came from
    refund = Transfer.objects.get(reference=f"refund:{hand.pk}", kind=TransferKind.REFUND)
    legs = dict(LedgerEntry.objects.filter(transfer=refund).values_list("account__key", "delta_minor"))
    assert legs[f"player:{alice.pk}:EUR"] == ANTE + DRAW and legs["promotions:EUR"] == DRAW + REDEAL
    assert check_books().ok


def test_a_hand_the_beacon_never_released_refunds_the_player_his_own_part(
    alice: User, bob: User, settings: Any
) -> None:
    """The clock cancels a hand whose beacon round never came (docs/provably-fair.md); at a
    fun table the FUN cashier paid the free draw and gets it back. The player's result says
    what came back to him."""
    powerups.save_rules(draw_every_hands=1, redeal_every_hands=1, draw_step=0, redeal_step=0)
    table = create_fun_table()  # ante 1.00, draws 0.50
    now = timezone.now()
    seat_players(table, [alice, bob], now)
    before = {user.pk: fun(user) for user in (alice, bob)}
    cashier = Account.objects.get(key="cashier:FUN").balance_minor
    hand = deal(table, now)
    a = logged_in(alice)
    for body in ({"free": True}, {}):
        response = a.post(f"/api/tables/{table.pk}/draws/", body, content_type="application/json")
        assert response.status_code == 200, response.json()
    settings.BEACON = "drand"
    settings.DRAND_URL = "http://127.0.0.1:9"  # nothing listens: the round never comes
    late = hand.change_deadline + timedelta(seconds=settings.BEACON_MAX_WAIT_SECONDS + 1)
    assert advance_table(table_id=table.pk, now=late)
    hand.refresh_from_db()
    assert hand.status == HandStatus.CANCELLED
    assert {user.pk: fun(user) for user in (alice, bob)} == before
    assert Account.objects.get(key="cashier:FUN").balance_minor == cashier
    me = a.get(f"/api/tables/{table.pk}/me/").json()
    assert me["entry"]["promo_minor"] == 50
    assert me["entry"]["result"] == {"cancelled": True, "reason": hand.cancel_reason, "refunded_minor": 100 + 50}
    assert check_books().ok
