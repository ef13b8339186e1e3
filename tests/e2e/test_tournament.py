"""Two players register for a fun tournament in Chromium, watch the countdown, play its hands
at the tournament's table with the in-process clock, and read the results on its page
(docs/tournaments.md). Screenshots go to /tmp/e2e-tournament-*.png."""

from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.pages import AXE_IMPACTS, axe_problems, sign_up
from tests.e2e.server import manage

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PASSWORD = "wide-tournament-2-players"
NAME = "E2E Wide Cup"
START_IN_SECONDS = 25

SCHEDULE = f"""
from datetime import timedelta
from django.utils import timezone
from tables.tournaments.services import schedule_tournament
now = timezone.now()
tournament = schedule_tournament(
    staff_user_id=None, now=now, name={NAME!r}, starts_at=now + timedelta(seconds={START_IN_SECONDS}),
    mode="fun", currency="FUN", buy_in_minor=500, fee_minor=0, starting_chips_minor=10_000, hands=2,
    change_seconds=6, results_seconds=3, redeal_seconds=6, antes=[{{"from_hand": 1, "ante_minor": 1000}}],
    paid_fraction_bps=5000,
)
print(tournament.pk)
"""


def _open_tournament(page: Page, base: str) -> None:
    page.goto(f"{base}/tournaments/")
    page.get_by_role("link", name=NAME, exact=True).click()
    page.wait_for_selector("[data-testid=tournament]")


def test_two_players_register_play_and_read_the_results(server: str, browser: Browser) -> None:
    tournament_id = int(manage(server, "shell", "-c", SCHEDULE).split()[-1])
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    ana, ben = context.new_page(), browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    errors: list[str] = []
    suffix = str(os.getpid())
    for page, name in ((ana, f"tana{suffix}"), (ben, f"tben{suffix}")):
        page.set_default_timeout(15_000)
        page.on("pageerror", lambda error: errors.append(str(error)))
        sign_up(page, server, name, PASSWORD)
        _open_tournament(page, server)
        expect(page.locator("[data-testid=countdown]")).to_have_text(re.compile(r"\d+ s"))
        page.click("[data-testid=register]")
        expect(page.locator("[data-testid=unregister]")).to_be_visible()
    expect(ben.locator("[data-testid=entries]")).to_have_text("2")
    ana.screenshot(path="/tmp/e2e-tournament-registered.png")
    problems = axe_problems(ana, "tournament-registered", impacts=AXE_IMPACTS)
    ana.goto(f"{server}/tournaments/")
    problems += axe_problems(ana, "tournament-list", impacts=AXE_IMPACTS)
    _open_tournament(ana, server)

    # The page reloads itself when the tournament starts; then Ana plays at its table.
    expect(ana.locator("[data-testid=tournament-state]")).to_have_attribute(
        "data-state", "running", timeout=(START_IN_SECONDS + 20) * 1000
    )
    ana.click("[data-testid=play-tournament]")
    ana.wait_for_selector("[data-testid=board] .reel .card")
    # Between the hands the table shows the tournament's standings.
    expect(ana.locator("[data-testid=tournament-banner]")).to_contain_text("2", timeout=40_000)
    ana.screenshot(path="/tmp/e2e-tournament-table.png")

    # Ben's page follows the tournament by itself: it reloads when the state changes.
    ben.goto(f"{server}/tournaments/{tournament_id}/")
    expect(ben.locator("[data-testid=tournament-state]")).to_have_attribute("data-state", "finished", timeout=90_000)
    ben.wait_for_load_state("load")
    rows = ben.locator("[data-testid=result-row]")
    expect(rows).to_have_count(2)
    prizes = [int(re.sub(r"\D", "", text)) for text in ben.locator("[data-testid=result-prize]").all_inner_texts()]
    assert sum(prizes) == 1000  # two buy-ins of 5.00 FUN, every cent paid
    expect(ben.locator("[data-testid=my-place]")).to_have_text(re.compile(r"^[12]$"))
    ben.screenshot(path="/tmp/e2e-tournament-results.png")
    problems += axe_problems(ben, "tournament-results", impacts=AXE_IMPACTS)
    assert not problems, problems
    assert not errors, errors
