"""BigHoldem scoring (seed 004): chip value schedule, elimination, leaderboard."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tables.engine.holdem.bigholdem import (
    HandResult,
    TableState,
    blind_level,
    eliminate,
    is_over,
    leaderboard,
    practice_draws,
    settle_hand,
    start_table,
    starting_stack_minor,
)


def test_starting_sum_is_1000_up_to_five_players_and_2000_from_six() -> None:
    assert [starting_stack_minor(n) for n in range(2, 11)] == [1000] * 4 + [2000] * 5


def test_the_big_blind_is_twice_the_minimum_and_the_ante_one_minimum() -> None:
    level = blind_level(base_minor=10, initial_players=10, remaining_players=10, ante=True)
    assert (level.minimum_minor, level.small_blind_minor, level.big_blind_minor, level.ante_minor) == (10, 10, 20, 10)
    assert blind_level(base_minor=10, initial_players=10, remaining_players=10).ante_minor == 0


@given(st.integers(1, 1000), st.integers(2, 10))
def test_the_minimum_never_falls_as_players_are_eliminated(base: int, initial: int) -> None:
    minima = [
        blind_level(base_minor=base, initial_players=initial, remaining_players=r).minimum_minor
        for r in range(initial, 0, -1)
    ]
    assert minima == sorted(minima)
    assert minima[0] == base
    assert minima[-1] == base * initial


def test_half_the_table_gone_doubles_the_minimum() -> None:
    assert blind_level(base_minor=20, initial_players=10, remaining_players=5).minimum_minor == 40


def test_a_stack_below_twice_the_minimum_is_eliminated_and_exactly_twice_survives() -> None:
    # Level with 4 of 4 players: minimum 10, big blind 20.
    assert eliminate({"a": 20, "b": 20, "c": 500, "d": 500}, base_minor=10, initial_players=4) == ()
    assert eliminate({"a": 19, "b": 26, "c": 500, "d": 500}, base_minor=10, initial_players=4) == ("a",)


def test_eliminations_cascade_with_the_raised_minimum() -> None:
    # 4 players, base 10: bb 20 at 4 left, 26 at 3 left (minimum 13), 40 at 2 left.
    stacks = {"a": 19, "b": 25, "c": 35, "d": 3000}
    assert eliminate(stacks, base_minor=10, initial_players=4) == ("a", "b", "c")


def test_the_largest_stack_is_never_eliminated() -> None:
    assert eliminate({"a": 5, "b": 7}, base_minor=10, initial_players=2) == ("a",)


def test_a_hand_moves_chips_counts_hands_and_eliminates() -> None:
    table = start_table(["ada", "bo", "cy"])
    result = HandResult(invested_minor={"ada": 990, "bo": 990, "cy": 0}, won_minor={"bo": 1980})
    after = settle_hand(table, result)
    assert after.stacks == (("bo", 1990), ("cy", 1000))
    assert after.eliminated == (("ada", 10),)
    assert dict(after.hands) == {"ada": 1, "bo": 1, "cy": 1}
    assert dict(after.net_minor) == {"ada": -990, "bo": 990, "cy": 0}
    assert after.level.big_blind_minor == 30  # minimum 10 * 3 // 2 = 15


@pytest.mark.parametrize(
    ("invested", "won", "message"),
    [
        ({"ada": 10, "zed": 10}, {"ada": 20}, "not playing"),
        ({"ada": 10, "bo": 10}, {"ada": 19}, "shared out"),
        ({"ada": 10, "bo": 10}, {"cy": 20}, "dealt in"),
        ({"ada": 1001, "bo": 1001}, {"ada": 2002}, "stack"),
        ({"ada": -5, "bo": 5}, {"ada": 0}, ">= 0"),
    ],
)
def test_settle_hand_refuses_an_impossible_hand(invested: dict[str, int], won: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        settle_hand(start_table(["ada", "bo", "cy"]), HandResult(invested, won))


@pytest.mark.parametrize("names", [["solo"], [f"p{i}" for i in range(11)], ["a", "a", "b"]])
def test_start_table_refuses_bad_player_lists(names: list[str]) -> None:
    with pytest.raises(ValueError, match=r"players|distinct"):
        start_table(names)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"base_minor": 0, "initial_players": 4, "remaining_players": 4},
        {"base_minor": 10, "initial_players": 11, "remaining_players": 4},
        {"base_minor": 10, "initial_players": 4, "remaining_players": 5},
        {"base_minor": 10, "initial_players": 4, "remaining_players": 0},
    ],
)
def test_blind_level_refuses_bad_arguments(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        blind_level(**kwargs)


@st.composite
def games(draw: st.DrawFn) -> tuple[TableState, list[TableState]]:
    """A game of random hands: random investments up to each stack, pot to random winners."""
    players = draw(st.integers(2, 10))
    table = start_table([f"p{i}" for i in range(players)], ante=draw(st.booleans()))
    history = [table]
    for _ in range(draw(st.integers(1, 30))):
        if table.finished:
            break
        stacks = dict(table.stacks)
        invested = {name: draw(st.integers(0, stack)) for name, stack in stacks.items()}
        pot = sum(invested.values())
        winners = draw(st.lists(st.sampled_from(sorted(stacks)), min_size=1, max_size=3, unique=True))
        won = {name: pot // len(winners) for name in winners}
        won[winners[0]] += pot - sum(won.values())
        table = settle_hand(table, HandResult(invested, won))
        history.append(table)
    return table, history


@settings(max_examples=150, deadline=None)
@given(games())
def test_chips_are_conserved_and_every_survivor_can_post_the_big_blind(
    game: tuple[TableState, list[TableState]],
) -> None:
    table, history = game
    start = starting_stack_minor(table.initial_players)
    for state in history:
        assert len(state.stacks) >= 1
        total = sum(s for _, s in state.stacks) + sum(s for _, s in state.eliminated)
        assert total == start * state.initial_players
        largest = max(s for _, s in state.stacks)
        assert all(s >= state.level.big_blind_minor or s == largest for _, s in state.stacks)
    net = dict(table.net_minor)
    assert sum(net.values()) == 0
    final = dict(table.stacks) | dict(table.eliminated)
    assert all(net[name] == final[name] - start for name in net)


@settings(max_examples=150, deadline=None)
@given(games())
def test_leaderboard_is_sorted_by_average_win_per_hand(game: tuple[TableState, list[TableState]]) -> None:
    table, _ = game
    board = leaderboard(dict(table.net_minor), dict(table.hands))
    assert [s.score for s in board] == sorted((s.score for s in board), reverse=True)
    for s in board:
        assert s.score == (Fraction(s.net_minor, s.hands) if s.hands else 0)
        assert s.place == 1 + sum(other.score > s.score for other in board)


def test_equal_scores_share_a_place_and_more_hands_list_first() -> None:
    board = leaderboard({"a": 10, "b": 20, "c": -5}, {"a": 1, "b": 2, "c": 0})
    assert [(s.place, s.player) for s in board] == [(1, "b"), (1, "a"), (3, "c")]
    assert board[2].score == 0


def test_leaderboard_refuses_mismatched_players() -> None:
    with pytest.raises(ValueError, match="same players"):
        leaderboard({"a": 1}, {"b": 1})


def test_the_game_ends_on_the_hand_limit_the_time_limit_or_one_player_left() -> None:
    table = start_table(["ada", "bo", "cy"])
    assert not is_over(table, max_hands=1, elapsed_seconds=0.0, max_seconds=60.0)
    after = settle_hand(table, HandResult({"ada": 20, "bo": 20, "cy": 0}, {"ada": 40}))
    assert after.hands_dealt == 1
    assert is_over(after, max_hands=1, elapsed_seconds=0.0, max_seconds=None)
    assert not is_over(after, max_hands=None, elapsed_seconds=59.9, max_seconds=60.0)
    assert is_over(after, max_hands=None, elapsed_seconds=60.0, max_seconds=60.0)
    last = settle_hand(after, HandResult({"ada": 1000, "bo": 980, "cy": 1000}, {"ada": 2980}))
    assert last.finished
    assert is_over(last, max_hands=None, elapsed_seconds=0.0, max_seconds=None)
    with pytest.raises(ValueError, match=">= 0"):
        is_over(table, max_hands=-1, elapsed_seconds=0.0, max_seconds=None)


def test_a_practice_games_set_up_is_a_function_of_its_seed() -> None:
    """The person's seat and the bots' personalities (``practice_draws``) replay from the
    seed; every seat and every personality can come out."""
    seeds = [bytes([k]) * 32 for k in range(200)]
    draws = [practice_draws(seed, 6, interactive=True, personalities=5) for seed in seeds]
    assert draws == [practice_draws(seed, 6, interactive=True, personalities=5) for seed in seeds]
    assert {d.person for d in draws} == set(range(6))
    assert {k for d in draws for k in d.personalities} == set(range(5))
    assert all(len(d.personalities) == 5 for d in draws)
    automatic = practice_draws(seeds[0], 4, interactive=False, personalities=5)
    assert automatic.person is None and len(automatic.personalities) == 4
    with pytest.raises(ValueError):
        practice_draws(seeds[0], 11, interactive=True, personalities=5)
    with pytest.raises(ValueError):
        practice_draws(b"short", 4, interactive=True, personalities=5)
