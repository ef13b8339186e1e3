"""Simulated players (seed 004, Giocatore): legal, deterministic, distinct, and winning."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tables.engine.cards import parse_cards
from tables.engine.holdem import (
    DECISION_TABLE,
    LAG,
    PERSONALITIES,
    TAG,
    ActionKind,
    BotPlayer,
    HandSetup,
    HandState,
    Personality,
    Phase,
    Street,
    Structure,
    calling_station,
    decide,
    play_match,
    random_action,
    start_hand,
)
from tables.engine.holdem.bots import Position, Price, Strength, hand_class, preflop_equity, situation

SAMPLES = 24  # post-flop Monte Carlo deals in the legality tests: legality does not need accuracy


def _structure(kind: int) -> Structure:
    if kind == 0:
        return Structure.no_limit(1, 2)
    if kind == 1:
        return Structure.pot_limit(5, 10, ante=1)
    return Structure.fixed_limit(10, 20)


def _random_hand_states(seed: int, hands: int) -> list[HandState]:
    """Betting states reached by random play over random structures, stacks and tables."""
    rng = np.random.default_rng(seed)
    states = []
    for _ in range(hands):
        players = int(rng.integers(2, 7))
        stacks = tuple(int(s) for s in rng.integers(1, 400, size=players))
        deck = tuple(int(c) for c in rng.permutation(52))
        setup = HandSetup(_structure(int(rng.integers(3))), stacks, int(rng.integers(players)), deck)
        state = start_hand(setup)
        while not state.is_over:
            if state.phase is Phase.BETTING:
                states.append(state)
            state = state.act(random_action(state, rng))
    return states


def _check_legal(state: HandState, personality: Personality, seed: int) -> None:
    action = decide(state, personality, np.random.default_rng(seed), samples=SAMPLES)
    legal = state.legal_actions()
    assert action.seat == legal.seat
    assert action.kind in legal.kinds
    if action.kind in (ActionKind.BET, ActionKind.RAISE):
        assert legal.min_to is not None and legal.max_to is not None and action.amount is not None
        assert legal.min_to <= action.amount <= legal.max_to
    state.act(action)  # raises if the engine disagrees


def test_every_decision_is_legal_over_many_random_states() -> None:
    states = _random_hand_states(seed=2026, hands=150)
    assert len(states) > 400
    for k, state in enumerate(states):
        for personality in PERSONALITIES:
            _check_legal(state, personality, k)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), pick=st.integers(0, 10_000))
def test_decisions_are_legal_in_any_reachable_state(seed: int, pick: int) -> None:
    states = _random_hand_states(seed, hands=2)
    state = states[pick % len(states)]
    for personality in PERSONALITIES:
        _check_legal(state, personality, seed)


def test_baselines_play_only_legal_actions() -> None:
    for k, state in enumerate(_random_hand_states(seed=7, hands=60)):
        for player in (random_action, calling_station):
            action = player(state, np.random.default_rng(k))
            assert action.kind in state.legal_actions().kinds
            state.act(action)


def test_fixed_limit_raises_are_the_one_allowed_size() -> None:
    for k, state in enumerate(_random_hand_states(seed=11, hands=80)):
        if state.structure.small_bet != 10 or state.structure.big_bet != 20:
            continue
        action = decide(state, LAG, np.random.default_rng(k), samples=SAMPLES)
        if action.kind in (ActionKind.BET, ActionKind.RAISE):
            assert action.amount == state.legal_actions().min_to == state.legal_actions().max_to


def test_same_seed_gives_the_same_actions() -> None:
    states = _random_hand_states(seed=5, hands=30)
    for personality in PERSONALITIES:
        first = [decide(s, personality, np.random.default_rng(99), samples=SAMPLES) for s in states]
        again = [decide(s, personality, np.random.default_rng(99), samples=SAMPLES) for s in states]
        assert first == again
    one = play_match(BotPlayer(TAG), random_action, hands=200, seed=3)
    two = play_match(BotPlayer(TAG), random_action, hands=200, seed=3)
    assert one == two
    assert one.group_nets != play_match(BotPlayer(TAG), random_action, hands=200, seed=4).group_nets


def test_the_decision_table_covers_every_situation_with_frequencies_summing_to_one() -> None:
    assert len(DECISION_TABLE) == len(Street) * len(Strength) * len(Position) * len(Price) == 320
    for personality in PERSONALITIES:
        for key in DECISION_TABLE:
            row = personality.frequencies(*key)
            assert math.isclose(row.fold + row.call + row.raise_, 1.0)
            assert min(row.fold, row.call, row.raise_) >= 0 and row.size > 0
            if key[3] is Price.FREE:
                assert row.fold == 0  # never fold when checking is free


def test_stronger_hands_fold_less_and_raise_more() -> None:
    for street in Street:
        for position in Position:
            for price in Price:
                rows = [DECISION_TABLE[street, strength, position, price] for strength in Strength]
                assert all(a.fold >= b.fold for a, b in itertools.pairwise(rows))
                assert rows[-1].raise_ > rows[0].raise_


def test_preflop_table_ranks_starting_hands() -> None:
    assert len({hand_class((a, b)) for a in range(52) for b in range(52) if a != b}) == 169
    aces = preflop_equity(hand_class(parse_cards(["As", "Ah"])), 1)
    assert 0.83 < aces < 0.87  # AA against one random hand: 0.852
    seven_deuce = preflop_equity(hand_class(parse_cards(["7s", "2h"])), 1)
    suited = preflop_equity(hand_class(parse_cards(["Ks", "Qs"])), 1)
    offsuit = preflop_equity(hand_class(parse_cards(["Ks", "Qh"])), 1)
    assert aces > suited > offsuit > seven_deuce
    assert preflop_equity(hand_class(parse_cards(["As", "Ah"])), 5) < aces


def test_situation_reads_position_and_price() -> None:
    state = start_hand(HandSetup(Structure.no_limit(1, 2), (200,) * 6, 5, tuple(range(52))))
    spot = situation(state)
    assert spot.street is Street.PREFLOP and spot.opponents == 5
    assert spot.position is Position.EARLY  # under the gun
    assert spot.price is Price.DEAR  # 2 to call into 3: 2 / 5 = 0.4
    heads_up = start_hand(HandSetup(Structure.no_limit(1, 2), (200, 200), 1, tuple(range(52))))
    assert situation(heads_up).position is Position.LATE  # the button acts first pre-flop
    assert situation(heads_up).price is Price.FAIR  # 1 to call into 3: 0.25


def _preflop_shares(personality: Personality) -> tuple[float, float]:
    """Fold share when facing a bet and raise share, over a fixed set of pre-flop decisions."""
    states = [s for s in _random_hand_states(seed=13, hands=200) if s.street is Street.PREFLOP]
    folds = raises = facing = 0
    for k, state in enumerate(states):
        action = decide(state, personality, np.random.default_rng(k))
        facing += state.legal_actions().call_amount > 0
        folds += action.kind is ActionKind.FOLD
        raises += action.kind in (ActionKind.BET, ActionKind.RAISE)
    return folds / facing, raises / len(states)


def test_personalities_differ_as_designed() -> None:
    shares = {p.name: _preflop_shares(p) for p in PERSONALITIES}
    folds = {name: share[0] for name, share in shares.items()}
    raises = {name: share[1] for name, share in shares.items()}
    assert folds["nit"] > folds["rock"] > folds["tag"] > folds["lag"]  # tight .. loose
    assert raises["lag"] > raises["tag"] > raises["nit"] > raises["rock"]  # aggressive .. passive
    against_station = {p.name: play_match(BotPlayer(p), calling_station, hands=600, seed=17) for p in PERSONALITIES}
    assert against_station["lag"].vpip > against_station["tag"].vpip > against_station["rock"].vpip
    assert against_station["lag"].vpip > against_station["nit"].vpip
    assert against_station["rock"].aggression < against_station["tag"].aggression < against_station["lag"].aggression


@pytest.mark.parametrize("personality", PERSONALITIES, ids=lambda p: p.name)
@pytest.mark.parametrize("baseline", [random_action, calling_station], ids=["random", "station"])
def test_every_personality_beats_both_baselines(personality: Personality, baseline: object) -> None:
    assert callable(baseline)
    result = play_match(BotPlayer(personality), baseline, hands=2_000, seed=2026)
    assert result.hands == 2_000
    assert result.hero_net + result.opponents_net == 0  # chips are conserved
    assert result.bb_per_100 > 2 * result.std_error > 0


def test_a_multiway_match_conserves_chips_and_rotates_the_button() -> None:
    result = play_match(BotPlayer(TAG, samples=32), random_action, hands=60, seed=8, players=6)
    assert result.hands == 60 and len(result.group_nets) == 10
    assert result.hero_net + result.opponents_net == 0
