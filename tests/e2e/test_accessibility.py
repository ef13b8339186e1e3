"""Accessibility (issue #11, E): axe-core finds no serious or critical violation on the
players' pages, at phone and desktop sizes, and a hand can be played from the keyboard.

axe-core is vendored in tests/e2e/vendor/axe-core (MPL-2.0), injected into each page.
"""

from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import Browser, ViewportSize, expect

from tests.e2e.pages import AXE_IMPACTS, axe_problems, sign_up
from tests.e2e.server import CHANGE_SECONDS, TABLE, manage

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


# --- every page of the three roles, both languages, both sizes (issue 24, item 5) ------------

ROLE_PASSWORD = "axe-every-page-24"
SETUP_ROLES = f"""
from datetime import timedelta
from django.contrib.auth.models import Group, User
from django.utils import timezone
from tables.widerpoker.services.seating import join_table
from tables.widerpoker.services.seating import leave_table
from tables.models import Table
from tests.e2e.live import deal_live, settle_live
from tables.widerpoker.services.create import create_table
from tables.holdem.services import create_holdem_table, take_seat, sit_out_holdem
from wallet.services import grant_signup_fun_chips

people = {{}}
for name in ("pia", "quinn", "rex"):
    people[name] = User.objects.create_user(username=name, password={ROLE_PASSWORD!r})
    grant_signup_fun_chips(user_id=people[name].pk)
croupier = User.objects.create_user(username="cora", password={ROLE_PASSWORD!r}, is_staff=True)
croupier.groups.add(Group.objects.get(name="Croupiers"))
auditor = User.objects.create_user(username="audra", password={ROLE_PASSWORD!r}, is_staff=True)
auditor.groups.add(Group.objects.get(name="Auditors"))
table = create_table(name="Axe Rail", mode="fun", currency="FUN", ante_minor=100,
                     draw_price_bps=5000, redeal_price_minor=80)
# Real time, not back-dated, and stepped until done (tests/e2e/live.py): the live server's
# clock steps the table too, at its own time, and skips or takes a step of the script's.
start = timezone.now()
for name in ("pia", "quinn"):
    join_table(table_id=table.pk, user_id=people[name].pk, now=start)
hand = deal_live(table.pk, start)
settle_live(hand, hand.change_deadline + timedelta(seconds=4))
for name in ("pia", "quinn"):
    leave_table(table_id=table.pk, user_id=people[name].pk, now=timezone.now())
holdem = create_holdem_table(name="Axe Holdem", mode="fun", currency="FUN", small_blind_minor=5,
                             big_blind_minor=10, min_buy_in_minor=200, max_buy_in_minor=2000, bot_seats=2)
now = timezone.now()
take_seat(table_id=holdem.pk, user_id=people["quinn"].pk, position=0, buy_in_minor=500, now=now)
take_seat(table_id=holdem.pk, user_id=people["rex"].pk, position=1, buy_in_minor=500, now=now)
sit_out_holdem(table_id=holdem.pk, user_id=people["rex"].pk, now=now)
from tables.holdem.practice.services import start_practice_game
from tables.holdem.practice.setup import PracticeSetup
practice = start_practice_game(user_id=people["pia"].pk, nickname="Pia", now=now,
                               setup=PracticeSetup(players=3, felt="blue", currency_label="fiches"))
print(table.pk, hand.pk, holdem.pk, practice.pk)
"""


