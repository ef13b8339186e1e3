"""Every combination's probability panel of one board from precomputed tables (issue 23).

``odds.panel`` scans the board's 10^5 cells for each combination (about 0.6 ms): fine for a
player's first frame, the cost of a REST purchase by a buyer whose panel the serving
process has not computed yet (docs/benchmarks.md, "s5-rest"). ``PanelTable`` precomputes,
once per board (about 0.1-0.3 s, about 19 MiB), what makes any combination's panel a few
look-ups, the same ``Panel`` to the last field (tests/engine/test_panel_table.py):

- ``counts``: the category histograms of the 32 sub-grids "columns of ``T`` at the
  combination's positions, the others free" (the marginals, one flat ``int32`` array,
  ``11^5 x 10`` values), turned into the exact masks' counts ("held: at the position,
  discarded: any other position") by inclusion-exclusion over the five columns;
- ``best`` and ``best_counts``: for every combination and mask the highest strength of the
  mask's cells and how many cells reach it (``uint16``, ``10^5 x 32`` each), reduced column
  by column as ``odds.panel`` does for one combination, but for the ten positions at once:
  a column's "discarded" value for position ``p`` is the (maximum, count) of the nine other
  positions, taken from the column's first and second maxima.

Seed 000, How it works, 3. Change procedure; DESIGN items 8 and 9 (as ``odds.panel``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from .change import validate_combination
from .grid import BoardGrid
from .odds import MASKS, REDUCED_INDEX, Panel, finish_panel

__all__ = ["PanelTable"]

_COLUMNS: Final = 5
_CATEGORIES: Final = 10


def _marginals() -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(offsets ``(32,)``, strides ``(32, 5)``): where the histogram of subset ``T`` (bit
    ``c``: column ``c`` fixed) at positions ``p`` starts in the flat marginals array:
    ``offsets[T] + strides[T] @ p`` (then ``+ category``)."""
    offsets = np.zeros(MASKS, dtype=np.int64)
    strides = np.zeros((MASKS, _COLUMNS), dtype=np.int64)
    start = 0
    for subset in range(MASKS):
        fixed = [c for c in range(_COLUMNS) if subset >> c & 1]
        offsets[subset] = start
        step = _CATEGORIES
        for c in reversed(fixed):
            strides[subset, c] = step
            step *= 10
        start += step
    return offsets, strides


_OFFSETS, _STRIDES = _marginals()
_TOTAL: Final = int(_OFFSETS[-1] + 10**_COLUMNS * _CATEGORIES)
_SPAN: Final = np.arange(_CATEGORIES, dtype=np.int64)


def _discarded(
    strengths: npt.NDArray[np.int32], cells: npt.NDArray[np.int32], axis: int
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
    """For each position ``p`` along ``axis``: (max, count reaching it) of the other nine
    positions' (max, count) pairs."""
    top = strengths.max(axis=axis, keepdims=True)
    is_top = strengths == top
    top_count = np.where(is_top, cells, 0).sum(axis=axis, keepdims=True, dtype=np.int32)
    below = np.where(is_top, -1, strengths)
    second = below.max(axis=axis, keepdims=True)
    second_count = np.where(below == second, cells, 0).sum(axis=axis, keepdims=True, dtype=np.int32)
    others_at_top = top_count - cells
    alone = is_top & (others_at_top == 0)
    best = np.where(alone, second, top)
    count = np.where(is_top, np.where(alone, second_count, others_at_top), top_count)
    return best.astype(np.int32), count.astype(np.int32)


class PanelTable:
    """Any combination's ``Panel`` on ``grid`` (``panel(combination)``: equal to
    ``odds.panel(grid, combination)`` in every field). Building it costs about 0.1-0.3 s of
    CPU and keeps about 19 MiB; raises nothing for a valid grid."""

    def __init__(self, grid: BoardGrid) -> None:
        self.grid = grid
        categories = grid.categories.astype(np.int64).ravel()
        positions = np.indices((10,) * _COLUMNS, dtype=np.int64).reshape(_COLUMNS, -1)
        marginals = np.zeros(_TOTAL, dtype=np.int32)
        for subset in range(MASKS):
            size = _CATEGORIES * 10 ** bin(subset).count("1")
            index = _STRIDES[subset] @ positions + categories
            marginals[_OFFSETS[subset] : _OFFSETS[subset] + size] = np.bincount(index, minlength=size)
        self.marginals = marginals
        # Best strengths and their counts: shape (10, 2) per column, 0 = held, 1 = discarded.
        strengths = grid.strengths.astype(np.int32)
        cells = np.ones_like(strengths)
        for column in range(_COLUMNS):
            axis = 2 * column
            best, count = _discarded(strengths, cells, axis)
            strengths = np.stack([strengths, np.broadcast_to(best, strengths.shape)], axis=axis + 1)
            cells = np.stack([cells, np.broadcast_to(count, cells.shape)], axis=axis + 1)
        order = (0, 2, 4, 6, 8, 1, 3, 5, 7, 9)  # positions first, then (held, discarded) per column
        self.best = np.ascontiguousarray(strengths.transpose(order).reshape(10**_COLUMNS, MASKS)).astype(np.uint16)
        self.best_counts = np.ascontiguousarray(cells.transpose(order).reshape(10**_COLUMNS, MASKS)).astype(np.uint16)

    def counts(self, combination: Sequence[int]) -> npt.NDArray[np.int64]:
        """``int64`` ``(32, 10)``: mask ``m``'s outcomes per category (``Panel.counts``)."""
        position = np.asarray(combination, dtype=np.int64)
        starts = _OFFSETS + _STRIDES @ position
        sums = self.marginals[starts[:, None] + _SPAN].astype(np.int64)
        # Row T: column c in T at its position, the others free; free - fixed = "elsewhere".
        table = sums.reshape((2,) * _COLUMNS + (_CATEGORIES,))
        for axis in range(_COLUMNS):
            shaped = table.reshape(2**axis, 2, -1)  # a view: the axis in the middle
            shaped[:, 0] -= shaped[:, 1]
        return table.reshape(MASKS, _CATEGORIES)

    def panel(self, combination: Sequence[int]) -> Panel:
        """The panel of ``combination`` (five positions 0..9; raises ``ValueError``
        otherwise), as ``odds.panel(grid, combination)``."""
        comb = validate_combination(combination)
        row = int(np.ravel_multi_index(comb, (10,) * _COLUMNS))
        best = self.best[row][REDUCED_INDEX]
        best_counts = self.best_counts[row][REDUCED_INDEX].astype(np.int64)
        return finish_panel(self.grid, comb, self.counts(comb), best, best_counts)
