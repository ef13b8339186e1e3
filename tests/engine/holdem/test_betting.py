"""Betting rounds: order, limits, caps, all-ins and refused actions (seed 003)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tables.engine.holdem import (
    Action,
    ActionKind,
    AmountTooLargeError,
    AmountTooSmallError,
    HandOverError,
    HandSetup,
    HandState,
    HoldemError,
    IllegalActionError,
    NotYourTurnError,
    Phase,
    Street,
    Structure,
    calling_station,
    start_hand,
    timeout_action,
)

from .helpers import act, check_down, check_down_to, new_hand

F, X, C, B, R, A = (
    ActionKind.FOLD,
    ActionKind.CHECK,
    ActionKind.CALL,
    ActionKind.BET,
    ActionKind.RAISE,
    ActionKind.ALL_IN,
)


def test_the_blinds_are_posted_left_of_the_button_and_the_next_player_acts_first() -> None:
    state = new_hand(Structure.no_limit(1, 2), [100, 100, 100, 100], button=1)
    assert state.seats == (2, 3, 0, 1)  # dealing order: left of the button first
    assert state.bets == (1, 2, 0, 0)
    assert state.to_act == 0  # left of the big blind (seed 003, The First round)


def test_heads_up_the_button_posts_the_small_blind_acts_first_pre_flop_and_last_after() -> None:
    state = new_hand(Structure.no_limit(1, 2), [100, 100], button=0)
    assert state.seats == (1, 0)  # the big blind is dealt first
    assert dict(zip(state.seats, state.bets, strict=True)) == {0: 1, 1: 2}
    assert state.to_act == 0
    state = act(state, C)
    assert state.to_act == 1  # the big blind's option
    state = act(state, X)
    assert state.street is Street.FLOP and state.to_act == 1


def test_the_big_blind_is_live_and_gets_the_option() -> None:
    state = new_hand(Structure.fixed_limit(10, 20), [500] * 3, button=0)
    state = act(act(state, C), C)
    assert state.to_act == 2 and set(state.legal_actions().kinds) == {F, X, R}


def test_fixed_limit_bets_are_one_small_bet_then_one_big_bet() -> None:
    state = new_hand(Structure.fixed_limit(10, 20), [500] * 3, button=0)
    legal = state.legal_actions()
    assert (legal.call_amount, legal.min_to, legal.max_to) == (10, 20, 20)
    state = check_down_to(state, Street.TURN)
    legal = state.legal_actions()
    assert (legal.min_to, legal.max_to) == (20, 20)


def test_fixed_limit_allows_a_bet_and_three_raises_then_only_call_or_fold() -> None:
    # seed 003, Some standard rules: four bets per round, the last is the cap.
    state = new_hand(Structure.fixed_limit(10, 20), [1_000] * 5, button=0)
    for _ in range(3):  # pre-flop the big blind is the bet: three raises remain
        state = act(state, R)
    assert state.bets[2:5] == (20, 30, 40)
    assert set(state.legal_actions().kinds) == {F, C}
    state = check_down_to(state, Street.FLOP)
    state = act(state, B)
    for _ in range(3):
        state = act(state, R)
    assert max(state.bets) == 40
    assert set(state.legal_actions().kinds) == {F, C}


def test_the_cap_does_not_lift_heads_up() -> None:
    state = new_hand(Structure.fixed_limit(10, 20), [1_000] * 2, button=0)
    state = check_down_to(state, Street.FLOP)
    for kind in (B, R, R, R):
        state = act(state, kind)
    assert set(state.legal_actions().kinds) == {F, C}


def test_no_limit_minimum_raise_is_the_previous_bet_or_raise() -> None:
    # seed 003, No-Limit: "bets 100 ... the second player must raise a minimum of 100 (total 200)".
    state = new_hand(Structure.no_limit(25, 50), [5_000] * 3, button=2)
    state = check_down_to(state, Street.FLOP)
    state = act(state, B, 100)
    legal = state.legal_actions()
    assert (legal.min_to, legal.max_to) == (200, 5_000 - 50)
    state = act(state, R, 350)
    assert state.legal_actions().min_to == 600


def test_pot_limit_maximum_is_pot_plus_bets_plus_the_call_800_in_the_seed_example() -> None:
    # seed 003, Pot-Limit: pot 200, bet 150, call 150 -> the third player may make it 800.
    state = new_hand(Structure.pot_limit(25, 50), [5_000] * 4, button=3)
    assert state.legal_actions().max_to == 175  # pre-flop: a pot raise over 25/50
    state = check_down_to(state, Street.FLOP)
    assert state.total_pot == 200
    state = act(act(state, B, 150), C)
    legal = state.legal_actions()
    assert (legal.min_to, legal.max_to) == (300, 800)
    with pytest.raises(AmountTooLargeError):
        act(state, R, 801)


def test_an_incomplete_all_in_raise_does_not_reopen_the_betting() -> None:
    state = new_hand(Structure.no_limit(5, 10), [1_000, 160, 1_000], button=2)
    state = check_down_to(state, Street.FLOP)
    state = act(state, B, 100)
    state = act(state, A)  # 150 all-in: a raise of 50, less than the 100 bet
    assert state.bets == (100, 150, 0)
    assert state.legal_actions().min_to == 250  # not yet acted: may raise
    state = act(state, C)
    assert set(state.legal_actions().kinds) == {F, C}  # already acted: call or fold only


def test_a_full_raise_after_a_short_all_in_reopens_the_betting() -> None:
    state = new_hand(Structure.no_limit(5, 10), [1_000, 160, 1_000], button=2)
    state = check_down_to(state, Street.FLOP)
    state = act(act(act(state, B, 100), A), R, 300)
    assert R in state.legal_actions().kinds


def test_a_player_cannot_bet_more_than_the_chips_in_front_of_him() -> None:
    state = new_hand(Structure.no_limit(1, 2), [50, 300, 300], button=2)
    state = act(state, C)  # button calls
    legal = state.legal_actions()  # small blind with 49 behind
    assert legal.max_to == 50 and legal.all_in_to == 50


def test_a_short_stack_calls_all_in_for_less() -> None:
    state = new_hand(Structure.no_limit(1, 2), [300, 300, 30], button=0)
    state = act(state, R, 100)
    state = act(state, C)
    assert state.legal_actions().call_amount == 28
    assert R not in state.legal_actions().kinds
    state = act(state, C)
    assert state.stacks[1] == 0 and state.street is Street.FLOP  # the other two play on


def test_a_new_player_posting_a_big_blind_now_has_a_live_blind() -> None:
    setup = HandSetup(Structure.no_limit(5, 10), (500, 500, 500, 500, 500), 0, tuple(range(52)), posting=frozenset({4}))
    state = start_hand(setup)
    assert state.seats == (1, 2, 3, 4, 0)
    assert state.bets == (5, 10, 0, 10, 0)
    assert state.to_act == 3
    state = act(state, C)  # seat 3 calls, then the poster may check
    assert X in state.legal_actions().kinds and state.to_act == 4


def test_a_seat_waiting_for_the_big_blind_is_not_dealt_in() -> None:
    setup = HandSetup(Structure.no_limit(5, 10), (500, 500, 500), 0, tuple(range(52)), waiting=frozenset({2}))
    state = start_hand(setup)
    assert state.seats == (1, 0)


def _snapshot_refusal(state: HandState, action: Action, error: type[HoldemError], code: str) -> None:
    before = state
    with pytest.raises(error) as caught:
        state.act(action)
    assert caught.value.code == code
    assert state == before


def test_illegal_actions_raise_a_coded_error_and_change_nothing() -> None:
    state = new_hand(Structure.no_limit(1, 2), [100, 100, 100], button=2)
    seat = state.to_act
    assert seat == 2
    _snapshot_refusal(state, Action(C, 0), NotYourTurnError, "not_your_turn")
    _snapshot_refusal(state, Action(X, seat), IllegalActionError, "illegal_action")
    _snapshot_refusal(state, Action(R, seat, 3), AmountTooSmallError, "amount_too_small")
    _snapshot_refusal(state, Action(R, seat, 101), AmountTooLargeError, "amount_too_large")
    _snapshot_refusal(state, Action(B, seat, 10), IllegalActionError, "illegal_action")


def test_folding_when_checking_is_free_is_allowed() -> None:
    """Seed 003, Some standard rules: "Folding can be done at any stage of the game"."""
    state = check_down_to(new_hand(Structure.no_limit(1, 2), [100, 100, 100], button=0), Street.FLOP)
    legal = state.legal_actions()
    assert legal.call_amount == 0
    assert F in legal.kinds and X in legal.kinds
    folder = state.to_act
    assert folder is not None
    after = state.act(Action(F, folder))
    k = after.player_of(folder)
    assert after.folded[k] and not after.is_over
    assert after.to_act != folder and after.street is Street.FLOP
    # The big blind checked pre-flop and may also fold there, losing his blind.
    pre = new_hand(Structure.no_limit(1, 2), [100, 100], button=0)
    pre = act(pre, C)  # the button (small blind) completes
    assert F in pre.legal_actions().kinds
    done = act(pre, F)
    assert done.is_over and done.finishing_stacks() == {0: 102, 1: 98}


def test_a_finished_hand_accepts_nothing() -> None:
    state = new_hand(Structure.no_limit(1, 2), [100, 100], button=0)
    state = act(state, F)
    assert state.is_over and state.phase is Phase.COMPLETE
    assert state.finishing_stacks() == {0: 99, 1: 101}
    _snapshot_refusal(state, Action(C, 1), HandOverError, "hand_over")
    with pytest.raises(HandOverError):
        state.legal_actions()


def test_every_one_checking_reaches_a_showdown_with_the_full_board() -> None:
    state = check_down(new_hand(Structure.no_limit(1, 2), [100] * 4, button=0))
    assert state.phase is Phase.SHOWDOWN and len(state.board) == 5


def test_seed_003_limit_sizes_bet_10_raise_to_20_then_bet_20_raise_to_40() -> None:
    # seed 003, The Second and Third Round: in 10/20 "BET" is 10 and "RAISE" is 20 (a call
    # plus one more bet); on the turn "BET" is 20 and "RAISE" is 40.
    state = check_down_to(new_hand(Structure.fixed_limit(10, 20), [1_000] * 3, button=2), Street.FLOP)
    assert (state.legal_actions().min_to, state.legal_actions().max_to) == (10, 10)
    state = act(state, B)
    assert (state.legal_actions().min_to, state.legal_actions().max_to) == (20, 20)
    state = check_down_to(state, Street.TURN)
    state = act(state, B)
    assert state.bets[0] == 20 and state.legal_actions().min_to == 40


def test_bigholdem_a_player_short_of_the_bet_may_only_fold() -> None:
    """Seed 004, Rilancio: "se un giocatore non ha soldi sufficienti per pareggiare la
    puntata ... deve passare o abbandonare la mano" (``call_all_in=False``); seed 003's
    all-in rule (the default) lets him call for what he has."""
    seed_004 = replace(Structure.pot_limit(5, 10), call_all_in=False)
    for structure, expected in ((Structure.pot_limit(5, 10), {F, C, A}), (seed_004, {F})):
        state = new_hand(structure, [1_000, 1_000, 25], button=0)  # seat 2 is the big blind
        state = act(state, R, 35)  # the button raises to 35: more than the big blind has
        state = act(state, F)  # the small blind folds
        assert state.to_act == 2
        assert set(state.legal_actions().kinds) == expected
        if expected == {F}:
            _snapshot_refusal(state, Action(C, 2), IllegalActionError, "illegal_action")
            _snapshot_refusal(state, Action(A, 2), IllegalActionError, "illegal_action")
            assert timeout_action(state).kind is F
            assert calling_station(state, np.random.default_rng(1)).kind is F
    enough = act(new_hand(seed_004, [1_000, 1_000, 35], button=0), R, 35)  # he can match exactly
    assert C in act(enough, F).legal_actions().kinds
