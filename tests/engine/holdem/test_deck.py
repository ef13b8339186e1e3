"""The Hold'em deck and deal: the test vector of docs/provably-fair.md, read from the page."""

from __future__ import annotations

import hashlib
import hmac
import re
import struct
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tables.engine import card_code, category_of_strength
from tables.engine.holdem.deck import (
    LABEL_HOLDEM_DECK,
    card_commitment,
    card_salts,
    deal_cards,
    deal_commitments,
    deal_positions,
    dealt_positions,
    holdem_deck,
)
from tables.engine.holdem.eval7 import evaluate7_one
from tables.engine.rng import RandomStream

PAGE = Path(__file__).resolve().parents[3] / "docs" / "provably-fair.md"


def page_vector() -> dict[str, str]:
    text = PAGE.read_text()
    block = text.split("<!-- holdem-vector:begin -->")[1].split("<!-- holdem-vector:end -->")[0]
    return dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)


@pytest.fixture(scope="module")
def vector() -> dict[str, str]:
    return page_vector()


@pytest.fixture(scope="module")
def seed(vector: dict[str, str]) -> bytes:
    return bytes.fromhex(vector["server_seed"])


def test_the_holdem_vector_uses_the_seed_0x00_to_0x1f(seed: bytes) -> None:
    assert seed == bytes(range(32))


def test_the_holdem_stream_block_zero_is_the_hmac_of_its_label(vector: dict[str, str], seed: bytes) -> None:
    message = LABEL_HOLDEM_DECK.encode() + b"\x00" + (0).to_bytes(8, "big")
    assert hmac.new(seed, message, hashlib.sha256).hexdigest() == vector["holdem_deck_block_0"]
    assert RandomStream(seed, "holdem-deck").block(0).hex() == vector["holdem_deck_block_0"]


def test_the_shuffle_matches_the_page(vector: dict[str, str], seed: bytes) -> None:
    stream = RandomStream(seed, "holdem-deck")
    first_j = [stream.randbelow(i + 1) for i in range(51, 46, -1)]
    assert first_j == [int(j) for j in vector["holdem_deck_first_j"].split()]
    assert [card_code(c) for c in holdem_deck(seed)] == vector["holdem_deck"].split()


def test_the_deal_matches_the_page(vector: dict[str, str], seed: bytes) -> None:
    n = int(vector["players"])
    deal = deal_cards(holdem_deck(seed), n)
    assert list(deal.hole_codes()) == [vector[f"player_{k}"] for k in range(n)]
    assert " ".join(card_code(c) for c in deal.burns) == vector["burns"]
    flop, turn, river = deal.board_codes()[:3], deal.board_codes()[3], deal.board_codes()[4]
    assert " ".join(flop) == vector["flop"]
    assert (turn, river) == (vector["turn"], vector["river"])
    strengths = []
    for k, hole in enumerate(deal.hole):
        strength = evaluate7_one([*hole, *deal.board])
        expected_strength, expected_label = vector[f"player_{k}_strength"].split(" ", 1)
        assert strength == int(expected_strength)
        assert category_of_strength(strength).label == expected_label
        strengths.append(strength)
    assert f"player_{strengths.index(max(strengths))}" == vector["winner"]


def test_the_reference_code_on_the_page_reproduces_the_holdem_vector(vector: dict[str, str], seed: bytes) -> None:
    text = PAGE.read_text()
    reference = re.search(r"```python\n(.*?)```", text.split("## 10. Reference code")[1], re.DOTALL)
    holdem = re.search(r"```python\n(.*?)```", text.split("## 12. Texas Hold'em")[1], re.DOTALL)
    assert reference is not None
    assert holdem is not None
    namespace: dict[str, Any] = {"hashlib": hashlib, "hmac": hmac, "struct": struct}
    exec(reference.group(1) + "\n" + holdem.group(1), namespace)  # the page's own code
    cards, hole, board, burns = namespace["holdem_deal"](seed, 3)
    assert [card_code(c) for c in cards] == vector["holdem_deck"].split()
    assert [f"{card_code(a)} {card_code(b)}" for a, b in hole] == [vector[f"player_{k}"] for k in range(3)]
    assert [card_code(c) for c in board] == f"{vector['flop']} {vector['turn']} {vector['river']}".split()
    assert " ".join(card_code(c) for c in burns) == vector["burns"]


