"""Change procedure (seed 000, How it works 2-3; seed 001, C.1 Multidraw; DESIGN 2-5)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tables.engine.widerpoker import (
    Board,
    best_draws,
    board_grid,
    combination_from_index,
    combination_index,
    draw_positions,
    draw_strengths,
    evaluate,
    final_hand,
    hold_code,
    hold_from_code,
    hold_from_mask,
    hold_mask,
    validate_change_key,
    validate_combination,
    validate_hold,
)

combinations = st.tuples(*[st.integers(0, 9)] * 5)
holds = st.tuples(*[st.booleans()] * 5)
keys = st.tuples(*[st.integers(1, 9)] * 5)


@given(st.integers(0, 99_999))
def test_combination_index_is_the_five_digits_as_a_number(index: int) -> None:
    combination = combination_from_index(index)
    assert "".join(map(str, combination)) == f"{index:05d}"
    assert combination_index(combination) == index


@given(combinations, holds, keys)
def test_held_cards_stay_and_discarded_cards_move_by_the_key(
    combination: tuple[int, ...], hold: tuple[bool, ...], key: tuple[int, ...]
) -> None:
    after = draw_positions(combination, hold, key)
    for column in range(5):
        if hold[column]:
            assert after[column] == combination[column]
        else:
            assert after[column] == (combination[column] + key[column]) % 10
            assert after[column] != combination[column]  # always a different card


@given(combinations)
def test_the_nine_key_digits_reach_the_nine_other_cards_of_a_column(
    combination: tuple[int, ...],
) -> None:
    reached = {draw_positions(combination, (False,) * 5, (d,) * 5)[0] for d in range(1, 10)}
    assert reached == set(range(10)) - {combination[0]}


def test_the_seed_example_key_8_3_5_6_2_moves_every_discarded_column() -> None:
    # Seed 000, figures 5 and 6: one change key applied to every player.
    assert draw_positions((0, 0, 0, 0, 0), (False,) * 5, (8, 3, 5, 6, 2)) == (8, 3, 5, 6, 2)
    assert draw_positions((5, 9, 9, 4, 8), (False,) * 5, (8, 3, 5, 6, 2)) == (3, 2, 4, 0, 0)


def test_final_hand_reads_the_board_at_the_drawn_positions() -> None:
    board = Board.from_deck(range(51, -1, -1))
    hand = final_hand(board, (0, 0, 0, 0, 0), (True, False, True, False, True), (1,) * 5)
    expected = [board.card(0, 0), board.card(1, 1), board.card(2, 0), board.card(3, 1)]
    expected.append(board.card(4, 0))
    assert hand == tuple(evaluate(expected).codes())


@pytest.mark.parametrize(
    ("function", "value"),
    [
        (validate_combination, (0, 0, 0, 0)),
        (validate_combination, (0, 0, 0, 0, -1)),
        (validate_combination, (0, 0, 0, 0, True)),
        (validate_hold, (True, False, True, False)),
        (validate_hold, (1, 0, 1, 0, 1)),
        (validate_change_key, (1, 2, 3, 4, 0)),
        (validate_change_key, (1, 2, 3, 4, 10)),
    ],
)
def test_validators_reject_bad_values_with_a_clear_message(function: object, value: object) -> None:
    assert callable(function)
    with pytest.raises(ValueError, match="five"):
        function(value)


def test_hold_masks_codes_and_tuples_agree() -> None:
    for mask in range(32):
        hold = hold_from_mask(mask)
        assert hold_mask(hold) == mask
        assert hold_from_code(hold_code(hold)) == hold
        assert hold[0] == bool(mask & 1)  # bit c = column c held
    assert hold_code((True, True, False, False, False)) == "HHDDD"
    with pytest.raises(ValueError):
        hold_from_code("HHDDX")
    with pytest.raises(ValueError):
        hold_from_mask(32)


def test_draw_strengths_match_evaluating_each_final_hand(board: Board) -> None:
    rng = np.random.default_rng(5)
    combos = rng.integers(0, 10, (200, 5)).astype(np.uint8)
    held = rng.random((200, 5)) < 0.5
    key_rows = rng.integers(1, 10, (5, 5))
    strengths = draw_strengths(board_grid(board), combos, held, key_rows)
    assert strengths.shape == (200, 5)
    for i in range(200):
        for d in range(5):
            hand = final_hand(board, combos[i].tolist(), held[i].tolist(), key_rows[d].tolist())
            assert strengths[i, d] == evaluate(hand).strength


def test_draw_strengths_rejects_bad_shapes_and_values(board: Board) -> None:
    grid = board_grid(board)
    combos = np.zeros((2, 5), dtype=np.uint8)
    held = np.zeros((2, 5), dtype=bool)
    with pytest.raises(ValueError):
        draw_strengths(grid, combos, held, np.zeros((1, 5), dtype=np.int64))
    with pytest.raises(ValueError):
        draw_strengths(grid, combos + 10, held, np.ones((1, 5), dtype=np.int64))
    with pytest.raises(ValueError):
        draw_strengths(grid, combos, held[:, :4], np.ones((1, 5), dtype=np.int64))


def brute_best(row: list[int], bought: int) -> tuple[int, int]:
    best = max(row[:bought])
    return best, row.index(best)


@given(st.lists(st.lists(st.integers(1, 7462), min_size=5, max_size=5), min_size=1, max_size=30), st.data())
def test_best_draw_counts_only_bought_draws_and_ties_go_to_the_earliest(
    rows: list[list[int]], data: st.DataObject
) -> None:
    bought = data.draw(st.lists(st.integers(1, 5), min_size=len(rows), max_size=len(rows)))
    strengths: npt.NDArray[np.int64] = np.array(rows, dtype=np.int64)
    best, draw = best_draws(strengths, np.array(bought))
    for i, row in enumerate(rows):
        assert (int(best[i]), int(draw[i])) == brute_best(row, bought[i])


def test_best_draws_rejects_a_draw_count_outside_one_to_d() -> None:
    with pytest.raises(ValueError):
        best_draws(np.ones((2, 5), dtype=np.int64), np.array([1, 6]))
    with pytest.raises(ValueError):
        best_draws(np.ones((2, 5), dtype=np.int64), np.array([0, 1]))
