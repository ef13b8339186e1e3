"""The wallet's and the jackpots' admin pages that reach the apps above them live in the back
office (issue 21: backoffice/admin_wallet.py, backoffice/admin_jackpots.py), with the same URLs
and templates as before, used by a Croupier through the admin forms outside the test
transaction."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.utils import timezone

from jackpots.models import Jackpot
from tables.models import Seat, SeatStatus
from tables.widerpoker.services.seating import join_table
from tests.helpers import create_fun_table, logged_in
from wallet import services as wallet_services
from wallet.models import Account, Suspension

pytestmark = pytest.mark.django_db(transaction=True)


def template_names(response: Any) -> list[str]:
    return [template.name for template in response.templates if template.name]


def test_the_pages_keep_their_urls_and_templates(croupier: User, alice: User) -> None:
    account = wallet_services.ensure_player_account(user_id=alice.pk, currency="EUR")
    table = create_fun_table("Picked Rail")
    client = logged_in(croupier)
    cash = client.get(f"/admin/wallet/account/{account.pk}/cash/")
    assert cash.status_code == 200 and "admin/wallet/cash_movement.html" in template_names(cash)
    change = client.get(f"/admin/wallet/account/{account.pk}/change/")
    assert change.status_code == 200 and f"/admin/wallet/account/{account.pk}/cash/" in change.content.decode()
    suspension = client.get("/admin/wallet/suspension/add/")
    assert suspension.status_code == 200 and "admin/wallet/suspension_form.html" in template_names(suspension)
    funding = client.get("/admin/jackpots/jackpot/fund-house/")
    assert funding.status_code == 200 and "admin/jackpots/jackpot/house_funding.html" in template_names(funding)
    add = client.get("/admin/jackpots/jackpot/add/")
    assert add.status_code == 200 and f'value="{table.pk}"' in add.content.decode()
    for model in (Account, Suspension, Jackpot):
        assert type(admin.site._registry[model]).__module__.startswith("backoffice.")


def test_a_croupier_deposit_refreshes_the_players_game_screens(
    croupier: User, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    from backoffice import admin_wallet

    pushed: list[int] = []
    monkeypatch.setattr(admin_wallet, "push_player_on_commit", pushed.append)
    account = wallet_services.ensure_player_account(user_id=alice.pk, currency="EUR")
    form = {"direction": "deposit", "amount": "7.00", "reason": "bank transfer 12", "token": str(uuid.uuid4())}
    response = logged_in(croupier).post(f"/admin/wallet/account/{account.pk}/cash/", form)
    assert response.status_code == 302 and response["Location"] == f"/admin/wallet/account/{account.pk}/change/"
    account.refresh_from_db()
    assert account.balance_minor == 700
    assert pushed == [alice.pk]


def test_a_croupier_suspends_a_seated_player_and_the_player_leaves_the_table(croupier: User, alice: User) -> None:
    table = create_fun_table()
    join_table(table_id=table.pk, user_id=alice.pk, now=timezone.now())
    client = logged_in(croupier)
    form = {"username": "alice", "action": "suspend", "reason": "chargeback under review"}
    response = client.post("/admin/wallet/suspension/add/", form)
    assert response.status_code == 302 and response["Location"] == "/admin/wallet/suspension/"
    assert Suspension.objects.get(user=alice, lifted_at__isnull=True).reason == "chargeback under review"
    assert Seat.objects.get(table=table, user=alice).status == SeatStatus.LEFT
    lifted = client.post("/admin/wallet/suspension/add/", {**form, "action": "lift", "reason": "cleared"})
    assert lifted.status_code == 302
    assert not Suspension.objects.filter(user=alice, lifted_at__isnull=True).exists()
