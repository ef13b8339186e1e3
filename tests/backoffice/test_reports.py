"""The staff report pages: dashboard with the books check, rake by table and day with CSV,
and the configuration audit log. Staff only; auditors read them too."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db.models import F
from django.utils import timezone

from tables.games import change_table_config
from tables.models import Hand, Table
from tests.helpers import create_fun_table, logged_in
from wallet.models import Account

pytestmark = pytest.mark.django_db


def test_players_are_sent_to_the_staff_login(alice: User) -> None:
    client = logged_in(alice)
    for url in ("/backoffice/", "/backoffice/rake/", "/backoffice/rake.csv", "/backoffice/config-changes/"):
        response = client.get(url)
        assert response.status_code == 302, url
        assert "/admin/login/" in response["Location"]


def test_the_dashboard_shows_tables_todays_totals_and_green_books(settled_hand: Hand, auditor: User) -> None:
    response = logged_in(auditor).get("/backoffice/")
    assert response.status_code == 200
    assert response.context["books"].ok
    [row] = response.context["rows"]
    assert (row.table_name, row.hands, row.gross_minor, row.rake_minor) == (
        "Test Rail",
        1,
        settled_hand.gross_minor,
        settled_hand.rake_minor,
    )
    assert row.prizes_minor == settled_hand.pool_minor - settled_hand.breakage_minor
    page = response.content.decode()
    assert "The books balance" in page and "Test Rail" in page


def test_the_dashboard_shows_the_books_in_red_when_a_balance_drifts(settled_hand: Hand, croupier: User) -> None:
    account = Account.objects.filter(key__startswith="player:").order_by("pk").first()
    assert account is not None
    Account.objects.filter(pk=account.pk).update(balance_minor=F("balance_minor") + 1)
    response = logged_in(croupier).get("/backoffice/")
    assert not response.context["books"].ok
    page = response.content.decode()
    assert "The books do not balance" in page
    assert "Balances that differ from their entries" in page


def test_the_rake_report_sums_rake_by_table_and_day_within_the_range(settled_hand: Hand, croupier: User) -> None:
    client = logged_in(croupier)
    assert settled_hand.settled_at is not None
    today = settled_hand.settled_at.date()
    report = client.get("/backoffice/rake/", {"start": today.isoformat(), "end": today.isoformat()})
    assert report.status_code == 200
    [row] = report.context["rows"]
    assert (row.day, row.rake_minor) == (today, settled_hand.rake_minor)
    [total] = report.context["totals"]
    assert (total.currency, total.rake_minor) == ("FUN", settled_hand.rake_minor)
    last_year = today - timedelta(days=365)
    empty = client.get("/backoffice/rake/", {"start": last_year.isoformat(), "end": last_year.isoformat()})
    assert empty.context["rows"] == []
    backwards = client.get("/backoffice/rake/", {"start": today.isoformat(), "end": last_year.isoformat()})
    assert backwards.status_code == 200
    assert "must not be after" in backwards.content.decode()


def test_the_rake_report_downloads_as_csv(settled_hand: Hand, auditor: User) -> None:
    assert settled_hand.settled_at is not None
    today = settled_hand.settled_at.date().isoformat()
    response = logged_in(auditor).get("/backoffice/rake.csv", {"start": today, "end": today})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 1
    assert rows[0]["table"] == "Test Rail"
    assert rows[0]["day"] == today
    rake = settled_hand.rake_minor
    assert rows[0]["rake"] == f"{rake // 100}.{rake % 100:02d}"


def test_the_audit_log_lists_configuration_changes_by_table(fun_table: Table, croupier: User, auditor: User) -> None:
    other = create_fun_table("Other Rail")
    now = timezone.now()
    change_table_config(
        table_id=fun_table.pk,
        changes={"rake_bps": 300},
        staff_user_id=croupier.pk,
        reason="promotion",
        now=now,
    )
    change_table_config(
        table_id=other.pk,
        changes={"max_draws": 3},
        staff_user_id=croupier.pk,
        reason="shorter hands",
        now=now,
    )
    client = logged_in(auditor)
    everything = client.get("/backoffice/config-changes/")
    assert everything.status_code == 200
    assert len(everything.context["page"].object_list) == 2
    one = client.get("/backoffice/config-changes/", {"table": fun_table.pk})
    [change] = one.context["page"].object_list
    assert (change.field, change.old_value, change.new_value) == ("rake_bps", 500, 300)
    assert "promotion" in one.content.decode() and "shorter hands" not in one.content.decode()
