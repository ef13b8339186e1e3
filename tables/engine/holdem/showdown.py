"""Best five of seven cards for every player at once (seed 003, Showdown).

"Five cards of the total of hole and community cards are to be used": both hole cards
and three board cards, one and four, or the five board cards (playing the board). The
strength scale is ``tables.engine.evaluator``'s: ``uint16``, higher is better, equal
strength is a tie. The seven-card evaluator ``eval7.evaluate7`` scores every player at
once; it equals the best of the 21 five-card subsets (tests/engine/holdem/test_eval7.py).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .eval7 import evaluate7

__all__ = ["best_strengths"]


def best_strengths(holes: npt.ArrayLike, board: npt.ArrayLike) -> npt.NDArray[np.uint16]:
    """Strength of each player's best five-card hand from two hole cards and the board.

    ``holes``: shape ``(P, 2)`` card ids; ``board``: shape ``(5,)`` card ids. Returns a
    ``uint16`` array of shape ``(P,)``. Raises ``ValueError`` on other shapes or ids
    outside 0..51 (duplicates are not checked).

    >>> from tables.engine.cards import parse_cards
    >>> board = parse_cards(["Ah", "Kh", "Qh", "Jh", "Th"])
    >>> s = best_strengths([parse_cards(["2c", "3c"]), parse_cards(["9h", "8h"])], board)
    >>> bool(s[0] == s[1])  # both play the royal flush on the board
    True
    """
    hole_array = np.asarray(holes, dtype=np.uint8)
    board_array = np.asarray(board, dtype=np.uint8)
    if hole_array.ndim != 2 or hole_array.shape[1] != 2 or board_array.shape != (5,):
        raise ValueError(f"expected holes (P, 2) and board (5,), got {hole_array.shape}, {board_array.shape}")
    players = hole_array.shape[0]
    seven = np.concatenate([hole_array, np.broadcast_to(board_array, (players, 5))], axis=1)
    return evaluate7(seven, check_distinct=False)
