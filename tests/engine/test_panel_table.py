"""The precomputed panel table (tables/engine/widerpoker/panel_table.py): every field of
every combination's panel equal to ``odds.panel``'s, on random boards and on boards full of
ties (the second maximum and the counts of a shared maximum are where it could differ)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tables.engine.widerpoker import Board, board_grid, panel
from tables.engine.widerpoker.panel_table import PanelTable

from .helpers import random_board

ARRAYS = ("counts", "denominators", "best", "best_counts", "improve_counts")
FIELDS = ("combination", "initial_strength", "initial_category", "tip1", "tip2", "achievable")


def boards() -> list[Board]:
    ordered = Board.from_deck(range(52))  # columns of near ranks and one suit: many ties
    return [ordered, Board.from_deck(list(range(51, -1, -1))), *(random_board(seed) for seed in range(3))]


@pytest.mark.parametrize("board", boards(), ids=lambda board: str(board.columns[0][:2]))
def test_every_field_of_a_table_s_panel_is_the_computed_panel_s(board: Board) -> None:
    grid = board_grid(board)
    table = PanelTable(grid)
    chooser = random.Random(23)
    combinations: list[tuple[int, ...]] = [(0, 0, 0, 0, 0), (9, 9, 9, 9, 9), (3, 1, 4, 1, 5)]
    combinations += [tuple(chooser.randrange(10) for _ in range(5)) for _ in range(150)]
    for combination in combinations:
        expected, found = panel(grid, combination), table.panel(combination)
        for name in FIELDS:
            assert getattr(found, name) == getattr(expected, name), (name, combination)
        for name in ARRAYS:
            want, got = getattr(expected, name), getattr(found, name)
            assert got.dtype == want.dtype and got.shape == want.shape, name
            assert np.array_equal(got, want), (name, combination)
            assert not got.flags.writeable
        assert found.as_dict() == expected.as_dict()


def test_a_table_refuses_what_panel_refuses() -> None:
    table = PanelTable(board_grid(random_board(7)))
    for wrong in [(0, 0, 0, 0), (0, 0, 0, 0, 10), (-1, 0, 0, 0, 0)]:
        with pytest.raises(ValueError):
            panel(table.grid, wrong)
        with pytest.raises(ValueError):
            table.panel(wrong)
