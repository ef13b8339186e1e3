"""The probability panel and the two tips, exact, for all 32 hold masks at once.

Seed 000, How it works, 3. Change procedure ("Probability" panel) and Glossary, Tip;
seed 001, Game course B.2; DESIGN items 8 and 9. With ``k`` cards discarded, the ``9^k``
draws (the other nine cards of each discarded column) are equally likely, so every
probability is a count over ``9^k``. With ``n`` independent draws (seed 001, C.1) the
final hand is the best of them: ``P(best <= x) = P(one <= x) ** n``.

How ``panel`` works: a cell ``(q0, ..., q4)`` of the board grid is reached with one draw
by exactly one hold mask, the one holding the columns where ``q_c`` equals the player's
own ``p_c`` (a discarded card always moves, by a key digit 1..9, and each of the nine
other positions is one digit away). So every cell belongs to exactly one mask, one
``bincount`` of ``mask * 10 + category`` gives all 32 histograms, and per-mask maxima
come from reducing each axis to (held: index ``p_c``; discarded: max over the others).

**Tip 1** (highest reachable final hand): the mask with the greatest best reachable
strength; ties go to the higher probability of reaching that strength, then to more
cards held, then to the lowest mask number.
**Tip 2** (most likely improvement): the mask with the greatest probability, for one
draw, of a final category above the initial hand's category; ties go to the greater best
reachable strength, then to more cards held, then to the lowest mask number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

import numpy as np
import numpy.typing as npt

from ..evaluator_tables import HandCategory
from .board import Board
from .change import Combination, Hold, hold_code, hold_from_mask, hold_mask, validate_combination
from .grid import BoardGrid, board_grid

__all__ = ["MASKS", "Panel", "odds", "panel", "tips"]

MASKS: Final = 32
"""Hold masks 0..31; bit ``c`` (value ``1 << c``) set means column ``c`` is held."""

_CATEGORIES: Final = len(HandCategory)
_HELD: Final = np.array([bin(m).count("1") for m in range(MASKS)], dtype=np.int64)
_MASK_CODES: Final = tuple(hold_code(hold_from_mask(m)) for m in range(MASKS))
"""Each mask's hold code, index = mask number (the panel's ``masks``: the same for every panel)."""
_HOLD_CODES: Final = {hold_from_mask(m): _MASK_CODES[m] for m in range(MASKS)}
"""Each valid hold's code (``hold_code`` without its validation, for ``Panel.as_dict``)."""
_DENOMINATORS: Final = 9 ** (5 - _HELD)
_DENOMINATORS.flags.writeable = False


# Index into the (2, 2, 2, 2, 2) reduction (0 = held, 1 = best discarded) for each mask.
REDUCED_INDEX: Final = np.array(
    [sum((1 - (m >> c & 1)) << (4 - c) for c in range(5)) for m in range(MASKS)], dtype=np.intp
)
_STEPS: Final = np.arange(10)
_MASK_NUMBERS: Final = np.arange(MASKS, dtype=np.int64)


