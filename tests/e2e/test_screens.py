"""One screen per decision (issue 24), in real Chromium at a laptop's 1366x768 and a phone's
390x844: whatever a player needs for the decision in front of him lies inside the viewport
without scrolling, in each phase of both games.

* WiderPoker, change phase: the five payline cards, the whole probability panel down to its
  Improve line, the countdown, TIP 1/2, Buy draw and Redeal; at a jackpot table with a
  special hand also the jackpot strip and the special-hand banner.
* WiderPoker, results: place, prize, the final hand and the leaderboard (the winning hands).
* Hold'em, the player's turn: his hole cards, the board, the pot, the turn clock and every
  betting control; at the showdown the board, the pots and who won.
* The rough edges of the layout: the phone's header on one line, the table conditions
  readable on the phone, the bots of a practice game told apart and clear of the flop.

Screenshots of every phase go to tests/e2e/screenshots/screens-*.png (git-ignored), or to
$E2E_SCREENSHOTS.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.e2e.pages import sign_up, sit_down
from tests.e2e.server import TABLE, manage

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PASSWORD = "one-screen-per-decision"
SCREENSHOTS = Path(os.environ.get("E2E_SCREENSHOTS") or Path(__file__).parent / "screenshots")
LAPTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}
JACKPOT_TABLE = "E2E Crown Turbo"
HOLDEM_TABLE = "E2E Screens Hold'em"
SB, BB, BOT_STACK = 50, 100, 40
SETUP = f"""
from datetime import timedelta
from django.contrib.auth.models import User
from django.utils import timezone
from jackpots import services as jackpots
from jackpots.models import Jackpot
from tables.models import HoldemConditions, Table, TablePhase
from tables.services import create_table
from tables.services.holdem import create_holdem_table
from tables.services.holdem.hands import _seat_bot
from tables.services.special import ScheduleInput, save_schedule
now = timezone.now()
staff = User.objects.create_user(username="e2e-screens-croupier", password=None, is_staff=True)
crown = create_table(name={JACKPOT_TABLE!r}, mode="fun", currency="FUN", ante_minor=100, draw_price_bps=5000,
                     redeal_price_minor=80, change_seconds=25, results_seconds=30, redeal_seconds=8)
for name, kind, one_in in (("Crown", "royal", None), ("Silver spin", "silver", 100_000)):
    jackpot = Jackpot.objects.create(name=name, kind=kind, currency="FUN", contribution_bps=100, reset_minor=500,
                                     one_in=one_in)
    crown.jackpots.add(jackpot)
    jackpots.fund_jackpot(jackpot_id=jackpot.pk, amount_minor=123456, reference=f"e2e-{{kind}}",
                          staff_user_id=staff.pk)
save_schedule(table_id=crown.pk, staff_user_id=staff.pk, reason="e2e", now=now,
              schedule=ScheduleInput(name="Turbo hand", kind="every_n", every_n=2,
                                     overrides={{"change_seconds": 15, "max_redeals": 0, "paid_fraction_bps": 5000}}))
