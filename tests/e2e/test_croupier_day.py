"""A croupier's day in real Chromium, logged in as a member of the Croupiers group (not a
superuser): fund the jackpot reserve and promotions, create a special-hand schedule, create
a jackpot with a starting amount and see it in the lobby, change the rake (issue 20); then,
at a table two players sit at, change the rake while a hand runs (the hand keeps its rake,
the table restarts, the next hand has the new one), see the special hand dealt with its
banner, and suspend a player and reinstate him, each with a reason."""

from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.pages import sign_up, sit_down
from tests.e2e.server import manage

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CROUPIER, PASSWORD = "cora-croupier", "green-baize-2026"
TABLE = "Croupier Day"
CROUPIER_SETUP = f"""
from django.contrib.auth.models import Group, User
croupier = User.objects.create_user(username={CROUPIER!r}, password={PASSWORD!r}, is_staff=True)
croupier.groups.add(Group.objects.get(name="Croupiers"))
"""
SETUP = f"""
from tables.widerpoker.services.create import create_table
table = create_table(name={TABLE!r}, mode="cash", currency="EUR", ante_minor=100, draw_price_bps=5000,
                     redeal_price_minor=80)
print(table.pk)
"""
FLOOR = "Croupier Floor"
FLOOR_CHANGE_SECONDS = 8  # long enough to change the rake while the first hand runs
PLAYER_PASSWORD = "felt-and-chips-2026"


@pytest.fixture(scope="module")
def croupier(server: str) -> str:
    """A member of the Croupiers group on the e2e server (not a superuser); his username."""
    manage(server, "create_staff_groups")
    manage(server, "shell", "-c", CROUPIER_SETUP)
    return CROUPIER


