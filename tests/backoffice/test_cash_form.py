"""Security audit F9: the staff cash form records one movement per submission, bounds the
amount, and speaks money to people, never minor units."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.helpers import logged_in
from wallet import services as wallet_services
from wallet.models import Account, Transfer, TransferKind
from wallet.selectors import check_books, get_balance_minor

pytestmark = pytest.mark.django_db


def cash_form(client: Client, account: Account) -> dict[str, str]:
    """The form as the page serves it: its one-off token included."""
    page = client.get(f"/admin/wallet/account/{account.pk}/cash/").content.decode()
    token = re.search(r'name="token" value="([0-9a-f-]{36})"', page)
    assert token is not None, "the form carries a token"
    return {"direction": "deposit", "amount": "25.00", "reason": "bank transfer 77", "token": token.group(1)}


@pytest.fixture
def eur_account(alice: User) -> Account:
    return wallet_services.ensure_player_account(user_id=alice.pk, currency="EUR")


def test_submitting_the_same_form_twice_records_one_deposit(croupier: User, alice: User, eur_account: Account) -> None:
    client = logged_in(croupier)
    form = cash_form(client, eur_account)
    first = client.post(f"/admin/wallet/account/{eur_account.pk}/cash/", form, follow=True)
    again = client.post(f"/admin/wallet/account/{eur_account.pk}/cash/", form, follow=True)
    assert "Deposit of 25.00 EUR recorded" in first.content.decode()
    assert "already submitted" in again.content.decode()
    assert get_balance_minor(user_id=alice.pk, currency="EUR") == 2500
    assert Transfer.objects.filter(kind=TransferKind.DEPOSIT).count() == 1
    # A fresh form (a new token) is a new deposit.
    client.post(f"/admin/wallet/account/{eur_account.pk}/cash/", cash_form(client, eur_account))
    assert get_balance_minor(user_id=alice.pk, currency="EUR") == 5000
    assert check_books().ok


@pytest.mark.parametrize(
    ("amount", "message"),
    [
        ("1e20", "at most 10,000.00 EUR"),
        ("10000.01", "at most 10,000.00 EUR"),
        ("99999999999999999999999", "at most 10,000.00 EUR"),
        ("-5", "the amount must be positive"),
        ("0.001", "at most two decimals"),
        ("NaN", "the amount must be positive"),
    ],
)
def test_out_of_bounds_amounts_are_form_errors_not_500s(
    croupier: User, alice: User, eur_account: Account, amount: str, message: str
) -> None:
    client = logged_in(croupier)
    response = client.post(
        f"/admin/wallet/account/{eur_account.pk}/cash/", {**cash_form(client, eur_account), "amount": amount}
    )
    assert response.status_code == 200
    assert message in response.content.decode()
    assert get_balance_minor(user_id=alice.pk, currency="EUR") == 0


def test_a_withdrawal_beyond_the_balance_is_explained_in_money(
    croupier: User, alice: User, eur_account: Account
) -> None:
    client = logged_in(croupier)
    form = {**cash_form(client, eur_account), "direction": "withdrawal", "amount": "5.00"}
    response = client.post(f"/admin/wallet/account/{eur_account.pk}/cash/", form)
    page = response.content.decode()
    assert "holds 0.00 EUR, needs 5.00 EUR" in page
    assert "needs 500" not in page  # minor units never reach people
    assert not Transfer.objects.filter(kind=TransferKind.WITHDRAWAL).exists()


def test_the_form_without_its_token_records_nothing(croupier: User, alice: User, eur_account: Account) -> None:
    client = logged_in(croupier)
    form = cash_form(client, eur_account)
    del form["token"]
    assert client.post(f"/admin/wallet/account/{eur_account.pk}/cash/", form).status_code == 200
    assert get_balance_minor(user_id=alice.pk, currency="EUR") == 0
