"""Stakes, blinds and the dealing contract (seed 003, The First round)."""

from __future__ import annotations

import pytest

from tables.engine.holdem import Betting, SetupError, Structure, deal_positions, small_blind_for


def test_the_small_blind_of_a_5_10_game_is_rounded_down_to_2() -> None:
    # seed 003, The First round: "at 5/10 ... the small blind should be 2.5 ... would post 2".
    assert small_blind_for(5) == 2
    assert Structure.fixed_limit(5, 10).small_blind == 2


def test_a_10_20_limit_game_bets_10_on_the_first_two_rounds_and_20_after() -> None:
    structure = Structure.fixed_limit(10, 20)
    assert [structure.street_bet(s) for s in range(4)] == [10, 10, 20, 20]
    assert structure.big_blind == 10 and structure.small_blind == 5


def test_the_small_blind_may_be_set_explicitly() -> None:
    assert Structure.fixed_limit(5, 10, small_blind=3).small_blind == 3


def test_the_small_blind_is_rounded_to_the_chip_unit() -> None:
    assert small_blind_for(30, chip=25) == 0
    assert small_blind_for(100, chip=25) == 50


def test_no_limit_and_pot_limit_use_the_big_blind_as_minimum_bet() -> None:
    assert Structure.no_limit(1, 2).small_bet == 2
    assert Structure.pot_limit(5, 10, min_bet=20).big_bet == 20
    assert Structure.pot_limit(5, 10).betting is Betting.POT_LIMIT


@pytest.mark.parametrize(
    "kwargs",
    [
        {"small_blind": 3, "big_blind": 2},
        {"small_blind": 1, "big_blind": 0},
        {"small_blind": 1, "big_blind": 2, "rake_bps": 1_001},
        {"small_blind": -1, "big_blind": 2},
    ],
)
def test_inconsistent_stakes_are_refused(kwargs: dict[str, int]) -> None:
    with pytest.raises(SetupError) as error:
        Structure.no_limit(**kwargs)
    assert error.value.code == "invalid_setup"


def test_the_rake_has_no_flop_no_drop_and_a_cap() -> None:
    structure = Structure.no_limit(1, 2, rake_bps=500, rake_cap=3)
    assert structure.rake(100, flop_dealt=False) == 0
    assert structure.rake(40, flop_dealt=True) == 2
    assert structure.rake(1_000, flop_dealt=True) == 3


def test_the_dealing_contract_alternates_hole_cards_then_burns_and_deals_the_board() -> None:
    p = deal_positions(3)
    assert p.holes == ((0, 3), (1, 4), (2, 5))
    assert p.burns == (6, 10, 12)
    assert p.flop == (7, 8, 9) and p.turn == 11 and p.river == 13
    with pytest.raises(SetupError):
        deal_positions(11)


def test_the_hand_deals_by_the_contract_heads_up_big_blind_first() -> None:
    from tables.engine.holdem import HandSetup, start_hand

    deck = tuple(range(51, -1, -1))
    state = start_hand(HandSetup(Structure.no_limit(1, 2), (100, 100), 0, deck))
    assert state.seats == (1, 0)
    assert state.holes == ((deck[0], deck[2]), (deck[1], deck[3]))
    from .helpers import check_down

    state = check_down(state)
    p = deal_positions(2)
    assert state.board == tuple(deck[k] for k in p.board)


@pytest.mark.parametrize(
    ("stacks", "button", "deck", "waiting"),
    [
        ((100,), 0, tuple(range(52)), frozenset[int]()),
        ((100, 100), 0, (*range(51), 0), frozenset[int]()),
        ((100, 0), 0, tuple(range(52)), frozenset[int]()),
        ((100, None, 100), 1, tuple(range(52)), frozenset[int]()),
        ((100, 100, 100), 0, tuple(range(52)), frozenset({0})),
        ((100, 100, 100), 0, tuple(range(52)), frozenset({1, 2})),
    ],
)
def test_invalid_setups_are_refused(
    stacks: tuple[int | None, ...], button: int, deck: tuple[int, ...], waiting: frozenset[int]
) -> None:
    from tables.engine.holdem import HandSetup, start_hand

    with pytest.raises(SetupError) as error:
        start_hand(HandSetup(Structure.no_limit(1, 2), stacks, button, deck, waiting=waiting))
    assert error.value.code == "invalid_setup"
