"""A hand's whole arithmetic (tables/engine/widerpoker/arithmetic.py) and the spin draw.

Seed 001, Prize Pool Allocation, Rake, Jackpots, Notes 1; DESIGN items 11 and 12.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from tables.engine.widerpoker import (
    MAX_STRENGTH,
    NO_HOLD,
    Board,
    HandConditions,
    JackpotFeed,
    SpinJackpot,
    board_grid,
    change_keys,
    default_holds,
    hand_outcome,
    pool_split,
    shuffle_deck,
    spin_jackpot_draw,
    spin_outcomes,
)

SEED = bytes(range(32))


def test_pool_split_sets_jackpots_aside_then_rakes_the_gross() -> None:
    conditions = HandConditions(
        rake_bps=500,
        jackpots=(JackpotFeed("jackpot:1", "royal", 100), JackpotFeed("jackpot:2", "bronze", 35)),
    )
    split = pool_split(12_345, conditions, carry_in_minor=7, spin_award_minor=1_000)
    # 1% of 123.45 = 1.2345 -> 1.23; 0.35% = 0.43207 -> 0.43; rake 5% = 6.1725 -> 6.17.
    assert split.contributions == (("jackpot:1", 123), ("jackpot:2", 43))
    assert split.rake_minor == 617
    assert split.pool_minor == 12_345 - 123 - 43 - 617 + 7 + 1_000


@given(
    gross=st.integers(0, 10**12),
    rake=st.integers(0, 1000),
    rates=st.lists(st.integers(0, 250), max_size=4),
    carry=st.integers(0, 10**6),
    spin=st.integers(0, 10**9),
)
def test_pool_split_never_creates_or_loses_a_cent(
    gross: int, rake: int, rates: list[int], carry: int, spin: int
) -> None:
    conditions = HandConditions(
        rake_bps=rake, jackpots=tuple(JackpotFeed(f"jackpot:{i}", "royal", r) for i, r in enumerate(rates))
    )
    split = pool_split(gross, conditions, carry_in_minor=carry, spin_award_minor=spin)
    assert split.pool_minor + split.rake_minor + split.contributions_minor == gross + carry + spin
    assert split.pool_minor - carry - spin >= gross * 9 // 10 - split.contributions_minor  # Notes 1: >= 90%


def test_conditions_refuse_too_much_for_the_jackpots() -> None:
    with pytest.raises(ValueError, match="more than 1000"):
        HandConditions(rake_bps=0, jackpots=(JackpotFeed("a", "royal", 600), JackpotFeed("b", "gold", 500)))
    with pytest.raises(ValueError, match="rake_bps"):
        HandConditions(rake_bps=1001)
    with pytest.raises(ValueError, match="unknown jackpot kind"):
        JackpotFeed("a", "platinum", 1)


def test_default_holds_follow_b2_and_notes_2() -> None:
    assert default_holds([NO_HOLD, NO_HOLD, 9], [True, False, False]).tolist() == [0, 31, 9]
    with pytest.raises(ValueError):
        default_holds([32], [True])


def royal_board() -> tuple[Board, tuple[int, ...]]:
    """The test seed's board and, for a royal flush it allows, the positions of its cards."""
    for i in range(2000):
        seed = i.to_bytes(32, "big")
        board = Board.from_deck(shuffle_deck(seed))
        grid = board_grid(board)
        found = np.argwhere(grid.strengths == MAX_STRENGTH)
        if len(found):
            return board, tuple(int(p) for p in found[0])
    raise AssertionError("no board with a royal flush among 2000 seeds")