def log_in_to_the_admin(page: Page, server: str, username: str) -> None:
    page.goto(f"{server}/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page.locator("#user-tools")).to_contain_text(username)


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


def test_a_croupier_funds_schedules_creates_a_jackpot_and_changes_the_rake(
    server: str, browser: Browser, croupier: str
) -> None:
    table_id = manage(server, "shell", "-c", SETUP).split()[-1]
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    log_in_to_the_admin(page, server, croupier)

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


def test_mid_hand_rake_change_special_hand_banner_and_a_suspension_through_the_croupiers_doors(
    server: str, browser: Browser, croupier: str
) -> None:
    desk_context = browser.new_context(viewport={"width": 1366, "height": 900})
    players = browser.new_context(viewport={"width": 1280, "height": 800})
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    desk, eve, fay = desk_context.new_page(), players.new_page(), phone.new_page()
    errors: list[str] = []
    for page in (desk, eve, fay):
        page.set_default_timeout(15_000)
    for page in (eve, fay):
        page.on("pageerror", lambda error: errors.append(str(error)))
    log_in_to_the_admin(desk, server, croupier)

    # The croupier opens a fun table (5 % rake) and makes every second hand a special hand.
    desk.goto(f"{server}/admin/tables/table/add/")
    desk.fill("#id_name", FLOOR)
    desk.select_option("#id_mode", "fun")
    desk.select_option("#id_currency", "FUN")
    desk.fill("#id_change_seconds", str(FLOOR_CHANGE_SECONDS))
    desk.fill("#id_redeal_seconds", "5")
    desk.fill("#id_results_seconds", "2")
    desk.fill("#id_rake_percent", "5")
    desk.fill("#id_reason", "a fast table for the evening")
    desk.click("input[type=submit]")
    saved(desk)
    floor_id = desk.url.rstrip("/").split("/")[-2]
    desk.goto(f"{server}/admin/tables/specialhandschedule/add/")
    desk.select_option("#id_table", label=FLOOR)
    desk.fill("#id_name", "Happy hour")
    desk.select_option("#id_kind", "every_n")
    desk.fill("#id_every_n", "2")
    desk.select_option("#id_tips", "off")
    desk.fill("#id_reason", "no tips every second hand")
    desk.click("input[name=_save]")
    saved(desk)

    suffix = str(os.getpid())
    eve_name, fay_name = f"eve{suffix}", f"fay{suffix}"
    sign_up(eve, server, eve_name, PLAYER_PASSWORD)
    sign_up(fay, server, fay_name, PLAYER_PASSWORD)
    sit_down(eve, server, FLOOR)
    sit_down(fay, server, FLOOR)

    # Hand 1, an ordinary hand: 2 antes of 1.00 FUN at 5 % is a rake of 0.10 FUN.
    for page in (eve, fay):
        expect(page.locator("[data-testid=phase]")).to_have_attribute("data-phase", "change")
        expect(page.locator("[data-testid=rake]")).to_have_text("0.10 FUN")
        expect(page.locator("[data-testid=hand-banner]")).to_be_hidden()

    # The croupier raises the rake to 10 % while it runs: recorded, to apply after the hand.
    desk.goto(f"{server}/admin/tables/table/{floor_id}/conditions/")
    expect(desk.locator("#content-main")).to_contain_text("A hand is running")
    desk.fill("#id_rake_percent", "10")
    desk.fill("#id_reason", "busy night")
    desk.click("input[type=submit]")
    saved(desk)
    expect(desk.locator(".messagelist")).to_contain_text("it finishes under the old conditions")
    expect(desk.locator(".field-pending")).to_contain_text("Rake → 10 %")
    expect(desk.locator(".field-phase")).to_contain_text(re.compile("change", re.IGNORECASE))  # still running

    # The running hand is settled under its own 5 %; then the table restarts: back to the lobby.
    for page in (eve, fay):
        expect(page.locator("[data-testid=phase]")).to_have_attribute(
            "data-phase", "results", timeout=(FLOOR_CHANGE_SECONDS + 10) * 1000
        )
        expect(page.locator("[data-testid=rake]")).to_have_text("0.10 FUN")
    for page in (eve, fay):
        page.wait_for_url(f"{server}/", timeout=20_000)
    row = eve.locator("[data-testid=lobby-row]", has_text=FLOOR)
    expect(row.locator("[data-field=rake]")).to_contain_text("10")
    expect(row.locator("[data-testid=next-special]")).to_contain_text("Happy hour next hand")

    # Hand 2 is the special hand, under the new rake: 10 % of 2.00 FUN.
    sit_down(eve, server, FLOOR)
    sit_down(fay, server, FLOOR)
    for page in (eve, fay):
        expect(page.locator("[data-testid=phase]")).to_have_attribute("data-phase", "change")
        banner = page.locator("[data-testid=hand-banner]")
        expect(banner).to_be_visible()
        expect(banner).to_contain_text("Special hand (Happy hour): no tips")
        expect(page.locator("[data-testid=tip1]")).to_be_hidden()
        expect(page.locator("[data-testid=rake]")).to_have_text("0.20 FUN")
    fay.screenshot(path="/tmp/e2e-croupier-day-special-hand.png")

    # The croupier suspends Fay with a reason: her table sends her away and she is logged out.
    desk.goto(f"{server}/admin/wallet/suspension/add/")
    desk.fill("#id_username", fay_name)
    desk.select_option("#id_action", "suspend")
    desk.fill("#id_reason", "bot-like play reported by support")
    desk.click("input[type=submit]")
    saved(desk)
    expect(desk.locator("#result_list")).to_contain_text("bot-like play reported by support")
    expect(fay.locator("[data-testid=board-message]")).to_contain_text("This account is suspended")
    fay.goto(f"{server}/wallet/")
    expect(fay.locator("[data-testid=login-submit]")).to_be_visible()  # anonymous: asked to log in
    log_in(fay, server, fay_name)
    expect(fay.locator(".form-errors")).to_contain_text("This account is suspended")

    # Reinstated with a reason, she logs in again.
    desk.goto(f"{server}/admin/wallet/suspension/add/")
    desk.fill("#id_username", fay_name)
    desk.select_option("#id_action", "lift")
    desk.fill("#id_reason", "the owner explained: a slow connection")
    desk.click("input[type=submit]")
    saved(desk)
    log_in(fay, server, fay_name)
    fay.wait_for_url(f"{server}/")
    expect(fay.locator(".form-errors")).to_have_count(0)
    desk.screenshot(path="/tmp/e2e-croupier-day-suspensions.png", full_page=True)

    # The day in the audit log: the table's opening, the special hand and the rake, with reasons.
    desk.goto(f"{server}/backoffice/config-changes/?table={floor_id}")
    log = desk.locator("[data-testid=changes]")
    for text in ("Table created", "a fast table for the evening", "Happy hour", "5 %", "10 %", "busy night"):
        expect(log).to_contain_text(text)
    assert errors == []
    for context in (desk_context, players, phone):
        context.close()


def log_in(page: Page, server: str, username: str) -> None:
    """Log in through the site's form (the page stays on the form when refused)."""
    page.goto(f"{server}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PLAYER_PASSWORD)
    page.click("[data-testid=login-submit]")
