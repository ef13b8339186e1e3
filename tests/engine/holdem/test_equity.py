"""Equity: exact enumeration against a brute force with phevaluator, Monte Carlo against exact."""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tables.engine import card_code, parse_cards
from tables.engine.holdem.equity import DEFAULT_SAMPLES, EXACT_LIMIT, equity

phevaluator = pytest.importorskip("phevaluator")


def cards(codes: str) -> tuple[int, ...]:
    return parse_cards(codes.split())


def brute_force(holes: list[tuple[int, ...]], board: tuple[int, ...]) -> list[Fraction]:
    """Exact shares by evaluating every board completion with phevaluator (rank 1 = best)."""
    used = {c for h in holes for c in h} | set(board)
    rest = [c for c in range(52) if c not in used]
    shares = [Fraction(0)] * len(holes)
    count = 0
    for extra in itertools.combinations(rest, 5 - len(board)):
        full = [*board, *extra]
        values = [phevaluator.evaluate_cards(*full, *h) for h in holes]
        best = min(values)
        winners = [i for i, v in enumerate(values) if v == best]
        for i in winners:
            shares[i] += Fraction(1, len(winners))
        count += 1
    return [s / count for s in shares]


@pytest.mark.parametrize(
    ("holes", "board"),
    [
        (["As Ad", "Ks Kd"], "2c 7d 9h"),
        (["Ah Kh", "Qc Qd", "7s 6s"], "Jh 8s 5s"),
        (["Ac Kd", "As Kc", "2h 3h"], "Qh Jh Td"),  # the broadway straight is shared
        (["9c 9d", "8h 8s", "Ac 2d", "Kc Qs"], "9h 8c 2s 3d"),
        (["Ah 5h", "Ad 5d"], "Kc Qc Jc Tc 2d"),  # both make broadway with the ace: a split
    ],
)
def test_exact_equity_equals_a_brute_force_with_phevaluator(holes: list[str], board: str) -> None:
    hole_ids = [cards(h) for h in holes]
    result = equity(hole_ids, cards(board))
    assert result.method == "exact"
    expected = brute_force(hole_ids, cards(board))
    assert list(result.equities) == pytest.approx([float(e) for e in expected], abs=1e-15)


def test_pre_flop_heads_up_is_exact_over_all_1_712_304_boards() -> None:
    result = equity([cards("Ah Ad"), cards("Kh Kc")])
    assert (result.method, result.samples) == ("exact", 1_712_304)
    # Values from a full brute force with phevaluator (see the slow test below).
    assert result.equities[0] == pytest.approx(0.8194605046767397, abs=1e-12)
    assert result.players[0].ties == result.players[1].ties
    assert result.players[0].wins + result.players[1].wins + result.players[0].ties == 1_712_304


@pytest.mark.slow
def test_aces_against_kings_pre_flop_equals_the_brute_force() -> None:
    # About 12 s: 3.4 million phevaluator calls. AsAd-KsKd (0.826366) and AhAd-KsKc
    # (0.812555) were checked the same way once (docs/holdem.md, Equity).
    holes = [cards("Ah Ad"), cards("Kh Kc")]
    expected = brute_force(holes, ())
    assert list(equity(holes).equities) == pytest.approx([float(e) for e in expected], abs=1e-15)


def test_a_royal_flush_on_the_board_splits_the_pot_evenly() -> None:
    result = equity([cards("2c 3d"), cards("4h 5s"), cards("7c 8d")], cards("As Ks Qs Js Ts"))
    assert list(result.equities) == pytest.approx([1 / 3] * 3)
    assert [(p.wins, p.ties) for p in result.players] == [(0, 1)] * 3


def test_three_way_tie_shares_are_thirds_and_two_way_halves() -> None:
    # River: players 0 and 1 chop the broadway straight, player 2 loses.
    result = equity([cards("Ac 2d"), cards("Ad 3c"), cards("7h 7d")], cards("Kh Qs Jd Tc 4s"))
    assert result.equities == (0.5, 0.5, 0.0)
    assert result.samples == 1


def test_ten_players_pre_flop_is_exact_and_sums_to_one() -> None:
    hands = ["Ah Kh", "2c 2d", "Qs Js", "Tc 9c", "8d 8h", "7s 6s", "5c 4c", "3h 3d", "Jd Td", "Kc Qc"]
    result = equity([cards(h) for h in hands])
    assert (result.method, result.samples) == ("exact", 201_376)
    assert sum(result.equities) == pytest.approx(1.0, abs=1e-12)


def test_monte_carlo_is_within_four_standard_errors_of_exact() -> None:
    holes = [cards("Ah Kh"), cards("2c 2d"), cards("Qs Js")]
    exact = equity(holes)
    estimate = equity(holes, samples=50_000, seed=7)
    assert estimate.method == "monte-carlo"
    assert estimate.samples == 50_000
    for e, m in zip(exact.equities, estimate.equities, strict=True):
        assert abs(e - m) < 4 * (e * (1 - e) / 50_000) ** 0.5


def test_aces_against_one_unknown_hand_is_about_85_percent() -> None:
    # AA against a random hand: 85.2% (a well-known figure); 100,000 deals, 4 sigma ~ 0.0045.
    result = equity([cards("As Ah"), None], seed=2024)
    assert result.method == "monte-carlo"
    assert result.samples == DEFAULT_SAMPLES
    assert result.equities[0] == pytest.approx(0.852, abs=0.0045)


