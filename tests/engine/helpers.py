"""Engine test helpers: boards and a brute-force grid independent of the fast paths."""

from __future__ import annotations

import itertools

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
