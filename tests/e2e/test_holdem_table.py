"""Two people and two house bots play a no-limit Hold'em hand to a showdown with a side pot,
in real Chromium against a real daphne server (issue 9, "How it is judged").

The setup script opens the table and seats the two bots short (40 chips, less than the small
blind: both are all-in as they post the blinds), and holds the clock until the people sit
down; the first hand then deals everyone in with the button on the lowest seat (seat 1,
Ana), and staff close the table so that it is the only hand. Ben (seat 4, under the gun,
on a phone) moves all-in, Ana calls all-in for less: the bots' blinds make the main pot,
Ana's and Ben's chips above them a side pot. After the hand the table closes and returns
the chips; both wallets and the rake account must match the hand's history page.
Screenshots go to /tmp/e2e-holdem-*.png.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.pages import axe_problems, sign_up
from tests.e2e.server import manage

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PASSWORD = "green-felt-holdem-9"
SCREENSHOTS = Path("/tmp")
TABLE = "E2E Hold'em"
SB, BB = 50, 100
BOT_STACK = 40
ANA_BUY_IN, BEN_BUY_IN = 1_000, 3_000
RAKE_BPS = 500

SETUP = f"""
from datetime import timedelta
from django.contrib.auth.models import User
from django.utils import timezone
from tables.models import HoldemConditions, Table, TablePhase
from tables.holdem.services import create_holdem_table
from django.db import transaction
from tables.holdem.services.deal import _seat_bot
table = create_holdem_table(
    name={TABLE!r}, mode="fun", currency="FUN", betting="no-limit", seats=6,
    small_blind_minor={SB}, big_blind_minor={BB}, min_buy_in_minor=1_000, max_buy_in_minor=5_000,
    bot_seats=2, rake_bps={RAKE_BPS}, rake_cap_minor=None, time_bank_seconds=20,
)
User.objects.create_user("croupier", password=None, is_staff=True)
now = timezone.now()
conditions = HoldemConditions.objects.get(table=table)
conditions.max_buy_in_minor = {BOT_STACK}  # in memory only: a house bot buys in for the maximum
with transaction.atomic():  # as the clock seats them: the idle bot is locked (SKIP LOCKED)
    _seat_bot(table, conditions, 1, now=now)
    _seat_bot(table, conditions, 2, now=now)
# Hold the clock until both people are seated (the test releases it).
Table.objects.filter(pk=table.pk).update(phase=TablePhase.RESULTS, phase_deadline=now + timedelta(hours=1))
print(table.pk)
"""
# Release the clock; once it has dealt, staff close the table: the hand in play finishes,
# then every seat's chips go back to the wallets (no second hand).
DEAL_ONE_HAND = """
import time
from django.contrib.auth.models import User
from django.db.models import F
from django.utils import timezone
from tables.models import HoldemHand, Table
from tables.services.configuration import set_table_open
Table.objects.filter(pk={table_id}).update(phase_deadline=timezone.now(), version=F("version") + 1)
for _ in range(200):
    if HoldemHand.objects.filter(table_id={table_id}).exists():
        break
    time.sleep(0.05)
