"""Who plays the next Hold'em hand from where (tables/engine/holdem/dealing.py, ``seat_hand``):
the button and the blind choices of players back at an active table (seed 003, The First
round; docs/holdem.md). The platform's ``_freeze`` asks this and stores the answer in the
hand's frozen inputs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tables.engine.holdem import Seating, next_button, seat_hand
from tables.engine.holdem.dealing import POST, WAIT


def test_a_fresh_table_deals_everyone_and_the_first_seated_deals() -> None:
    assert seat_hand(None, [4, 1, 2], {}, 6) == Seating(4, frozenset(), frozenset())
    # Choices left over from an earlier session count for nothing on a fresh table.
    assert seat_hand(None, [4, 1, 2], {1: WAIT, 2: POST}, 6) == Seating(4, frozenset(), frozenset())


def test_the_button_moves_clockwise_to_the_next_regular_player() -> None:
    assert seat_hand(4, [1, 2, 4], {}, 6) == Seating(1, frozenset(), frozenset())
    # A player who chose to wait or to post is not given the button.
    assert seat_hand(0, [0, 1, 2, 3], {1: POST, 2: WAIT}, 6).button == 3


def test_a_waiting_player_plays_when_the_big_blind_reaches_him() -> None:
    # Button 1, small blind 3, big blind 4: seat 4's wait is over; seat 5 still waits.
    assert seat_hand(3, [1, 3, 4, 5], {4: WAIT, 5: WAIT}, 6) == Seating(1, frozenset({5}), frozenset())


def test_a_posting_player_posts_and_is_skipped_by_the_blinds() -> None:
    # Button 2, small blind 4 (3 posts out of turn), big blind 0.
    seating = seat_hand(1, [0, 1, 2, 3, 4], {3: POST}, 6)
    assert seating == Seating(2, frozenset(), frozenset({3}))


def test_with_fewer_than_two_regular_players_everyone_is_dealt_in() -> None:
    assert seat_hand(0, [0, 2, 3], {2: WAIT, 3: POST}, 6) == Seating(2, frozenset(), frozenset())


def test_no_players_is_refused() -> None:
    with pytest.raises(ValueError):
        seat_hand(0, [], {}, 6)


@st.composite
def tables(draw: st.DrawFn) -> tuple[int | None, list[int], dict[int, str], int]:
    seats = draw(st.integers(2, 10))
    positions = draw(st.lists(st.integers(0, seats - 1), min_size=2, max_size=seats, unique=True))
    previous = draw(st.none() | st.integers(0, seats - 1))
    choices = {p: draw(st.sampled_from((WAIT, POST, ""))) for p in positions}
    return previous, positions, choices, seats


@given(tables())
def test_seating_properties(table: tuple[int | None, list[int], dict[int, str], int]) -> None:
    previous, positions, choices, seats = table
    seating = seat_hand(previous, positions, choices, seats)
    assert seating.button in positions
    assert seating.waiting <= {p for p in positions if choices[p] == WAIT}
    assert seating.posting <= {p for p in positions if choices[p] == POST}
    assert seating.button not in seating.waiting | seating.posting
    dealt = [p for p in positions if p not in seating.waiting]
    assert len(dealt) >= 2, "a hand is always dealt to two players at least"
    if previous is None:
        assert seating == Seating(positions[0], frozenset(), frozenset())
        return
    # Away from a fresh table the order the players are listed in does not matter.
    assert seat_hand(previous, sorted(positions, reverse=True), choices, seats) == seating
    regular = [p for p in positions if choices[p] not in (WAIT, POST)]
    if len(regular) >= 2:
        assert seating.button == next_button(previous, regular, seats)
        assert seating.posting == {p for p in positions if choices[p] == POST}
        # At most one waiting player (the big blind) stops waiting.
        assert len({p for p in positions if choices[p] == WAIT} - seating.waiting) <= 1
    else:
        assert seating == Seating(next_button(previous, positions, seats), frozenset(), frozenset())
