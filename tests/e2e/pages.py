"""Steps the browser tests share: signing up through the form, sitting down at a WiderPoker
table, and axe-core's serious and critical findings on a page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import Page

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"


def sign_up(page: Page, base: str, username: str, password: str) -> None:
    """Sign up as ``username`` through the form at ``base``; ends on the lobby."""
    page.goto(f"{base}/signup/")
    page.fill("#id_username", username)
    page.fill("#id_password1", password)
    page.fill("#id_password2", password)
    page.click("[data-testid=signup-submit]")
    page.wait_for_url(f"{base}/")


def sit_down(page: Page, base: str, table: str) -> None:
    """From the lobby, open the WiderPoker table named ``table`` and take a seat."""
    page.goto(f"{base}/")
    page.get_by_role("link", name=table, exact=True).click()
    page.wait_for_selector("[data-testid=board] .reel .card")
    page.click("[data-testid=join]")
    page.wait_for_selector("[data-testid=seat-buttons][data-seat=active]")


def axe_problems(page: Page, name: str, *, impacts: tuple[str, ...] = ("serious", "critical")) -> list[str]:
    """axe-core's violations of the page with one of ``impacts`` (serious and critical by
    default; pass ``AXE_IMPACTS`` for all), one line each."""
    page.add_script_tag(path=str(AXE))
    violations: list[dict[str, Any]] = page.evaluate(
        """async (impacts) => (await axe.run(document, {resultTypes: ["violations"]})).violations
            .filter((v) => impacts.includes(v.impact))
            .map((v) => ({id: v.id, impact: v.impact, help: v.help,
                          targets: v.nodes.slice(0, 3).map((n) => n.target.join(" "))}))""",
        list(impacts),
    )
    return [f"{name}: {v['impact']} {v['id']} ({v['help']}) at {v['targets']}" for v in violations]


AXE_IMPACTS = ("minor", "moderate", "serious", "critical")
