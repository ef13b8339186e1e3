"""Hypothesis properties of random hands: chips are conserved, stacks never go negative,
every offered action is accepted and every refused action changes nothing."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from tables.engine.holdem import (
    Action,
    ActionKind,
    HandState,
    HoldemError,
    Phase,
    Structure,
    TurnClock,
    apply_clock,
    play_showdown,
    start_hand,
)

from .differential import random_action, random_setup

KINDS = [k for k in ActionKind if k is not ActionKind.TIMEOUT_ALL_IN]


def _conserved(state: HandState) -> None:
    total = sum(state.stacks) + state.total_pot + state.rake
    if state.is_over:
        assert sum(state.stacks) + state.rake == sum(state.starting_stacks)
    else:
        assert total == sum(state.starting_stacks)
    assert min(state.stacks) >= 0 and min(state.bets) >= 0


def _offered_actions_are_accepted(state: HandState, rng: random.Random) -> None:
    legal = state.legal_actions()
    for kind in legal.kinds:
        amount = None
        if kind in (ActionKind.BET, ActionKind.RAISE):
            assert legal.min_to is not None and legal.max_to is not None
            assert legal.min_to <= legal.max_to
            amount = rng.randint(legal.min_to, legal.max_to)
        state.act(Action(kind, legal.seat, amount))  # must not raise


def _refused_actions_change_nothing(state: HandState, rng: random.Random) -> None:
    legal = state.legal_actions()
    before = state
    for _ in range(4):
        kind = rng.choice(KINDS)
        seat = rng.choice([legal.seat, legal.seat, rng.randint(0, 9)])
        amount = rng.choice([None, rng.randint(-5, 3 * max(1, state.total_pot))])
        try:
            state.act(Action(kind, seat, amount))
        except HoldemError:
            assert state == before
        else:
            assert seat == legal.seat and kind in legal.kinds
            if kind in (ActionKind.BET, ActionKind.RAISE) and amount is not None:
                assert legal.min_to is not None and legal.max_to is not None
                assert legal.min_to <= amount <= legal.max_to


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), rake=st.sampled_from([0, 250, 1_000]), timeouts=st.booleans())
def test_random_hands_conserve_chips_and_keep_their_promises(seed: int, rake: int, timeouts: bool) -> None:
    rng = random.Random(seed)
    setup = random_setup(rng)
    s = setup.structure
    occupied = [seat for seat, stack in enumerate(setup.stacks) if stack is not None and seat != setup.button]
    extra = rng.sample(occupied, min(len(occupied) - 1, rng.choice([0, 0, 1, 2]))) if len(occupied) > 1 else []
    posting = frozenset(extra[: len(extra) // 2 + len(extra) % 2])
    setup = type(setup)(
        Structure(s.betting, s.small_blind, s.big_blind, s.small_bet, s.big_bet, s.ante, s.raise_caps, rake, 50),
        setup.stacks,
        setup.button,
        setup.deck,
        waiting=frozenset(extra) - posting,
        posting=posting,
    )
    state = start_hand(setup)
    _conserved(state)
    while state.phase is Phase.BETTING:
        _offered_actions_are_accepted(state, rng)
        _refused_actions_change_nothing(state, rng)
        if timeouts and rng.random() < 0.05:
            state = apply_clock(state, TurnClock(0), 30_000)
        else:
            state = state.act(random_action(rng, state))
        _conserved(state)
    state = play_showdown(state, muck_losers=rng.random() < 0.5)
    assert state.is_over
    _conserved(state)
    assert state.winnings is not None and sum(state.winnings) + state.rake == state.total_pot
