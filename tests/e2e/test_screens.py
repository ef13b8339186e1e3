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
from playwright.sync_api import Browser, BrowserContext, Page, ViewportSize, expect

from tests.e2e.pages import axe_problems, sign_up, sit_down
from tests.e2e.server import TABLE, manage

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PASSWORD = "one-screen-per-decision"
SCREENSHOTS = Path(os.environ.get("E2E_SCREENSHOTS") or Path(__file__).parent / "screenshots")
LAPTOP: ViewportSize = {"width": 1366, "height": 768}
PHONE: ViewportSize = {"width": 390, "height": 844}
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
from tables.widerpoker.services.create import create_table
from tables.holdem.services import create_holdem_table
from django.db import transaction
from tables.holdem.services.deal import _seat_bot
from tables.widerpoker.services.special import ScheduleInput, save_schedule
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
with transaction.atomic():  # as the clock seats them: the idle bot is locked (SKIP LOCKED)
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
    """The testids not wholly inside the viewport, not displayed, or covered at their centre
    by something else (a sticky bar), measured in one go."""
    found: list[str] = page.evaluate(
        """(ids) => ids.map((id) => {
            const node = document.querySelector(`[data-testid="${id}"]`);
            if (!node || node.offsetParent === null) return `${id} (not displayed)`;
            const r = node.getBoundingClientRect();
            const [x0, x1, y0, y1] = [r.left, r.right, r.top, r.bottom].map(Math.round);
            const where = `x ${x0}-${x1}, y ${y0}-${y1}`;
            const out = r.top < 0 || r.left < 0 || r.bottom > innerHeight + 0.5 || r.right > innerWidth + 0.5;
            if (r.width === 0 || out) {
                return `${id} at ${where}`;
            }
            const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
            if (hit && !node.contains(hit) && !hit.contains(node)) return `${id} at ${where} under ${hit.className}`;
            return null;
        }).filter(Boolean)""",
        testids,
    )
    return found