def test_simultaneous_royal_flushes_split_the_royal_jackpot_and_the_remainder_stays() -> None:
    board, royal = royal_board()
    keys = change_keys(SEED)
    others = [(royal[0] + 1) % 10, royal[1], royal[2], royal[3], royal[4]]
    combinations = np.array([royal, royal, others], dtype=np.uint8)
    conditions = HandConditions(
        rake_bps=500,
        jackpots=(JackpotFeed("jackpot:7", "royal", 100, balance_minor=10_000, reset_minor=500),),
    )
    outcome = hand_outcome(
        board_grid(board),
        keys,
        combinations=combinations,
        hold_masks=[31, 31, 31],
        connected=[True, True, True],
        draws_bought=[1, 1, 1],
        paid_minor=[100, 100, 100],
        conditions=conditions,
    )
    (award,) = outcome.royal_awards
    assert award.amount_minor == 10_000 + 3  # balance + 1% of 3.00
    assert award.winners == (0, 1)
    assert (award.share_minor, award.remainder_minor) == (5_001, 1)
    assert award.balance_after_minor == 501
    assert outcome.royal_prizes_minor.tolist() == [5_001, 5_001, 0]
    assert outcome.scores.places.tolist()[:2] == [1, 1]
    assert int(outcome.prizes_minor.sum()) + outcome.breakage_minor == outcome.split.pool_minor


def test_no_royal_flush_no_royal_award() -> None:
    board, royal = royal_board()
    combinations = np.array([[(royal[0] + 1) % 10, *royal[1:]]] * 2, dtype=np.uint8)
    combinations[1, 0] = (royal[0] + 2) % 10
    outcome = hand_outcome(
        board_grid(board),
        change_keys(SEED),
        combinations=combinations,
        hold_masks=[31, 31],
        connected=[True, True],
        draws_bought=[1, 1],
        paid_minor=[100, 100],
        conditions=HandConditions(rake_bps=0, jackpots=(JackpotFeed("jackpot:7", "royal", 100, 9_999),)),
    )
    assert outcome.royal_awards == ()
    assert outcome.royal_prizes_minor.tolist() == [0, 0]


def test_spin_table_is_the_seeds_one_in_6000_300_30() -> None:
    denominator, widths = spin_outcomes()
    assert denominator == 6000
    assert dict(widths) == {SpinJackpot.GOLD: 1, SpinJackpot.SILVER: 20, SpinJackpot.BRONZE: 200}
    with pytest.raises(ValueError, match="less than 1"):
        spin_outcomes({SpinJackpot.GOLD: 2, SpinJackpot.SILVER: 2})
    with pytest.raises(ValueError):
        spin_outcomes({SpinJackpot.GOLD: 1})


def spin_counts(n: int, one_in: dict[SpinJackpot, int] | None = None) -> list[int]:
    counts = {None: 0, SpinJackpot.GOLD: 0, SpinJackpot.SILVER: 0, SpinJackpot.BRONZE: 0}
    for i in range(n):
        seed = i.to_bytes(32, "big")
        counts[spin_jackpot_draw(seed) if one_in is None else spin_jackpot_draw(seed, one_in)] += 1
    return [counts[SpinJackpot.GOLD], counts[SpinJackpot.SILVER], counts[SpinJackpot.BRONZE], counts[None]]


SPEC = np.array([1 / 6000, 1 / 300, 1 / 30, 1 - 1 / 6000 - 1 / 300 - 1 / 30])


@pytest.mark.slow
def test_spin_draw_frequencies_over_a_million_seeds_pass_chi_square() -> None:
    n = 1_000_000
    observed = spin_counts(n)
    assert chisquare(observed, SPEC * n).pvalue > 0.001


@settings(max_examples=1, deadline=None)
@given(st.just(200_000))
def test_a_wrong_spin_probability_fails_the_same_chi_square(n: int) -> None:
    # Negative control: bronze drawn 1 in 25 instead of 1 in 30 is caught.
    observed = spin_counts(n, {SpinJackpot.GOLD: 6000, SpinJackpot.SILVER: 300, SpinJackpot.BRONZE: 25})
    assert chisquare(observed, SPEC * n).pvalue < 1e-6
