"""Seven-card evaluation agrees with the five-card evaluator and with independent peers."""

from __future__ import annotations

import itertools

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tables.engine import HandCategory, category_of, evaluate, evaluate_many, parse_cards
from tables.engine.holdem.eval7 import (
    SEVEN_CARD_RANK_MULTISETS,
    evaluate7,
    evaluate7_one,
    evaluate_best,
    tables_nbytes,
)

SUBSETS = np.array(list(itertools.combinations(range(7), 5)), dtype=np.intp)


def random_hands(count: int, seed: int, cards: int = 7) -> npt.NDArray[np.uint8]:
    """``count`` rows of distinct random card ids (test data only, not the game's shuffle)."""
    keys = np.random.default_rng(seed).random((count, 52), dtype=np.float32)
    hands: npt.NDArray[np.uint8] = np.argpartition(keys, cards, axis=1)[:, :cards].astype(np.uint8)
    return hands


def best_of_21(hands: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint16]:
    """The reference: the maximum of ``evaluate_many`` over the 21 five-card subsets."""
    strengths = evaluate_many(np.ascontiguousarray(hands[:, SUBSETS].reshape(-1, 5)))
    best: npt.NDArray[np.uint16] = strengths.reshape(-1, 21).max(axis=1)
    return best


def hand(codes: str) -> int:
    return evaluate7_one(list(parse_cards(codes.split())))


def assert_agrees_with_best_of_21(count: int, seed: int) -> None:
    hands = random_hands(count, seed)
    ours = evaluate7(hands)
    reference = best_of_21(hands)
    mismatches = np.flatnonzero(ours != reference)
    assert len(mismatches) == 0, f"{len(mismatches)} mismatches, first rows {hands[mismatches[:3]].tolist()}"


def test_evaluate7_equals_the_best_of_21_subsets_on_200_000_random_hands() -> None:
    assert_agrees_with_best_of_21(200_000, 7)


@pytest.mark.slow
def test_evaluate7_equals_the_best_of_21_subsets_on_a_million_random_hands() -> None:
    assert_agrees_with_best_of_21(1_000_000, 1_000_000)


def test_every_flush_rank_mask_and_category_is_reached() -> None:
    # Hands built to be flushes of 5, 6 and 7 suited cards, plus straight flushes.
    rng = np.random.default_rng(3)
    rows = []
    for suited in (5, 6, 7):
        for _ in range(3_000):
            ranks = rng.choice(13, size=suited, replace=False)
            others = rng.choice(13, size=7 - suited, replace=False)
            rows.append([4 * r + 2 for r in ranks] + [4 * r + int(rng.integers(0, 2)) for r in others])
    hands = np.array(rows, dtype=np.uint8)
    assert np.array_equal(evaluate7(hands), best_of_21(hands))
    assert set(category_of(evaluate7(hands)).tolist()) >= {5, 8, 9}


def test_every_rank_multiset_is_a_distinct_table_slot() -> None:
    # Seven-rank multisets with counts <= 4: the perfect hash covers exactly this many.
    count = sum(
        1 for combo in itertools.combinations_with_replacement(range(13), 7) if max(combo.count(r) for r in combo) <= 4
    )
    assert count == SEVEN_CARD_RANK_MULTISETS
    assert tables_nbytes() < 2_000_000


@pytest.mark.parametrize(
    ("codes", "category", "best_five"),
    [
        ("As Ks Qs Js Ts 2c 2d", HandCategory.ROYAL_FLUSH, "As Ks Qs Js Ts"),
        ("Ah 2c 3d 4s 5h Kd Kc", HandCategory.STRAIGHT, "Ah 2c 3d 4s 5h"),
        ("Ah 2h 3h 4h 5h 6h Kd", HandCategory.STRAIGHT_FLUSH, "2h 3h 4h 5h 6h"),
        ("9c 9d 9h Kc Kd Ks 2s", HandCategory.FULL_HOUSE, "Kc Kd Ks 9c 9d"),
        ("Ac Ad Kc Kd Qc Qd Js", HandCategory.TWO_PAIR, "Ac Ad Kc Kd Qc"),
        ("7c 7d 7h 7s Ac Ad Ah", HandCategory.FOUR_OF_A_KIND, "7c 7d 7h 7s Ac"),
        ("2c 3c 4c 5c 7c 6d 8d", HandCategory.FLUSH, "2c 3c 4c 5c 7c"),
        ("2c 4d 6h 8s Tc Qd 3h", HandCategory.HIGH_CARD, "Qd Tc 8s 6h 4d"),
    ],
)
def test_hand_examples_take_the_best_five(codes: str, category: HandCategory, best_five: str) -> None:
    strength = hand(codes)
    assert strength == evaluate(best_five.split()).strength
    assert int(category_of(np.array([strength]))[0]) == category