def _check(page: Page, testids: list[str], name: str, problems: list[str]) -> None:
    """Screenshot the screen as the player sees it, and note what lies outside it."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    expect(page.locator(".reel.spinning")).to_have_count(0)
    page.screenshot(path=str(SCREENSHOTS / f"screens-{name}.png"))
    size = page.viewport_size
    window = f"{size['width']}x{size['height']}" if size else "?"
    scrolled = int(page.evaluate("window.scrollY"))
    wide = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
    problems += [f"{name} ({window}): {what}" for what in _outside(page, testids)]
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


def _click_where_it_is(page: Page, testid: str) -> None:
    """Click ``testid`` as a player does, where it is: Playwright's click first scrolls an
    element into view, and one clicked while the screen was still laying out (a jackpot
    panel arriving, under the suite's load) scrolled the page, which ``_check`` then blamed
    on the page. The page goes back to where it was before the click; a scroll the page
    makes after it is still seen by ``_check``."""
    before = int(page.evaluate("window.scrollY"))
    page.locator(f"[data-testid={testid}]").click()
    page.evaluate("(y) => window.scrollTo(0, y)", before)


def _play_widerpoker_hand(laptop: Page, phone: Page, table: str, extra: list[str], problems: list[str]) -> str:
    """Both sit at ``table``; the change phase and the results are checked on both screens.
    Returns the hand page's address."""
    label = "plain" if table == TABLE else "jackpot-special"
    for page in (laptop, phone):
        sit_down(page, SERVER[0], table)
    for page in (laptop, phone):
        expect(page.locator("[data-testid=phase]")).to_have_attribute("data-phase", "change", timeout=30_000)
        expect(page.locator("[data-testid=my-card-4]")).to_be_visible()
        # The odds appear once a card is held (seed 000 section 3): hold the first one.
        _click_where_it_is(page, "my-card-0")
        expect(page.locator("[data-testid=hold-state]")).to_have_attribute("data-hold", "HDDDD")
        expect(page.locator("[data-testid=improve-best]")).not_to_have_text("\N{EN DASH}")
        for testid in extra:
            expect(page.locator(f"[data-testid={testid}]")).to_be_visible()
        if "hand-banner" in extra:
            expect(page.locator("[data-testid=hand-banner]")).to_contain_text("Special hand (Turbo hand)")
    _click_where_it_is(laptop, "my-card-1")  # a hold changes the panel's rows
    for page, size in ((laptop, "laptop"), (phone, "phone")):
        _check(page, CHANGE + extra, f"widerpoker-{label}-change-{size}", problems)
        problems += axe_problems(page, f"widerpoker-{label}-change-{size}")
    for page, size in ((laptop, "laptop"), (phone, "phone")):
        expect(page.locator("[data-testid=result]")).to_be_visible(timeout=40_000)
        expect(page.locator("[data-testid=leaderboard] li")).to_have_count(2)
        _check(page, RESULTS, f"widerpoker-{label}-results-{size}", problems)
    hand_link = phone.get_attribute("[data-testid=hand-link]", "href")
    assert hand_link is not None
    for page in (laptop, phone):
        page.click("[data-testid=leave]")
        page.wait_for_url(f"{SERVER[0]}/")
    return hand_link


def _cut(page: Page, selector: str) -> list[str]:
    """The texts of ``selector`` that their box cuts (an ellipsis, or scrolled out of sight)."""
    found: list[str] = page.evaluate(
        """(selector) => [...document.querySelectorAll(selector)]
            .filter((node) => node.offsetParent !== null && node.scrollWidth > node.clientWidth + 1)
            .map((node) => node.textContent.trim())""",
        selector,
    )
    return found


@pytest.fixture(scope="module")
def holdem_table(server: str) -> int:
    """Open the module's tables (see SETUP); the Hold'em table's id."""
    SERVER[:] = [server]
    return int(manage(server, "shell", "-c", SETUP).strip().splitlines()[-1])


def test_each_widerpoker_decision_fits_one_screen(holdem_table: int, browser: Browser) -> None:
    laptop_context, phone_context, laptop, phone = _players(browser, "wp")
    problems: list[str] = []
    _play_widerpoker_hand(laptop, phone, TABLE, [], problems)
    for page in (laptop, phone):
        expect(page.locator("[data-testid=hand-banner]")).to_be_hidden()
    hand_link = _play_widerpoker_hand(
        laptop, phone, JACKPOT_TABLE, ["jackpots", "hand-banner", "next-special"], problems
    )

    # Rough edges: on the phone the header is one line and the conditions are not cut.
    phone.goto(f"{SERVER[0]}/")
    phone.get_by_role("link", name=JACKPOT_TABLE, exact=True).click()
    phone.wait_for_selector("[data-testid=board] .reel .card")
    header = phone.locator(".site-header").bounding_box()
    if header is None or header["height"] > 56:
        problems.append(f"the phone's header takes more than one line: {header}")
    problems += [f"the phone cuts the table's conditions: {text}" for text in _cut(phone, ".game-conditions")]
    # The phone's hand page: the player's own entry has no gold line on every cell.
    phone.goto(f"{SERVER[0]}{hand_link}")
    lined = phone.evaluate(
        """() => [...document.querySelectorAll('tr.hh-me td')]
            .filter((td) => td.offsetParent !== null && getComputedStyle(td).boxShadow !== 'none').length"""
    )
    assert phone.locator("tr.hh-me").count() > 0
    if lined:
        problems.append(f"the phone's hand page lines {lined} cells of the player's entry in gold")
    phone.screenshot(path=str(SCREENSHOTS / "screens-hand-page-phone.png"), full_page=True)
    # The commitments at 1366: the tables fit their boxes, no sideways scrolling.
    laptop.goto(f"{SERVER[0]}/history/commitments/")
    wide = laptop.evaluate(
        """() => [...document.querySelectorAll('.table-scroll')]
            .filter((box) => box.scrollWidth > box.clientWidth + 1)
            .map((box) => `${box.querySelector('table').dataset.testid} ${box.scrollWidth} > ${box.clientWidth}`)"""
    )
    laptop.screenshot(path=str(SCREENSHOTS / "screens-commitments-laptop.png"), full_page=True)
    problems += [f"the commitments scroll sideways at 1366: {what}" for what in wide]
    assert not problems, "\n".join(problems)
    laptop_context.close()
    phone_context.close()


def _take_seat(page: Page, seat: int, buy_in_minor: int) -> None:
    page.click(f"[data-testid=take-seat-{seat}]")
    expect(page.locator("[data-testid=dialog-wallet]")).not_to_have_text("\N{EN DASH}")
    page.fill("[data-testid=buy-in-amount]", f"{buy_in_minor / 100:.2f}")
    page.check("[data-testid=blind-post]")
    page.click("[data-testid=seat-confirm]")
    expect(page.locator(f"[data-testid=seat-{seat}].seat-mine")).to_be_visible()


def _winners(page: Page) -> list[str]:
    found: list[str] = page.evaluate(
        """() => [...document.querySelectorAll('[data-testid^="seat-won-"]')].map((node) => node.dataset.testid)"""
    )
    return found


def _controls(page: Page) -> list[str]:
    """Every betting control on display (a raise is not offered against an all-in)."""
    found: list[str] = page.evaluate(
        """() => [...document.querySelectorAll('[data-testid=action-bar] [data-testid]')]
            .filter((node) => node.offsetParent !== null).map((node) => node.dataset.testid)"""
    )
    return found


def test_each_holdem_decision_fits_one_screen(holdem_table: int, browser: Browser) -> None:
    """Two bots all-in on the blinds; Ben (phone, under the gun) calls, Ana (laptop, on the
    button) moves all-in, Ben calls: each turn and the showdown are checked on the screen of
    the player who decides (Ana's also in a narrow window)."""
    laptop_context, phone_context, ana, ben = _players(browser, "he")
    problems: list[str] = []
    for page in (ana, ben):
        page.goto(f"{SERVER[0]}/tables/{holdem_table}/")
    _take_seat(ana, 0, 1_000)
    _take_seat(ben, 3, 3_000)
    manage(SERVER[0], "shell", "-c", DEAL.format(table_id=holdem_table))
    expect(ben.locator("[data-testid=action-bar]")).to_be_visible(timeout=20_000)
    expect(ben.locator("[data-testid=bet-raise]")).to_be_visible()
    _check(ben, HOLDEM_TURN, "holdem-turn-phone", problems)
    _check(ana, ["my-card-0", "my-card-1", "board", "total-pot", "timer"], "holdem-waiting-laptop", problems)
    ben.click("[data-testid=check-call]")
    expect(ana.locator("[data-testid=action-bar]")).to_be_visible()
    expect(ana.locator("[data-testid=bet-raise]")).to_be_visible()
    _check(ana, HOLDEM_TURN, "holdem-turn-laptop", problems)
    problems += axe_problems(ana, "holdem-turn-laptop")
    ana.set_viewport_size(PHONE)  # a narrow window on the laptop: the phone's layout
    _check(ana, HOLDEM_TURN, "holdem-turn-narrow-window", problems)
    ana.set_viewport_size(LAPTOP)
    ana.click("[data-testid=all-in]")
    expect(ben.locator("[data-testid=check-call]")).to_contain_text("Call 9.")
    _check(ben, HOLDEM_TURN[:6] + _controls(ben), "holdem-turn-against-all-in-phone", problems)
    ben.click("[data-testid=check-call]")
    for page, size in ((ana, "laptop"), (ben, "phone")):
        expect(page.locator("[data-testid=street]")).to_have_attribute("data-street", "complete")
        expect(page.locator("[data-testid=board] img")).to_have_count(5)
        expect(page.locator("[data-testid=pot-1]")).to_be_visible()
        winners = _winners(page)
        assert winners, "nobody is shown winning"
        _check(page, HOLDEM_SHOWDOWN + winners, f"holdem-showdown-{size}", problems)
    assert not problems, "\n".join(problems)
    laptop_context.close()
    phone_context.close()


def test_practice_bots_are_told_apart_and_clear_of_the_board_on_a_phone(holdem_table: int, browser: Browser) -> None:
    """A bots-only practice game of six on a phone: each bot's name shows its number, and no
    seat covers a card of the board (by the flop some bots may be out already)."""
    phone = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2)
    page = phone.new_page()
    page.set_default_timeout(15_000)
    sign_up(page, SERVER[0], f"prac{os.getpid()}", PASSWORD)
    page.goto(f"{SERVER[0]}/practice/")
    page.fill("#id_nickname", "")  # nobody plays: the bots play each other
    page.select_option("#id_players", "6")
    page.click("[data-testid=practice-start]")
    expect(page.locator("[data-testid=practice-banner]")).to_be_visible()
    expect(page.locator("[data-testid=board] img")).to_have_count(3, timeout=60_000)
    names = page.evaluate(
        """() => [...document.querySelectorAll('.seat-name')].map((name) => {
            const box = name.getBoundingClientRect();
            const tail = name.querySelector('.seat-name-tail') ?? name;
            const end = tail.getBoundingClientRect();
            return {name: name.title || name.textContent, shown: end.right <= box.right + 1 && end.width > 0};
        })"""
    )
    # Two at least: on a slow box the first flop the page shows may come after four bots busted.
    assert len(names) >= 2 and all(re.fullmatch(r"practicebot-\d+", n["name"]) for n in names), names
    assert [n["name"] for n in names if not n["shown"]] == [], "names cut before their number"
    covered = page.evaluate(
        """() => {
            const cards = [...document.querySelectorAll('[data-testid=board] img, [data-testid=board] .pcard')];
            const seats = [...document.querySelectorAll('.seat')];
            return cards.flatMap((card, i) => seats.filter((seat) => {
                const a = card.getBoundingClientRect(), b = seat.getBoundingClientRect();
                return a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
            }).map((seat) => `board card ${i + 1} under ${seat.dataset.testid}`));
        }"""
    )
    page.screenshot(path=str(SCREENSHOTS / "screens-practice-flop-phone.png"))
    assert covered == []
    phone.close()
