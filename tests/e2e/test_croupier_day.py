"""A croupier's day in real Chromium, logged in as a member of the Croupiers group (not a
superuser): fund the jackpot reserve and promotions, create a special-hand schedule, create
a jackpot with a starting amount and see it in the lobby, change the rake (issue 20)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.server import manage

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CROUPIER, PASSWORD = "cora-croupier", "green-baize-2026"
TABLE = "Croupier Day"
SETUP = f"""
from django.contrib.auth.models import Group, User
from tables.services import create_table
table = create_table(name={TABLE!r}, mode="cash", currency="EUR", ante_minor=100, draw_price_bps=5000,
                     redeal_price_minor=80)
croupier = User.objects.create_user(username={CROUPIER!r}, password={PASSWORD!r}, is_staff=True)
croupier.groups.add(Group.objects.get(name="Croupiers"))
print(table.pk)
"""


def saved(page: Page) -> None:
    """The admin answered with its success message (never a 403 or a 500 page)."""
    expect(page.locator(".messagelist .success")).to_be_visible()


def fund(page: Page, server: str, account: str, amount: str, reason: str) -> None:
    page.goto(f"{server}/admin/jackpots/jackpot/fund-house/")
    page.select_option("#id_account", account)
    page.select_option("#id_currency", "EUR")
    page.fill("#id_amount", amount)
    page.fill("#id_reason", reason)
    page.click("input[type=submit][value=Fund]")
    saved(page)


def test_a_croupier_funds_schedules_creates_a_jackpot_and_changes_the_rake(server: str, browser: Browser) -> None:
    manage(server, "create_staff_groups")
    table_id = manage(server, "shell", "-c", SETUP).split()[-1]
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{server}/admin/login/")
    page.fill("#id_username", CROUPIER)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page.locator("#user-tools")).to_contain_text(CROUPIER)

    # The house's money first: the reserve pays the jackpot's start, promotions the free items.
    page.goto(f"{server}/admin/jackpots/jackpot/")
    page.click("text=Fund the reserve or promotions")
    fund(page, server, "reserve", "200.00", "monthly jackpot budget")
    fund(page, server, "promotions", "50.00", "free draws this weekend")
    expect(page.locator(".messagelist")).to_contain_text("50.00")

    # A special hand, its rules as form fields in percent.
    page.goto(f"{server}/admin/tables/specialhandschedule/add/")
    page.select_option("#id_table", label=TABLE)
    page.fill("#id_name", "Happy hour")
    page.select_option("#id_kind", "every_n")
    page.fill("#id_every_n", "5")
    page.fill("#id_paid_fraction_bps", "50")
    page.select_option("#id_tips", "off")
    page.fill("#id_reason", "Friday promotion")
    page.click("input[name=_save]")
    saved(page)
    expect(page.locator("#result_list")).to_contain_text("share of entries paid 50 %")

    # A bronze spin jackpot for the table, starting at 100.00 EUR from the reserve.
    page.goto(f"{server}/admin/jackpots/jackpot/add/")
    page.fill("#id_name", "Day Bronze")
    page.select_option("#id_kind", "bronze")
    page.select_option("#id_currency", "EUR")
    page.fill("#id_contribution_percent", "0.5")
    page.fill("#id_reset_amount", "10.00")
    page.fill("#id_starting_amount", "100.00")
    page.select_option("#id_tables", label=TABLE)
    page.fill("#id_reason", "a spin jackpot for the new table")
    page.click("input[name=_save]")
    saved(page)
    expect(page.locator("#result_list")).to_contain_text("100.00")

    # The rake, in percent, with a reason.
    page.goto(f"{server}/admin/tables/table/{table_id}/conditions/")
    page.fill("#id_rake_percent", "7")
    page.fill("#id_reason", "busy night")
    page.click("input[type=submit]")
    saved(page)
    page.screenshot(path="/tmp/e2e-croupier-day-admin.png", full_page=True)

    # Players see it all in the lobby.
    lobby = context.new_page()
    lobby.goto(f"{server}/")
    row = lobby.locator("[data-testid=lobby-row]", has_text=TABLE)
    expect(row.locator("[data-testid=jackpot]")).to_contain_text("100.00")
    expect(row.locator("[data-field=rake]")).to_contain_text("7")
    expect(row.locator("[data-testid=next-special]")).to_contain_text("share of entries paid 50 %")
    lobby.screenshot(path="/tmp/e2e-croupier-day-lobby.png", full_page=True)
    context.close()
