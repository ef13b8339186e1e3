"""Two people play a hand in real Chromium against a real daphne server.

The server runs in a subprocess with the in-process table clock, on its own database (a
SQLite file, or a fresh PostgreSQL database when ``DATABASE_URL`` is set) and, with
``REDIS_URL``, its own channel-layer prefix. Screenshots of the lobby, the change phase and
the results go to /tmp/e2e-*.png.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.pages import sign_up
from tests.e2e.server import ANTE, CHANGE_SECONDS, DRAW_PRICE, REDEAL_PRICE, TABLE

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PASSWORD = "green-felt-2-players"
SCREENSHOTS = Path("/tmp")


def _sign_up(page: Page, base: str, username: str) -> int:
    """Sign up through the form; return the FUN balance the wallet page shows afterwards."""
    sign_up(page, base, username, PASSWORD)
    return _wallet_fun_balance(page, base)


def _wallet_fun_balance(page: Page, base: str) -> int:
    page.goto(f"{base}/wallet/")
    balance = page.get_attribute("[data-testid=wallet-balance-FUN]", "data-balance-minor")
    assert balance is not None
    return int(balance)


def _open_table_from_lobby(page: Page, base: str) -> None:
    page.goto(f"{base}/")
    page.get_by_role("link", name=TABLE, exact=True).click()
    page.wait_for_selector("[data-testid=board] .reel .card")


def _join(page: Page) -> None:
    page.click("[data-testid=join]")
    page.wait_for_selector("[data-testid=seat-buttons][data-seat=active]")


def test_two_players_play_a_hand(server: str, browser: Browser) -> None:
    started = time.monotonic()
    desktop = browser.new_context(viewport={"width": 1280, "height": 800})
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    ana, ben = desktop.new_page(), phone.new_page()
    script_errors: list[str] = []
    for page in (ana, ben):
        page.set_default_timeout(10_000)
        page.on("pageerror", lambda error: script_errors.append(str(error)))
    suffix = str(os.getpid())
    ana_grant = _sign_up(ana, server, f"ana{suffix}")
    ben_grant = _sign_up(ben, server, f"ben{suffix}")

    # Ben watches the lobby while Ana sits down: her seat appears there live.
    ben.goto(f"{server}/")
    row = ben.locator("[data-testid=lobby-row]", has_text=TABLE)
    expect(row.locator("[data-field=players]")).to_have_text("0")
    _open_table_from_lobby(ana, server)
    _join(ana)
    expect(row.locator("[data-field=players]")).to_have_text("1")
    expect(ben.locator("[data-testid=lobby-status]")).to_have_attribute("data-state", "open")
    ben.screenshot(path=str(SCREENSHOTS / "e2e-lobby-phone.png"))
    ana.goto(f"{server}/")
    expect(ana.locator("[data-testid=lobby-status]")).to_have_attribute("data-state", "open")
    ana.screenshot(path=str(SCREENSHOTS / "e2e-lobby.png"))
    _open_table_from_lobby(ana, server)
    _open_table_from_lobby(ben, server)
    _join(ben)

    # The clock deals as soon as both are seated and connected.
    for page in (ana, ben):
        expect(page.locator("[data-testid=phase]")).to_have_attribute("data-phase", "change")
        expect(page.locator("[data-testid=my-card-4]")).to_be_visible()
        expect(page.locator("[data-testid=balance]")).to_have_attribute(
            "data-balance-minor", str((ana_grant if page is ana else ben_grant) - ANTE)
        )
    ana.click("[data-testid=my-card-0]")
    ana.click("[data-testid=my-card-1]")
    expect(ana.locator("[data-testid=hold-state]")).to_have_attribute("data-hold", "HHDDD")
    expect(ana.locator("[data-testid=my-card-1]")).to_have_attribute("aria-pressed", "true")
    expect(ana.locator("[data-testid=odds-0]")).to_be_visible()
    ana.click("[data-testid=buy-draw]")
    expect(ana.locator("[data-testid=draw-2]")).to_have_attribute("data-bought", "true")
    expect(ana.locator("[data-testid=best-of-header]")).to_have_text("Best of 2")
    expect(ana.locator("[data-testid=balance]")).to_have_attribute(
        "data-balance-minor", str(ana_grant - ANTE - DRAW_PRICE)
    )
    expect(ana.locator("[data-testid=pool]")).not_to_have_text("—")

    # Ben buys a new initial combination, then follows a tip.
    dealt = [ben.inner_text(f"[data-testid=my-card-{c}]") for c in range(5)]
    ben.click("[data-testid=redeal]")
    expect(ben.locator("[data-testid=redeal] [data-role=sub]")).to_contain_text("1 left")
    expect(ben.locator("[data-testid=balance]")).to_have_attribute(
        "data-balance-minor", str(ben_grant - ANTE - REDEAL_PRICE)
    )
    assert [ben.inner_text(f"[data-testid=my-card-{c}]") for c in range(5)] != dealt
    ben.click("[data-testid=tip2]")
    expect(ben.locator("[data-testid=hold-state]")).not_to_contain_text("No cards held yet")
    ana.screenshot(path=str(SCREENSHOTS / "e2e-change.png"))
    ben.screenshot(path=str(SCREENSHOTS / "e2e-change-phone.png"))

    # Settlement at the deadline: results, places, prizes and the leaderboard for both.
    prizes: dict[Page, int] = {}
    pools: set[str | None] = set()
    for page in (ana, ben):
        result = page.locator("[data-testid=result]")
        expect(result).to_be_visible(timeout=(CHANGE_SECONDS + 10) * 1000)
        expect(page.locator("[data-testid=phase]")).to_have_attribute("data-phase", "results")
        expect(page.locator("[data-testid=place]")).to_have_text(re.compile(r"^(1st|2nd) of 2$"))
        expect(page.locator("[data-testid=leaderboard] [data-testid=leader]")).to_have_count(2)
        expect(page.locator("[data-testid=seed]")).to_have_text(re.compile("^[0-9a-f]{64}$"))
        expect(page.locator("[data-testid=hand-link]")).to_have_attribute("href", re.compile(r"^/history/hands/\d+/$"))
        expect(page.locator("[data-testid=draws] [data-testid^=draw-]")).to_have_count(5)
        prizes[page] = int(page.get_attribute("[data-testid=prize]", "data-prize-minor") or "")
        pools.add(page.get_attribute("[data-testid=pool]", "data-pool-minor"))
    # Ana's hold reached the server: her first two columns were kept in every draw.
    for column in (0, 1):
        expect(ana.locator(f"[data-testid=my-card-{column}]")).to_have_class(re.compile(r"\bheld\b"))
    expect(ana.locator("[data-testid=draw-2]")).to_have_attribute("data-bought", "true")
    expect(ana.locator("[data-testid=draw-3]")).to_have_attribute("data-bought", "false")
    [pool] = pools
    winner = ana if ana.get_attribute("[data-testid=place]", "data-place") == "1" else ben
    assert 0 < prizes[winner] <= sum(prizes.values()) <= int(pool or ""), (prizes, pool)
    ana.screenshot(path=str(SCREENSHOTS / "e2e-result.png"))
    ben.screenshot(path=str(SCREENSHOTS / "e2e-result-phone.png"), full_page=True)

    # Sit out before the next hand, then check both wallets.
    for page in (ana, ben):
        page.click("[data-testid=sit-out]")
        expect(page.locator("[data-testid=seat-buttons]")).to_have_attribute("data-seat", "sitting_out")
    assert _wallet_fun_balance(ana, server) == ana_grant - ANTE - DRAW_PRICE + prizes[ana]
    assert _wallet_fun_balance(ben, server) == ben_grant - ANTE - REDEAL_PRICE + prizes[ben]
    assert script_errors == []
    desktop.close()
    phone.close()
    assert time.monotonic() - started < 60