croupier = User.objects.get(username="croupier")
set_table_open(table_id={table_id}, is_open=False, staff_user_id=croupier.pk, reason="one hand", now=timezone.now())
"""
RAKE_BALANCE = """
import json
from wallet.models import Account
from wallet.services import house_account_key
account = Account.objects.filter(key=house_account_key("rake", "FUN")).first()
print(json.dumps(0 if account is None else account.balance_minor))
"""


def _wallet(page: Page) -> int:
    return int(page.get_attribute("[data-testid=wallet]", "data-wallet-minor") or "")


def _take_seat(page: Page, seat: int, buy_in_minor: int) -> None:
    page.click(f"[data-testid=take-seat-{seat}]")
    dialog = page.locator("[data-testid=seat-dialog]")
    expect(dialog).to_be_visible()
    expect(page.locator("[data-testid=dialog-wallet]")).not_to_have_text("\N{EN DASH}")
    page.fill("[data-testid=buy-in-amount]", f"{buy_in_minor / 100:.2f}")
    page.check("[data-testid=blind-post]")
    page.click("[data-testid=seat-confirm]")
    expect(page.locator(f"[data-testid=seat-{seat}].seat-mine")).to_be_visible()
    expect(page.locator(f"[data-testid=seat-stack-{seat}]")).to_have_attribute("data-stack-minor", str(buy_in_minor))


def _assert_fits_the_phone(page: Page, testids: list[str]) -> None:
    width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], f"the phone scrolls sideways: {width}"
    for testid in testids:
        box = page.locator(f"[data-testid={testid}]").bounding_box()
        assert box is not None, f"{testid} is not rendered"
        inside = box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= 390 and box["y"] + box["height"] <= 844
        assert inside, f"{testid} is outside the phone's viewport: {box}"


def _hand_history(page: Page) -> tuple[dict[str, int], int]:
    """End stacks by player name and the rake, read from the hand's history page."""

    ends: dict[str, int] = {}
    for row in page.locator("[data-testid=holdem-players] tbody tr").all():
        name = row.locator("[data-testid=holdem-player-name]").inner_text().strip()
        ends[name] = int(row.locator("[data-testid=holdem-player-end]").get_attribute("data-minor") or "")
    return ends, int(page.locator("[data-testid=holdem-total]").get_attribute("data-rake-minor") or "")