@dataclass(frozen=True, eq=False)
class Panel:
    """Everything the game screen shows for one combination, for all 32 hold masks.

    Row ``m`` of each per-mask array is mask ``m`` (bit ``c`` set = column ``c`` held, so
    31 holds all and 0 changes all). All arrays are read-only.

    * ``counts``: ``int64`` ``(32, 10)``, number of the ``9^k`` equally likely one-draw
      outcomes ending in each ``HandCategory``; rows sum to ``denominators``.
    * ``denominators``: ``int64`` ``(32,)``, ``9^k`` with ``k`` = cards discarded.
    * ``best``: ``uint16`` ``(32,)``, the highest strength reachable with one draw.
    * ``best_counts``: ``int64`` ``(32,)``, outcomes reaching ``best``.
    * ``improve_counts``: ``int64`` ``(32,)``, outcomes whose category beats the initial one.
    * ``initial_strength``, ``initial_category``: the hand as dealt.
    * ``tip1``, ``tip2``: the tip holds (rules in the module docstring).
    * ``achievable``: categories any player can reach on this board (the rest are greyed).
    """

    combination: Combination
    initial_strength: int
    initial_category: HandCategory
    counts: npt.NDArray[np.int64]
    denominators: npt.NDArray[np.int64]
    best: npt.NDArray[np.uint16]
    best_counts: npt.NDArray[np.int64]
    improve_counts: npt.NDArray[np.int64]
    tip1: Hold
    tip2: Hold
    achievable: frozenset[HandCategory]

    @property
    def tip1_mask(self) -> int:
        """Mask number of tip 1."""
        return hold_mask(self.tip1)

    @property
    def tip2_mask(self) -> int:
        """Mask number of tip 2."""
        return hold_mask(self.tip2)

    def probabilities(self, hold: Sequence[bool], draws: int = 1) -> dict[HandCategory, Fraction]:
        """Exact probability of each final category for ``hold``, best of ``draws`` draws.

        Returns all ten categories in order (zeros included); they sum to 1. One draw:
        ``counts / 9^k``. ``n`` draws: ``P(best <= x) = P(one <= x) ** n`` (independent
        change keys; seed 001, C.1; DESIGN item 8). Raises ``ValueError`` for draws
        outside 1..5 or an invalid hold.
        """
        if isinstance(draws, bool) or not isinstance(draws, int) or not 1 <= draws <= 5:
            raise ValueError(f"draws must be in 1..5, got {draws!r}")
        mask = hold_mask(hold)
        row = [int(x) for x in self.counts[mask]]
        denominator = int(self.denominators[mask])
        result: dict[HandCategory, Fraction] = {}
        below = Fraction(0)
        cumulative = 0
        for category, count in zip(HandCategory, row, strict=True):
            cumulative += count
            at_most = Fraction(cumulative, denominator) ** draws
            result[category] = at_most - below
            below = at_most
        return result

    def as_dict(self) -> dict[str, object]:
        """A JSON-friendly copy: plain ints and lists, masks as hold codes.

        Keys: ``combination`` (5 ints), ``initial_strength``, ``initial_category`` (int),
        ``masks`` (32 hold codes such as ``"HHDDD"``, index = mask number, character ``c`` =
        column ``c``), ``counts`` (32 lists of 10 ints, by category value),
        ``denominators``, ``best``, ``best_counts``, ``improve_counts`` (32 ints each),
        ``tip1``, ``tip2`` (hold codes) and ``achievable`` (sorted category ints).
        """
        return {
            "combination": list(self.combination),
            "initial_strength": self.initial_strength,
            "initial_category": int(self.initial_category),
            "masks": list(_MASK_CODES),
            "counts": self.counts.tolist(),
            "denominators": self.denominators.tolist(),
            "best": self.best.tolist(),
            "best_counts": self.best_counts.tolist(),
            "improve_counts": self.improve_counts.tolist(),
            "tip1": _HOLD_CODES.get(tuple(self.tip1)) or hold_code(self.tip1),
            "tip2": _HOLD_CODES.get(tuple(self.tip2)) or hold_code(self.tip2),
            "achievable": sorted(int(c) for c in self.achievable),
        }


def _read_only(array: npt.NDArray[np.generic]) -> None:
    array.flags.writeable = False


def panel(grid: BoardGrid, combination: Sequence[int]) -> Panel:
    """Compute the probability panel and both tips for ``combination`` on a board grid.

    ``combination``: five positions 0..9. Raises ``ValueError`` otherwise. Seed 000,
    How it works, 3. Change procedure and Glossary, Tip; DESIGN items 8 and 9.

    >>> from tables.engine.widerpoker.board import Board
    >>> from tables.engine.widerpoker.grid import board_grid
    >>> view = panel(board_grid(Board.from_deck(range(52))), (0, 0, 0, 0, 0))
    >>> view.counts.shape, view.counts.sum(axis=1).tolist() == view.denominators.tolist()
    ((32, 10), True)
    """
    comb = validate_combination(combination)
    # Mask of every grid cell: bit c set iff the cell keeps the player's own position p_c
    # in column c. Stored times ten, so adding the category gives the histogram bin.
    bits = [(np.equal(_STEPS, p) << c).astype(np.uint16) for c, p in enumerate(comb)]
    head = np.add.outer(bits[0], bits[1]).ravel()
    tail = np.add.outer(np.add.outer(bits[2], bits[3]).ravel(), bits[4]).ravel()
    cell_mask = np.add.outer(head, tail).ravel()
    bins = cell_mask * np.uint16(_CATEGORIES)
    bins += grid.categories.ravel()
    counts = np.bincount(bins, minlength=MASKS * _CATEGORIES)
    counts = counts.reshape(MASKS, _CATEGORIES).astype(np.int64)

    # Best strength per mask: reduce each axis to (held: index p_c, discarded: max of rest).
    reduced = grid.strengths
    for axis, p in enumerate(comb):
        shape = [1] * reduced.ndim
        shape[axis] = 10
        others = np.not_equal(_STEPS, p).reshape(shape)
        kept = np.take(reduced, [p], axis=axis)
        changed = np.max(reduced, axis=axis, keepdims=True, where=others, initial=0)
        reduced = np.concatenate([kept, changed], axis=axis)
    best = reduced.ravel()[REDUCED_INDEX].astype(np.uint16)
    reaches_best = grid.strengths.ravel() == np.take(best, cell_mask)
    best_counts = np.bincount(cell_mask[reaches_best], minlength=MASKS).astype(np.int64)
    return finish_panel(grid, comb, counts, best, best_counts)