def test_unknown_opponents_on_the_river_match_an_exact_count() -> None:
    # One unknown opponent on the river: exact = average over his 990 possible hands.
    mine, board = cards("Ah Qd"), cards("Ac 9h 7d 4s 2c")
    rest = [c for c in range(52) if c not in {*mine, *board}]
    shares = [float(brute_force([mine, other], board)[0]) for other in itertools.combinations(rest, 2)]
    exact = sum(shares) / len(shares)
    result = equity([mine, None], board, samples=40_000, seed=3)
    assert abs(result.equities[0] - exact) < 4 * (exact * (1 - exact) / 40_000) ** 0.5


@pytest.mark.parametrize("board", ["Ac 9h 7d 4s 2c", "Ac 9h 7d 4s"])
def test_one_unknown_hand_after_the_flop_is_enumerated_exactly(board: str) -> None:
    # Exact = the average over every hand the opponent may hold (each equally likely)
    # of the exact equity against that hand.
    mine, board_ids = cards("Ah Qd"), cards(board)
    rest = [c for c in range(52) if c not in {*mine, *board_ids}]
    shares = [brute_force([mine, other], board_ids)[0] for other in itertools.combinations(rest, 2)]
    result = equity([mine, None], board_ids)
    assert result.method == "exact"
    assert result.samples == len(shares) * comb(len(rest) - 2, 5 - len(board_ids))
    assert result.equities[0] == pytest.approx(float(sum(shares) / len(shares)), abs=1e-12)


def test_two_unknown_hands_on_the_river_are_exact_and_symmetric() -> None:
    result = equity([cards("Ah Qd"), None, None], cards("Ac 9h 7d 4s 2c"))
    assert (result.method, result.samples) == ("exact", 990 * 903)
    assert result.players[1] == result.players[2]
    estimate = equity([cards("Ah Qd"), None, None], cards("Ac 9h 7d 4s 2c"), samples=50_000, seed=5)
    for e, m in zip(result.equities, estimate.equities, strict=True):
        assert abs(e - m) < 4 * (e * (1 - e) / 50_000) ** 0.5


def test_monte_carlo_is_deterministic_given_the_seed() -> None:
    holes: list[Any] = [cards("Ah Kh"), None, None]
    first = equity(holes, samples=5_000, seed=11)
    assert equity(holes, samples=5_000, seed=11) == first
    assert equity(holes, samples=5_000, seed=np.random.default_rng(11)) == first
    assert equity(holes, samples=5_000, seed=12) != first


def test_dead_cards_are_removed_from_the_deck() -> None:
    # With every other heart dead, the hearts flush draw can no longer come.
    holes = [cards("Ah Kh"), cards("Qc Qd")]
    board = cards("2h 7h 9c")
    dead = cards("3h 4h 5h 6h 8h 9h Th Jh Qh")
    live = equity(holes, board)
    assert equity(holes, board, dead).equities[0] < live.equities[0]
    assert equity(holes, board, dead).samples == 630  # C(36, 2) after 16 known cards


def test_card_codes_are_accepted_as_well_as_ids() -> None:
    by_code = equity([["As", "Ad"], ["Ks", "Kd"]], ["2c", "7d", "9h"])
    by_id = equity([cards("As Ad"), cards("Ks Kd")], cards("2c 7d 9h"))
    assert by_code == by_id


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([cards("As Ad")],), {}, "2..10 players"),
        (([cards("As Ad")] * 11,), {}, "2..10 players"),
        (([cards("As Ad"), cards("As Kd")],), {}, "twice"),
        (([cards("As Ad"), cards("Ks Kd")], cards("As")), {}, "0, 3, 4 or 5"),
        (([cards("As Ad"), cards("Ks Kd")], cards("2c 3c 4c 5c 6c 7c")), {}, "0, 3, 4 or 5"),
        (([cards("As Ad"), cards("Ks Kd")], cards("2c 3c 4c"), cards("2c")), {}, "twice"),
        (([cards("As Ad"), (1, 2, 3)],), {}, "two cards"),
        (([cards("As Ad"), (1, 52)],), {}, "0..51"),
        (([cards("As Ad"), ("Ks", "Xx")],), {}, "Xx"),
        (([None, None],), {"seed": 1}, "known"),
        (([cards("As Ad"), None],), {}, "seed"),  # pre-flop: too many outcomes for exact
        (([cards("As Ad"), cards("Ks Kd")],), {"samples": 0, "seed": 1}, "positive"),
        (([cards("As Ad"), cards("Ks Kd")],), {"samples": 10}, "seed"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(args: tuple[Any, ...], kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        equity(*args, **kwargs)


def test_exact_work_limit_covers_every_known_pre_flop_table() -> None:
    assert all(comb(52 - 2 * n, 5) * n <= EXACT_LIMIT for n in range(2, 11))


@settings(max_examples=40, deadline=None)
@given(st.permutations(range(52)), st.integers(2, 4), st.sampled_from([4, 5]))
def test_turn_and_river_equity_equals_the_brute_force(deck: list[int], players: int, board_size: int) -> None:
    holes = [tuple(deck[2 * i : 2 * i + 2]) for i in range(players)]
    board = tuple(deck[2 * players : 2 * players + board_size])
    result = equity(holes, board)
    expected = brute_force(holes, board)
    assert list(result.equities) == pytest.approx([float(e) for e in expected], abs=1e-15)
    assert sum(result.equities) == pytest.approx(1.0)
    codes = [card_code(c) for c in board]
    assert len(codes) == board_size
