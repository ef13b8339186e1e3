"""The board grid: the strength of every one-card-per-column hand of a board.

Every final hand any player can hold in a hand is one of the 10^5 hands taking one card
from each column (DESIGN, "The game, as implemented", item 10; seed 000, How it works,
3. Change procedure: a changed card is replaced from the same column). Scoring them once
per board turns panels, tips and settlement into table look-ups.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ..evaluator import category_of, evaluate_product
from ..evaluator_tables import HandCategory

if TYPE_CHECKING:
    from .board import Board

__all__ = ["BoardGrid", "board_grid"]


@dataclass(frozen=True, eq=False)
class BoardGrid:
    """Strengths and categories of the 10^5 one-card-per-column hands of one board.

    ``strengths``: read-only ``uint16`` array of shape ``(10, 10, 10, 10, 10)``; cell
    ``[p0, p1, p2, p3, p4]`` is the strength (1..7462) of the hand holding position ``p_c``
    of column ``c``. ``categories``: read-only ``uint8`` array of the same shape
    (``HandCategory`` values). ``achievable``: the categories present in the grid (seed 000,
    How it works, 3. Change procedure: the panel greys the others).
    """

    strengths: npt.NDArray[np.uint16]
    categories: npt.NDArray[np.uint8]

    @functools.cached_property
    def achievable(self) -> frozenset[HandCategory]:
        """The categories present in the grid (computed on first use, then cached)."""
        bits = int(np.bitwise_or.reduce(np.left_shift(np.uint16(1), self.categories), axis=None))
        return frozenset(category for category in HandCategory if bits >> category & 1)

    def strength(self, combination: Sequence[int]) -> int:
        """Strength of the hand at a combination (five positions 0..9)."""
        return int(self.strengths[tuple(combination)])

    def category(self, combination: Sequence[int]) -> HandCategory:
        """Category of the hand at a combination (five positions 0..9)."""
        return HandCategory(int(self.categories[tuple(combination)]))


def compute_grid(board: Board) -> BoardGrid:
    """Score all 10^5 hands of ``board`` (uncached; see ``board_grid``).

    Broadcasts per-column rank keys and suit bits into one key per cell and reads the
    strength table once (well under a millisecond).
    """
    strengths = evaluate_product(board.columns)
    categories = category_of(strengths)
    strengths.flags.writeable = False
    categories.flags.writeable = False
    return BoardGrid(strengths=strengths, categories=categories)


@functools.lru_cache(maxsize=16)
def board_grid(board: Board) -> BoardGrid:
    """The ``BoardGrid`` of a board, cached per board (boards are frozen and hashable).

    >>> from tables.engine.widerpoker.board import Board
    >>> grid = board_grid(Board.from_deck(range(52)))
    >>> grid.strengths.shape, grid.strengths.dtype.name, grid.strengths.flags.writeable
    ((10, 10, 10, 10, 10), 'uint16', False)
    """
    return compute_grid(board)
