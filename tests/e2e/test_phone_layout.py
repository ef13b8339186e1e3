"""Phone first (issue #11, D): at 390x844 and 1366x800 no page scrolls sideways, and on the
phone the change phase's cards, probability panel, countdown and buttons fit one screen, and
the results show place and prize without scrolling. Screenshots go to
tests/e2e/screenshots/e2e-layout-*.png (or $E2E_SCREENSHOTS; the Italian ones: test_italian.py).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.pages import sign_up
from tests.e2e.server import CHANGE_SECONDS, TABLE

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PASSWORD = "phone-first-390"
SCREENSHOTS = Path(os.environ.get("E2E_SCREENSHOTS") or Path(__file__).parent / "screenshots")
# A slow socket rate limit, so that fast clicks are refused whatever the machine's speed.
E2E_SERVER_ENV = {"POKER_WS_RATE_PER_SECOND": "0.5", "POKER_WS_RATE_BURST": "5"}
PLAY_ELEMENTS = ["my-card-0", "my-card-4", "probability", "countdown", "buy-draw", "redeal"]


def _sideways(page: Page) -> tuple[int, int]:
    """(scrollWidth, the window's width as set). A phone browser widens its layout viewport
    to the content (``innerWidth`` grows with it), so the set width is the reference."""
    width = int(page.evaluate("document.documentElement.scrollWidth"))
    viewport = page.viewport_size
    assert viewport is not None
    return width, min(viewport["width"], int(page.evaluate("window.innerWidth")))


def _overflow(page: Page, name: str) -> str | None:
    """Why the page scrolls sideways, or None (a screenshot of the culprit goes to SCREENSHOTS)."""
    width, inner = _sideways(page)
    if width <= inner:
        return None
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"e2e-layout-overflow-{name}.png"), full_page=True)
    return f"{name} ({page.url}) is {width} px wide in a {inner} px window"


def _assert_no_sideways_scroll(page: Page, name: str) -> None:
    problem = _overflow(page, name)
    assert problem is None, problem


def _boxes(page: Page, testids: list[str]) -> dict[str, dict[str, float]]:
    """The viewport boxes of ``testids``, measured in one go (the game re-renders often)."""
    boxes: dict[str, dict[str, float] | None] = page.evaluate(
        """(ids) => Object.fromEntries(ids.map((id) => {
            const node = document.querySelector(`[data-testid="${id}"]`);
            if (!node || node.offsetParent === null) return [id, null];
            const r = node.getBoundingClientRect();
            return [id, {x: r.x, y: r.y, width: r.width, height: r.height}];
        }))""",
        testids,
    )
    missing = [testid for testid, box in boxes.items() if box is None]
    assert not missing, f"not displayed: {missing}"
    return {testid: box for testid, box in boxes.items() if box is not None}


def _assert_in_viewport(page: Page, testids: list[str], what: str) -> None:
    height = int(page.evaluate("window.innerHeight"))
    width = int(page.evaluate("window.innerWidth"))
    for testid, box in _boxes(page, testids).items():
        inside = box["y"] >= 0 and box["y"] + box["height"] <= height + 1 and box["x"] >= 0
        assert inside and box["x"] + box["width"] <= width + 1, f"{what}: {testid} at {box} outside {width}x{height}"


def test_no_page_scrolls_sideways_and_the_phone_plays_on_one_screen(server: str, browser: Browser) -> None:
    phone_context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    desktop_context = browser.new_context(viewport={"width": 1366, "height": 800})
    phone, desktop = phone_context.new_page(), desktop_context.new_page()
    errors: list[str] = []
    for page in (phone, desktop):
        page.set_default_timeout(10_000)
        page.on("pageerror", lambda error: errors.append(str(error)))
    suffix = str(os.getpid())
    sign_up(phone, server, f"pia{suffix}", PASSWORD)
    sign_up(desktop, server, f"dan{suffix}", PASSWORD)

    for page in (phone, desktop):
        page.goto(f"{server}/")
        page.get_by_role("link", name=TABLE, exact=True).click()
        page.wait_for_selector("[data-testid=board] .reel .card")
        page.click("[data-testid=join]")
        page.wait_for_selector("[data-testid=seat-buttons][data-seat=active]")

    # The change phase on the phone: cards, panel, countdown and buttons on one screen.
    for page in (phone, desktop):
        expect(page.locator("[data-testid=phase]")).to_have_attribute("data-phase", "change")
        expect(page.locator("[data-testid=my-card-4]")).to_be_visible()
    # Fifteen fast clicks (the server allows 5, then one every 2 s): the refusals past the
    # socket's rate limit make one counted notice, not a pile.
    desktop.evaluate(
        """() => { for (let i = 0; i < 15; i += 1) document.querySelector('[data-testid=my-card-0]').click(); }"""
    )
    notice = desktop.locator(".toast", has_text="slow down")
    expect(notice).to_have_count(1)
    expect(notice).to_contain_text(re.compile(r"\(\u00d7\d+\)"))
    # The notice lets clicks through to every button under it and goes away by itself.
    for page in (desktop, phone):
        blocked = page.evaluate(
            """() => [...document.querySelectorAll('.play-buttons button, .seat-buttons button, button.mine')]
                .filter((button) => button.offsetParent !== null)
                .filter((button) => {
                    const r = button.getBoundingClientRect();
                    const x = r.left + r.width / 2, y = r.top + r.height / 2;
                    if (x < 0 || y < 0 || x > innerWidth || y > innerHeight) return false;
                    const hit = document.elementFromPoint(x, y);
                    return hit !== null && hit.closest('.toasts') !== null;
                })
                .map((button) => button.dataset.testid)"""
        )
        assert blocked == [], f"the notice covers {blocked}"
    expect(notice).to_have_count(0, timeout=12_000)
    phone.click("[data-testid=my-card-2]")
    expect(phone.locator("[data-testid=hold-state]")).to_have_attribute("data-hold", "DDHDD")
    # No scrolling (issue 24): the page as it opens holds the whole decision.
    assert phone.evaluate("window.scrollY") == 0
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    phone.screenshot(path=str(SCREENSHOTS / "e2e-layout-change-phone.png"))
    _assert_in_viewport(phone, PLAY_ELEMENTS, "change phase at 390x844")
    # After the measure: a full-page screenshot resizes the window and moves the scroll position.
    phone.screenshot(path=str(SCREENSHOTS / "e2e-layout-change-phone-full.png"), full_page=True)
    desktop.screenshot(path=str(SCREENSHOTS / "e2e-layout-change-desktop.png"))
    for page, name in ((phone, "game-phone"), (desktop, "game-desktop")):
        _assert_no_sideways_scroll(page, name)

    # Results: place and prize show where the player already looks.
    expect(phone.locator("[data-testid=result]")).to_be_visible(timeout=(CHANGE_SECONDS + 10) * 1000)
    expect(phone.locator("[data-testid=place]")).to_have_text(re.compile(r"of 2$"))
    _assert_in_viewport(phone, ["place", "prize"], "results at 390x844")
    phone.screenshot(path=str(SCREENSHOTS / "e2e-layout-results-phone.png"))
    hand_link = phone.get_attribute("[data-testid=hand-link]", "href")
    assert hand_link is not None
    for page in (phone, desktop):
        page.click("[data-testid=sit-out]")
        expect(page.locator("[data-testid=seat-buttons]")).to_have_attribute("data-seat", "sitting_out")

    table_id = re.search(r"/tables/(\d+)/", phone.url)
    assert table_id is not None
    pages = {
        "lobby": "/",
        "wallet": "/wallet/",
        "history": "/history/",
        "hand": hand_link,
        "simulator": f"/simulator/?table={table_id.group(1)}",
        "details": f"/tables/{table_id.group(1)}/details/",
        "responsible-gaming": "/responsible-gaming/",
        "provably-fair": "/history/provably-fair/",
    }
    problems = []
    for page, size in ((phone, "phone"), (desktop, "desktop")):
        for name, path in pages.items():
            page.goto(f"{server}{path}")
            page.wait_for_load_state("load")
            problems.append(_overflow(page, f"{name}-{size}"))
            if size == "phone" and name in (
                "hand",
                "history",
                "wallet",
                "lobby",
                "responsible-gaming",
                "provably-fair",
            ):
                page.screenshot(path=str(SCREENSHOTS / f"e2e-layout-{name}-phone.png"), full_page=True)
    assert [problem for problem in problems if problem] == []
    assert errors == []
    phone_context.close()
    desktop_context.close()