def test_a_flush_on_the_board_ties_unless_a_hole_card_improves_it() -> None:
    board = "Kh Th 7h 4h 2h"
    assert hand(f"{board} Ac Ad") == hand(f"{board} Qc Js")
    assert hand(f"{board} Ah 2c") > hand(f"{board} Qh Js")


def test_playing_the_board_ties_and_a_kicker_breaks_ties() -> None:
    assert hand("Ac Kd Qh Js Ts 2c 3d") == hand("Ac Kd Qh Js Ts 4c 5d")
    assert hand("Ac Ad 9h 8s 4s Kc 2d") > hand("Ac Ad 9h 8s 4s Qc Jd")


@settings(max_examples=200, deadline=None)
@given(st.permutations(range(52)), st.permutations(range(7)))
def test_evaluate7_ignores_card_order_and_matches_the_reference(deck: list[int], order: list[int]) -> None:
    cards = np.array([deck[:7]], dtype=np.uint8)
    shuffled = np.ascontiguousarray(cards[:, order])
    assert evaluate7(cards)[0] == evaluate7(shuffled)[0] == best_of_21(cards)[0]


def test_any_integer_dtype_and_layout_gives_the_same_strengths() -> None:
    hands = random_hands(1_000, 4)
    expected = evaluate7(hands)
    assert np.array_equal(evaluate7(hands.astype(np.int64)), expected)
    assert np.array_equal(evaluate7(np.asfortranarray(hands)), expected)
    assert evaluate7(np.zeros((0, 7), dtype=np.uint8)).shape == (0,)


@pytest.mark.parametrize("shape", [(3, 5), (3, 6), (3, 8), (7,), (1, 7, 1)])
def test_evaluate7_rejects_a_wrong_shape(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="shape"):
        evaluate7(np.arange(int(np.prod(shape))).reshape(shape))


def test_evaluate7_rejects_ids_out_of_range_and_floats() -> None:
    with pytest.raises(ValueError, match=r"0\.\.51"):
        evaluate7(np.array([[0, 1, 2, 3, 4, 5, 52]]))
    with pytest.raises(ValueError, match=r"0\.\.51"):
        evaluate7(np.array([[0, 1, 2, 3, 4, 5, -1]]))
    with pytest.raises(ValueError, match="integers"):
        evaluate7(np.zeros((1, 7)))  # type: ignore[arg-type]  # the point: a float array is refused


def test_evaluate7_rejects_a_repeated_card_and_names_the_row() -> None:
    hands = random_hands(100, 5)
    hands[42, 6] = hands[42, 0]
    with pytest.raises(ValueError, match="row 42 holds a card twice"):
        evaluate7(hands)
    with pytest.raises(ValueError, match="twice"):
        evaluate7_one([0, 0, 1, 2, 3, 4, 5])


def peer_orders_like_ours(ours: npt.NDArray[np.uint16], peer: npt.NDArray[np.int64]) -> tuple[int, int]:
    """Sort by ours; count consecutive pairs where the peer is not monotone or splits a tie."""
    order = np.argsort(ours, kind="stable")
    a, p = ours[order], peer[order]
    same = a[1:] == a[:-1]
    split_ties = int(np.count_nonzero(same & (p[1:] != p[:-1])))
    inversions = int(np.count_nonzero(~same & (p[1:] <= p[:-1])))
    return split_ties, inversions


@pytest.mark.parametrize(
    "count", [pytest.param(100_000, id="1e5"), pytest.param(1_000_000, id="1e6", marks=pytest.mark.slow)]
)
def test_phevaluator_orders_and_ties_exactly_as_we_do(count: int) -> None:
    phevaluator = pytest.importorskip("phevaluator")
    hands = random_hands(count, 11)
    # phevaluator numbers cards 4 * rank + suit with suits c, d, h, s, like us; rank 1 is best.
    peer = -np.array([phevaluator.evaluate_cards(*row) for row in hands.tolist()], dtype=np.int64)
    ours = evaluate7(hands)
    assert peer_orders_like_ours(ours, peer) == (0, 0)
    # Both are dense ranks over the 7462 hand values, so they are the same scale reversed.
    assert np.array_equal(ours.astype(np.int64), 7463 + peer)


