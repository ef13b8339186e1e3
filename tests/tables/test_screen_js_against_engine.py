"""The game screen's JavaScript agrees with the engine (issue 21, item 5): the odds of every
hold for 1 to 5 draws (``static/js/odds.js`` ``holdOdds``, ``holdMask``) against
``tables/engine/widerpoker/odds.py`` ``Panel.probabilities`` on random boards, and the names of
cards and hand categories (``static/js/cards.js``) against ``tables/engine/cards.py`` and
``tables/widerpoker/labels.py``. Run by node (``tests/js/screen_engine.test.mjs``)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest
from django.utils import translation

from tables.engine.cards import card_code, rank_of, suit_of
from tables.engine.evaluator_tables import HandCategory
from tables.engine.widerpoker.deal import deal_board, initial_combinations
from tables.engine.widerpoker.grid import compute_grid
from tables.engine.widerpoker.odds import panel
from tables.widerpoker.labels import category_name

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")
RANKS = {"T": "10", "J": "Jack", "Q": "Queen", "K": "King", "A": "Ace"}
SUITS = {0: "clubs", 1: "diamonds", 2: "hearts", 3: "spades"}


def _cases(boards: int) -> dict[str, object]:
    rng = random.Random(20261126)
    panels = []
    for _ in range(boards):
        seed = rng.randbytes(32)
        grid = compute_grid(deal_board(seed))
        combination = initial_combinations(seed, 1)[0]
        computed = panel(grid, combination)
        data = computed.as_dict()
        masks: list[str] = data["masks"]  # type: ignore[assignment]
        initial = int(computed.initial_category)
        expected = []
        for mask, code in enumerate(masks):
            hold = [c == "H" for c in code]
            by_draws = []
            for draws in range(1, 6):
                best = computed.probabilities(hold, draws)
                # Improving = the best of the draws ends above the dealt category:
                # 1 - P(one draw <= dealt) ** draws, from the counts, not from holdOdds' formula.
                at_most = Fraction(int(computed.counts[mask][: initial + 1].sum()), int(computed.denominators[mask]))
                by_draws.append({"best": [float(best[c]) for c in HandCategory], "improve": float(1 - at_most**draws)})
            expected.append(by_draws)
        panels.append({"panel": data, "expected": expected})
    cards = []
    for card in range(52):
        code = card_code(card)
        cards.append(
            {
                "code": code,
                "name": f"{RANKS.get(code[0], code[0])} of {SUITS[suit_of(card)]}",
                "red": suit_of(card) in (1, 2),
                "rank": rank_of(card),
            }
        )
    with translation.override("en"):
        categories = [category_name(c) for c in HandCategory]
    return {"masks": panels[0]["panel"]["masks"], "panels": panels, "cards": cards, "categories": categories}  # type: ignore[index]


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_screen_computes_odds_and_names_cards_as_the_engine_does(tmp_path: Path) -> None:
    assert NODE is not None
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(_cases(boards=12)))
    result = subprocess.run(
        [NODE, "--test", "tests/js/screen_engine.test.mjs"],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "SCREEN_ENGINE_CASES": os.fspath(cases)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "# pass 4" in result.stdout and "# fail 0" in result.stdout
