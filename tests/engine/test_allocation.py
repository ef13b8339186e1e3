"""Ranking, allocation and rake (seed 001, Prize Pool Allocation, Rake, Notes 1; DESIGN 11)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tables.engine.widerpoker import (
    AllocationConfig,
    allocate_pool,
    paid_places,
    prize_ladder,
    rake_minor,
    rank_places,
    split_evenly,
)

strength_lists = st.lists(st.integers(1, 40), min_size=1, max_size=300)
configs = st.builds(
    AllocationConfig,
    paid_fraction_bps=st.integers(1, 10_000),
    min_prize_minor=st.integers(0, 5_000),
)
pools = st.integers(0, 10**9)


def brute_places(strengths: list[int]) -> list[int]:
    return [1 + sum(other > mine for other in strengths) for mine in strengths]


@given(st.lists(st.integers(0, 7_462), max_size=200))
def test_places_are_one_plus_the_number_of_strictly_better_hands(strengths: list[int]) -> None:
    assert rank_places(np.array(strengths, dtype=np.int64)).tolist() == brute_places(strengths)


def test_places_use_competition_ranking_with_shared_best_place() -> None:
    assert rank_places(np.array([5, 9, 9, 1, 7])).tolist() == [4, 1, 1, 5, 3]


def test_places_handle_half_a_million_hands_and_huge_values() -> None:
    rng = np.random.default_rng(1)
    strengths = rng.integers(1, 7_463, 500_000).astype(np.uint16)
    places = rank_places(strengths)
    order = np.argsort(-strengths.astype(np.int64), kind="stable")
    # Walking from the best hand down, a place changes exactly when the strength drops.
    sorted_places = places[order]
    sorted_strengths = strengths[order]
    assert sorted_places[0] == 1
    drops = np.flatnonzero(np.diff(sorted_strengths.astype(np.int64)) != 0) + 1
    assert np.array_equal(sorted_places[drops], drops + 1)
    big = np.array([2**40, 5, 2**40, 2**41])
    assert rank_places(big).tolist() == [2, 4, 2, 1]


def test_places_reject_negative_or_non_integer_strengths() -> None:
    with pytest.raises(ValueError):
        rank_places(np.array([1, -1]))
    with pytest.raises(ValueError):
        rank_places(np.array([1.5]))
    with pytest.raises(ValueError):
        rank_places(np.ones((2, 2), dtype=np.int64))


@settings(max_examples=300)
@given(pools, strength_lists, configs)
def test_prizes_plus_remainder_cents_always_equal_the_pool(
    pool: int, strengths: list[int], config: AllocationConfig
) -> None:
    result = allocate_pool(pool, np.array(strengths), config)
    assert int(result.prizes_minor.sum()) + result.breakage_minor == pool
    assert int(result.place_prizes_minor.sum()) == pool
    assert result.prizes_minor.dtype == np.int64
    assert (result.prizes_minor >= 0).all()


@settings(max_examples=300)
@given(pools, strength_lists, configs)
def test_a_worse_hand_never_gets_more_and_tied_hands_get_exactly_the_same(
    pool: int, strengths: list[int], config: AllocationConfig
) -> None:
    prizes = allocate_pool(pool, np.array(strengths), config).prizes_minor.tolist()
    for i, mine in enumerate(strengths):
        for j, other in enumerate(strengths):
            if mine > other:
                assert prizes[i] >= prizes[j]
            if mine == other:
                assert prizes[i] == prizes[j]


@settings(max_examples=300)
@given(pools, st.integers(1, 5_000), configs)
def test_every_paid_place_gets_at_least_the_minimum_and_better_places_more(
    pool: int, entries: int, config: AllocationConfig
) -> None:
    ladder = prize_ladder(pool, entries, config).tolist()
    assert 1 <= len(ladder) <= entries
    assert sum(ladder) == pool
    assert all(a >= b for a, b in itertools.pairwise(ladder))
    if pool >= config.min_prize_minor:
        assert all(prize >= config.min_prize_minor for prize in ladder)


@settings(max_examples=200)
@given(pools, strength_lists, configs)
def test_tied_entries_share_the_paid_slots_they_occupy_and_the_rest_is_breakage(
    pool: int, strengths: list[int], config: AllocationConfig
) -> None:
    result = allocate_pool(pool, np.array(strengths), config)
    ladder = result.place_prizes_minor.tolist()
    breakage = 0
    for value in set(strengths):
        members = [i for i, s in enumerate(strengths) if s == value]
        place = 1 + sum(s > value for s in strengths)
        shared = sum(ladder[place - 1 : place - 1 + len(members)])
        share, remainder = divmod(shared, len(members))
        assert all(result.prizes_minor[i] == share for i in members)
        breakage += remainder
    assert result.breakage_minor == breakage


def test_default_pays_fifteen_percent_with_at_least_one_place() -> None:
    config = AllocationConfig()
    assert paid_places(1_000, 10**6, config) == 150
    assert paid_places(6, 10**6, config) == 1  # floor(0.9) -> still one place
    assert paid_places(1, 10**6, config) == 1


def test_the_minimum_prize_reduces_the_number_of_paid_places() -> None:
    config = AllocationConfig(paid_fraction_bps=5_000, min_prize_minor=300)
    assert paid_places(100, 1_000, config) == 3
    ladder = prize_ladder(1_000, 100, config).tolist()
    assert len(ladder) == 3 and min(ladder) >= 300 and sum(ladder) == 1_000
    assert prize_ladder(100, 100, config).tolist() == [100]  # below one minimum: all to one


def test_prizes_increase_towards_the_first_place() -> None:
    ladder = prize_ladder(1_000_000, 1_000, AllocationConfig()).tolist()
    assert len(ladder) == 150
    assert ladder[0] > ladder[1] > ladder[10] > ladder[-1] > 0


def test_a_tie_straddling_the_last_paid_place_shares_only_the_paid_slots() -> None:
    config = AllocationConfig(paid_fraction_bps=5_000)  # 4 entries: 2 paid places
    result = allocate_pool(1_000, np.array([9, 5, 5, 5]), config)
    first, second = result.place_prizes_minor.tolist()
    assert result.prizes_minor.tolist() == [first, second // 3, second // 3, second // 3]
    assert result.breakage_minor == second % 3


@pytest.mark.parametrize(
    "config",
    [{"paid_fraction_bps": 0}, {"paid_fraction_bps": 10_001}, {"min_prize_minor": -1}],
)
def test_allocation_config_rejects_values_out_of_range(config: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        AllocationConfig(**config)


def test_allocation_rejects_a_negative_pool_or_no_entries() -> None:
    with pytest.raises(ValueError):
        allocate_pool(-1, np.array([1, 2]))
    with pytest.raises(ValueError):
        allocate_pool(100, np.array([], dtype=np.int64))


def test_rake_is_rounded_down_to_the_cent() -> None:
    assert rake_minor(12_345, 500) == 617  # 5% of 123.45 = 6.1725
    assert rake_minor(199, 1_000) == 19  # 10% of 1.99 = 0.199
    assert rake_minor(0, 1_000) == 0
    assert rake_minor(10**15 + 7, 333) == (10**15 + 7) * 333 // 10_000


@given(st.integers(0, 10**12), st.integers(0, 1_000))
def test_rake_never_exceeds_the_exact_share_by_a_cent(gross: int, rate: int) -> None:
    rake = rake_minor(gross, rate)
    assert rake * 10_000 <= gross * rate < (rake + 1) * 10_000


@pytest.mark.parametrize(("gross", "rate"), [(100, 1_001), (100, -1), (-1, 100), (100, 2_000)])
def test_a_rake_rate_above_ten_percent_or_a_negative_amount_raises(gross: int, rate: int) -> None:
    with pytest.raises(ValueError):
        rake_minor(gross, rate)


@given(st.integers(0, 10**12), st.integers(1, 10_000))
def test_split_evenly_returns_equal_shares_and_a_small_remainder(amount: int, parts: int) -> None:
    share, remainder = split_evenly(amount, parts)
    assert share * parts + remainder == amount
    assert 0 <= remainder < parts


def test_split_evenly_rejects_zero_parts_or_a_negative_amount() -> None:
    with pytest.raises(ValueError):
        split_evenly(100, 0)
    with pytest.raises(ValueError):
        split_evenly(-1, 2)


@given(pools, strength_lists)
def test_allocation_is_invariant_to_the_order_of_entries(pool: int, strengths: list[int]) -> None:
    assume(len(strengths) > 1)
    forward = allocate_pool(pool, np.array(strengths))
    backward = allocate_pool(pool, np.array(strengths[::-1]))
    assert forward.prizes_minor.tolist() == backward.prizes_minor.tolist()[::-1]
    assert forward.breakage_minor == backward.breakage_minor
