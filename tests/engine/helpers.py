"""Engine test helpers: boards, a brute-force grid independent of the fast paths, and the
reference code of docs/provably-fair.md."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tables.engine.widerpoker import Board, evaluate


def slow_grid(board: Board) -> npt.NDArray[np.int64]:
    """Strengths of all 10^5 one-card-per-column hands, one scalar ``evaluate`` each."""
    grid = np.empty((10,) * 5, dtype=np.int64)
    for positions in itertools.product(range(10), repeat=5):
        grid[positions] = evaluate(board.hand(positions)).strength
    return grid


def random_board(seed: int) -> Board:
    """A board from a seeded numpy permutation (test data only, not the game's shuffle)."""
    return Board.from_deck(np.random.default_rng(seed).permutation(52).tolist())


PROVABLY_FAIR_PAGE = Path(__file__).resolve().parents[2] / "docs" / "provably-fair.md"


def provably_fair_reference() -> dict[str, Any]:
    """The functions of docs/provably-fair.md's "Reference code" section, run from the page
    itself (standard library only): what an outside auditor would write."""
    section = PROVABLY_FAIR_PAGE.read_text().split("## 10. Reference code")[1].split("## 11.")[0]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert code is not None
    namespace: dict[str, Any] = {}
    exec(code.group(1), namespace)
    return namespace
