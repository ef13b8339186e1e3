"""The WiderPoker probability panel shows no odds before the player holds a card or uses
a tip (seed 000 §3; audit 2026-11-26 rules 000 #11): the screen's rule
(``static/js/odds.js`` ``oddsActive``) run by node (``tests/js/odds_panel.test.mjs``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_odds_panel_turns_on_with_a_held_card_or_a_tip() -> None:
    assert NODE is not None
    result = subprocess.run(
        [NODE, "--test", "tests/js/odds_panel.test.mjs"],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "# pass 3" in result.stdout
