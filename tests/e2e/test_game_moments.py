"""The game's moments in real Chromium (issue #11, "A game people enjoy"): the reels spin on
the deal and stop on the server's cards (seed 000, "Initial combination", figures 2-3), no
reel moves for a player who asked for reduced motion, sound is off until switched on and the
switch is remembered, a redeal spins the columns it changed, keys 1-5 hold cards and a draw
is bought from the keyboard, and only a
player with a paid place gets the win banner. Screenshots: /tmp/e2e-moments-*.png.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.pages import sign_up, sit_down
from tests.e2e.server import CHANGE_SECONDS, TABLE

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PASSWORD = "reels-and-bells-5"
SCREENSHOTS = Path("/tmp")
RANKS = {"T": "10", "J": "Jack", "Q": "Queen", "K": "King", "A": "Ace"}
SUITS = {"c": "clubs", "d": "diamonds", "h": "hearts", "s": "spades"}
# Every class change of a reel and every reelspin event, recorded from the page's start.
RECORD_SPINS = """
window.__spins = [];
window.__reelClasses = [];
document.addEventListener("reelspin", (event) => window.__spins.push(event.detail));
new MutationObserver((records) => {
  for (const record of records) {
    if (record.target.classList?.contains("reel")) window.__reelClasses.push(record.target.className);
  }
}).observe(document, { subtree: true, attributes: true, attributeFilter: ["class"] });
"""


def _card_name(code: str) -> str:
    return f"{RANKS.get(code[0], code[0])} of {SUITS[code[1]]}"


def _snapshot(page: Page) -> dict[str, Any]:
    """The server's own view of the table and the player's entry (the HTTP snapshot)."""
    snapshot: dict[str, Any] = page.evaluate(
        """async () => {
            const boot = JSON.parse(document.getElementById("table-boot").textContent);
            const response = await fetch(boot.urls.snapshot, {headers: {Accept: "application/json"}});
            return response.json();
        }"""
    )
    return snapshot


def _assert_on_the_servers_cards(page: Page) -> None:
    """No reel is moving and each payline card is the server's, at the payline's height."""
    expect(page.locator(".reel.spinning")).to_have_count(0, timeout=3000)
    expect(page.locator(".reel-tail")).to_have_count(0)
    snapshot = _snapshot(page)
    entry = snapshot["private"]["entry"]
    columns = snapshot["table"]["hand"]["board"]["columns"]
    payline = page.locator(".payline").bounding_box()
    assert payline is not None
    for c in range(5):
        code = columns[c][entry["combination"][c]]
        card = page.locator(f"[data-testid=my-card-{c}]")
        expect(card).to_have_accessible_name(re.compile(rf"^Column {c + 1}: {_card_name(code)}"))
        box = card.bounding_box()
        assert box is not None
        assert payline["y"] <= box["y"] and box["y"] + box["height"] <= payline["y"] + payline["height"] + 1, (
            f"column {c + 1} stopped at {box}, not on the payline {payline}"
        )


def test_reels_sound_keyboard_and_the_win_moment(server: str, browser: Browser) -> None:
    moving = browser.new_context(viewport={"width": 1366, "height": 800})
    still = browser.new_context(viewport={"width": 1366, "height": 800}, reduced_motion="reduce")
    ada, bo = moving.new_page(), still.new_page()
    errors: list[str] = []
    for page in (ada, bo):
        page.set_default_timeout(10_000)
        page.add_init_script(RECORD_SPINS)
        page.on("pageerror", lambda error: errors.append(str(error)))
    suffix = str(os.getpid())
    sign_up(ada, server, f"ada{suffix}", PASSWORD)
    sign_up(bo, server, f"bo{suffix}", PASSWORD)
    sit_down(ada, server, TABLE)

    # Sound: off by default, on with the switch, still on after a reload.
    switch = ada.locator("[data-testid=sound-switch]")
    expect(switch).to_have_attribute("aria-pressed", "false")
    switch.click()
    expect(switch).to_have_attribute("aria-pressed", "true")
    ada.reload()
    ada.wait_for_selector("[data-testid=board] .reel .card")
    expect(ada.locator("[data-testid=sound-switch]")).to_have_attribute("aria-pressed", "true")
    expect(bo.locator("[data-testid=sound-switch]")).to_have_count(0)  # bo is still in the lobby

    sit_down(bo, server, TABLE)
    for page in (ada, bo):
        expect(page.locator("[data-testid=phase]")).to_have_attribute("data-phase", "change", timeout=15_000)
        expect(page.locator("[data-testid=my-card-4]")).to_be_visible()

    # The deal: every reel of the moving screen spun, then stopped on the server's cards.
    _assert_on_the_servers_cards(ada)
    ada_spins = ada.evaluate("window.__spins")
    assert sorted(spin["column"] for spin in ada_spins if spin["kind"] == "deal") == [0, 1, 2, 3, 4]
    assert any("spinning" in classes for classes in ada.evaluate("window.__reelClasses"))
    # Reduced motion: the same deal, the same cards, and no reel ever moved.
    _assert_on_the_servers_cards(bo)
    assert [spin["stopsInMs"] for spin in bo.evaluate("window.__spins") if spin["kind"] == "deal"] == [0] * 5
    assert not any("spinning" in classes for classes in bo.evaluate("window.__reelClasses"))
    # Sound never played for bo, who never switched it on.
    assert bo.get_attribute("[data-testid=sound-switch]", "data-last-sound") is None
    assert bo.evaluate("localStorage.getItem('widerpoker.sound')") is None

    # A redeal from the keyboard: the columns whose card changed spin to the new combination.
    before = _snapshot(ada)["private"]["entry"]["combination"]
    ada.locator("[data-testid=redeal]").focus()
    ada.keyboard.press("Enter")
    ada.wait_for_selector(".reel.spinning")
    ada.screenshot(path=str(SCREENSHOTS / "e2e-moments-spinning.png"))
    _assert_on_the_servers_cards(ada)
    after = _snapshot(ada)["private"]["entry"]["combination"]
    redealt = {spin["column"] for spin in ada.evaluate("window.__spins") if spin["kind"] == "change"}
    assert redealt == {c for c in range(5) if before[c] != after[c]} != set()
    spins_before_results = len(ada.evaluate("window.__spins"))

    # Keyboard play: key 2 holds column 2, key 2 again lets it go, key 4 holds column 4;
    # the buy-draw button is reached with Tab and bought with Enter, its focus visible.
    ada.locator("body").click(position={"x": 5, "y": 5})
    ada.keyboard.press("2")
    expect(ada.locator("[data-testid=hold-state]")).to_have_attribute("data-hold", "DHDDD")
    ada.keyboard.press("2")
    expect(ada.locator("[data-testid=hold-state]")).to_have_attribute("data-hold", "DDDDD")
    ada.keyboard.press("4")
    expect(ada.locator("[data-testid=hold-state]")).to_have_attribute("data-hold", "DDDHD")
    expect(ada.locator("[data-testid=my-card-3]")).to_have_attribute("aria-pressed", "true")
    ada.locator("[data-testid=redeal]").focus()
    ada.keyboard.press("Shift+Tab")
    assert ada.evaluate("document.activeElement.dataset.testid") == "buy-draw"
    outline = ada.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("", "none"), "the focused button shows no focus ring"
    ada.keyboard.press("Enter")
    expect(ada.locator("[data-testid=draw-2]")).to_have_attribute("data-bought", "true")
    ada.screenshot(path=str(SCREENSHOTS / "e2e-moments-change.png"))

    # Results: the changed columns of ada's best draw spin; the winner, and only a winner,
    # gets the banner and the announcement.
    for page in (ada, bo):
        expect(page.locator("[data-testid=result]")).to_be_visible(timeout=(CHANGE_SECONDS + 10) * 1000)
        expect(page.locator(".reel.spinning")).to_have_count(0, timeout=3000)
    winners = []
    for page in (ada, bo):
        prize = int(page.get_attribute("[data-testid=prize]", "data-prize-minor") or "0")
        banner = page.locator("[data-testid=win-banner]")
        if prize > 0:
            winners.append(page)
            expect(banner).to_be_visible()
            expect(banner.locator("[data-role=amount]")).to_have_attribute("data-prize-minor", str(prize))
            expect(page.locator("[data-testid=win-announce]")).to_contain_text("You won")
            expect(page.locator("[data-testid=board]")).to_have_class(re.compile(r"\bwinning\b"))
        else:
            expect(banner).to_be_hidden()
            expect(page.locator("[data-testid=win-announce]")).to_have_text("")
    assert winners, "a hand of two pays somebody"
    winners[0].wait_for_timeout(1300)  # the prize has counted up
    prize_text = winners[0].locator("[data-testid=prize]").inner_text()
    expect(winners[0].locator("[data-testid=win-banner] [data-role=amount]")).to_have_text(prize_text)
    winners[0].screenshot(path=str(SCREENSHOTS / "e2e-moments-win.png"))
    snapshot = _snapshot(ada)
    entry, columns = snapshot["private"]["entry"], snapshot["table"]["hand"]["board"]["columns"]
    best = entry["result"]["draws"][entry["result"]["best_draw"]]["cards"]
    moved = {c for c in range(5) if best[c] != columns[c][entry["combination"][c]]}
    changed = {
        spin["column"] for spin in ada.evaluate("window.__spins")[spins_before_results:] if spin["kind"] == "change"
    }
    assert changed == moved, f"spun {changed}, the best draw changed {moved}"
    assert not moved & {c for c in range(5) if entry["result"]["hold_used"][c]}, "a held card never changes"
    if ada in winners:
        assert ada.get_attribute("[data-testid=sound-switch]", "data-last-sound") == "win"
    for page in (ada, bo):
        page.click("[data-testid=sit-out]")
        expect(page.locator("[data-testid=seat-buttons]")).to_have_attribute("data-seat", "sitting_out")
    assert errors == []
    moving.close()
    still.close()
