"""The prize-pool simulator page (seed 001, Prize Pool Allocation): the same arithmetic as
settlement, for a table's conditions or custom ones."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from jackpots.models import Jackpot, JackpotKind
from tables.engine.widerpoker import HandConditions, JackpotFeed, simulate_prizes
from tests.helpers import create_fun_table

pytestmark = pytest.mark.django_db

CUSTOM = {
    "ante": "2.00",
    "draw_price_percent": "50",
    "redeal_price": "1.00",
    "rake_percent": "5",
    "paid_percent": "20",
    "min_prize": "0.50",
    "jackpot_percent": "1",
    "players": "1000",
    "extra_draws": "300",
    "redeals": "40",
}


def test_the_simulator_shows_the_money_and_every_paid_place(db: Any) -> None:
    response = Client().get("/simulator/", CUSTOM)
    assert response.status_code == 200
    result = response.context["result"]
    gross = 1000 * 200 + 300 * 100 + 40 * 100
    expected = simulate_prizes(
        1000,
        gross,
        HandConditions(
            rake_bps=500, paid_fraction_bps=2000, min_prize_minor=50, jackpots=(JackpotFeed("j", "royal", 100),)
        ),
    )
    assert result["gross_minor"] == gross
    assert (result["jackpots_minor"], result["rake_minor"]) == (gross // 100, gross * 5 // 100)
    assert result["pool_minor"] == expected.split.pool_minor == gross - gross // 100 - gross * 5 // 100
    assert result["paid_places"] == 200
    assert result["listed"][0][1] == int(expected.place_prizes_minor[0])
    assert result["listed"][-1] == (200, int(expected.place_prizes_minor[-1]))
    page = response.content.decode()
    assert 'id="prize-chart"' in page and "chart.umd.min.js" in page


def test_a_table_fills_in_its_conditions(db: Any) -> None:
    table = create_fun_table(name="Sim Rail", ante_minor=300, rake_bps=400, paid_fraction_bps=1000)
    table.jackpots.add(Jackpot.objects.create(name="R", kind=JackpotKind.ROYAL, currency="FUN", contribution_bps=75))
    form = Client().get("/simulator/", {"table": table.pk}).context["form"]
    assert form.initial["ante"] == 3 and form.initial["rake_percent"] == 4
    assert form.initial["jackpot_percent"] == 0.75 and form.initial["paid_percent"] == 10


def test_bad_input_is_a_form_error_not_a_500(db: Any) -> None:
    response = Client().get("/simulator/", {**CUSTOM, "rake_percent": "11", "extra_draws": "999999"})
    assert response.status_code == 200
    form = response.context["form"]
    assert "rake_percent" in form.errors and response.context["result"] is None
    response = Client().get("/simulator/", {**CUSTOM, "players": "10", "extra_draws": "41"})
    assert "extra_draws" in response.context["form"].errors
    assert Client().get("/simulator/", {"table": "abc"}).status_code == 200