def _role_pages(table_id: str, hand_id: str, holdem_id: str, practice_id: str) -> dict[str, dict[str, str]]:
    player = {
        "lobby": "/",
        "wallet": "/wallet/",
        "responsible-gaming": "/responsible-gaming/",
        "history": "/history/",
        "hand": f"/history/hands/{hand_id}/",
        "commitments": "/history/commitments/",
        "provably-fair": "/history/provably-fair/",
        "provably-fair-algorithm": "/history/provably-fair/algorithm/",
        "rules": "/rules/",
        "simulator": f"/simulator/?table={table_id}",
        "details": f"/tables/{table_id}/details/",
        "widerpoker-table": f"/tables/{table_id}/",
        "holdem-table": f"/tables/{holdem_id}/",
        "practice-setup": "/practice/",
        "practice-leaderboard": "/practice/leaderboard/",
        "practice-game": f"/practice/{practice_id}/",
        "not-found": "/no-such-page/",
    }
    croupier = {
        "admin": "/admin/",
        "dashboard": "/backoffice/",
        "rake": "/backoffice/rake/",
        "config-changes": "/backoffice/config-changes/",
        "status": "/backoffice/status/",
        "tables": "/admin/tables/table/",
        "table": f"/admin/tables/table/{table_id}/change/",
        "jackpot-add": "/admin/jackpots/jackpot/add/",
        "schedule-add": "/admin/tables/specialhandschedule/add/",
        "accounts": "/admin/wallet/account/",
        "users": "/admin/auth/user/",
    }
    auditor = {
        "admin": "/admin/",
        "audit-report": "/backoffice/audit/",
        "hands": "/admin/tables/hand/",
        "hand-admin": f"/admin/tables/hand/{hand_id}/change/",
        "holdem-hands": "/admin/tables/holdemhand/",
        "entries": "/admin/tables/entry/",
        "hand": f"/history/hands/{hand_id}/",
    }
    return {"pia": player, "cora": croupier, "audra": auditor}


def test_every_page_of_the_three_roles_has_no_violation_in_both_languages_and_sizes(
    server: str, browser: Browser
) -> None:
    """axe-core (any impact) on each page of a player, a croupier and an auditor, in English
    and Italian, at 1366x768 and 390x844: one page load per page, language and size. The
    logged-out login and sign-up pages are read too."""
    manage(server, "create_staff_groups")
    table_id, hand_id, holdem_id, practice_id = manage(server, "shell", "-c", SETUP_ROLES).split()[-4:]
    pages = _role_pages(table_id, hand_id, holdem_id, practice_id)
    host = server.split("//", 1)[1].split(":", 1)[0]
    problems: list[str] = []
    for language in ("en", "it"):
        sizes: tuple[tuple[str, ViewportSize], ...] = (
            ("desktop", {"width": 1366, "height": 768}),
            ("phone", {"width": 390, "height": 844}),
        )
        for size, viewport in sizes:
            phone = size == "phone"
            for who, paths in [("anonymous", {"login": "/login/", "signup": "/signup/"}), *pages.items()]:
                context = browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone)
                context.add_cookies([{"name": "django_language", "value": language, "domain": host, "path": "/"}])
                page = context.new_page()
                page.set_default_timeout(15_000)
                if who != "anonymous":
                    page.goto(f"{server}/admin/login/" if who != "pia" else f"{server}/login/")
                    page.fill("#id_username", who)
                    page.fill("#id_password", ROLE_PASSWORD)
                    page.locator("form input[type=submit], form button[type=submit]").last.click()
                    page.wait_for_load_state("load")
                for name, path in paths.items():
                    page.goto(f"{server}{path}")
                    page.wait_for_load_state("load")
                    if name in ("holdem-table", "practice-game"):
                        # Any taken seat: a practice game eliminates seats as it plays on
                        # through the run, seat 0's among them (CI, 2026-11-27).
                        page.wait_for_selector(".seat-taken .seat-box", state="attached")
                    if name == "practice-game":  # the options chosen apply (UX audit N9)
                        felt = page.evaluate("() => getComputedStyle(document.querySelector('.oval')).backgroundImage")
                        assert "rgb(29, 78, 137)" in felt, felt  # blue, not the green gradient
                        expect(page.locator("[data-testid=my-stack]")).to_contain_text("fiches")
                    problems += axe_problems(page, f"{who}/{name}/{language}/{size}", impacts=AXE_IMPACTS)
                context.close()
    assert problems == [], "\n".join(problems)
