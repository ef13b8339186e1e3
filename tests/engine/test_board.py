"""Board and grid (seed 000, How it works, 1. Board and 3. Change procedure; DESIGN 1, 10)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from tables.engine.widerpoker import RANKS, Board, HandCategory, board_grid, card_id, evaluate
from tables.engine.widerpoker.grid import compute_grid


def test_columns_are_deck_positions_ten_c_to_ten_c_plus_nine() -> None:
    deck = list(range(51, -1, -1))
    board = Board.from_deck(deck)
    for column in range(5):
        for position in range(10):
            assert board.card(column, position) == deck[10 * column + position]
    assert board.out == (deck[50], deck[51])
    assert board.deck() == tuple(deck)


def test_a_board_can_be_built_from_codes_or_ids() -> None:
    board = Board.from_deck(range(52))
    again = Board.from_columns(board.codes(), board.out_codes())
    assert again == board
    assert hash(again) == hash(board)
    assert Board.from_columns(board.columns, board.out) == board


@pytest.mark.parametrize(
    "deck",
    [list(range(51)), list(range(53)), [0, *range(1, 51), 0], list(range(1, 53))],
)
def test_a_board_needs_the_52_different_cards(deck: list[int]) -> None:
    with pytest.raises(ValueError):
        Board.from_deck(deck)


def test_a_board_rejects_a_wrong_layout_or_a_bad_code() -> None:
    board = Board.from_deck(range(52))
    with pytest.raises(ValueError):
        Board(columns=board.columns[:4], out=board.out)
    with pytest.raises(ValueError, match="'Zz'"):
        Board.from_columns([["Zz", *column[1:]] for column in board.codes()], board.out_codes())


def test_hand_takes_one_card_per_column_at_the_given_positions() -> None:
    board = Board.from_deck(range(52))
    assert board.hand((0, 1, 2, 3, 9)) == (0, 11, 22, 33, 49)
    with pytest.raises(ValueError):
        board.hand((0, 1, 2, 3, 10))
    with pytest.raises(IndexError):
        board.card(5, 0)


def test_grid_matches_scalar_evaluation_of_every_hand(board: Board, board_slow_grid: npt.NDArray[np.int64]) -> None:
    grid = compute_grid(board)
    assert grid.strengths.shape == (10, 10, 10, 10, 10)
    assert np.array_equal(grid.strengths, board_slow_grid)
    assert grid.category((1, 2, 3, 4, 5)) == evaluate(board.hand((1, 2, 3, 4, 5))).category


def test_grid_arrays_are_read_only_and_cached_per_board(board: Board) -> None:
    grid = board_grid(board)
    assert board_grid(Board.from_deck(board.deck())) is grid
    assert not grid.strengths.flags.writeable
    assert not grid.categories.flags.writeable
    with pytest.raises(ValueError):
        grid.strengths[0, 0, 0, 0, 0] = 1


def paired_board() -> Board:
    """Each rank's clubs+diamonds share one column and hearts+spades another.

    Column 0: clubs/diamonds of 2-6; column 1: of 7-J; column 2: of Q-A plus
    hearts/spades of 2-3; column 3: hearts/spades of 4-8; column 4: of 9-K; out: Ah As.
    """
    cd = [[r + "c", r + "d"] for r in RANKS]
    hs = [[r + "h", r + "s"] for r in RANKS]
    pairs = cd + hs  # 26 pairs; the last (Ah As) goes out
    columns = [[card for pair in pairs[5 * c : 5 * c + 5] for card in pair] for c in range(5)]
    return Board.from_columns(columns, pairs[25])


def test_a_board_pairing_every_rank_in_columns_allows_only_pairs_and_two_pair() -> None:
    board = paired_board()
    # A rank has at most two cards in different columns: no trips, full house or quads.
    # Each suit lives in three columns: no flush or straight flush. Any straight needs a
    # card from column 0 (2-6) and from column 2 (Q-A, 2-3) with ranks five apart at most:
    # only 2-6 or A-5, and both then lack a card for columns 1 and 4.
    expected = {HandCategory.HIGH_CARD, HandCategory.ONE_PAIR, HandCategory.TWO_PAIR}
    assert board.achievable() == expected
    present = np.unique(board_grid(board).categories)
    assert {HandCategory(int(c)) for c in present} == expected


def test_the_sorted_deck_board_has_no_quads_full_house_straight_or_straight_flush() -> None:
    # Column c holds cards 10c..10c+9, so each rank sits in at most two columns (no trips,
    # so no full house or quads); column 0 holds only 2-4 and column 4 only Q-A, which
    # rules out every straight (the wheel needs 2 and 3, both only in column 0). Clubs
    # 2c 5c 7c Tc Qc sit in five different columns: a flush is possible.
    board = Board.from_deck(range(52))
    assert board.achievable() == {
        HandCategory.HIGH_CARD,
        HandCategory.ONE_PAIR,
        HandCategory.TWO_PAIR,
        HandCategory.FLUSH,
    }


def test_aces_sharing_a_column_rule_out_four_aces_but_not_other_quads() -> None:
    deck = list(range(52))
    aces = [card_id(code) for code in ("Ac", "Ad", "Ah", "As")]
    kings = [card_id(code) for code in ("Kc", "Kd", "Kh", "Ks")]
    # Put the kings at position 0 of columns 0-3 and two aces together in column 4.
    for target, card in zip([0, 10, 20, 30, 40, 41], kings + aces[:2], strict=True):
        source = deck.index(card)
        deck[source], deck[target] = deck[target], deck[source]
    board = Board.from_deck(deck)
    assert board.card(4, 0) in aces and board.card(4, 1) in aces
    assert HandCategory.FOUR_OF_A_KIND in board.achievable()
    four_aces = evaluate(["Ac", "Ad", "Ah", "As", "2c"]).strength
    quads = board_grid(board).strengths[board_grid(board).categories == HandCategory.FOUR_OF_A_KIND]
    assert quads.size > 0
    assert int(quads.max()) < four_aces


def test_achievable_is_exactly_the_categories_in_the_grid(board: Board) -> None:
    grid = board_grid(board)
    assert board.achievable() == {HandCategory(int(c)) for c in np.unique(grid.categories)}


def test_a_board_built_from_lists_or_numpy_ids_is_the_same_hashable_value() -> None:
    deck = np.arange(52)
    columns = [list(deck[10 * c : 10 * c + 10]) for c in range(5)]
    board = Board(columns=columns, out=list(deck[50:]))  # type: ignore[arg-type]  # lists on purpose
    assert board == Board.from_deck(range(52))
    assert all(type(card) is int for column in board.columns for card in column)
    assert board_grid(board) is board_grid(Board.from_deck(range(52)))
