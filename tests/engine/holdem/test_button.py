"""The dealer button (seed 003, The First round): the first person seated deals first,
then the button moves clockwise to the next player dealt in."""

from __future__ import annotations

import pytest

from tables.engine.holdem import first_button, next_button


def test_the_first_hand_goes_to_the_first_player_seated_not_the_lowest_seat() -> None:
    assert first_button([4, 1, 2]) == 4
    assert first_button([0]) == 0
    with pytest.raises(ValueError):
        first_button([])


def test_the_button_moves_clockwise_to_the_next_player_dealt_in() -> None:
    assert next_button(4, [1, 2, 4], 6) == 1  # wraps past the last seat
    assert next_button(1, [1, 2, 4], 6) == 2
    assert next_button(2, [1, 4], 6) == 4  # skips seats not dealt in
    with pytest.raises(ValueError):
        next_button(0, [], 6)
