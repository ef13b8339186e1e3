"""Algorithm 2 (docs/provably-fair.md): seed chains, client seeds, derived entry order and
beacon-fixed change keys; the page's test vector is read from the page."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tables.engine import fairness
from tables.engine.widerpoker import card_code, change_keys, deal_board
from tests.engine.helpers import provably_fair_reference

PAGE = Path(__file__).resolve().parents[2] / "docs" / "provably-fair.md"


@pytest.fixture(scope="module")
def vector() -> dict[str, str]:
    block = PAGE.read_text().split("<!-- test-vector-2:begin -->")[1].split("<!-- test-vector-2:end -->")[0]
    return dict(line.split(": ", 1) for line in block.strip().strip("`").strip().splitlines() if ": " in line)


def test_the_engine_matches_the_pages_algorithm_2_vector(vector: dict[str, str]) -> None:
    terminal = bytes.fromhex(vector["terminal_seed"])
    length = int(vector["chain_length"])
    assert fairness.chain_anchor(terminal, length).hex() == vector["anchor"]
    s1 = fairness.chain_seed(terminal, length, 1)
    assert s1.hex() == vector["chain_seed_1"]
    assert hashlib.sha256(s1).hexdigest() == vector["commitment_1"]
    seed = fairness.hand_seed(s1, 7, 3, [("ana", "a1"), ("ben", "b2")])
    assert seed.hex() == vector["hand_seed"]
    assert [["ana", "ben"][i] for i in fairness.entry_order(seed, ["ana", "ben"])] == vector["entry_order"].split()
    keys = fairness.keys_seed(seed, bytes.fromhex(vector["beacon_value"]))
    assert keys.hex() == vector["keys_seed"]
    assert " ".join(map(str, change_keys(keys)[0])) == vector["change_key_1"]
    assert " ".join(card_code(c) for c in deal_board(seed).columns[0]) == vector["column_0"]


def test_the_pages_reference_code_matches_its_algorithm_2_vector(vector: dict[str, str]) -> None:
    ref = provably_fair_reference()
    terminal = bytes.fromhex(vector["terminal_seed"])
    s1 = bytes.fromhex(vector["chain_seed_1"])
    assert ref["chain_links"](s1, 1, bytes.fromhex(vector["anchor"]))
    assert hashlib.sha256(hashlib.sha256(terminal).digest()).digest() == s1
    seed = ref["hand_seed"](s1, 7, 3, {"ben": "b2", "ana": "a1"})
    assert seed.hex() == vector["hand_seed"]
    assert ref["entry_order"](seed, ["ana", "ben"]) == vector["entry_order"].split()
    assert ref["change_keys"](ref["keys_seed"](seed, bytes(32)))[0] == [int(d) for d in vector["change_key_1"].split()]


def test_a_players_client_seed_changes_the_whole_hand_as_documented() -> None:
    s1 = fairness.chain_seed(bytes(32), 5, 2)
    base = fairness.hand_seed(s1, 1, 9, [("ana", "a"), ("ben", "b")])
    other = fairness.hand_seed(s1, 1, 9, [("ana", "a"), ("ben", "c")])
    assert base != other and deal_board(base).columns != deal_board(other).columns
    # The order of the pairs does not matter; the table and hand number do.
    assert fairness.hand_seed(s1, 1, 9, [("ben", "b"), ("ana", "a")]) == base
    assert fairness.hand_seed(s1, 2, 9, [("ana", "a"), ("ben", "b")]) != base


def test_the_randomness_is_fixed_once_the_chain_is_published() -> None:
    terminal = bytes(range(32))
    anchor = fairness.chain_anchor(terminal, 100)
    # Every element of the published chain links back to the anchor, and no other seed does:
    # the operator cannot swap a hand's seed after publishing.
    for index in (1, 50, 100):
        seed = fairness.chain_seed(terminal, 100, index)
        linked = seed
        for _ in range(index):
            linked = hashlib.sha256(linked).digest()
        assert linked == anchor
    forged = bytes(32)
    assert not fairness.link_ok(forged, fairness.chain_seed(terminal, 100, 0))


def test_the_change_keys_depend_on_the_beacon_value_not_only_on_the_stored_seed() -> None:
    seed = fairness.hand_seed(bytes(32), 1, 1, [("ana", "a")])
    keys = {tuple(map(tuple, change_keys(fairness.keys_seed(seed, bytes([b]) * 32)))) for b in range(8)}
    assert len(keys) == 8  # eight beacon values, eight different sets of keys
    assert tuple(map(tuple, change_keys(seed))) not in keys  # the seed alone does not give them
    with pytest.raises(ValueError):
        fairness.keys_seed(seed, b"")
