"""PHH hand histories: written by us, read by pokerkit and by us, same finishing stacks."""

from __future__ import annotations

import warnings

import pokerkit
import pytest

from tables.engine.holdem import (
    ActionKind,
    Betting,
    HandState,
    PhhError,
    Structure,
    hand_to_phh,
    hide_holes,
    play_showdown,
    replay_phh,
)

from .differential import compare_hand
from .helpers import act, check_down, new_hand


def pokerkit_finishing_stacks(text: str) -> tuple[int, ...]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        states = list(pokerkit.HandHistory.loads(text))
    assert not states[-1].status
    return tuple(states[-1].stacks)


def _played(state: HandState) -> HandState:
    return play_showdown(check_down(state))


def test_a_hand_is_written_as_phh_with_players_in_dealing_order() -> None:
    state = new_hand(Structure.no_limit(1, 2), [None, 100, 200], button=1, holes=["AcAd", "KcKd"])
    state = _played(act(state, ActionKind.RAISE, 6))
    text = hand_to_phh(state, hand=7, table="T1")
    assert "variant = 'NT'" in text
    assert "'d dh p1 AcAd'" in text  # heads-up: p1 is the big blind, seat 3
    assert "'p2 cbr 6'" in text
    assert "seats = [3, 2]" in text and "seat_count = 3" in text
    assert replay_phh(text) == state.stacks == pokerkit_finishing_stacks(text)


def test_pot_limit_is_written_as_nt_with_an_extension_field() -> None:
    state = _played(new_hand(Structure.pot_limit(1, 2), [100] * 3, button=0))
    text = hand_to_phh(state)
    assert "_betting_structure = 'pot-limit'" in text
    assert replay_phh(text) == state.stacks == pokerkit_finishing_stacks(text)


def test_replay_enforces_the_pot_limit_of_the_extension_field() -> None:
    state = new_hand(Structure.pot_limit(1, 2), [100] * 3, button=0)
    text = hand_to_phh(_played(state)).replace("'p3 cc'", "'p3 cbr 50'", 1)
    with pytest.raises(Exception) as error:
        replay_phh(text)
    assert getattr(error.value, "code", "") == "amount_too_large"


@pytest.mark.parametrize("seed", range(80))
def test_random_hands_round_trip_through_pokerkit_and_our_reader(seed: int) -> None:
    report = compare_hand(10_000 + seed)
    text = hand_to_phh(report.state)
    assert replay_phh(text) == report.state.stacks
    assert pokerkit_finishing_stacks(text) == report.state.stacks


def test_a_published_style_fixed_limit_history_replays() -> None:
    text = """
variant = 'FT'
antes = [0, 0]
blinds_or_straddles = [1, 2]
small_bet = 2
big_bet = 4
starting_stacks = [200, 200]
actions = ['d dh p1 AcAs', 'd dh p2 7h6h', 'p2 cbr 4', 'p1 cbr 6', 'p2 f']
"""
    assert replay_phh(text) == (204, 196) == pokerkit_finishing_stacks(text)


def test_a_fixed_limit_phh_allows_four_raises_pre_flop_unless_our_caps_are_given() -> None:
    # PHH's FT (pokerkit) counts four raises over the blind; seed 003 counts the blind as the bet.
    text = """
variant = 'FT'
antes = [0, 0]
blinds_or_straddles = [1, 2]
small_bet = 2
big_bet = 4
starting_stacks = [200, 200]
actions = ['d dh p1 AcAs', 'd dh p2 7h6h', 'p2 cbr 4', 'p1 cbr 6', 'p2 cbr 8', 'p1 cbr 10', 'p2 f']
"""
    assert replay_phh(text) == pokerkit_finishing_stacks(text) == (208, 192)
    capped = text.replace("actions =", "_raise_caps = [3, 4, 4, 4]\nactions =")
    with pytest.raises(Exception) as error:
        replay_phh(capped)
    assert getattr(error.value, "code", "") == "illegal_action"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("variant = 'NT'", "list"),
        ("not toml [", "TOML"),
        (
            "variant = 'PO'\nantes=[0,0]\nblinds_or_straddles=[1,2]\nmin_bet=2\nstarting_stacks=[9,9]\nactions=[]",
            "variant",
        ),
    ],
)
def test_unreadable_texts_raise_phh_errors(text: str, message: str) -> None:
    with pytest.raises(PhhError, match=message) as error:
        replay_phh(text)
    assert error.value.code == "invalid_phh"


