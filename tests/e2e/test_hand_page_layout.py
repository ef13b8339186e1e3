"""The hand page of a crowded hand (issue #11): at 1366x800 the table of all entries fits its
box, money columns included, without sideways scrolling; at 390x844 the page does not
scroll sideways either and each entry's money shows in the viewport's width. Screenshots:
/tmp/e2e-hand-crowd-*.png.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from tests.e2e.server import manage

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SCREENSHOTS = Path("/tmp")
E2E_TABLE_CLOCK = "off"  # the script below plays the hand with its own clock
# It deals in one step and buys two redeals in a row (algorithm 2): a layout test, not one
# of algorithm 3's wait (tests/tables/test_deal_beacon.py).
E2E_SERVER_ENV = {"POKER_DEAL_ALGORITHM": "2"}
PLAYERS = 14
PASSWORD = "crowded-hand-14"
# Fourteen players at a fresh table; most buy every draw, some redeal twice; the hand is
# settled with an injected clock (the keys wait for the beacon round after the deadline: the
# hand is played 15 minutes in the past) and everybody leaves. Prints the hand id.
CROWD_HAND = f"""
from datetime import timedelta
from django.utils import timezone
from lobby.services import register_player
from tables.clock import advance_table
from tables.widerpoker.services.play import buy_draw
from tables.widerpoker.services.play import buy_redeal
from tables.widerpoker.services.create import create_table
from tables.widerpoker.services.seating import join_table
from tables.widerpoker.services.seating import leave_table
from tables.widerpoker.services.play import set_hold
from tables.models import Table
now = timezone.now() - timedelta(minutes=15)  # settled in the past: its beacon round is out
table = create_table(name="E2E Crowd", mode="fun", currency="FUN", ante_minor=100,
                              draw_price_bps=5000, redeal_price_minor=80, change_seconds=600,
                              results_seconds=120, redeal_seconds=300, max_redeals=2)
players = [register_player(username=f"crowd{{i:02d}}-longer-name", password={PASSWORD!r}) for i in range({PLAYERS})]
for player in players:
    join_table(table_id=table.pk, user_id=player.pk, now=now)
advance_table(table_id=table.pk, now=now)
for i, player in enumerate(players):
    if i % 3 == 0:
        for _ in range(2):
            buy_redeal(table_id=table.pk, user_id=player.pk, now=now)
    for _ in range(4 if i % 4 else 1):
        buy_draw(table_id=table.pk, user_id=player.pk, now=now)
    set_hold(table_id=table.pk, user_id=player.pk, hold=[i % 2 == 0, False, True, False, i % 5 == 0], now=now)
table.refresh_from_db()
hand = table.current_hand
advance_table(table_id=table.pk, now=hand.change_deadline + timedelta(seconds=4))
hand.refresh_from_db()
assert hand.status == "settled", hand.status
for player in players:
    leave_table(table_id=table.pk, user_id=player.pk, now=now)
print(hand.pk)
"""


def _log_in(page: Page, base: str) -> None:
    page.goto(f"{base}/login/")
    page.fill("#id_username", "crowd00-longer-name")
    page.fill("#id_password", PASSWORD)
    page.click("[data-testid=login-submit]")
    page.wait_for_url(f"{base}/")


def _widths(page: Page) -> dict[str, float]:
    widths: dict[str, float] = page.evaluate(
        """() => {
            const box = document.querySelector('[aria-label="All entries"]');
            const net = [...document.querySelectorAll('[data-testid=entries] [data-field=net]')]
                .map((cell) => cell.getBoundingClientRect().right);
            return {
                page: document.documentElement.scrollWidth,
                window: window.innerWidth,
                boxScroll: box.scrollWidth,
                boxClient: box.clientWidth,
                netRight: Math.max(...net),
                rows: net.length,
                heads: [...document.querySelectorAll('[data-testid=entries] thead th')]
                    .filter((cell) => cell.offsetParent !== null && getComputedStyle(cell).display !== 'none').length,
                cells: [...document.querySelectorAll('[data-testid=entries] [data-testid=entry]:first-child td')]
                    .filter((cell) => getComputedStyle(cell).display !== 'none').length,
            };
        }"""
    )
    return widths


def test_a_crowded_hands_entries_fit_desktop_and_phone(server: str, browser: Browser) -> None:
    hand_id = manage(server, "shell", "-c", CROWD_HAND).strip().splitlines()[-1]
    for name, size, phone in (("desktop", (1366, 800), False), ("phone", (390, 844), True)):
        context = browser.new_context(viewport={"width": size[0], "height": size[1]}, is_mobile=phone, has_touch=phone)
        page = context.new_page()
        page.set_default_timeout(10_000)
        _log_in(page, server)
        page.goto(f"{server}/history/hands/{hand_id}/")
        page.wait_for_selector("[data-testid=entries]", state="attached")
        widths = _widths(page)
        page.screenshot(path=str(SCREENSHOTS / f"e2e-hand-crowd-{name}.png"), full_page=True)
        page.locator("[data-testid=entry]").nth(1).screenshot(path=str(SCREENSHOTS / f"e2e-hand-crowd-{name}-row.png"))
        assert widths["rows"] == PLAYERS, widths
        if not phone:  # every column shown has its heading (a phone shows labels instead)
            assert widths["heads"] == widths["cells"], widths
        assert widths["page"] <= size[0], f"{name}: the page scrolls sideways: {widths}"
        assert widths["boxScroll"] <= widths["boxClient"] + 1, f"{name}: the entries table scrolls sideways: {widths}"
        assert widths["netRight"] <= size[0], f"{name}: the Net column is off-screen: {widths}"
        context.close()
