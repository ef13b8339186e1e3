"""Money people read (memos, staff pages, error messages) is in the currency's format, never in
minor units (issue #11, B; ux audit bug 5)."""

from __future__ import annotations

import re
from datetime import datetime

import pytest
from django.contrib.auth.models import User

from tables.models import Table
from tests.helpers import deal, logged_in, seat_players, settle
from wallet import services as wallet_services
from wallet.errors import InsufficientFundsError
from wallet.models import Account, Transfer

pytestmark = pytest.mark.django_db


def test_the_settlement_memo_shows_rake_and_pool_as_money(table: Table, alice: User, bob: User, now: datetime) -> None:
    seat_players(table, [alice, bob], now)
    deal(table, now)
    hand = settle(table)
    memo = Transfer.objects.get(reference=f"settle:{hand.pk}").memo
    assert re.fullmatch(r"Settlement of hand \d+#1: rake \d+\.\d\d FUN, pool \d+\.\d\d FUN", memo), memo


def test_a_refused_payment_says_what_the_wallet_holds_in_money(alice: User, bob: User) -> None:
    with pytest.raises(InsufficientFundsError) as refused:
        wallet_services.transfer_between(
            source=wallet_services.ensure_player_account(user_id=alice.pk, currency="EUR"),
            destination=wallet_services.ensure_player_account(user_id=bob.pk, currency="EUR"),
            amount_minor=500,
            kind="draw",
            reference="x",
        )
    assert str(refused.value) == "the wallet holds 0.00 EUR, needs 5.00 EUR"


def test_staff_see_account_balances_and_ledger_lines_as_money(alice: User, croupier: User) -> None:
    account = Account.objects.get(key=f"player:{alice.pk}:FUN")
    assert str(account).endswith("(1,000.00 FUN)")
    page = logged_in(croupier).get(f"/admin/wallet/account/{account.pk}/change/").content.decode()
    assert "1,000.00 FUN" in page and "Balance minor" not in page and "100000" not in page
    lines = logged_in(croupier).get("/admin/wallet/ledgerentry/").content.decode()
    assert "1,000.00 FUN" in lines
