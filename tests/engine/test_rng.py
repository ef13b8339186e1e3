"""Seeded randomness (DESIGN, Architecture, Provably fair; docs/provably-fair.md)."""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chi2

from tables.engine.rng import hmac_sha256_many
from tables.engine.widerpoker import (
    RandomStream,
    SpinJackpot,
    change_keys,
    combination_index,
    commitment,
    deal_board,
    initial_combinations,
    redeal_combination,
    shuffle_deck,
    spin_jackpot_draw,
)
from tables.engine.widerpoker.deal import redeal_label

seeds = st.binary(min_size=32, max_size=32)


class ScriptedStream(RandomStream):
    """A stream whose words are given, to pin down the rejection rule."""

    def __init__(self, words: Sequence[int]) -> None:
        super().__init__(bytes(32), "scripted")
        self.script = list(words)

    def next_word(self) -> int:
        return self.script.pop(0)


def test_commitment_needs_exactly_32_bytes() -> None:
    assert commitment(b"\x07" * 32) == hashlib.sha256(b"\x07" * 32).hexdigest()
    for bad in (b"", b"\x00" * 31, b"\x00" * 33):
        with pytest.raises(ValueError, match="32 bytes"):
            commitment(bad)


def test_stream_words_are_big_endian_hmac_blocks_in_order() -> None:
    seed = bytes(range(100, 132))
    stream = RandomStream(seed, "combinations")
    words = [stream.next_word() for _ in range(8)]
    expected: list[int] = []
    for counter in range(2):
        message = b"combinations\x00" + struct.pack(">Q", counter)
        expected += struct.unpack(">4Q", hmac.new(seed, message, hashlib.sha256).digest())
    assert words == expected


@settings(max_examples=30, deadline=None)
@given(seed=st.binary(min_size=32, max_size=32), label=st.text().filter(lambda text: "\x00" not in text))
def test_blocks_read_in_bulk_are_the_hmac_blocks(seed: bytes, label: str) -> None:
    # block() and blocks() continue from precomputed HMAC states: each must still be the
    # plain HMAC-SHA256 of docs/provably-fair.md, for any seed and label.
    stream = RandomStream(seed, label)
    prefix = label.encode("utf-8") + b"\x00"
    expected = [hmac.digest(seed, prefix + struct.pack(">Q", counter), "sha256") for counter in range(5, 12)]
    assert stream.blocks(5, 7) == b"".join(expected)
    assert [stream.block(counter) for counter in range(5, 12)] == expected
    suffixes = [label.encode("utf-8"), b"", b"\x00" * 70]
    assert hmac_sha256_many(seed, b"order\x00", suffixes) == [
        hmac.digest(seed, b"order\x00" + suffix, "sha256") for suffix in suffixes
    ]


def test_randbelow_rejects_words_at_or_above_the_largest_multiple_of_n() -> None:
    top = 2**64
    limit = top - top % 3  # 2**64 - 1
    assert ScriptedStream([limit, 5]).randbelow(3) == 5 % 3
    assert ScriptedStream([limit - 1]).randbelow(3) == (limit - 1) % 3
    n = 100_000
    limit = top - top % n
    assert ScriptedStream([top - 1, limit, limit - 1]).randbelow(n) == (limit - 1) % n


def test_randbelow_rejects_bad_bounds() -> None:
    stream = RandomStream(bytes(32), "x")
    for bad in (0, -1, 2**64 + 1):
        with pytest.raises(ValueError):
            stream.randbelow(bad)
    with pytest.raises(ValueError):
        RandomStream(bytes(32), "bad\x00label")


def test_streams_with_different_labels_are_different() -> None:
    seed = bytes(32)
    words = {label: RandomStream(seed, label).next_word() for label in ("a", "b", "board")}
    assert len(set(words.values())) == 3


@settings(max_examples=50)
@given(seeds)
def test_the_shuffle_is_a_permutation_of_the_deck(seed: bytes) -> None:
    deck = shuffle_deck(seed)
    assert sorted(deck) == list(range(52))
    assert deal_board(seed).deck() == deck


@settings(max_examples=30)
@given(seeds, st.integers(0, 3_000))
def test_initial_combinations_are_distinct_and_a_prefix_of_any_longer_list(seed: bytes, count: int) -> None:
    combinations = initial_combinations(seed, count)
    assert len(combinations) == count
    assert len(set(combinations)) == count
    assert all(len(c) == 5 and all(0 <= p <= 9 for p in c) for c in combinations)
    assert initial_combinations(seed, count + 10)[:count] == combinations