Table.objects.filter(pk=crown.pk).update(hands_dealt=1)  # the next hand, number 2, is special
holdem = create_holdem_table(
    name={HOLDEM_TABLE!r}, mode="fun", currency="FUN", betting="no-limit", seats=6,
    small_blind_minor={SB}, big_blind_minor={BB}, min_buy_in_minor=1_000, max_buy_in_minor=5_000,
    bot_seats=2, rake_bps=500, rake_cap_minor=None, time_bank_seconds=20,
)
conditions = HoldemConditions.objects.get(table=holdem)
conditions.max_buy_in_minor = {BOT_STACK}  # in memory only: the bots are all-in on the blinds
_seat_bot(holdem, conditions, 1, now=now)
_seat_bot(holdem, conditions, 2, now=now)
Table.objects.filter(pk=holdem.pk).update(phase=TablePhase.RESULTS, phase_deadline=now + timedelta(hours=1))
print(holdem.pk)
"""
DEAL = """
from django.db.models import F
from django.utils import timezone
from tables.models import Table
Table.objects.filter(pk={table_id}).update(phase_deadline=timezone.now(), version=F("version") + 1)
"""
# The WiderPoker change phase: what a player decides with.
CHANGE = [f"my-card-{c}" for c in range(5)] + ["probability", "improve-best", "countdown", "tip1", "tip2"]
CHANGE += ["buy-draw", "redeal"]
RESULTS = ["place", "prize", "final-category", "leaderboard", "countdown"]
HOLDEM_TURN = ["my-card-0", "my-card-1", "board", "total-pot", "timer", "fold", "check-call", "bet-raise"]
HOLDEM_TURN += ["all-in", "bet-slider", "bet-amount", "preset-half", "preset-pot", "preset-max"]
HOLDEM_SHOWDOWN = ["board", "pots", "my-card-0", "my-card-1", "total-pot"]


def _outside(page: Page, testids: list[str]) -> list[str]:
    """The testids not wholly inside the viewport (or not displayed), measured in one go."""
    found: list[str] = page.evaluate(
        """(ids) => ids.filter((id) => {
            const node = document.querySelector(`[data-testid="${id}"]`);
            if (!node || node.offsetParent === null) return true;
            const r = node.getBoundingClientRect();
            return r.width === 0 || r.top < 0 || r.left < 0 || r.bottom > innerHeight + 0.5 || r.right > innerWidth + 0.5;
        }).map((id) => {
            const node = document.querySelector(`[data-testid="${id}"]`);
            if (!node || node.offsetParent === null) return `${id} (not displayed)`;
            const r = node.getBoundingClientRect();
            return `${id} at x ${Math.round(r.left)}-${Math.round(r.right)}, y ${Math.round(r.top)}-${Math.round(r.bottom)}`;
        })""",
        testids,
    )
    return found


def _check(page: Page, testids: list[str], name: str, problems: list[str]) -> None:
    """Screenshot the screen as the player sees it, and note what lies outside it."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    expect(page.locator(".reel.spinning")).to_have_count(0)
    page.screenshot(path=str(SCREENSHOTS / f"screens-{name}.png"))
    size = page.viewport_size or {}
    scrolled = int(page.evaluate("window.scrollY"))
    wide = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
    problems += [f"{name} ({size.get('width')}x{size.get('height')}): {what}" for what in _outside(page, testids)]
    if scrolled:
        problems.append(f"{name}: the page scrolled by itself to {scrolled}")
    if wide:
        problems.append(f"{name}: the page scrolls sideways")


def _players(browser: Browser, prefix: str) -> tuple[BrowserContext, BrowserContext, Page, Page]:
    laptop = browser.new_context(viewport=LAPTOP)
    phone = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2)
    pages = laptop.new_page(), phone.new_page()
    for page, who in zip(pages, ("lap", "pho"), strict=True):
        page.set_default_timeout(15_000)
        sign_up(page, SERVER[0], f"{prefix}{who}{os.getpid()}", PASSWORD)
    return laptop, phone, pages[0], pages[1]


SERVER: list[str] = []


def _play_widerpoker_hand(laptop: Page, phone: Page, table: str, extra: list[str], problems: list[str]) -> None:
    """Both sit at ``table``; the change phase and the results are checked on both screens."""
    label = "plain" if table == TABLE else "jackpot-special"
    for page in (laptop, phone):
        sit_down(page, SERVER[0], table)
    for page in (laptop, phone):
        expect(page.locator("[data-testid=phase]")).to_have_attribute("data-phase", "change", timeout=30_000)
        expect(page.locator("[data-testid=my-card-4]")).to_be_visible()
        expect(page.locator("[data-testid=improve-best]")).not_to_have_text("\N{EN DASH}")
        for testid in extra:
            expect(page.locator(f"[data-testid={testid}]")).to_be_visible()
        if "hand-banner" in extra:
            expect(page.locator("[data-testid=hand-banner]")).to_contain_text("Special hand (Turbo hand)")
    laptop.click("[data-testid=my-card-1]")  # a hold changes the panel's rows
    for page, size in ((laptop, "laptop"), (phone, "phone")):
        _check(page, CHANGE + extra, f"widerpoker-{label}-change-{size}", problems)
    for page, size in ((laptop, "laptop"), (phone, "phone")):
        expect(page.locator("[data-testid=result]")).to_be_visible(timeout=40_000)
        expect(page.locator("[data-testid=leaderboard] li")).to_have_count(2)
        _check(page, RESULTS, f"widerpoker-{label}-results-{size}", problems)
    for page in (laptop, phone):
        page.click("[data-testid=leave]")
        page.wait_for_url(f"{SERVER[0]}/")


def test_each_widerpoker_decision_fits_one_screen(server: str, browser: Browser) -> None:
    SERVER[:] = [server]
    table_id = manage(server, "shell", "-c", SETUP).strip().splitlines()[-1]
    assert table_id.isdigit()
    laptop_context, phone_context, laptop, phone = _players(browser, "wp")
    problems: list[str] = []
    _play_widerpoker_hand(laptop, phone, TABLE, [], problems)
    for page in (laptop, phone):
        expect(page.locator("[data-testid=hand-banner]")).to_be_hidden()
    _play_widerpoker_hand(laptop, phone, JACKPOT_TABLE, ["jackpots", "hand-banner", "next-special"], problems)
    assert not problems, "\n".join(problems)
    laptop_context.close()
    phone_context.close()