@pytest.mark.parametrize("n", range(2, 11))
def test_deal_positions_use_each_position_once_and_stop_at_2n_plus_7(n: int) -> None:
    p = deal_positions(n)
    used = [pos for pair in p.holes for pos in pair] + list(p.burns) + list(p.board)
    assert sorted(used) == list(range(2 * n + 8))
    assert [first for first, _ in p.holes] == list(range(n))  # one round before the second


def test_heads_up_deals_the_big_blind_first_then_the_button() -> None:
    # Dealing order index 0 is the big blind heads-up: positions 0 and 2.
    assert deal_positions(2).holes == ((0, 2), (1, 3))


@pytest.mark.parametrize("bad", [0, 1, 11, 23, -2, True, 2.0, "3"])
def test_deal_positions_reject_a_bad_number_of_players(bad: Any) -> None:
    with pytest.raises(ValueError, match="players"):
        deal_positions(bad)


def test_deal_cards_rejects_something_that_is_not_a_deck() -> None:
    with pytest.raises(ValueError, match="permutation"):
        deal_cards([*range(51), 0], 3)
    with pytest.raises(ValueError, match="permutation"):
        deal_cards(list(range(50)), 3)


@pytest.mark.parametrize("bad", [b"", bytes(31), bytes(33), "0" * 32])
def test_holdem_deck_rejects_a_seed_that_is_not_32_bytes(bad: Any) -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        holdem_deck(bad)


@given(st.binary(min_size=32, max_size=32), st.integers(2, 10))
def test_every_deal_is_distinct_cards_from_a_permutation(seed: bytes, n: int) -> None:
    deck = holdem_deck(seed)
    assert sorted(deck) == list(range(52))
    deal = deal_cards(deck, n)
    cards = [c for pair in deal.hole for c in pair] + list(deal.burns) + list(deal.board)
    assert len(set(cards)) == 2 * n + 8
    assert deal.hole[0][0] == deck[0]
    assert deal.board[-1] == deck[2 * n + 7]


def test_the_holdem_shuffle_is_independent_of_the_board_shuffle() -> None:
    from tables.engine.widerpoker import shuffle_deck

    seed = bytes(range(32))
    assert holdem_deck(seed) != shuffle_deck(seed)


def test_each_card_reaches_each_top_position_about_equally_often() -> None:
    # 2,600 seeds: deck[0] should be uniform over 52 cards (chi-square, 51 dof, p > 1e-4).
    counts = Counter(holdem_deck(hashlib.sha256(struct.pack(">I", i)).digest())[0] for i in range(2600))
    expected = 2600 / 52
    chi2 = sum((counts.get(card, 0) - expected) ** 2 / expected for card in range(52))
    assert chi2 < 101.0  # the 1e-4 upper quantile of chi-square with 51 dof is about 100.9


def salt_vector() -> dict[str, str]:
    text = PAGE.read_text()
    block = text.split("<!-- holdem-salt-vector:begin -->")[1].split("<!-- holdem-salt-vector:end -->")[0]
    return dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)


def test_the_card_salts_and_commitments_match_the_page() -> None:
    page = salt_vector()
    seed = bytes.fromhex(page["server_seed"])
    n = int(page["players"])
    salts = card_salts(seed, dealt_positions(n))
    commitments = deal_commitments(seed, n)
    assert len(commitments) == int(page["commitments"]) == 2 * n + 8
    for i in (0, 3, 13):
        message = b"holdem-card-salt\x00" + struct.pack(">Q", i)
        assert hmac.new(seed, message, hashlib.sha256).hexdigest() == page[f"salt_{i}"] == salts[i].hex()
        assert commitments[i] == page[f"commitment_{i}"]
    card = card_code(holdem_deck(seed)[13])
    assert card == page["card_13"]
    assert hashlib.sha256(card.encode() + bytes.fromhex(page["salt_13"])).hexdigest() == page["commitment_13"]
    assert card_commitment(holdem_deck(seed)[13], salts[13]) == page["commitment_13"]
