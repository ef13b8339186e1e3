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
    PotResult,
    Structure,
    best_strengths,
    build_pots,
    play_showdown,
    rake_pots,
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


def test_each_pot_is_raked_from_its_own_winners_so_a_short_stack_pays_only_his_pot() -> None:
    # The audit's hand 27 in small: the short stack wins the main pot, another player the
    # side pot four times larger. Raking the hand from the main pot first charged the short
    # stack the whole rake; each pot now pays its own 5% (docs/holdem.md, rake; pokerkit).
    structure = Structure.no_limit(50, 100, rake_bps=500)
    holes = ["AcAd", "KcKd", "QcQd"]  # dealing order: the short stack is player 0
    state = new_hand(structure, [2_000, 20_000, 20_000], button=2, holes=holes, board="2s3h7d8cJs")
    while state.phase is Phase.BETTING:
        state = act(state, A if A in state.legal_actions().kinds else C)
    state = play_showdown(state)
    assert state.pot_results == (PotResult(6_000, 300, (0,)), PotResult(36_000, 1_800, (1,)))
    assert state.rake == 2_100
    assert state.stacks == (6_000 - 300, 36_000 - 1_800, 0)


def test_the_hand_cap_is_shared_by_the_pots_in_proportion_to_their_size() -> None:
    structure = Structure.no_limit(50, 100, rake_bps=500, rake_cap=1_000)
    holes = ["AcAd", "KcKd", "QcQd"]
    state = new_hand(structure, [2_000, 20_000, 20_000], button=2, holes=holes, board="2s3h7d8cJs")
    while state.phase is Phase.BETTING:
        state = act(state, A if A in state.legal_actions().kinds else C)
    state = play_showdown(state)
    # 5% of 42,000 is 2,100, over the cap of 1,000: 1,000 x 6,000 / 42,000 and x 36,000 / 42,000.
    assert [p.rake for p in state.pot_results] == [142, 857]
    assert state.rake == 999  # at most the cap
    assert state.stacks == (6_000 - 142, 36_000 - 857, 0)


def test_rake_pots_is_zero_without_a_flop_and_never_above_each_pots_own_rake() -> None:
    assert rake_pots([500, 900], rake_bps=1_000, rake_cap=None, flop_dealt=False) == (0, 0)
    for cap in (0, 1, 7, 50, 139, 140, 10_000):
        rakes = rake_pots([500, 900], rake_bps=1_000, rake_cap=cap, flop_dealt=True)
        assert sum(rakes) <= cap and rakes[0] <= 50 and rakes[1] <= 90