def test_a_hand_can_deal_all_100000_combinations_and_no_more() -> None:
    seed = bytes(range(32, 64))
    everything = initial_combinations(seed, 100_000)
    assert len({combination_index(c) for c in everything}) == 100_000
    with pytest.raises(ValueError):
        initial_combinations(seed, 100_001)
    with pytest.raises(ValueError):
        initial_combinations(seed, -1)


@settings(max_examples=50)
@given(seeds, st.sets(st.integers(0, 99_999), max_size=500), st.integers(0, 1_000))
def test_a_redeal_never_returns_a_taken_combination(seed: bytes, taken: set[int], number: int) -> None:
    combination = redeal_combination(seed, taken, number)
    assert combination_index(combination) not in taken
    assert redeal_combination(seed, taken, number) == combination


def test_a_redeal_finds_the_last_free_combination() -> None:
    taken = set(range(100_000)) - {31_415}
    assert combination_index(redeal_combination(bytes(32), taken, 0)) == 31_415
    with pytest.raises(ValueError):
        redeal_combination(bytes(32), set(range(100_000)), 0)
    with pytest.raises(ValueError):
        redeal_combination(bytes(32), {100_000}, 0)
    with pytest.raises(ValueError):
        redeal_label(-1)


@settings(max_examples=50)
@given(seeds)
def test_change_keys_are_five_keys_of_five_digits_one_to_nine(seed: bytes) -> None:
    keys = change_keys(seed)
    assert len(keys) == 5
    assert all(len(key) == 5 and all(1 <= d <= 9 for d in key) for key in keys)


def test_change_key_digits_are_uniform_over_one_to_nine() -> None:
    digits = np.array([change_keys(i.to_bytes(32, "big")) for i in range(4_000)]).ravel()
    counts = np.bincount(digits, minlength=10)[1:]
    expected = digits.size / 9
    statistic = float(((counts - expected) ** 2 / expected).sum())
    assert chi2.sf(statistic, 8) > 1e-4


@pytest.mark.parametrize(
    ("x", "jackpot"),
    [
        (0, SpinJackpot.GOLD),
        (1, SpinJackpot.SILVER),
        (20, SpinJackpot.SILVER),
        (21, SpinJackpot.BRONZE),
        (220, SpinJackpot.BRONZE),
        (221, None),
        (5_999, None),
    ],
)
def test_spin_jackpot_mapping_follows_the_published_odds(
    monkeypatch: pytest.MonkeyPatch, x: int, jackpot: SpinJackpot | None
) -> None:
    monkeypatch.setattr(RandomStream, "randbelow", lambda self, n: x if n == 6000 else 0)
    assert spin_jackpot_draw(bytes(32)) is jackpot


def test_spin_jackpot_frequencies_are_one_in_6000_300_and_30() -> None:
    draws = 60_000
    results = [spin_jackpot_draw(i.to_bytes(32, "big")) for i in range(draws)]
    for jackpot, probability in [
        (SpinJackpot.GOLD, 1 / 6000),
        (SpinJackpot.SILVER, 1 / 300),
        (SpinJackpot.BRONZE, 1 / 30),
    ]:
        mean = draws * probability
        assert abs(results.count(jackpot) - mean) < 5 * (mean * (1 - probability)) ** 0.5 + 1


# ---- chi-square: card by position ---------------------------------------------------

Shuffle = Callable[[bytes], Sequence[int]]
SHUFFLES = 40_000


def naive_shuffle(seed: bytes) -> list[int]:
    """Negative control: swap every position with ANY position (a classic biased shuffle)."""
    stream = RandomStream(seed, "board")
    deck = list(range(52))
    for i in range(52):
        j = stream.randbelow(52)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def card_by_position_p_value(shuffle: Shuffle, count: int) -> float:
    """Pearson chi-square p-value of the 52 x 52 card-by-position table."""
    decks: npt.NDArray[np.int64] = np.array(
        [shuffle(hashlib.sha256(i.to_bytes(8, "big")).digest()) for i in range(count)]
    )
    table = np.zeros((52, 52), dtype=np.int64)
    for position in range(52):
        table[:, position] = np.bincount(decks[:, position], minlength=52)
    expected = count / 52
    statistic = float(((table - expected) ** 2 / expected).sum())
    return float(chi2.sf(statistic, 51 * 51))


@pytest.mark.slow
def test_every_card_is_equally_likely_at_every_deck_position() -> None:
    assert card_by_position_p_value(shuffle_deck, SHUFFLES) > 1e-4


@pytest.mark.slow
def test_the_same_chi_square_harness_rejects_a_biased_shuffle() -> None:
    assert card_by_position_p_value(naive_shuffle, SHUFFLES) < 1e-12
