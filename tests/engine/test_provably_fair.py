"""The worked test vector of docs/provably-fair.md, read from the page itself."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import pytest

from tables.engine.widerpoker import (
    RandomStream,
    card_code,
    change_keys,
    combination_index,
    commitment,
    deal_board,
    draw_positions,
    evaluate,
    final_hand,
    hold_from_code,
    initial_combinations,
    redeal_combination,
    shuffle_deck,
    spin_jackpot_draw,
)
from tests.engine.helpers import provably_fair_reference

PAGE = Path(__file__).resolve().parents[2] / "docs" / "provably-fair.md"


def page_vector() -> dict[str, str]:
    text = PAGE.read_text()
    block = text.split("<!-- test-vector:begin -->")[1].split("<!-- test-vector:end -->")[0]
    lines = [line for line in block.splitlines() if ": " in line]
    return dict(line.split(": ", 1) for line in lines)


@pytest.fixture(scope="module")
def vector() -> dict[str, str]:
    return page_vector()


@pytest.fixture(scope="module")
def seed(vector: dict[str, str]) -> bytes:
    return bytes.fromhex(vector["server_seed"])


def test_the_vector_seed_is_bytes_0x00_to_0x1f(seed: bytes) -> None:
    assert seed == bytes(range(32))


def test_commitment_is_the_sha256_of_the_seed(vector: dict[str, str], seed: bytes) -> None:
    assert commitment(seed) == vector["commitment"]
    assert hashlib.sha256(seed).hexdigest() == vector["commitment"]


def test_stream_block_zero_is_hmac_of_label_nul_and_counter(vector: dict[str, str], seed: bytes) -> None:
    message = b"board" + b"\x00" + (0).to_bytes(8, "big")
    assert hmac.new(seed, message, hashlib.sha256).hexdigest() == vector["board_block_0"]
    assert RandomStream(seed, "board").block(0).hex() == vector["board_block_0"]


def test_the_shuffle_and_board_match_the_page(vector: dict[str, str], seed: bytes) -> None:
    stream = RandomStream(seed, "board")
    first_j = [stream.randbelow(i + 1) for i in range(51, 46, -1)]
    assert first_j == [int(j) for j in vector["board_first_j"].split()]
    assert [card_code(c) for c in shuffle_deck(seed)] == vector["deck"].split()
    board = deal_board(seed)
    for column in range(5):
        assert board.codes()[column] == vector[f"column_{column}"].split()
    assert board.out_codes() == vector["cards_out"].split()


def test_initial_combinations_match_the_page(vector: dict[str, str], seed: bytes) -> None:
    board = deal_board(seed)
    for number, combination in enumerate(initial_combinations(seed, 3), start=1):
        assert list(combination) == [int(p) for p in vector[f"combination_{number}"].split()]
        hand = [card_code(card) for card in board.hand(combination)]
        assert hand == vector[f"combination_{number}_hand"].split()


def test_change_keys_spin_jackpot_and_redeal_match_the_page(vector: dict[str, str], seed: bytes) -> None:
    for number, key in enumerate(change_keys(seed), start=1):
        assert list(key) == [int(d) for d in vector[f"change_key_{number}"].split()]
    x = RandomStream(seed, "spin-jackpot").randbelow(6000)
    assert x == int(vector["spin_jackpot_x"])
    drawn = spin_jackpot_draw(seed)
    assert (drawn.value if drawn else "none") == vector["spin_jackpot"]
    taken = {combination_index(c) for c in initial_combinations(seed, 3)}
    redeal = redeal_combination(seed, taken, 0)
    expected = [int(p) for p in vector["redeal_0_after_combinations_1_to_3"].split()]
    assert list(redeal) == expected


def test_entry_one_draws_match_the_page(vector: dict[str, str], seed: bytes) -> None:
    board = deal_board(seed)
    combination = initial_combinations(seed, 1)[0]
    hold = hold_from_code(vector["entry_1_hold"])
    keys = change_keys(seed)
    strengths = []
    for draw in (1, 2):
        prefix = f"entry_1_draw_{draw}"
        positions = draw_positions(combination, hold, keys[draw - 1])
        assert list(positions) == [int(p) for p in vector[f"{prefix}_positions"].split()]
        hand = final_hand(board, combination, hold, keys[draw - 1])
        assert list(hand) == vector[f"{prefix}_hand"].split()
        value = evaluate(hand)
        assert value.category.label == vector[f"{prefix}_category"]
        assert value.strength == int(vector[f"{prefix}_strength"])
        strengths.append(value.strength)
    assert strengths.index(max(strengths)) + 1 == int(vector["entry_1_best_draw"])


def test_the_reference_code_on_the_page_reproduces_the_vector(vector: dict[str, str], seed: bytes) -> None:
    namespace = provably_fair_reference()  # the page's own standard-library implementation
    cards = namespace["deck"](seed)
    assert [card_code(c) for c in cards] == vector["deck"].split()
    indices = namespace["combinations"](seed, 3)
    for number, index in enumerate(indices, start=1):
        assert f"{index:05d}" == vector[f"combination_{number}"].replace(" ", "")
    redeal = namespace["redeal"](seed, set(indices), 0)
    assert f"{redeal:05d}" == vector["redeal_0_after_combinations_1_to_3"].replace(" ", "")
    keys = namespace["change_keys"](seed)
    assert [" ".join(map(str, k)) for k in keys] == [vector[f"change_key_{n}"] for n in range(1, 6)]
    assert (namespace["spin"](seed) or "none") == vector["spin_jackpot"]


def page_vector_3() -> dict[str, str]:
    text = PAGE.read_text()
    block = text.split("<!-- test-vector-3:begin -->")[1].split("<!-- test-vector-3:end -->")[0]
    return dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)


def test_the_engine_and_the_pages_reference_code_match_the_algorithm_3_vector() -> None:
    """Algorithm 3 (section 1.9): the deal round's value in the hand seed, each redeal's
    round value in its stream's seed; the engine and the page's own code agree with the
    page's numbers."""
    from tables.engine import fairness

    v = page_vector_3()
    s1 = bytes.fromhex(v["chain_seed_1"])
    pairs = [("ana", "a1"), ("ben", "b2")]
    digest = fairness.client_seeds_digest(pairs)
    assert digest.hex() == v["inputs_digest"]
    deal_value = bytes.fromhex(v["deal_beacon_value"])
    seed = fairness.deal_seed(s1, 7, 3, digest, deal_value)
    assert seed.hex() == v["hand_seed"]
    names = ["ana", "ben"]
    assert [names[i] for i in fairness.entry_order(seed, names)] == v["entry_order"].split()
    combos = [combination_index(c) for c in initial_combinations(seed, 2)]
    assert [f"{c:05d}" for c in combos] == v["combinations"].split()
    assert " ".join(card_code(c) for c in deal_board(seed).columns[0]) == v["column_0"]
    redeal_seed = fairness.redeal_seed(seed, 0, bytes.fromhex(v["redeal_0_round_value"]))
    assert redeal_seed.hex() == v["redeal_0_seed"]
    assert f"{combination_index(redeal_combination(redeal_seed, set(combos), 0)):05d}" == v["redeal_0"]
    # Another deal round value: another hand.
    assert fairness.deal_seed(s1, 7, 3, digest, bytes(32)) != seed

    ref = provably_fair_reference()
    assert ref["deal_seed"](s1, 7, 3, {"ben": "b2", "ana": "a1"}, deal_value) == seed
    assert ref["entry_order"](seed, names) == v["entry_order"].split()
    assert [f"{x:05d}" for x in ref["combinations"](seed, 2)] == v["combinations"].split()
    ref_redeal = ref["redeal_seed"](seed, 0, bytes.fromhex(v["redeal_0_round_value"]))
    assert ref_redeal == redeal_seed
    assert f"{ref['redeal'](ref_redeal, set(ref['combinations'](seed, 2)), 0):05d}" == v["redeal_0"]
