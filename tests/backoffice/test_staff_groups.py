"""Staff roles as groups: auditors read everything and change nothing; croupiers run tables."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.test import Client

pytestmark = pytest.mark.django_db


def staff(username: str, group: str) -> Client:
    call_command("create_staff_groups", verbosity=0)
    user = User.objects.create_user(username=username, password="x", is_staff=True)
    user.groups.add(*Group.objects.filter(name=group))
    client = Client()
    client.force_login(user)
    return client


def test_an_auditor_reads_hands_ledger_and_reports_but_changes_no_table(db: Any) -> None:
    client = staff("audrey", "Auditors")
    for url in (
        "/admin/tables/hand/",
        "/admin/wallet/ledgerentry/",
        "/admin/tables/tableconfigchange/",
        "/backoffice/",
    ):
        assert client.get(url).status_code == 200, url
    user = User.objects.get(username="audrey")
    assert not user.has_perm("tables.change_table")
    assert not user.has_perm("wallet.change_account")


def test_a_croupier_may_change_tables_and_record_cash(db: Any) -> None:
    staff("cris", "Croupiers")
    user = User.objects.get(username="cris")
    assert user.has_perm("tables.change_table")
    assert user.has_perm("wallet.change_account")
    assert user.has_perm("tables.view_hand")


def test_creating_the_groups_twice_changes_nothing(db: Any) -> None:
    from backoffice.management.commands.create_staff_groups import ensure_staff_groups

    assert ensure_staff_groups() == ensure_staff_groups()


def test_an_auditor_cannot_record_cash_but_a_croupier_can(db: Any, alice: User) -> None:
    from wallet import services as wallet_services
    from wallet.selectors import get_balance_minor

    account = wallet_services.ensure_player_account(user_id=alice.pk, currency="EUR")
    form = {"direction": "deposit", "amount": "12.50", "reason": "bank transfer 991", "token": str(uuid.uuid4())}
    auditor = staff("audrey", "Auditors")
    assert auditor.post(f"/admin/wallet/account/{account.pk}/cash/", form).status_code == 403
    assert get_balance_minor(user_id=alice.pk, currency="EUR") == 0
    croupier = staff("cris", "Croupiers")
    assert croupier.post(f"/admin/wallet/account/{account.pk}/cash/", form).status_code == 302
    assert get_balance_minor(user_id=alice.pk, currency="EUR") == 1250


def test_the_account_page_leads_a_croupier_to_the_cash_form_and_lists_the_ledger(db: Any, alice: User) -> None:
    from wallet import services as wallet_services

    account = wallet_services.ensure_player_account(user_id=alice.pk, currency="EUR")
    fun = wallet_services.ensure_player_account(user_id=alice.pk, currency="FUN")
    croupier = staff("cris", "Croupiers")
    page = croupier.get(f"/admin/wallet/account/{account.pk}/change/").content.decode()
    assert f"/admin/wallet/account/{account.pk}/cash/" in page
    fun_page = croupier.get(f"/admin/wallet/account/{fun.pk}/change/").content.decode()
    assert "fun_grant:" in fun_page  # the sign-up grant in the latest ledger entries
    assert "/cash/" not in fun_page  # fun chips are never moved as cash
    auditor_page = staff("audrey", "Auditors").get(f"/admin/wallet/account/{account.pk}/change/").content.decode()
    assert "/cash/" not in auditor_page
