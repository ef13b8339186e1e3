"""Jackpots where players see them: the lobby's icon and live amount, the API's lobby line
and the table's conditions page (seed 001, Jackpots: "indicated in the game lobby with an
identifying icon"; Rake: the lobby informs on the ante and the rake)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from jackpots import services as jackpot_services
from jackpots.models import Jackpot, JackpotKind
from tables.models import Table
from tests.helpers import create_fun_table, logged_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def table_with_jackpots(db: Any, croupier: User) -> Table:
    table = create_fun_table(name="Crown Rail", paid_fraction_bps=2000, min_prize_minor=150)
    royal = Jackpot.objects.create(name="Crown", kind=JackpotKind.ROYAL, currency="FUN", contribution_bps=100)
    gold = Jackpot.objects.create(name="Gold Spin", kind=JackpotKind.GOLD, currency="FUN", one_in=6000)
    table.jackpots.set([royal, gold])
    jackpot_services.fund_jackpot(
        jackpot_id=royal.pk, amount_minor=123_456, reference="crown", staff_user_id=croupier.pk
    )
    create_fun_table(name="Plain Rail")
    return table


def test_the_lobby_shows_each_tables_jackpots_with_live_amounts(table_with_jackpots: Table, alice: User) -> None:
    page = logged_in(alice).get("/").content.decode()
    assert page.count('data-testid="jackpot"') == 2
    assert "1,234.56 FUN" in page
    assert "top 20%" in page
    assert "top 15% are paid" not in page.lower()


def test_the_lobby_api_lists_jackpots_and_every_condition(table_with_jackpots: Table, alice: User) -> None:
    lines = {line["name"]: line for line in logged_in(alice).get("/api/tables/").json()}
    crown = lines["Crown Rail"]
    assert [(j["kind"], j["balance_minor"]) for j in crown["jackpots"]] == [("royal", 123_456), ("gold", 0)]
    assert crown["paid_fraction_bps"] == 2000 and crown["min_prize_minor"] == 150
    assert lines["Plain Rail"]["jackpots"] == []


def test_the_conditions_page_shows_everything_to_anyone(table_with_jackpots: Table) -> None:
    response = Client().get(f"/tables/{table_with_jackpots.pk}/details/")
    assert response.status_code == 200
    page = response.content.decode()
    for text in (
        "1.00 FUN",
        "5% of the amount played",
        "the best 20% of the entries",
        "each at least 1.50 FUN",
        "each further draw 0.50 FUN (50% of the ante)",
        "Crown",
        "1,234.56 FUN",
        "once in 6000 hands",
    ):
        assert text in page, text
    assert Client().get("/tables/999999/details/").status_code == 404
