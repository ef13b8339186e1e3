"""Side pots, showdown order, mucking, split pots, the odd chip and rake (seed 003, Showdown)."""

from __future__ import annotations

import numpy as np
import pytest

from tables.engine.evaluator import evaluate_many
from tables.engine.holdem import (
    ActionKind,
    IllegalActionError,
    Phase,
    Pot,
    Structure,
    best_strengths,
    build_pots,
    play_showdown,
    split_pot,
)

from .helpers import act, check_down, new_hand

X, C, B, R, A = ActionKind.CHECK, ActionKind.CALL, ActionKind.BET, ActionKind.RAISE, ActionKind.ALL_IN


def test_best_of_seven_equals_the_best_of_the_21_five_card_hands() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        cards = rng.permutation(52)[:9]
        holes = np.array([cards[:2], cards[2:4]])
        got = best_strengths(holes, cards[4:9])
        from itertools import combinations

        for k in range(2):
            seven = [*holes[k], *cards[4:9]]
            best = evaluate_many(np.array(list(combinations(seven, 5)))).max()
            assert got[k] == best


def test_side_pots_stack_by_contribution_and_exclude_folded_players() -> None:
    assert build_pots([100, 300, 300, 50], [True, True, True, False]) == (
        Pot(350, (0, 1, 2)),
        Pot(400, (1, 2)),
    )


def test_the_odd_chip_goes_to_the_first_winner_left_of_the_button() -> None:
    assert split_pot(5, [2, 1]) == {1: 3, 2: 2}


def test_a_short_all_in_wins_only_the_main_pot() -> None:
    holes = ["AcAd", "KcKd", "QcQd"]  # player 0 (40 chips) has the best hand
    state = new_hand(Structure.no_limit(1, 2), [40, 500, 500], button=2, holes=holes, board="2s7h9dTs3c")
    state = act(state, R, 200)  # button
    state = act(state, A)  # small blind all-in 40
    state = act(state, C)  # big blind calls 200
    state = check_down(state)
    state = play_showdown(state)
    assert state.is_over
    # main pot 3 x 40 = 120 to the aces; side pot 2 x 160 (+ nothing) to the kings.
    assert state.stacks == (120, 500 - 200 + 320, 300)
    assert sum(state.stacks) == 1_040


def test_playing_the_board_splits_and_the_odd_chip_goes_left_of_the_button() -> None:
    holes = ["2c3d", "4c5d", "6c7d"]
    state = new_hand(Structure.no_limit(1, 2), [100, 100, 100], button=2, holes=holes, board="AhKhQhJhTh")
    state = act(state, C)  # button calls 2
    state = act(state, ActionKind.FOLD)  # small blind folds its 1
    state = play_showdown(check_down(state))
    assert state.winnings == (0, 3, 2)  # pot of 5: the big blind is first left of the button
    assert state.stacks == (99, 101, 100)


def test_the_last_aggressor_on_the_river_shows_first() -> None:
    state = new_hand(Structure.no_limit(1, 2), [100] * 3, button=2)
    while len(state.board) < 5:
        kinds = state.legal_actions().kinds
        state = act(state, X if X in kinds else C)
    state = act(state, X)  # small blind checks the river
    state = act(state, B, 10)  # big blind bets
    state = act(state, C)
    state = act(state, C)
    assert state.phase is Phase.SHOWDOWN
    assert state.showdown_queue[0] == 1
    assert state.legal_actions().kinds == (ActionKind.SHOW,)


def test_when_nobody_bets_the_river_the_first_player_left_of_the_button_shows_first() -> None:
    state = check_down(new_hand(Structure.no_limit(1, 2), [100] * 4, button=0))
    assert state.showdown_queue == (0, 1, 2, 3)


def test_a_loser_may_muck_but_a_winner_must_show() -> None:
    holes = ["2c7d", "KcKd", "AcAd"]
    state = new_hand(Structure.no_limit(1, 2), [100] * 3, button=2, holes=holes, board="3s8h9dTs4c")
    state = check_down(state)
    assert state.legal_actions().kinds == (ActionKind.SHOW,)  # first to show must show
    state = act(state, ActionKind.SHOW)
    assert set(state.legal_actions().kinds) == {ActionKind.SHOW, ActionKind.MUCK}  # kings lose
    state = act(state, ActionKind.MUCK)
    assert state.mucked == (False, True, False)
    with pytest.raises(IllegalActionError):
        act(state, ActionKind.MUCK)  # the aces win: they must be shown
    state = act(state, ActionKind.SHOW)
    assert state.is_over and state.winnings == (0, 0, 6)


def test_after_an_all_in_run_out_every_hand_is_shown() -> None:
    holes = ["AcAd", "KcKd"]
    state = new_hand(Structure.no_limit(1, 2), [100, 100], button=1, holes=holes, board="3s8h9dTs4c")
    state = act(state, A)
    state = act(state, C)
    assert state.phase is Phase.SHOWDOWN and state.runout and len(state.board) == 5
    for _ in range(2):
        assert state.legal_actions().kinds == (ActionKind.SHOW,)
        state = act(state, ActionKind.SHOW)
    assert state.stacks == (200, 0)


def test_rake_is_taken_after_the_flop_and_capped() -> None:
    structure = Structure.no_limit(1, 2, rake_bps=500, rake_cap=3)
    holes = ["AcAd", "KcKd"]
    state = new_hand(structure, [100, 100], button=1, holes=holes, board="3s8h9dTs4c")
    state = play_showdown(check_down(act(act(state, R, 20), C)))
    assert state.rake == 2 and state.stacks == (100 + 20 - 2, 80)
    state = new_hand(structure, [100, 100], button=1)
    state = act(state, ActionKind.FOLD)
    assert state.rake == 0  # no flop, no drop
