"""Cards: ids ``4 * rank + suit`` and two-letter codes (seed 001, General rules 1)."""

from __future__ import annotations

import pytest

from tables.engine.cards import as_card_id, rank_of, suit_of
from tables.engine.widerpoker import RANKS, SUITS, card_code, card_id, parse_cards


def test_every_card_id_round_trips_through_its_code() -> None:
    codes = [card_code(card) for card in range(52)]
    assert len(set(codes)) == 52
    assert [card_id(code) for code in codes] == list(range(52))


def test_card_id_is_four_times_rank_plus_suit() -> None:
    for rank, rank_letter in enumerate(RANKS):
        for suit, suit_letter in enumerate(SUITS):
            assert card_id(rank_letter + suit_letter) == 4 * rank + suit


def test_ids_follow_the_documented_rank_and_suit_order() -> None:
    assert card_id("2c") == 0
    assert card_id("2s") == 3
    assert card_id("Td") == 4 * 8 + 1
    assert card_id("As") == 51
    assert rank_of(card_id("Kh")) == RANKS.index("K")
    assert suit_of(card_id("Kh")) == SUITS.index("h")


@pytest.mark.parametrize("code", ["Xx", "1c", "as", "AS", "10h", "", "A", "Ass"])
def test_an_unknown_card_code_is_rejected_naming_the_code(code: str) -> None:
    with pytest.raises(ValueError, match=f"unknown card code {code!r}"):
        card_id(code)


@pytest.mark.parametrize("card", [-1, 52, 100, True])
def test_a_card_id_outside_the_deck_is_rejected(card: int) -> None:
    with pytest.raises(ValueError, match=r"0\.\.51"):
        card_code(card)


def test_parse_cards_keeps_order_and_names_the_bad_code() -> None:
    assert parse_cards(["As", "2c", "Td"]) == (51, 0, 33)
    with pytest.raises(ValueError, match="'Zz'"):
        parse_cards(["As", "Zz"])


def test_as_card_id_accepts_ids_and_codes() -> None:
    assert as_card_id("Qd") == card_id("Qd")
    assert as_card_id(17) == 17
    with pytest.raises(ValueError):
        as_card_id(52)