def test_a_history_whose_showdown_needs_unknown_cards_is_refused() -> None:
    text = """
variant = 'NT'
antes = [0, 0]
blinds_or_straddles = [1, 2]
min_bet = 2
starting_stacks = [200, 200]
actions = ['d dh p1 ????', 'd dh p2 7h6h', 'p2 cc', 'p1 cc', 'd db 2c3c4c', 'p1 cc', 'p2 cc',
  'd db 5d', 'p1 cc', 'p2 cc', 'd db 9s', 'p1 cc', 'p2 cc']
"""
    with pytest.raises(PhhError, match="does not give"):
        replay_phh(text)


def test_a_big_blind_posted_out_of_position_cannot_be_written() -> None:
    from tables.engine.holdem import HandSetup, start_hand

    setup = HandSetup(Structure.no_limit(1, 2), (50,) * 4, 0, tuple(range(52)), posting=frozenset({3}))
    with pytest.raises(PhhError):
        hand_to_phh(start_hand(setup))
    assert Betting.NO_LIMIT.value == "no-limit"


def test_an_unknown_player_in_a_history_is_refused() -> None:
    text = """
variant = 'NT'
antes = [0, 0]
blinds_or_straddles = [1, 2]
min_bet = 2
starting_stacks = [200, 200]
actions = ['d dh p3 AcAd', 'p2 f']
"""
    with pytest.raises(PhhError, match="unknown player"):
        replay_phh(text)


def test_a_table_name_with_a_quote_is_written_as_valid_toml() -> None:
    state = _played(new_hand(Structure.no_limit(1, 2), [100] * 2, button=0))
    text = hand_to_phh(state, table="Dealer's choice")
    assert replay_phh(text) == state.stacks == pokerkit_finishing_stacks(text)


def test_a_raked_hand_keeps_its_rake_in_extension_fields() -> None:
    structure = Structure.no_limit(1, 2, rake_bps=500, rake_cap=3)
    state = _played(act(new_hand(structure, [100] * 3, button=0), ActionKind.RAISE, 20))
    text = hand_to_phh(state)
    assert "_rake_bps = 500" in text and "_rake_cap = 3" in text
    assert state.rake == 3
    assert replay_phh(text) == state.stacks
    # A reader that ignores the extension (pokerkit) replays the hand without rake.
    assert sum(pokerkit_finishing_stacks(text)) == sum(state.stacks) + state.rake


def test_the_phh_text_of_a_small_hand_is_stable() -> None:
    state = new_hand(Structure.fixed_limit(2, 4), [50, 60], button=1, holes=["AcAd", "KcKd"], board="2s7h9dTs3c")
    state = _played(act(act(state, ActionKind.RAISE), ActionKind.FOLD))
    assert hand_to_phh(state, hand=1) == (
        "variant = 'FT'\n"
        "ante_trimming_status = true\n"
        "antes = [0, 0]\n"
        "blinds_or_straddles = [1, 2]\n"
        "small_bet = 2\n"
        "big_bet = 4\n"
        "starting_stacks = [50, 60]\n"
        "actions = [\n"
        "  'd dh p1 AcAd',\n"
        "  'd dh p2 KcKd',\n"
        "  'p2 cbr 4',\n"
        "  'p1 f',\n"
        "]\n"
        "hand = 1\n"
        "seats = [1, 2]\n"
        "seat_count = 2\n"
        "finishing_stacks = [48, 62]\n"
        "_raise_caps = [3, 4, 4, 4]\n"
    )


def test_hidden_holes_are_pokerkits_unknown_cards_and_a_mucked_hand_still_replays() -> None:
    # A player's download hides every hand he may not see (docs/holdem.md, Hand histories):
    # here the loser mucks at the showdown, so the winner's copy shows his cards only.
    structure = Structure.no_limit(1, 2)
    state = new_hand(structure, [100, 100, 100], button=2, holes=["AcAd", "7c2d", "KcKd"], board="3s8h9dTs4c")
    state = play_showdown(check_down(state), muck_losers=True)
    assert state.mucked == (False, True, True)
    text = hide_holes(hand_to_phh(state), {0})
    assert "d dh p1 AcAd" in text and "d dh p2 ????" in text and "d dh p3 ????" in text
    assert "7c2d" not in text and "KcKd" not in text
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        *_, last = pokerkit.HandHistory.loads(text)
    assert tuple(last.stacks) == state.stacks
