"""The tables admin: conditions change only with a reason through the service, actions ask
for a reason, a malfunction cancel refunds in full, secrets stay hidden, auditors only look."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tables.clock import advance_table
from tables.models import Hand, HandStatus, SeatStatus, Table, TableConfigChange, TablePhase
from tables.widerpoker.services.play import buy_draw, buy_redeal
from tests.helpers import WIDERPOKER_CONDITIONS_FORM, deal_hand, logged_in, settle
from wallet.models import Currency
from wallet.selectors import check_books, get_balance_minor

pytestmark = pytest.mark.django_db


def fun(user: User) -> int:
    return get_balance_minor(user_id=user.pk, currency=Currency.FUN)


def run_action(client: Client, action: str, tables: list[Table], reason: str | None) -> str:
    data = {"action": action, "_selected_action": [table.pk for table in tables]}
    if reason is not None:
        data |= {"apply": "yes", "reason": reason}
    response = client.post("/admin/tables/table/", data, follow=True)
    assert response.status_code == 200
    return response.content.decode()


def test_every_tables_admin_page_renders_for_a_croupier(settled_hand: Hand, croupier: User) -> None:
    client = logged_in(croupier)
    entry = settled_hand.entries.first()
    assert entry is not None
    for url in (
        "/admin/",
        "/admin/tables/table/",
        f"/admin/tables/table/{settled_hand.table_id}/change/",
        f"/admin/tables/table/{settled_hand.table_id}/conditions/",
        "/admin/tables/table/add/",
        "/admin/tables/seat/",
        "/admin/tables/hand/",
        f"/admin/tables/hand/{settled_hand.pk}/change/",
        "/admin/tables/entry/",
        f"/admin/tables/entry/{entry.pk}/change/",
        "/admin/tables/tableconfigchange/",
    ):
        assert client.get(url).status_code == 200, url


def test_an_auditor_sees_the_tables_admin_but_cannot_change_anything(fun_table: Table, auditor: User) -> None:
    client = logged_in(auditor)
    assert client.get("/admin/tables/table/").status_code == 200
    change_page = client.get(f"/admin/tables/table/{fun_table.pk}/change/")
    assert change_page.status_code == 200
    assert "Change conditions" not in change_page.content.decode()
    assert client.get(f"/admin/tables/table/{fun_table.pk}/conditions/").status_code == 403
    conditions = client.post(
        f"/admin/tables/table/{fun_table.pk}/conditions/",
        {**WIDERPOKER_CONDITIONS_FORM, "rake_percent": "2.00", "reason": "auditor tries"},
    )
    assert conditions.status_code == 403
    assert client.post(f"/admin/tables/table/{fun_table.pk}/change/", {}).status_code == 403
    assert client.get("/admin/tables/table/add/").status_code == 403
    run_action(client, "close_tables", [fun_table], "auditor tries")
    fun_table.refresh_from_db()
    assert (fun_table.widerpoker.rake_bps, fun_table.is_open) == (500, True)
    assert not TableConfigChange.objects.exists()


def test_changing_conditions_needs_a_reason(fun_table: Table, croupier: User) -> None:
    response = logged_in(croupier).post(
        f"/admin/tables/table/{fun_table.pk}/conditions/",
        {**WIDERPOKER_CONDITIONS_FORM, "rake_percent": "3.00", "reason": "  "},
    )
    assert response.status_code == 200
    assert response.context["form"].errors["reason"]
    assert not TableConfigChange.objects.exists()
    fun_table.refresh_from_db()
    assert fun_table.widerpoker.rake_bps == 500


def test_a_rake_above_ten_percent_is_refused(fun_table: Table, croupier: User) -> None:
    response = logged_in(croupier).post(
        f"/admin/tables/table/{fun_table.pk}/conditions/",
        {**WIDERPOKER_CONDITIONS_FORM, "rake_percent": "12.00", "reason": "more money"},
    )
    assert response.status_code == 200
    assert response.context["form"].errors["rake_percent"]
    assert not TableConfigChange.objects.exists()


def test_a_conditions_change_is_audited_and_applies_after_the_running_hand(
    fun_table: Table, croupier: User, alice: User, bob: User, base: datetime
) -> None:
    deal_hand(fun_table, [alice, bob], base)
    response = logged_in(croupier).post(
        f"/admin/tables/table/{fun_table.pk}/conditions/",
        {**WIDERPOKER_CONDITIONS_FORM, "rake_percent": "3.00", "ante": "2.00", "reason": "Weekend promotion"},
    )
    assert response.status_code == 302
    rows = {row.field: row for row in TableConfigChange.objects.filter(table=fun_table)}
    assert set(rows) == {"rake_bps", "ante_minor"}
    assert (rows["rake_bps"].old_value, rows["rake_bps"].new_value) == (500, 300)
    assert (rows["ante_minor"].old_value, rows["ante_minor"].new_value) == (100, 200)
    assert all(row.changed_by == croupier and row.reason == "Weekend promotion" for row in rows.values())
    assert all(row.applied_at is None for row in rows.values())
    fun_table.refresh_from_db()
    assert fun_table.widerpoker.rake_bps == 500  # the running hand finishes under the old conditions

    hand = settle(fun_table)
    assert hand.config["rake_bps"] == 500
    assert hand.rake_minor == hand.gross_minor * 500 // 10_000
    fun_table.refresh_from_db()
    assert fun_table.phase_deadline is not None
    assert advance_table(table_id=fun_table.pk, now=fun_table.phase_deadline)
    fun_table.refresh_from_db()
    assert (fun_table.widerpoker.rake_bps, fun_table.widerpoker.ante_minor) == (300, 200)
    assert fun_table.pending_changes == {}
    assert all(row.applied_at is not None for row in TableConfigChange.objects.all())
    assert not fun_table.seats.exclude(status=SeatStatus.LEFT).exists()  # back to the lobby


def test_a_conditions_change_on_an_idle_table_applies_at_once(fun_table: Table, croupier: User) -> None:
    logged_in(croupier).post(
        f"/admin/tables/table/{fun_table.pk}/conditions/",
        {**WIDERPOKER_CONDITIONS_FORM, "draw_price_percent": "75", "reason": "price review"},
    )
    fun_table.refresh_from_db()
    assert fun_table.widerpoker.draw_price_minor == 75
    change = TableConfigChange.objects.get(table=fun_table)
    assert change.applied_at is not None


def test_the_add_form_creates_a_table_through_the_service(croupier: User) -> None:
    client = logged_in(croupier)
    refused = client.post(
        "/admin/tables/table/add/",
        {**WIDERPOKER_CONDITIONS_FORM, "name": "Euro Rail", "mode": "fun", "currency": "EUR"},
    )
    assert refused.status_code == 200
    assert "fun tables play FUN chips" in refused.content.decode()
    assert not Table.objects.exists()
    created = client.post(
        "/admin/tables/table/add/",
        {**WIDERPOKER_CONDITIONS_FORM, "name": "Euro Rail", "mode": "cash", "currency": "EUR", "ante": "2.50"},
    )
    assert created.status_code == 302
    table = Table.objects.get(name="Euro Rail")
    assert (table.mode, table.currency, table.widerpoker.ante_minor, table.widerpoker.rake_bps) == (
        "cash",
        "EUR",
        250,
        500,
    )


def test_closing_asks_for_a_reason_then_closes_and_logs_it(fun_table: Table, croupier: User) -> None:
    client = logged_in(croupier)
    page = run_action(client, "close_tables", [fun_table], None)
    assert "Reason" in page
    fun_table.refresh_from_db()
    assert fun_table.is_open
    run_action(client, "close_tables", [fun_table], "maintenance")
    closed = Table.objects.get(pk=fun_table.pk)  # a fresh object: mypy keeps the narrowing above
    assert not closed.is_open
    assert closed.phase == TablePhase.CLOSED
    change = TableConfigChange.objects.get(table=fun_table, field="is_open")
    assert (change.new_value, change.reason, change.changed_by) == (False, "maintenance", croupier)
    run_action(client, "open_tables", [fun_table], "maintenance over")
    fun_table.refresh_from_db()
    assert fun_table.is_open


def test_cancelling_the_running_hand_refunds_every_wager_in_full(
    fun_table: Table, croupier: User, alice: User, bob: User, base: datetime
) -> None:
    before = {alice.pk: fun(alice), bob.pk: fun(bob)}
    hand = deal_hand(fun_table, [alice, bob], base)
    buy_draw(table_id=fun_table.pk, user_id=alice.pk, now=base + timedelta(seconds=1))
    buy_redeal(table_id=fun_table.pk, user_id=bob.pk, now=base + timedelta(seconds=2))
    assert fun(alice) == before[alice.pk] - 150 and fun(bob) == before[bob.pk] - 180

    page = run_action(logged_in(croupier), "cancel_running_hands", [fun_table], "frozen screen")
    assert "cancelled and refunded" in page
    hand.refresh_from_db()
    assert hand.status == HandStatus.CANCELLED
    assert "frozen screen" in hand.cancel_reason and "croupier" in hand.cancel_reason
    assert {alice.pk: fun(alice), bob.pk: fun(bob)} == before
    assert check_books().ok
    fun_table.refresh_from_db()
    assert fun_table.phase == TablePhase.WAITING and fun_table.current_hand is None


def test_cancelling_with_no_running_hand_changes_nothing(settled_hand: Hand, croupier: User) -> None:
    table = settled_hand.table
    page = run_action(logged_in(croupier), "cancel_running_hands", [table], "just in case")
    assert "nothing to do" in page
    settled_hand.refresh_from_db()
    assert settled_hand.status == HandStatus.SETTLED


def test_the_hand_admin_never_shows_the_seed_of_a_running_hand(
    fun_table: Table, croupier: User, alice: User, bob: User, base: datetime
) -> None:
    hand = deal_hand(fun_table, [alice, bob], base)
    client = logged_in(croupier)
    page = client.get(f"/admin/tables/hand/{hand.pk}/change/").content.decode()
    assert hand.commitment in page
    assert hand.server_seed not in page
    settle(fun_table)
    page = client.get(f"/admin/tables/hand/{hand.pk}/change/").content.decode()
    assert hand.server_seed in page
    assert f"/history/hands/{hand.pk}/" in page