def test_two_people_and_two_bots_play_to_a_showdown_with_a_side_pot(server: str, browser: Browser) -> None:
    table_id = int(manage(server, "shell", "-c", SETUP).strip().splitlines()[-1])
    desktop = browser.new_context(viewport={"width": 1280, "height": 860})
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    ana, ben = desktop.new_page(), phone.new_page()
    errors: list[str] = []
    for page in (ana, ben):
        page.set_default_timeout(10_000)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("dialog", lambda dialog: dialog.accept())
    suffix = str(os.getpid())
    ana_name, ben_name = f"ana{suffix}", f"ben{suffix}"
    sign_up(ana, server, ana_name, PASSWORD)
    sign_up(ben, server, ben_name, PASSWORD)

    # The lobby lists the table with its game, stakes, seats and buy-in range.
    row = ana.locator("[data-testid=holdem-row]", has_text=TABLE)
    expect(row.locator("[data-field=stakes]")).to_have_text("NL 0.50/1")
    expect(row.locator("[data-field=buy-in]")).to_have_text("10.00 FUN to 50.00 FUN")
    expect(row.locator("[data-field=seats]")).to_have_text("2/6")
    row.get_by_role("link", name=TABLE, exact=True).click()
    ben.goto(f"{server}/tables/{table_id}/")
    for page in (ana, ben):
        expect(page.locator("[data-testid=seat-1] [data-badge=bot]")).to_have_text("Bot")
    grants = {ana: _wallet(ana), ben: _wallet(ben)}

    _take_seat(ana, 0, ANA_BUY_IN)
    _take_seat(ben, 3, BEN_BUY_IN)
    expect(ana.locator("[data-testid=wallet]")).to_have_attribute("data-wallet-minor", str(grants[ana] - ANA_BUY_IN))
    manage(server, "shell", "-c", DEAL_ONE_HAND.format(table_id=table_id))

    # The hand: Ana has the button, the bots are all-in on the blinds, Ben is first to act.
    for page in (ana, ben):
        expect(page.locator("[data-testid=street]")).to_have_attribute("data-street", "preflop")
        expect(page.locator("[data-testid=seat-0] [data-testid=dealer-button]")).to_be_visible()
        expect(page.locator("[data-testid=seat-1] [data-testid=small-blind]")).to_be_visible()
        expect(page.locator("[data-testid=seat-2] [data-testid=big-blind]")).to_be_visible()
        expect(page.locator("[data-testid=my-card-1]")).to_be_visible()
        expect(page.locator("[data-testid=seat-3]")).to_have_attribute("data-to-act", "true")
    # Each sees his own cards, the others' face down.
    expect(ana.locator("[data-testid=seat-cards-3] img.back")).to_have_count(2)
    expect(ben.locator("[data-testid=seat-cards-0] img.back")).to_have_count(2)
    expect(ben.locator("[data-testid=action-bar]")).to_be_visible()
    expect(ben.locator("[data-testid=timer]")).to_be_visible()
    expect(ben.locator("[data-testid=announcer]")).to_have_text("Your turn.")
    expect(ben.locator("[data-testid=check-call]")).to_have_text(re.compile(r"^Call 0\.40 FUN"))
    expect(ben.locator("[data-testid=all-in]")).to_contain_text("All-in 30.00 FUN")
    for control in ("sit-out", "leave", "history-link"):
        expect(ben.locator(f"[data-testid={control}]")).to_be_visible()
    _assert_fits_the_phone(ben, ["fold", "check-call", "bet-raise", "all-in", "my-card-0", "my-card-1"])
    ben.screenshot(path=str(SCREENSHOTS / "e2e-holdem-turn-phone.png"))
    problems = axe_problems(ben, "holdem-phone")
    assert not ana.locator("[data-testid=action-bar]").is_visible()
    ana.screenshot(path=str(SCREENSHOTS / "e2e-holdem-waiting.png"))
    problems += axe_problems(ana, "holdem-desktop")
    assert not problems, "\n".join(problems)

    ben.click("[data-testid=all-in]")
    expect(ana.locator("[data-testid=action-bar]")).to_be_visible()
    expect(ana.locator("[data-testid=announcer]")).to_have_text("Your turn.")
    ana.keyboard.press("c")  # C: call (all-in for less)

    # Showdown: both people's cards turn up, a main pot and a side pot, winners paid (the
    # seats first: the table closes RESULTS_PAUSE after the hand and releases them).
    for page, other in ((ana, 3), (ben, 0)):
        expect(page.locator("[data-testid=street]")).to_have_attribute("data-street", "complete")
        expect(page.locator(f"[data-testid=seat-cards-{other}] img:not(.back)")).to_have_count(2)
        page.screenshot(path=str(SCREENSHOTS / f"e2e-holdem-showdown{'' if page is ana else '-phone'}.png"))
    for page in (ana, ben):
        expect(page.locator("[data-testid=board] img")).to_have_count(5)
        expect(page.locator("[data-testid=pot-1]")).to_be_visible()
        expect(page.locator("[data-testid=results-announcer]")).to_contain_text("wins")
    main = ana.locator("[data-testid=pot-0]")
    side = ana.locator("[data-testid=pot-1]")
    expect(main).to_have_attribute("data-amount-minor", str(4 * BOT_STACK))
    expect(main).to_have_attribute("data-seats", "0,1,2,3")
    expect(side).to_have_attribute("data-amount-minor", str(2 * (ANA_BUY_IN - BOT_STACK)))
    expect(side).to_have_attribute("data-seats", "0,3")
    hand_link = ana.get_attribute("[data-testid=hand-link]", "href")
    assert hand_link is not None and re.fullmatch(r"/history/holdem/\d+/", hand_link)

    # The table closes after the hand: the chips go back to the wallets.
    for page in (ana, ben):
        expect(page.locator("[data-testid=leave]")).to_be_hidden()
        expect(page.locator("[data-testid=me-message]")).to_contain_text("This table is closed")

    # The wallets and the rake account match the hand's history.
    ana.goto(f"{server}{hand_link}")
    expect(ana.locator("[data-testid=holdem-verification]")).not_to_contain_text("✘")
    ends, rake = _hand_history(ana)
    pot = 4 * BOT_STACK + 2 * (ANA_BUY_IN - BOT_STACK)
    assert rake == pot * RAKE_BPS // 10_000, (rake, pot)
    assert sum(ends.values()) == 2 * BOT_STACK + ANA_BUY_IN + BEN_BUY_IN - rake, ends
    assert json.loads(manage(server, "shell", "-c", RAKE_BALANCE).strip().splitlines()[-1]) == rake
    for page, name, buy_in in ((ana, ana_name, ANA_BUY_IN), (ben, ben_name, BEN_BUY_IN)):
        page.goto(f"{server}/tables/{table_id}/")
        expect(page.locator("[data-testid=wallet]")).to_have_attribute(
            "data-wallet-minor", str(grants[page] - buy_in + ends[name])
        )
    assert not errors, errors