def finish_panel(
    grid: BoardGrid,
    comb: Combination,
    counts: npt.NDArray[np.int64],
    best: npt.NDArray[np.uint16],
    best_counts: npt.NDArray[np.int64],
) -> Panel:
    """The ``Panel`` of a validated ``comb`` from its per-mask arrays (``counts`` ``(32,
    10)``, ``best`` and ``best_counts`` ``(32,)``, as ``Panel`` names them; made read-only
    here): the initial hand, the improvement counts and both tips (``panel``'s rules; also
    ``panel_table.PanelTable``)."""
    initial_strength = int(grid.strengths[comb])
    initial_category = HandCategory(int(grid.categories[comb]))
    improve_counts = counts[:, int(initial_category) + 1 :].sum(axis=1)

    # Probabilities compared exactly on the common denominator 9^5.
    scale = 9**5 // _DENOMINATORS
    p_best = best_counts * scale
    p_improve = improve_counts * scale
    # Each tip's ordering packed into one int64 key per mask (best < 2^13, probabilities
    # <= 9^5 < 2^16, cards held <= 5 < 2^3, 31 - m < 2^5): its argmax is the tuple order's max.
    ties = (_HELD << 5) | (MASKS - 1 - _MASK_NUMBERS)
    strongest = best.astype(np.int64)
    tip1 = int(np.argmax((strongest << 24) | (p_best << 8) | ties))
    tip2 = int(np.argmax((p_improve << 21) | (strongest << 8) | ties))
    for array in (counts, best, best_counts, improve_counts):
        _read_only(array)
    return Panel(
        combination=comb,
        initial_strength=initial_strength,
        initial_category=initial_category,
        counts=counts,
        denominators=_DENOMINATORS,
        best=best,
        best_counts=best_counts,
        improve_counts=improve_counts,
        tip1=hold_from_mask(tip1),
        tip2=hold_from_mask(tip2),
        achievable=grid.achievable,
    )


def odds(
    board: Board, combination: Sequence[int], hold: Sequence[bool], draws: int = 1
) -> dict[HandCategory, Fraction]:
    """Exact probability of each final category (all ten, in order; they sum to 1).

    ``combination``: five positions 0..9; ``hold``: five bools (``True`` = held);
    ``draws``: 1..5, the final hand being the best of that many independent draws
    (``P(best <= x) = P(one <= x) ** draws``). Raises ``ValueError`` for draws outside
    1..5 or an invalid combination or hold. Seed 000, How it works, 3. Change procedure;
    seed 001, C.1; DESIGN item 8.

    >>> board = Board.from_deck(range(52))
    >>> sum(odds(board, (0, 0, 0, 0, 0), (True, True, True, True, False)).values())
    Fraction(1, 1)
    """
    return panel(board_grid(board), combination).probabilities(hold, draws)


def tips(board: Board, combination: Sequence[int]) -> tuple[Hold, Hold]:
    """The two tips ``(tip1, tip2)`` for a combination (seed 000, Glossary, Tip; DESIGN 9).

    Tip 1: the hold whose best reachable final hand is highest (ties: higher probability
    of reaching it, then more cards held, then lowest mask number). Tip 2: the hold most
    likely to end in a category above the initial hand's, for one draw (ties: higher
    best reachable hand, then more cards held, then lowest mask number). Raises
    ``ValueError`` for an invalid combination.
    """
    view = panel(board_grid(board), combination)
    return view.tip1, view.tip2