def test_eval7_library_orders_and_ties_exactly_as_we_do() -> None:
    eval7 = pytest.importorskip("eval7")
    from tables.engine import card_code

    hands = random_hands(100_000, 12)
    deck = [eval7.Card(card_code(c)) for c in range(52)]
    peer = np.array([eval7.evaluate([deck[c] for c in row]) for row in hands.tolist()], dtype=np.int64)
    assert peer_orders_like_ours(evaluate7(hands), peer) == (0, 0)


@pytest.mark.parametrize("cards", [5, 6, 7])
def test_evaluate_best_takes_the_best_five_of_five_six_or_seven(cards: int) -> None:
    hands = random_hands(20_000, 21 + cards, cards)
    subsets = np.array(list(itertools.combinations(range(cards), 5)), dtype=np.intp)
    expected = evaluate_many(np.ascontiguousarray(hands[:, subsets].reshape(-1, 5))).reshape(len(hands), -1).max(axis=1)
    assert np.array_equal(evaluate_best(hands), expected)
    assert np.array_equal(evaluate_best(hands.astype(np.int32)), expected)


@pytest.mark.parametrize("cards", [5, 6])
def test_evaluate_best_rejects_repeats_range_and_shape(cards: int) -> None:
    hands = random_hands(10, 3, cards).astype(np.int64)
    hands[4, 1] = hands[4, 0]
    with pytest.raises(ValueError, match="row 4 holds a card twice"):
        evaluate_best(hands)
    with pytest.raises(ValueError, match=r"0\.\.51"):
        evaluate_best(np.full((1, cards), 52))
    with pytest.raises(ValueError, match="shape"):
        evaluate_best(np.zeros((2, 4), dtype=np.int64))


def test_every_rank_multiset_and_every_flush_mask_agrees_with_phevaluator() -> None:
    # Covers every entry of both tables with an independent evaluator: each of the 49,205
    # seven-rank multisets without a flush (suits 3, 2, 1, 0, 3, 2, 1 in rank order) and
    # each 5..7-card flush rank mask (hearts) filled up with random clubs and diamonds.
    phevaluator = pytest.importorskip("phevaluator")
    rows = [
        [4 * rank + 3 - j % 4 for j, rank in enumerate(combo)]
        for combo in itertools.combinations_with_replacement(range(13), 7)
        if max(combo.count(r) for r in combo) <= 4
    ]
    assert len(rows) == SEVEN_CARD_RANK_MULTISETS
    rng = np.random.default_rng(99)
    for mask in range(1 << 13):
        ranks = [r for r in range(13) if mask >> r & 1]
        if 5 <= len(ranks) <= 7:
            filler = rng.choice(26, size=7 - len(ranks), replace=False)  # 2c..Ad, never hearts
            rows.append([4 * r + 2 for r in ranks] + [4 * int(f // 2) + int(f % 2) for f in filler])
    hands = np.array(rows, dtype=np.uint8)
    peer = np.array([phevaluator.evaluate_cards(*row) for row in rows], dtype=np.int64)
    assert np.array_equal(evaluate7(hands).astype(np.int64), 7463 - peer)


def test_scalar_evaluate7_one_agrees_with_evaluate7_on_random_and_flush_hands() -> None:
    hands = random_hands(20_000, 23)
    assert [evaluate7_one(row) for row in hands.tolist()] == evaluate7(hands).tolist()
    rng = np.random.default_rng(29)
    flushes = []
    for _ in range(3_000):  # five to seven cards of one suit: the flush table's path
        suit = int(rng.integers(0, 4))
        size = int(rng.integers(5, 8))
        ranks = rng.choice(13, size, replace=False)
        others = rng.choice([c for c in range(52) if c & 3 != suit], 7 - size, replace=False)
        flushes.append([int(4 * r + suit) for r in ranks] + [int(c) for c in others])
    assert [evaluate7_one(row) for row in flushes] == evaluate7(np.array(flushes, dtype=np.uint8)).tolist()
    assert evaluate7_one(tuple(flushes[0])) == evaluate7_one([np.int64(c) for c in flushes[0]])  # type: ignore[misc]


@pytest.mark.parametrize("cards", [[0, 0, 1, 2, 3, 4, 5], [-1, 4, 8, 12, 21, 25, 50], [52, 4, 8, 12, 21, 25, 50]])
def test_scalar_evaluate7_one_refuses_a_repeated_or_unknown_card(cards: list[int]) -> None:
    with pytest.raises(ValueError):
        evaluate7_one(cards)
