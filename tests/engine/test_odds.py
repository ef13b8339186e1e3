"""Probability panel and tips (seed 000, How it works 3 and Glossary, Tip; DESIGN 8-9)."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from fractions import Fraction

import numpy as np
import numpy.typing as npt
import pytest

from tables.engine.widerpoker import (
    Board,
    HandCategory,
    board_grid,
    card_id,
    category_of_strength,
    hold_from_mask,
    hold_mask,
    odds,
    panel,
    tips,
)

from .helpers import random_board, slow_grid

COMBINATIONS = [(0, 0, 0, 0, 0), (3, 1, 4, 1, 5), (9, 8, 7, 6, 5), (2, 7, 1, 8, 2)]


def outcomes(grid: npt.NDArray[np.int64], combination: tuple[int, ...], mask: int) -> list[int]:
    """Strengths of the 9^k equally likely one-draw outcomes, by the rules themselves."""
    choices = [
        [p] if mask >> c & 1 else [(p + digit) % 10 for digit in range(1, 10)] for c, p in enumerate(combination)
    ]
    return [int(grid[positions]) for positions in itertools.product(*choices)]


def category_histogram(strengths: list[int]) -> list[int]:
    counts = Counter(category_of_strength(s) for s in strengths)
    return [counts[category] for category in HandCategory]


@pytest.mark.parametrize("combination", COMBINATIONS)
def test_panel_counts_match_brute_force_enumeration_for_all_32_masks(
    board: Board, board_slow_grid: npt.NDArray[np.int64], combination: tuple[int, ...]
) -> None:
    view = panel(board_grid(board), combination)
    for mask in range(32):
        strengths = outcomes(board_slow_grid, combination, mask)
        assert view.counts[mask].tolist() == category_histogram(strengths)
        assert int(view.denominators[mask]) == len(strengths)
        assert int(view.best[mask]) == max(strengths)
        assert int(view.best_counts[mask]) == strengths.count(max(strengths))


@pytest.mark.parametrize("combination", COMBINATIONS)
def test_probabilities_of_every_mask_sum_to_one(board: Board, combination: tuple[int, ...]) -> None:
    view = panel(board_grid(board), combination)
    for mask in range(32):
        for draws in range(1, 6):
            probabilities = view.probabilities(hold_from_mask(mask), draws)
            assert list(probabilities) == list(HandCategory)
            assert sum(probabilities.values()) == 1
            assert all(p >= 0 for p in probabilities.values())


def test_odds_equal_brute_force_on_random_boards_and_masks() -> None:
    rng = np.random.default_rng(99)
    for trial in range(3):
        board = random_board(1000 + trial)
        grid = slow_grid(board)
        for _ in range(8):
            combination = tuple(int(p) for p in rng.integers(0, 10, 5))
            mask = int(rng.integers(0, 32))
            strengths = outcomes(grid, combination, mask)
            expected = {
                category: Fraction(count, len(strengths))
                for category, count in zip(HandCategory, category_histogram(strengths), strict=True)
            }
            assert odds(board, combination, hold_from_mask(mask)) == expected


@pytest.mark.parametrize(("mask", "draws"), [(0b11110, 2), (0b10110, 2), (0b11101, 3)])
def test_best_of_n_draws_matches_enumerating_every_tuple_of_outcomes(
    board: Board, board_slow_grid: npt.NDArray[np.int64], mask: int, draws: int
) -> None:
    combination = (3, 1, 4, 1, 5)
    single = [category_of_strength(s) for s in outcomes(board_slow_grid, combination, mask)]
    best = Counter(max(draw) for draw in itertools.product(single, repeat=draws))
    total = len(single) ** draws
    expected = {category: Fraction(best[category], total) for category in HandCategory}
    assert odds(board, combination, hold_from_mask(mask), draws=draws) == expected


@pytest.mark.parametrize("draws", [0, 6, -1])
def test_odds_reject_a_draw_count_outside_one_to_five(board: Board, draws: int) -> None:
    with pytest.raises(ValueError, match="draws"):
        odds(board, (0, 0, 0, 0, 0), (True,) * 5, draws=draws)


def tip_keys(
    grid: npt.NDArray[np.int64], combination: tuple[int, ...]
) -> tuple[dict[int, tuple[int, ...]], dict[int, tuple[int, ...]]]:
    """Each mask's documented tip keys, from brute force (probabilities over 9^5)."""
    initial = category_of_strength(int(grid[combination]))
    key1: dict[int, tuple[int, ...]] = {}
    key2: dict[int, tuple[int, ...]] = {}
    for mask in range(32):
        strengths = outcomes(grid, combination, mask)
        scale = 9**5 // len(strengths)
        best = max(strengths)
        held = bin(mask).count("1")
        improve = sum(category_of_strength(s) > initial for s in strengths)
        key1[mask] = (best, strengths.count(best) * scale, held, -mask)
        key2[mask] = (improve * scale, best, held, -mask)
    return key1, key2


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_tips_are_never_beaten_by_another_mask_on_their_own_objective(seed: int) -> None:
    board = random_board(seed)
    grid = slow_grid(board)
    rng = np.random.default_rng(seed)
    for _ in range(4):
        combination = tuple(int(p) for p in rng.integers(0, 10, 5))
        tip1, tip2 = tips(board, combination)
        key1, key2 = tip_keys(grid, combination)
        mask1, mask2 = hold_mask(tip1), hold_mask(tip2)
        # Objective: tip 1 reaches the highest final hand, tip 2 improves most often.
        assert all(key1[mask1][0] >= key[0] for key in key1.values())
        assert all(key2[mask2][0] >= key[0] for key in key2.values())
        # And the documented tie-breaks pick exactly one mask.
        assert mask1 == max(key1, key=key1.__getitem__)
        assert mask2 == max(key2, key=key2.__getitem__)


