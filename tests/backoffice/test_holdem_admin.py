"""Staff create Hold'em tables and change their conditions in the admin, with a reason,
audit-logged and applied between hands (through the services)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from tables.models import HoldemConditions, Table, TableConfigChange
from tests.helpers import logged_in
from tests.tables.holdem_helpers import holdem_table

pytestmark = pytest.mark.django_db

FORM = {
    "betting": "pot-limit",
    "small_blind_minor": "0.05",
    "big_blind_minor": "0.10",
    "big_bet_minor": "0.20",
    "seats": "6",
    "min_buy_in_minor": "2.00",
    "max_buy_in_minor": "10.00",
    "rake_bps": "5",
    "rake_cap_minor": "",
    "time_bank_seconds": "20",
    "bot_seats": "2",
}


def test_staff_create_a_holdem_table(croupier: User) -> None:
    client = logged_in(croupier)
    assert client.get("/admin/tables/table/add-holdem/").status_code == 200
    response = client.post(
        "/admin/tables/table/add-holdem/", {**FORM, "name": "PLO Six", "mode": "fun", "currency": "FUN"}
    )
    assert response.status_code == 302
    table = Table.objects.get(name="PLO Six")
    assert table.game == "holdem" and table.holdem.betting == "pot-limit" and table.holdem.bot_seats == 2


def test_bots_at_a_cash_table_are_refused_with_the_code(croupier: User) -> None:
    response = logged_in(croupier).post(
        "/admin/tables/table/add-holdem/", {**FORM, "name": "Cash", "mode": "cash", "currency": "EUR"}
    )
    assert response.status_code == 200 and "invalid_table_config" in response.content.decode()
    assert not Table.objects.filter(name="Cash").exists()


def test_staff_change_holdem_conditions_with_a_reason(croupier: User) -> None:
    table = holdem_table()
    client = logged_in(croupier)
    url = f"/admin/tables/table/{table.pk}/conditions/"
    assert client.get(url).status_code == 200
    data = {**FORM, "betting": "no-limit", "bot_seats": "0", "rake_bps": "3", "reason": "weekend promo"}
    data["rake_cap_minor"] = "0.30"
    assert client.post(url, data).status_code == 302
    change = TableConfigChange.objects.get(table=table, field="rake_bps")
    assert (change.old_value, change.new_value, change.reason) == (500, 300, "weekend promo")
    # No hand is running: the clock applies it at its next tick.
    from django.utils import timezone

    from tables.clock import advance_table

    advance_table(table_id=table.pk, now=timezone.now())
    assert HoldemConditions.objects.get(table=table).rake_bps == 300


@pytest.mark.django_db(transaction=True)
def test_a_croupier_reads_and_types_holdem_money_in_the_currency_and_the_rake_in_percent(
    croupier: User,
) -> None:
    from django.utils import timezone

    from tables.clock import advance_table

    table = holdem_table()
    client = logged_in(croupier)
    url = f"/admin/tables/table/{table.pk}/conditions/"
    conditions = HoldemConditions.objects.get(table=table)
    form = client.get(url).context["form"]
    assert form.initial["rake_bps"] == conditions.rake_bps / 100
    assert form.initial["big_blind_minor"] * 100 == conditions.big_blind_minor
    data = {**FORM, "bot_seats": "0", "rake_bps": "2.5", "rake_cap_minor": "0.30", "reason": "cheaper rake"}
    assert client.post(url, data).status_code == 302
    advance_table(table_id=table.pk, now=timezone.now())
    conditions.refresh_from_db()
    assert (conditions.rake_bps, conditions.rake_cap_minor, conditions.big_blind_minor) == (250, 30, 10)
