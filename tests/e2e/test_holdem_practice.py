"""A BigHoldem practice game in real Chromium (seed 004): from the lobby's link to the setup
form, a game against two house bots on the Hold'em screen with the practice banner (on a
phone: no sideways scrolling), then stopped, with its summary. Screenshots go to
/tmp/e2e-practice-*.png."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.pages import sign_up

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PASSWORD = "green-felt-practice-4"


def test_a_player_plays_a_practice_game_against_bots_and_stops_it(server: str, browser: Browser) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2)
    page = context.new_page()
    sign_up(page, server, "ada", PASSWORD)
    page.click("[data-testid=practice-link]")
    expect(page.locator("[data-testid=practice-setup]")).to_be_visible()
    page.fill("#id_nickname", "Ada")
    page.select_option("#id_players", "3")
    page.fill("#id_max_raises", "12")
    assert page.locator("#id_max_raises").evaluate("field => field.validity.rangeOverflow")  # 1 to 9
    page.fill("#id_max_raises", "3")
    page.click("[data-testid=practice-start]")
    banner = page.locator("[data-testid=practice-banner]")
    expect(banner).to_be_visible(timeout=10_000)
    expect(banner).to_contain_text("Ada against 2 bots")
    expect(page.locator("[data-testid=hand-number]")).not_to_have_text("\u2013", timeout=20_000)  # a hand is dealt
    page.screenshot(path="/tmp/e2e-practice-phone.png", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.click("[data-testid=practice-stop]")
    expect(page.locator("[data-testid=practice-end]")).to_contain_text("The player left the game")
    expect(page.locator("[data-testid=practice-result]")).to_have_count(3)
    page.screenshot(path="/tmp/e2e-practice-summary.png", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    context.close()
