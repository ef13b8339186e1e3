"""The site in Italian in a real browser (issue 11, item 4), at 390x844 and 1366x800: the
header's switch (and Accept-Language) turn the pages Italian and keep the player where he
is, a hand is played in Italian with the same layout checks as test_phone_layout.py (no page
scrolls sideways; cards, odds, countdown and buttons on one phone screen; place and prize in
view) and the same axe-core check as test_accessibility.py (no serious or critical
violation). Screenshots of lobby, game (change and results), wallet, history and hand page
in both languages go to tests/e2e/screenshots/ (or $E2E_SCREENSHOTS); the English game
screen is shot by test_phone_layout.py into the same folder.
"""

from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.pages import axe_problems, sign_up
from tests.e2e.server import CHANGE_SECONDS, TABLE
from tests.e2e.test_phone_layout import PLAY_ELEMENTS, SCREENSHOTS, _assert_in_viewport, _overflow

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PASSWORD = "italiano-e-inglese"
SUIT = r"(cuori|quadri|fiori|picche)"
SHOT_PAGES = ("lobby", "wallet", "history", "hand")


def _switch(page: Page, language: str) -> None:
    """Click the header's switch to ``language`` and check the player stayed on his page."""
    before = page.url
    toggle = page.locator("[data-testid=site-menu-toggle]")
    if toggle.is_visible():  # a narrow screen: the switch is in the header's menu
        toggle.click()
    button = page.locator(f"[data-testid=language-{language}]")
    expect(button).to_be_visible()
    button.click()
    expect(page.locator("html")).to_have_attribute("lang", language)
    assert page.url == before


