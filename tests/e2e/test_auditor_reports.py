"""An auditor, in real Chromium, opens the auditor report for a range, sees its charts
drawn, and downloads the hands of the range as CSV."""

from __future__ import annotations

import csv
import io

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.server import manage

pytestmark = [pytest.mark.browser, pytest.mark.slow]
# The hand is played below with an injected clock; the server's own clock would race it.
E2E_TABLE_CLOCK = "off"

AUDITOR, AUDITOR_PASSWORD = "ada-auditor", "ledger-lines-2026"
PLAY_A_SETTLED_HAND = f"""
from datetime import timedelta
from django.contrib.auth.models import Group, User
from django.utils import timezone
from tables.clock import advance_table
from tables.widerpoker.services.seating import join_table
from tables.widerpoker.services.create import create_table
from wallet.services import grant_signup_fun_chips

table = create_table(name="Audit Rail", mode="fun", currency="FUN", ante_minor=100,
                     draw_price_bps=5000, redeal_price_minor=80)
start = timezone.now() - timedelta(minutes=2)
for name in ("ivy", "jon"):
    player = User.objects.create_user(username=name, password="x-" + name + "-pass-1")
    grant_signup_fun_chips(user_id=player.pk)
    join_table(table_id=table.pk, user_id=player.pk, now=start)
advance_table(table_id=table.pk, now=start)
# Algorithm 3: the first step froze the inputs; the deal round (3 s rounds) deals.
advance_table(table_id=table.pk, now=start + timedelta(seconds=4))
table.refresh_from_db()
hand = table.current_hand
# The keys wait for the first beacon round after the deadline (3 s rounds).
advance_table(table_id=table.pk, now=hand.change_deadline + timedelta(seconds=4))
hand.refresh_from_db()
auditor = User.objects.create_user(username={AUDITOR!r}, password={AUDITOR_PASSWORD!r}, is_staff=True)
auditor.groups.add(Group.objects.get(name="Auditors"))
print(hand.pk, hand.status, hand.settled_at.date().isoformat())
"""


def test_an_auditor_downloads_a_csv_for_a_range_and_sees_the_charts(server: str, browser: Browser) -> None:
    manage(server, "create_staff_groups")
    hand_id, status, day = manage(server, "shell", "-c", PLAY_A_SETTLED_HAND).split()[-3:]
    assert status == "settled"
    context = browser.new_context(viewport={"width": 1366, "height": 800}, accept_downloads=True)
    page = context.new_page()
    page.goto(f"{server}/admin/login/")
    page.fill("#id_username", AUDITOR)
    page.fill("#id_password", AUDITOR_PASSWORD)
    page.click("input[type=submit]")
    page.goto(f"{server}/backoffice/audit/?start={day}&end={day}&group=table")
    expect(page.locator("[data-testid=audit-totals]")).to_contain_text("Audit Rail")
    chart = page.locator("[data-testid=chart-rtp-FUN]")
    expect(chart).to_be_visible()
    drawn = page.evaluate(
        "() => ['rtp-FUN', 'prizes-FUN'].map((id) => Chart.getChart(document.getElementById(id)) !== undefined)"
    )
    assert drawn == [True, True]
    page.screenshot(path="/tmp/e2e-auditor-report.png", full_page=True)
    with page.expect_download() as download_info:
        page.click("[data-testid=download-hands-csv]")
    download = download_info.value
    assert download.suggested_filename == f"hands-{day}-{day}.csv"
    path = download.path()
    assert path is not None
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    assert [row["id"] for row in rows] == [hand_id]
    assert rows[0]["table_name"] == "Audit Rail" and len(rows[0]["server_seed"]) == 64
    context.close()
