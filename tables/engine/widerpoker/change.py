"""Initial combinations, hold masks, change keys and draws.

* A **combination** is five positions ``(p0, ..., p4)``, each 0..9: the player's card in
  column ``c`` is position ``p_c`` of that column (seed 000, How it works, 2. Initial
  combination; Glossary, Initial Combination). Its **index** is the five digits read as
  a decimal number, ``p0*10^4 + p1*10^3 + p2*100 + p3*10 + p4`` (0..99999).
* A **hold** is five booleans, ``True`` = keep the card of that column (seed 001, Game
  course B.2). As a **mask** number, bit ``c`` (value ``1 << c``) is set when column ``c``
  is held: 31 holds everything, 0 changes everything. As a **hold code**, character ``c``
  is ``"H"`` (held) or ``"D"`` (discarded), e.g. ``"HHDDD"``.
* A **change key** is five digits, each 1..9. A discarded card of column ``c`` is replaced
  by position ``(p_c + key[c]) mod 10`` of the same column (seed 000, How it works,
  3. Change procedure, figures 5 and 6; DESIGN item 3). Draw ``d`` (1..5) uses key ``d``
  (seed 001, C.1 Multidraw; DESIGN item 5).

>>> draw_positions((3, 1, 4, 1, 5), hold_from_code("HDHDD"), (8, 3, 5, 6, 2))
(3, 4, 4, 7, 7)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from ..cards import card_code

if TYPE_CHECKING:
    from .board import Board
    from .grid import BoardGrid

__all__ = [
    "COMBINATION_COUNT",
    "DISCARD_ALL",
    "HOLD_ALL",
    "MAX_DRAWS",
    "ChangeKey",
    "Combination",
    "Hold",
    "best_draws",
    "combination_from_index",
    "combination_index",
    "draw_positions",
    "draw_strengths",
    "final_cards",
    "final_hand",
    "hold_code",
    "hold_from_code",
    "hold_from_mask",
    "hold_mask",
    "validate_change_key",
    "validate_combination",
    "validate_hold",
]

Combination = tuple[int, int, int, int, int]
"""Five positions 0..9, one per column."""
Hold = tuple[bool, ...]
"""Five booleans, ``True`` = hold the card of that column."""
ChangeKey = tuple[int, ...]
"""Five digits 1..9, one per column."""

COMBINATION_COUNT: Final = 100_000
"""Distinct combinations, hence the most entries one hand can hold (DESIGN item 2)."""
MAX_DRAWS: Final = 5
"""Draws per hand: the first plus up to four bought (seed 001, C.1 Multidraw)."""
HOLD_ALL: Final[Hold] = (True,) * 5
"""Keep every card (a player who disconnected before choosing; seed 001, Notes 2)."""
DISCARD_ALL: Final[Hold] = (False,) * 5
"""Change every card (a connected player who chose nothing; seed 001, Game course B.2)."""

_PLACE: Final = (10_000, 1_000, 100, 10, 1)


def validate_combination(combination: Sequence[int]) -> Combination:
    """Return ``combination`` as a ``Combination`` tuple; ``ValueError`` unless five ints 0..9.

    >>> validate_combination([0, 9, 3, 3, 1])
    (0, 9, 3, 3, 1)
    >>> validate_combination((1, 2, 10, 0, 0))
    Traceback (most recent call last):
    ...
    ValueError: a combination is five positions 0..9, got (1, 2, 10, 0, 0)
    """
    values = tuple(combination)
    if len(values) != 5 or not all(
        isinstance(p, int | np.integer) and not isinstance(p, bool) and 0 <= p <= 9 for p in values
    ):
        raise ValueError(f"a combination is five positions 0..9, got {combination!r}")
    p0, p1, p2, p3, p4 = (int(p) for p in values)
    return (p0, p1, p2, p3, p4)


def validate_hold(hold: Sequence[bool]) -> Hold:
    """Return ``hold`` as a tuple of five bools; ``ValueError`` unless five booleans.

    >>> validate_hold([True, False, False, True, True])
    (True, False, False, True, True)
    """
    values = tuple(hold)
    if len(values) != 5 or not all(isinstance(h, bool | np.bool_) for h in values):
        raise ValueError(f"a hold is five booleans, got {hold!r}")
    return tuple(bool(h) for h in values)


def validate_change_key(key: Sequence[int]) -> ChangeKey:
    """Return ``key`` as a tuple of five ints; ``ValueError`` unless five digits 1..9.

    >>> validate_change_key([8, 3, 5, 6, 2])
    (8, 3, 5, 6, 2)
    >>> validate_change_key([8, 3, 0, 6, 2])
    Traceback (most recent call last):
    ...
    ValueError: a change key is five digits 1..9, got [8, 3, 0, 6, 2]
    """
    values = tuple(key)
    if len(values) != 5 or not all(
        isinstance(k, int | np.integer) and not isinstance(k, bool) and 1 <= k <= 9 for k in values
    ):
        raise ValueError(f"a change key is five digits 1..9, got {key!r}")
    return tuple(int(k) for k in values)


def combination_index(combination: Sequence[int]) -> int:
    """The index 0..99999 of a combination: its five digits as a decimal number.

    >>> combination_index((3, 1, 4, 1, 5))
    31415
    """
    return sum(p * w for p, w in zip(validate_combination(combination), _PLACE, strict=True))


def combination_from_index(index: int) -> Combination:
    """The combination whose index is ``index`` (0..99999); ``ValueError`` otherwise.

    >>> combination_from_index(7)
    (0, 0, 0, 0, 7)
    """
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < 100_000:
        raise ValueError(f"a combination index is in 0..99999, got {index!r}")
    return (index // 10_000, index // 1_000 % 10, index // 100 % 10, index // 10 % 10, index % 10)


def hold_mask(hold: Sequence[bool]) -> int:
    """The mask number 0..31 of a hold: bit ``c`` set when column ``c`` is held.

    >>> hold_mask((True, True, False, False, False))
    3
    """
    return sum(1 << c for c, held in enumerate(validate_hold(hold)) if held)


def hold_from_mask(mask: int) -> Hold:
    """The hold of a mask number 0..31 (bit ``c`` = column ``c`` held); ``ValueError`` else.

    >>> hold_from_mask(3)
    (True, True, False, False, False)
    """
    if isinstance(mask, bool) or not isinstance(mask, int) or not 0 <= mask < 32:
        raise ValueError(f"a hold mask is in 0..31, got {mask!r}")
    return tuple(bool(mask >> c & 1) for c in range(5))


def hold_code(hold: Sequence[bool]) -> str:
    """The hold as five letters, ``H`` held and ``D`` discarded, column 0 first.

    >>> hold_code((True, True, False, False, False))
    'HHDDD'
    """
    return "".join("H" if held else "D" for held in validate_hold(hold))


def hold_from_code(code: str) -> Hold:
    """Parse a hold code such as ``"HHDDD"``; ``ValueError`` unless five ``H``/``D`` letters.

    >>> hold_from_code("DHDHD")
    (False, True, False, True, False)
    """
    if len(code) != 5 or set(code) - {"H", "D"}:
        raise ValueError(f"a hold code is five letters H or D, got {code!r}")
    return tuple(letter == "H" for letter in code)


def draw_positions(combination: Sequence[int], hold: Sequence[bool], key: Sequence[int]) -> Combination:
    """Positions after one draw: a held column keeps ``p_c``, a discarded one moves to
    ``(p_c + key[c]) % 10`` (seed 000, How it works, 3. Change procedure; DESIGN item 3).

    Raises ``ValueError`` for an invalid combination, hold or key.

    >>> draw_positions((9, 0, 0, 0, 0), (False,) * 5, (1, 2, 3, 4, 5))
    (0, 2, 3, 4, 5)
    """
    positions = validate_combination(combination)
    held = validate_hold(hold)
    digits = validate_change_key(key)
    p0, p1, p2, p3, p4 = (p if h else (p + k) % 10 for p, h, k in zip(positions, held, digits, strict=True))
    return (p0, p1, p2, p3, p4)


def final_cards(board: Board, combination: Sequence[int], hold: Sequence[bool], key: Sequence[int]) -> tuple[int, ...]:
    """The five card ids of the final hand after one draw with ``key`` (column order)."""
    return board.hand(draw_positions(combination, hold, key))


def final_hand(board: Board, combination: Sequence[int], hold: Sequence[bool], key: Sequence[int]) -> tuple[str, ...]:
    """The five card codes of the final hand after one draw with ``key`` (column order).

    Seed 000, How it works, 3. Change procedure. Raises ``ValueError`` for an invalid
    combination, hold or key.

    >>> from tables.engine.widerpoker.board import Board
    >>> final_hand(Board.from_deck(range(52)), (0, 0, 0, 0, 0), (True,) * 5, (1,) * 5)
    ('2c', '4h', '7c', '9h', 'Qc')
    """
    return tuple(card_code(card) for card in final_cards(board, combination, hold, key))


def draw_strengths(
    grid: BoardGrid,
    combinations: npt.ArrayLike,
    holds: npt.ArrayLike,
    keys: npt.ArrayLike,
) -> npt.NDArray[np.uint16]:
    """Strength of every entry's final hand for each of ``D`` draws (vectorised settlement).

    ``combinations``: ``(N, 5)`` integers 0..9 (``uint8`` preferred); ``holds``: ``(N, 5)``
    bool, ``True`` = held; ``keys``: ``(D, 5)`` integers 1..9, row ``d`` = the key of draw
    ``d + 1``. Returns ``uint16`` ``(N, D)``: cell ``[i, d]`` is the strength of entry ``i``
    after draw ``d + 1`` (seed 000, How it works, 3. Change procedure; seed 001, C.1).
    Raises ``ValueError`` for a wrong shape or a value out of range.
    """
    comb = np.asarray(combinations)
    held = np.asarray(holds)
    key = np.asarray(keys)
    if comb.ndim != 2 or comb.shape[1] != 5:
        raise ValueError(f"combinations must have shape (N, 5), got {comb.shape}")
    if held.shape != comb.shape or held.dtype != np.bool_:
        raise ValueError(f"holds must be a bool array of shape {comb.shape}")
    if key.ndim != 2 or key.shape[1] != 5:
        raise ValueError(f"keys must have shape (D, 5), got {key.shape}")
    if comb.size and (int(comb.min()) < 0 or int(comb.max()) > 9):
        raise ValueError("combination positions must be in 0..9")
    if key.size and (int(key.min()) < 1 or int(key.max()) > 9):
        raise ValueError("change key digits must be in 1..9")
    comb8 = comb.astype(np.uint8)
    moved = (comb8[:, None, :] + key.astype(np.uint8)[None, :, :]) % np.uint8(10)
    positions = np.where(held[:, None, :], comb8[:, None, :], moved)
    flat = positions.astype(np.int32) @ np.array(_PLACE, dtype=np.int32)
    return np.take(grid.strengths, flat)


def best_draws(
    strengths: npt.NDArray[np.integer], draws_bought: npt.ArrayLike
) -> tuple[npt.NDArray[np.uint16], npt.NDArray[np.uint8]]:
    """Best strength and the draw that gave it, counting only the draws each entry bought.

    ``strengths``: ``(N, D)`` from ``draw_strengths``; ``draws_bought``: ``(N,)`` integers in
    1..D. Returns ``(best, draw)``: ``uint16`` ``(N,)`` best strength over draws
    ``0 .. draws_bought-1`` and ``uint8`` ``(N,)`` the 0-based index of that draw; equal
    strengths go to the earliest draw (seed 000, Glossary, MultiDraw: only the best draw
    enters the leaderboard). Raises ``ValueError`` for a wrong shape or count.

    >>> best, draw = best_draws(np.array([[5, 9, 9], [7, 1, 8]]), np.array([3, 2]))
    >>> best.tolist(), draw.tolist()
    ([9, 7], [1, 0])
    """
    values = np.asarray(strengths)
    bought = np.asarray(draws_bought)
    if values.ndim != 2 or bought.shape != (values.shape[0],):
        raise ValueError("expected strengths (N, D) and draws_bought (N,)")
    if bought.size and (int(bought.min()) < 1 or int(bought.max()) > values.shape[1]):
        raise ValueError(f"draws bought must be in 1..{values.shape[1]}")
    counted = np.where(np.arange(values.shape[1])[None, :] < bought[:, None], values, 0)
    draw = np.argmax(counted, axis=1)
    best = np.take_along_axis(counted, draw[:, None], axis=1)[:, 0]
    return best.astype(np.uint16), draw.astype(np.uint8)
