"""The wallet page: balances, transactions, and the fun chips top-up."""

from __future__ import annotations

import re
from datetime import datetime

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from tables.widerpoker.services.create import create_table
from tests.helpers import deal_hand, logged_in
from wallet.models import Currency, Transfer, TransferKind
from wallet.money import format_minor
from wallet.selectors import get_balance_minor

pytestmark = pytest.mark.django_db


def test_wallet_needs_a_login(client: Client) -> None:
    response = client.get("/wallet/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_wallet_shows_balances_and_transactions(alice: User) -> None:
    page = logged_in(alice).get("/wallet/")
    html = page.content.decode()
    assert page.context["balances"] == {"EUR": 0, "FUN": settings.FUN_SIGNUP_GRANT_MINOR}
    assert format_minor(settings.FUN_SIGNUP_GRANT_MINOR, "FUN") in html
    [entry] = page.context["page"].object_list
    assert entry.transfer.kind == TransferKind.FUN_GRANT
    assert "Fun chips at sign-up" in html
    assert "Fun chips granted at sign-up" in html
    assert f"+{format_minor(settings.FUN_SIGNUP_GRANT_MINOR, 'FUN')}" in html


def test_wallet_lists_the_ante_with_the_balance_after(alice: User, bob: User, now: datetime) -> None:
    table = create_table(
        name="Ante Rail",
        mode="fun",
        currency="FUN",
        ante_minor=150,
        draw_price_bps=5000,
        redeal_price_minor=50,
    )
    deal_hand(table, [alice, bob], now)
    page = logged_in(alice).get("/wallet/?currency=FUN")
    newest = page.context["page"].object_list[0]
    assert newest.transfer.kind == TransferKind.ANTE
    assert newest.delta_minor == -150
    html = page.content.decode()
    assert "-1.50 FUN" in html
    assert format_minor(settings.FUN_SIGNUP_GRANT_MINOR - 150, "FUN") in html


def test_top_up_is_refused_while_the_balance_is_not_low(alice: User) -> None:
    client = logged_in(alice)
    response = client.post("/wallet/top-up/", follow=True)
    assert "Top-up refused" in response.content.decode()
    assert get_balance_minor(user_id=alice.pk, currency=Currency.FUN) == (settings.FUN_SIGNUP_GRANT_MINOR)
    assert not Transfer.objects.filter(kind=TransferKind.FUN_TOP_UP).exists()


def test_top_up_refills_a_low_balance(alice: User, bob: User, now: datetime) -> None:
    # A big ante brings alice's chips below the top-up threshold through the real services.
    ante = settings.FUN_SIGNUP_GRANT_MINOR - settings.FUN_TOP_UP_BELOW_MINOR + 1
    table = create_table(
        name="Big Rail",
        mode="fun",
        currency="FUN",
        ante_minor=ante,
        draw_price_bps=0,
        redeal_price_minor=0,
    )
    deal_hand(table, [alice, bob], now)
    assert get_balance_minor(user_id=alice.pk, currency=Currency.FUN) < (settings.FUN_TOP_UP_BELOW_MINOR)
    response = logged_in(alice).post("/wallet/top-up/", follow=True)
    assert "Fun chips topped up" in response.content.decode()
    assert get_balance_minor(user_id=alice.pk, currency=Currency.FUN) == (settings.FUN_TOP_UP_TO_MINOR)
    assert Transfer.objects.filter(kind=TransferKind.FUN_TOP_UP).count() == 1


def test_top_up_needs_a_post(alice: User) -> None:
    assert logged_in(alice).get("/wallet/top-up/").status_code == 405


def test_the_top_up_button_is_disabled_with_its_reason_until_the_balance_is_low(
    alice: User, bob: User, now: datetime
) -> None:
    """UX audit 2026-11-26, N19: the button looked available at 900 FUN and was refused only
    after the click. Now it is disabled, described by the rule that says why."""
    button = re.compile(r'<button[^>]*data-testid="top-up"[^>]*>')
    page = logged_in(alice).get("/wallet/").content.decode()
    tag = button.search(page)
    assert tag is not None and " disabled" in tag.group(0) and 'aria-describedby="top-up-rule"' in tag.group(0)
    assert "Not available now: your balance is not below 100.00 FUN." in page
    ante = settings.FUN_SIGNUP_GRANT_MINOR - settings.FUN_TOP_UP_BELOW_MINOR + 1
    table = create_table(
        name="Big Rail", mode="fun", currency="FUN", ante_minor=ante, draw_price_bps=0, redeal_price_minor=0
    )
    deal_hand(table, [alice, bob], now)
    page = logged_in(alice).get("/wallet/").content.decode()
    tag = button.search(page)
    assert tag is not None and " disabled" not in tag.group(0) and "Not available now" not in page