def seed_figure_4_board() -> Board:
    """Seed 000, figure 4: hold 7s 8s 9s Ts, change Qc; Qc's column has J-spade, four
    other spades that make only a flush, one card pairing the hand and three blanks."""
    column0 = ["Qc", "Js", "2s", "3s", "4s", "As", "7h", "2h", "3d", "Kc"]
    used = {card_id(code) for code in [*column0, "7s", "8s", "9s", "Ts"]}
    rest = [card for card in range(52) if card not in used]
    columns = [
        [card_id(c) for c in column0],
        [card_id("7s"), *rest[0:9]],
        [card_id("8s"), *rest[9:18]],
        [card_id("9s"), *rest[18:27]],
        [card_id("Ts"), *rest[27:36]],
    ]
    return Board.from_columns(columns, rest[36:38])


def test_the_seed_figure_4_example_gives_its_published_probabilities() -> None:
    board = seed_figure_4_board()
    probabilities = odds(board, (0, 0, 0, 0, 0), (False, True, True, True, True))
    assert probabilities[HandCategory.FLUSH] == Fraction(4, 9)  # 44.4%
    assert probabilities[HandCategory.STRAIGHT_FLUSH] == Fraction(1, 9)  # 11.1%
    assert probabilities[HandCategory.ONE_PAIR] == Fraction(1, 9)  # 11.1%
    assert probabilities[HandCategory.HIGH_CARD] == Fraction(3, 9)
    view = panel(board_grid(board), (0, 0, 0, 0, 0))
    assert view.initial_category is HandCategory.HIGH_CARD
    assert Fraction(int(view.improve_counts[0b11110]), 9) == Fraction(6, 9)  # 66.6%


def test_panel_as_dict_is_json_ready_and_uses_hold_codes(board: Board) -> None:
    view = panel(board_grid(board), (3, 1, 4, 1, 5))
    data = json.loads(json.dumps(view.as_dict()))
    assert data["masks"][0b00011] == "HHDDD"
    assert data["masks"][31] == "HHHHH"
    assert len(data["counts"]) == 32 and all(len(row) == 10 for row in data["counts"])
    assert data["tip1"] == "".join("H" if h else "D" for h in view.tip1)
    assert data["denominators"][0] == 9**5
    assert data["achievable"] == sorted(int(c) for c in board.achievable())


def test_holding_everything_keeps_the_initial_hand_for_sure(board: Board) -> None:
    view = panel(board_grid(board), (2, 7, 1, 8, 2))
    probabilities = view.probabilities((True,) * 5)
    assert probabilities[view.initial_category] == 1
    assert int(view.best[31]) == view.initial_strength
    assert int(view.improve_counts[31]) == 0


def test_panel_arrays_are_read_only(board: Board) -> None:
    view = panel(board_grid(board), (0, 0, 0, 0, 0))
    for array in (view.counts, view.denominators, view.best, view.best_counts):
        assert not array.flags.writeable
