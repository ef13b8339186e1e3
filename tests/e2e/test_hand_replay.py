"""Hand histories as a replay in the browser (issue 24, item 2): a played WiderPoker hand
and a played Hold'em hand opened by their players and by a watcher, at 1366x768 and
390x844, in English and Italian: the columns are numbered 1-5, the steps and streets are
there, nothing is wider than the screen, a folded hand is in nobody's page but its owner's,
and axe-core finds no violation of any impact. Screenshots go to /tmp/replay-shots/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from tests.e2e.pages import AXE_IMPACTS, axe_problems
from tests.e2e.server import manage

pytestmark = [pytest.mark.browser, pytest.mark.slow]
# The script below plays both hands with its own clock, and the pages only read them: a live
# clock stepping the same tables skipped the script's steps (SKIP LOCKED), and its redeal
# purchase found no hand (CI, 2026-11-27).
E2E_TABLE_CLOCK = "off"

SHOTS = Path("/tmp/replay-shots")
PASSWORD = "replay-pages-24"
SETUP = f"""
from datetime import timedelta
from django.contrib.auth.models import User
from django.utils import timezone
from tables.clock import advance_table
from tables.widerpoker.services.play import buy_draw
from tables.widerpoker.services.play import buy_redeal
from tables.widerpoker.services.seating import join_table
from tables.widerpoker.services.seating import leave_table
from tables.widerpoker.services.play import set_hold
from tables.widerpoker.services.create import create_table
from tables.models import HandFreeze, HoldemHand, HoldemHandStatus, Redeal
from tables.services import beacon
from tables.widerpoker.services.play import resolve_pending_redeals
from tables.holdem.services import act_in_hand, replay, take_seat
from tests.tables.holdem_helpers import holdem_table, passive_kind, tick
from wallet.services import grant_signup_fun_chips

people = {{}}
for name in ("rita", "sam", "uma", "tom"):
    people[name] = User.objects.create_user(username=name, password={PASSWORD!r})
    grant_signup_fun_chips(user_id=people[name].pk)
table = create_table(name="Replay Rail", mode="fun", currency="FUN", ante_minor=100,
                     draw_price_bps=5000, redeal_price_minor=80)
start = timezone.now()
for name in ("rita", "sam"):
    join_table(table_id=table.pk, user_id=people[name].pk, now=start)
advance_table(table_id=table.pk, now=start)
freeze = HandFreeze.objects.filter(table=table, abandoned_at__isnull=True).first()
if freeze is not None:  # algorithm 3: the inputs froze, the deal round deals the hand
    start = max(start, beacon.time_of(int(freeze.deal_round)))
    advance_table(table_id=table.pk, now=start)
table.refresh_from_db()
hand = table.current_hand
buy_redeal(table_id=table.pk, user_id=people["rita"].pk, now=start + timedelta(seconds=1))
later = start + timedelta(seconds=1)
pending = Redeal.objects.filter(hand=hand, combination__isnull=True).first()
if pending is not None:  # algorithm 3: the redeal waits for the first round after its purchase
    later = max(later, beacon.time_of(int(pending.beacon_round)))
    resolve_pending_redeals(now=later)
set_hold(table_id=table.pk, user_id=people["rita"].pk, hold=[True, False, True, False, False],
                  now=later + timedelta(seconds=1))
buy_draw(table_id=table.pk, user_id=people["rita"].pk, now=later + timedelta(seconds=2))
advance_table(table_id=table.pk, now=hand.change_deadline + timedelta(seconds=4))
for name in ("rita", "sam"):
    leave_table(table_id=table.pk, user_id=people[name].pk, now=hand.change_deadline + timedelta(seconds=5))

holdem = holdem_table("Replay Holdem")
now = timezone.now()
for position, name in enumerate(("rita", "sam", "uma")):
    take_seat(table_id=holdem.pk, user_id=people[name].pk, position=position, buy_in_minor=1000, blind="post",
              now=now)
seats = {{0: people["rita"], 1: people["sam"], 2: people["uma"]}}
# Play hands until one deals uma in (the first may be dealt before she sits).
for attempt in range(6):
    now = now + timedelta(seconds=60 * attempt)
    tick(holdem, now + timedelta(milliseconds=1))
    played = HoldemHand.objects.filter(table=holdem).order_by("-number").first()
    while played.status == HoldemHandStatus.PLAYING:
        legal = replay(played).legal_actions()
        kind = "fold" if legal.seat == 2 and "fold" in legal.kinds else passive_kind(legal.kinds)
        act_in_hand(table_id=holdem.pk, user_id=seats[legal.seat].pk, kind=kind, now=now)
        played.refresh_from_db()
    if 2 in replay(played).seats:
        break
