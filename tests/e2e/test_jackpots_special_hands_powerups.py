"""WiderPoker complete, in real Chromium: the lobby shows a table's jackpot icon and amount,
a special hand shows its banner and hides the tips, and a free draw of the power-ups is used
with the wallet unchanged (seed 001, D, E, Jackpots)."""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.pages import sign_up, sit_down
from tests.e2e.server import manage

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PASSWORD = "crown-and-spin-2-players"
TABLE = "E2E Crown"
SETUP = f"""
from django.contrib.auth.models import User
from jackpots import services as jackpots
from jackpots.models import Jackpot
from tables.models import Table
from tables.widerpoker.services.create import create_table
from tables.widerpoker.services import powerups
from tables.widerpoker.services.special import ScheduleInput, save_schedule
from django.utils import timezone
table = create_table(name={TABLE!r}, mode="fun", currency="FUN", ante_minor=100, draw_price_bps=5000,
                     redeal_price_minor=80, change_seconds=25, results_seconds=30)
crown = Jackpot.objects.create(name="Crown", kind="royal", currency="FUN", contribution_bps=100, reset_minor=500)
table.jackpots.add(crown)
staff = User.objects.create_user(username="e2e-croupier", password=None, is_staff=True)
jackpots.fund_jackpot(jackpot_id=crown.pk, amount_minor=123456, reference="e2e-crown", staff_user_id=staff.pk)
save_schedule(table_id=table.pk, staff_user_id=staff.pk, reason="e2e", now=timezone.now(),
              schedule=ScheduleInput(name="No-tips hand", kind="every_n", every_n=2, overrides={{"tips": False}}))
Table.objects.filter(pk=table.pk).update(hands_dealt=1)  # the next hand, number 2, is special
powerups.save_rules(draw_every_hands=1, draw_step=0)  # a free draw with every hand
"""


def test_jackpot_icon_special_hand_banner_and_a_free_draw(server: str, browser: Browser) -> None:
    manage(server, "shell", "-c", SETUP)
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    eve, fay = context.new_page(), phone.new_page()
    errors: list[str] = []
    for page in (eve, fay):
        page.set_default_timeout(15_000)
        page.on("pageerror", lambda error: errors.append(str(error)))
    suffix = str(os.getpid())
    sign_up(eve, server, f"eve{suffix}", PASSWORD)
    sign_up(fay, server, f"fay{suffix}", PASSWORD)

    # The lobby: the table's jackpot icon and its live amount, and the special hand announced.
    row = eve.locator("[data-testid=lobby-row]", has_text=TABLE)
    jackpot = row.locator("[data-testid=jackpot]")
    expect(jackpot).to_have_count(1)
    expect(jackpot).to_contain_text("1,234.56 FUN")
    expect(jackpot.locator(".jackpot-icon")).to_have_text("♛")
    expect(row.locator("[data-testid=next-special]")).to_contain_text("No-tips hand next hand")
    eve.screenshot(path="/tmp/e2e-lobby-jackpot.png")

    sit_down(eve, server, TABLE)
    sit_down(fay, server, TABLE)
    for page in (eve, fay):
        expect(page.locator("[data-testid=phase]")).to_have_attribute("data-phase", "change")
        banner = page.locator("[data-testid=hand-banner]")
        expect(banner).to_be_visible()
        expect(banner).to_contain_text("Special hand (No-tips hand): no tips")
        expect(page.locator("[data-testid=tip1]")).to_be_hidden()
        expect(page.locator("[data-testid=tip2]")).to_be_hidden()
        expect(page.locator("[data-testid=jackpots]")).to_contain_text("Crown")
        expect(page.locator("[data-testid=rake]")).to_contain_text("FUN")

    # Eve's free draw: the button says so, the draw is bought, her wallet does not move.
    expect(eve.locator("[data-testid=powerups]")).to_contain_text("Level 1")
    draw = eve.locator("[data-testid=buy-draw]")
    expect(draw).to_have_attribute("data-free", "true")
    expect(draw).to_contain_text("Free draw")
    balance = eve.get_attribute("[data-testid=balance]", "data-balance-minor")
    draw.click()
    expect(eve.locator("[data-testid=draw-2]")).to_have_attribute("data-bought", "true")
    expect(draw).to_have_attribute("data-free", "false")
    expect(eve.locator("[data-testid=balance]")).to_have_attribute("data-balance-minor", balance or "")
    eve.goto(f"{server}/wallet/")
    assert eve.get_attribute("[data-testid=wallet-balance-FUN]", "data-balance-minor") == balance
    fay.screenshot(path="/tmp/e2e-special-hand-phone.png")
    assert errors == []