def _shot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def test_the_site_in_italian_at_phone_and_desktop_sizes(server: str, browser: Browser) -> None:
    phone_context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    # The desktop browser asks for Italian: Accept-Language alone makes the site Italian.
    desktop_context = browser.new_context(viewport={"width": 1366, "height": 800}, locale="it-IT")
    phone, desktop = phone_context.new_page(), desktop_context.new_page()
    errors: list[str] = []
    for page in (phone, desktop):
        page.set_default_timeout(10_000)
        page.on("pageerror", lambda error: errors.append(str(error)))
    suffix = str(os.getpid())
    sign_up(phone, server, f"gianni{suffix}", PASSWORD)
    sign_up(desktop, server, f"lucia{suffix}", PASSWORD)
    expect(desktop.locator("html")).to_have_attribute("lang", "it")
    # The phone asked for English; its header switch (in the header's menu at 390 px) makes it Italian.
    expect(phone.locator("html")).to_have_attribute("lang", "en")
    expect(phone.locator("[data-testid=language-it]")).to_have_text("Italiano")
    _switch(phone, "it")
    expect(phone.locator("[data-testid=language-en]")).to_have_text("English")
    expect(phone.locator("h1")).to_have_text("Lobby di gioco")
    problems = [_overflow(phone, "lobby-it-phone-header")]

    for page in (phone, desktop):
        page.get_by_role("link", name=TABLE, exact=True).click()
        page.wait_for_selector("[data-testid=board] .reel .card")
        page.get_by_role("button", name="Siediti al tavolo").click()
        page.wait_for_selector("[data-testid=seat-buttons][data-seat=active]")
    axe: list[str] = []
    for page in (phone, desktop):
        expect(page.locator("[data-testid=phase]")).to_have_attribute("data-phase", "change")
        expect(page.locator("[data-testid=phase]")).to_have_text("cambio")
        # Screen readers hear the cards as Italian players name them.
        expect(page.locator("[data-testid=my-card-0]")).to_have_accessible_name(
            re.compile(rf"^Colonna 1: (Asso|Re|Donna|Fante|10|[2-9]) di {SUIT}$")
        )
    phone.click("[data-testid=my-card-2]")
    expect(phone.locator("[data-testid=hold-state]")).to_have_attribute("data-hold", "DDHDD")
    expect(phone.locator("[data-testid=hold-state]")).to_have_text("Ne tieni 1, ne cambi 4.")
    expect(phone.locator("[data-testid=my-card-2]")).to_have_accessible_name(re.compile(r", tenuta$"))
    expect(desktop.locator("[data-testid=buy-draw] .button-main")).to_have_text("Acquista draw")
    expect(desktop.locator("[data-testid=odds-9] th")).to_have_text("Scala reale")
    expect(desktop.locator("[data-testid=balance]")).to_have_text(re.compile(r"^\d{1,3}(\.\d{3})*,\d{2} FUN$"))
    phone.evaluate(
        """() => {
            const bar = document.querySelector('.game-bar').getBoundingClientRect().height;
            const board = document.querySelector('[data-testid=board]').getBoundingClientRect().top + window.scrollY;
            window.scrollTo(0, board - bar - 4);
        }"""
    )
    phone.screenshot(path=str(SCREENSHOTS / "e2e-it-game-change-phone.png"))
    _assert_in_viewport(phone, PLAY_ELEMENTS, "change phase in Italian at 390x844")
    desktop.screenshot(path=str(SCREENSHOTS / "e2e-it-game-change-desktop.png"))
    for page, size in ((phone, "phone"), (desktop, "desktop")):
        problems.append(_overflow(page, f"game-it-{size}"))
        axe += axe_problems(page, f"game-change-it-{size}")

    for page in (phone, desktop):
        expect(page.locator("[data-testid=result]")).to_be_visible(timeout=(CHANGE_SECONDS + 10) * 1000)
        expect(page.locator("[data-testid=place]")).to_have_text(re.compile(r"^[12]º su 2$"))
        expect(page.locator("#result-title")).to_have_text("Risultato")
    _assert_in_viewport(phone, ["place", "prize"], "results in Italian at 390x844")
    phone.screenshot(path=str(SCREENSHOTS / "e2e-it-game-results-phone.png"))
    desktop.screenshot(path=str(SCREENSHOTS / "e2e-it-game-results-desktop.png"))
    axe += axe_problems(desktop, "game-results-it-desktop")
    hand_link = desktop.get_attribute("[data-testid=hand-link]", "href")
    table_id = re.search(r"/tables/(\d+)/", desktop.url)
    assert hand_link is not None and table_id is not None
    for page in (phone, desktop):
        page.get_by_role("button", name="Sit out").click()
        expect(page.locator("[data-testid=seat-buttons]")).to_have_attribute("data-seat", "sitting_out")

    pages = {
        "lobby": "/",
        "wallet": "/wallet/",
        "history": "/history/",
        "hand": hand_link,
        "simulator": f"/simulator/?table={table_id.group(1)}",
        "details": f"/tables/{table_id.group(1)}/details/",
        "responsible-gaming": "/responsible-gaming/",
        "rules": "/rules/",
        "provably-fair": "/history/provably-fair/",
    }
    for page, size in ((phone, "phone"), (desktop, "desktop")):
        for name, path in pages.items():
            page.goto(f"{server}{path}")
            page.wait_for_load_state("load")
            expect(page.locator("html")).to_have_attribute("lang", "it")
            problems.append(_overflow(page, f"{name}-it-{size}"))
            axe += axe_problems(page, f"{name}-it-{size}")
            if name == "wallet":
                expect(page.locator("[data-testid=wallet-balance-FUN]")).to_have_text(re.compile(r",\d{2} FUN$"))
            if name in SHOT_PAGES:
                _shot(page, f"e2e-it-{name}-{size}")

    # The same pages in English: the switch, from the hand page, keeps the player on it.
    for page, size in ((phone, "phone"), (desktop, "desktop")):
        page.goto(f"{server}{hand_link}")
        _switch(page, "en")
        for name in SHOT_PAGES:
            page.goto(f"{server}{pages[name]}")
            page.wait_for_load_state("load")
            expect(page.locator("html")).to_have_attribute("lang", "en")
            _shot(page, f"e2e-en-{name}-{size}")
    phone_context.close()
    desktop_context.close()
    assert [problem for problem in problems if problem] == []
    assert axe == [], "\n".join(axe)
    assert errors == []
