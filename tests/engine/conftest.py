"""Engine fixtures: one random board and its brute-force grid, shared by the session."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from tables.engine.evaluator import strength_of
from tables.engine.widerpoker import Board

from .helpers import random_board, slow_grid


@pytest.fixture(scope="session", autouse=True)
def scalar_evaluator_tables() -> None:
    """The scalar evaluator builds its look-up tables on its first call (about 0.1 s, more
    under load); build them before any test, so that no Hypothesis example (200 ms
    deadline) pays for it."""
    strength_of((0, 4, 8, 12, 21))


@pytest.fixture(scope="session")
def board() -> Board:
    return random_board(2024)


@pytest.fixture(scope="session")
def board_slow_grid(board: Board) -> npt.NDArray[np.int64]:
    return slow_grid(board)
