"""The Hold'em screen's bet sizes (static/js/holdem_sizes.js) against the engine: random
pot-limit hands played by the engine give states where a bet or raise is legal; the JS's
pot-sized raise must equal the engine's pot-limit maximum (seed 003, Pot-Limit) in every
one (``node --test tests/js/holdem_sizes.test.mjs``, fed by these cases)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tables.engine.holdem import Action, ActionKind, HandSetup, Phase, Structure, start_hand

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")


def pot_limit_cases(count: int, *, seed: int) -> list[dict[str, Any]]:
    """States of random pot-limit hands at which the player to act may bet or raise, as the
    screen sees them (the frame's pot and bets, the private frame's legal actions)."""
    rng = np.random.default_rng(seed)
    cases: list[dict[str, Any]] = []
    while len(cases) < count:
        players = int(rng.integers(2, 7))
        stacks = tuple(int(s) for s in rng.integers(15, 3_000, size=players))
        state = start_hand(HandSetup(Structure.pot_limit(5, 10), stacks, 0, tuple(range(52))))
        while not state.is_over and state.phase is Phase.BETTING:
            legal = state.legal_actions()
            actor = state.to_act
            assert actor is not None
            k = state.seats.index(actor)
            if legal.min_to is not None and legal.max_to is not None:
                cases.append(
                    {
                        "total_pot_minor": state.total_pot,
                        "bets": list(state.bets),
                        "all_in_total": state.stacks[k] + state.bets[k],
                        "legal": {
                            "kinds": [kind.value for kind in legal.kinds],
                            "call_minor": legal.call_amount,
                            "min_to_minor": legal.min_to,
                            "max_to_minor": legal.max_to,
                            "all_in_to_minor": legal.all_in_to,
                        },
                    }
                )
            kinds = [kind for kind in legal.kinds if kind is not ActionKind.FOLD or rng.random() < 0.2]
            kind = kinds[int(rng.integers(len(kinds)))]
            amount = None
            if kind in (ActionKind.BET, ActionKind.RAISE) and legal.min_to is not None and legal.max_to is not None:
                amount = int(rng.integers(legal.min_to, legal.max_to + 1))
            state = state.act(Action(kind, actor, amount))
    return cases


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_screens_pot_sized_raise_is_the_engines_pot_limit_maximum(tmp_path: Path) -> None:
    cases = pot_limit_cases(300, seed=9)
    assert any(case["bets"] != [0] * len(case["bets"]) for case in cases)  # raises, not only opening bets
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases))
    assert NODE is not None
    result = subprocess.run(
        [NODE, "--test", "tests/js/holdem_sizes.test.mjs"],
        cwd=ROOT,
        env={"HOLDEM_SIZES_CASES": str(path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "# pass 3" in result.stdout