state = replay(played)
from tables.engine.cards import card_code
folded = [card_code(c) for c in state.holes[state.seats.index(2)]]
print(hand.pk, played.pk, " ".join(folded))
"""

SIZES: tuple[tuple[str, ViewportSize], ...] = (
    ("laptop", {"width": 1366, "height": 768}),
    ("phone", {"width": 390, "height": 844}),
)


def _log_in(page: Page, server: str, name: str) -> None:
    page.goto(f"{server}/login/")
    page.fill("#id_username", name)
    page.fill("#id_password", PASSWORD)
    page.locator("form button[type=submit], form input[type=submit]").last.click()
    page.wait_for_load_state("load")


def _width(page: Page) -> int:
    return int(page.evaluate("() => document.documentElement.scrollWidth"))


def test_players_and_a_watcher_read_the_replays_in_both_languages_and_sizes(server: str, browser: Browser) -> None:
    hand_id, holdem_id, *folded = manage(server, "shell", "-c", SETUP).split()[-4:]
    SHOTS.mkdir(parents=True, exist_ok=True)
    host = server.split("//", 1)[1].split(":", 1)[0]
    problems: list[str] = []
    for language in ("en", "it"):
        column = "Column" if language == "en" else "Colonna"
        for size, viewport in SIZES:
            phone = size == "phone"
            for who in ("rita", "tom", "uma"):
                context = browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone)
                context.add_cookies([{"name": "django_language", "value": language, "domain": host, "path": "/"}])
                page = context.new_page()
                page.set_default_timeout(15_000)
                _log_in(page, server, who)
                if who == "rita":
                    page.goto(f"{server}/history/hands/{hand_id}/")
                    expect(page.locator("html")).to_have_attribute("lang", language)
                    steps = page.locator("[data-testid=replay-steps] > li")
                    names = [steps.nth(i).get_attribute("data-testid") for i in range(steps.count())]
                    assert names == [
                        "step-deal",
                        "step-redeal-1",
                        "step-hold",
                        *[f"step-draw-{n}" for n in range(1, 6)],
                        "step-result",
                    ], names
                    numbers = page.locator("[data-testid=replay-board] [data-testid=column-number]").all_inner_texts()
                    assert numbers == ["1", "2", "3", "4", "5"], numbers
                    labels = page.locator("[data-testid=step-draw-1] [data-testid=column-number]").all_inner_texts()
                    assert labels == [f"{column} {n}" for n in range(1, 6)], labels
                    held = page.locator("[data-testid=step-hold] .card.held")
                    expect(held).to_have_count(2)
                    expect(page.locator("[data-testid=step-draw-1] .card.changed")).to_have_count(3)
                    text = page.locator("main").inner_text()
                    assert not re.search(r"(Column|Colonna) 0|Position", text)
                    expect(page.locator("[data-testid=step-result]")).to_be_visible()
                    expect(page.locator("[data-testid=verification-summary]")).to_contain_text(
                        "dealt exactly as committed" if language == "en" else "distribuita esattamente come impegnato"
                    )
                    expect(page.locator("[data-testid=technical]")).not_to_have_attribute("open", "")
                    assert _width(page) <= viewport["width"], (who, size, language, _width(page))
                    page.screenshot(path=str(SHOTS / f"widerpoker-{language}-{size}.png"), full_page=True)
                    problems += axe_problems(page, f"widerpoker/{language}/{size}", impacts=AXE_IMPACTS)
                page.goto(f"{server}/history/holdem/{holdem_id}/")
                streets = page.locator("[data-testid=holdem-streets] > li[data-street]")
                names = [streets.nth(i).get_attribute("data-street") for i in range(streets.count())]
                assert names[:4] == ["preflop", "flop", "turn", "river"], names
                expect(page.locator("[data-testid=holdem-pots]")).to_be_visible()
                html = page.content()
                for code in folded:  # uma folded: only uma sees her cards
                    assert (f"/static/cards/{code}.svg" in html) == (who == "uma"), (who, code)
                expect(page.locator("[data-testid=watcher-note]")).to_have_count(1 if who == "tom" else 0)
                assert _width(page) <= viewport["width"], (who, size, language, _width(page))
                page.screenshot(path=str(SHOTS / f"holdem-{who}-{language}-{size}.png"), full_page=True)
                problems += axe_problems(page, f"holdem/{who}/{language}/{size}", impacts=AXE_IMPACTS)
                if who == "rita":
                    page.goto(f"{server}/history/provably-fair/")
                    expect(page.locator("[data-testid=fair-steps] > li")).to_have_count(3)
                    page.locator("[data-testid=algorithm-link]").click()
                    page.wait_for_url(re.compile(r"/history/provably-fair/algorithm/$"))
                    page.go_back()
                    page.wait_for_load_state("load")
                    assert _width(page) <= viewport["width"]
                    page.screenshot(path=str(SHOTS / f"fairness-{language}-{size}.png"), full_page=True)
                    problems += axe_problems(page, f"fairness/{language}/{size}", impacts=AXE_IMPACTS)
                context.close()
    assert problems == [], "\n".join(problems)
