"""Accessibility (issue #11, E): axe-core finds no serious or critical violation on the
players' pages, at phone and desktop sizes, and a hand can be played from the keyboard.

axe-core is vendored in tests/e2e/vendor/axe-core (MPL-2.0), injected into each page.
"""

from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.pages import axe_problems, sign_up
from tests.e2e.server import CHANGE_SECONDS, TABLE

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PASSWORD = "keyboard-only-11"


def test_pages_have_no_serious_violations_and_a_hand_is_played_with_the_keyboard(server: str, browser: Browser) -> None:
    problems: list[str] = []
    anonymous = browser.new_page()
    for name, path in {"lobby-anonymous": "/", "login": "/login/", "signup": "/signup/"}.items():
        anonymous.goto(f"{server}{path}")
        problems += axe_problems(anonymous, name)
    anonymous.close()

    phone_context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    desktop_context = browser.new_context(viewport={"width": 1366, "height": 800})
    phone, desktop = phone_context.new_page(), desktop_context.new_page()
    for page in (phone, desktop):
        page.set_default_timeout(10_000)
    suffix = str(os.getpid())
    sign_up(phone, server, f"kim{suffix}", PASSWORD)
    sign_up(desktop, server, f"lee{suffix}", PASSWORD)
    for page in (phone, desktop):
        page.goto(f"{server}/")
        page.get_by_role("link", name=TABLE, exact=True).click()
        page.wait_for_selector("[data-testid=board] .reel .card")
        page.click("[data-testid=join]")
        page.wait_for_selector("[data-testid=seat-buttons][data-seat=active]")
    expect(desktop.locator("[data-testid=phase]")).to_have_attribute("data-phase", "change")
    expect(desktop.locator("[data-testid=my-card-4]")).to_be_visible()

    # Keyboard play: Tab to a card of the payline, Enter holds it, Space releases it.
    desktop.locator("[data-testid=my-card-0]").focus()
    desktop.keyboard.press("Enter")
    expect(desktop.locator("[data-testid=hold-state]")).to_have_attribute("data-hold", "HDDDD")
    desktop.keyboard.press("Tab")  # focus stayed on column 1 through the re-render; Tab: column 2
    desktop.keyboard.press("Space")
    expect(desktop.locator("[data-testid=hold-state]")).to_have_attribute("data-hold", "HHDDD")
    desktop.locator("[data-testid=buy-draw]").focus()
    desktop.keyboard.press("Enter")
    expect(desktop.locator("[data-testid=draw-2]")).to_have_attribute("data-bought", "true")
    for page, size in ((phone, "phone"), (desktop, "desktop")):
        problems += axe_problems(page, f"game-change-{size}")
    expect(desktop.locator("[data-testid=result]")).to_be_visible(timeout=(CHANGE_SECONDS + 10) * 1000)
    problems += axe_problems(desktop, "game-results-desktop")
    hand_link = desktop.get_attribute("[data-testid=hand-link]", "href")
    table_url = desktop.url
    for page in (phone, desktop):
        page.click("[data-testid=sit-out]")
        expect(page.locator("[data-testid=seat-buttons]")).to_have_attribute("data-seat", "sitting_out")

    table_id = re.search(r"/tables/(\d+)/", table_url)
    assert table_id is not None and hand_link is not None
    pages = {
        "lobby": "/",
        "wallet": "/wallet/",
        "responsible-gaming": "/responsible-gaming/",
        "history": "/history/",
        "hand": hand_link,
        "simulator": f"/simulator/?table={table_id.group(1)}",
        "details": f"/tables/{table_id.group(1)}/details/",
        "provably-fair": "/history/provably-fair/",
    }
    for page, size in ((phone, "phone"), (desktop, "desktop")):
        for name, path in pages.items():
            page.goto(f"{server}{path}")
            page.wait_for_load_state("load")
            problems += axe_problems(page, f"{name}-{size}")
    phone_context.close()
    desktop_context.close()
    assert problems == [], "\n".join(problems)
