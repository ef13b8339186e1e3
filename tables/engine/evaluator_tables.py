"""The hand evaluator's tables: the categories, the rank keys and the lookup tables built from
them at import (the vectorised path's) and on the first scalar call (the fast path's,
``tables.engine.evaluator._build_fast_tables``). Pure numpy, no platform import.
"""

from __future__ import annotations

import itertools
from enum import IntEnum
from typing import Final, TypeVar

import numpy as np
import numpy.typing as npt

from .cards import DECK_SIZE

__all__ = ["MAX_STRENGTH", "RANK_KEYS", "TABLES_NBYTES", "HandCategory"]


class HandCategory(IntEnum):
    """The ten hand categories, worst first (seed 000, How it works, Hand Ranking).

    The integer value orders the categories: ``ROYAL_FLUSH`` (9) beats everything.

    >>> HandCategory.TWO_PAIR > HandCategory.ONE_PAIR, HandCategory(4).label
    (True, 'Straight')
    """

    HIGH_CARD = 0
    ONE_PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8
    ROYAL_FLUSH = 9

    @property
    def label(self) -> str:
        """Human label, e.g. ``"Royal flush"``, ``"Two pair"``, ``"Four of a kind"``."""
        return _LABELS[self]


_LABELS: Final = {
    HandCategory.HIGH_CARD: "High card",
    HandCategory.ONE_PAIR: "One pair",
    HandCategory.TWO_PAIR: "Two pair",
    HandCategory.THREE_OF_A_KIND: "Three of a kind",
    HandCategory.STRAIGHT: "Straight",
    HandCategory.FLUSH: "Flush",
    HandCategory.FULL_HOUSE: "Full house",
    HandCategory.FOUR_OF_A_KIND: "Four of a kind",
    HandCategory.STRAIGHT_FLUSH: "Straight flush",
    HandCategory.ROYAL_FLUSH: "Royal flush",
}

MAX_STRENGTH: Final = 7462
"""Strength of a royal flush: the number of distinct five-card hand values."""

RANK_KEYS: Final = (0, 1, 5, 22, 94, 312, 992, 2422, 5624, 12522, 19998, 43258, 79415)
"""Key of each rank 2..A: the greedy smallest keys whose five-term sums (each rank used at
most four times) are all distinct, so a key sum identifies the multiset of ranks.
``tests/engine/test_evaluator.py`` re-checks the property."""

_NONFLUSH_SPAN: Final = 4 * RANK_KEYS[12] + RANK_KEYS[11] + 1
_FLUSH_OFFSET: Final = _NONFLUSH_SPAN
_TABLE_SIZE: Final = _FLUSH_OFFSET + sum(RANK_KEYS[8:]) + 1
_CHUNK_ROWS: Final = 1 << 15


_T = TypeVar("_T", bound=np.generic)


def _read_only(array: npt.NDArray[_T]) -> npt.NDArray[_T]:
    array.flags.writeable = False
    return array


def _build_tables() -> tuple[npt.NDArray[np.uint16], npt.NDArray[np.uint8]]:
    """Strength table indexed by key sum (+ flush offset) and category by strength.

    Every distinct hand value gets a score ``category * 13**5 + tie-break`` where the
    tie-break lists the ranks by (multiplicity, rank), highest first, in base 13 (a
    straight's tie-break is its top card, 5 for A-2-3-4-5). Sorting the 7462 scores gives
    the dense strengths 1..7462 (seed 000, Hand Ranking).
    """
    ranks = np.array(list(itertools.combinations_with_replacement(range(12, -1, -1), 5)), dtype=np.int64)
    ranks = ranks[ranks[:, 0] != ranks[:, 4]]  # at most four cards of a rank
    multiplicity = (ranks[:, :, None] == ranks[:, None, :]).sum(axis=2)
    by_group = -np.sort(-(multiplicity * 16 + ranks), axis=1)
    tiebreak = (by_group % 16) @ (13 ** np.arange(4, -1, -1))
    shape = -np.sort(-multiplicity, axis=1)
    distinct = shape[:, 0] == 1
    wheel = distinct & (ranks[:, 0] == 12) & (ranks[:, 1] == 3)
    straight = distinct & ((ranks[:, 0] - ranks[:, 4] == 4) | wheel)
    top = np.where(wheel, 3, ranks[:, 0])
    tiebreak = np.where(straight, top * 13**4, tiebreak)
    category = np.select(
        [
            shape[:, 0] == 4,
            (shape[:, 0] == 3) & (shape[:, 3] == 2),
            shape[:, 0] == 3,
            (shape[:, 0] == 2) & (shape[:, 2] == 2),
            shape[:, 0] == 2,
            straight,
        ],
        [
            HandCategory.FOUR_OF_A_KIND,
            HandCategory.FULL_HOUSE,
            HandCategory.THREE_OF_A_KIND,
            HandCategory.TWO_PAIR,
            HandCategory.ONE_PAIR,
            HandCategory.STRAIGHT,
        ],
        HandCategory.HIGH_CARD,
    )
    flush_category = np.where(
        straight,
        np.where(top == 12, HandCategory.ROYAL_FLUSH, HandCategory.STRAIGHT_FLUSH),
        HandCategory.FLUSH,
    )[distinct]
    key = np.array(RANK_KEYS, dtype=np.int64)[ranks].sum(axis=1)
    categories = np.concatenate([category, flush_category])
    scores = categories * 13**5 + np.concatenate([tiebreak, tiebreak[distinct]])
    index = np.concatenate([key, _FLUSH_OFFSET + key[distinct]])
    order = np.argsort(scores, kind="stable")
    table = np.zeros(_TABLE_SIZE, dtype=np.uint16)
    table[index[order]] = np.arange(1, len(order) + 1, dtype=np.uint16)
    by_strength = np.empty(len(order) + 1, dtype=np.uint8)
    by_strength[0] = 255  # strength 0 is not a hand
    by_strength[1:] = categories[order]
    return _read_only(table), _read_only(by_strength)


_STRENGTH_TABLE, _CATEGORY_OF_STRENGTH = _build_tables()
_RANK_KEY_OF_CARD: Final = _read_only(np.array([RANK_KEYS[card >> 2] for card in range(DECK_SIZE)], dtype=np.uint32))
_SUIT_BIT_OF_CARD: Final = _read_only(np.array([1 << (card & 3) for card in range(DECK_SIZE)], dtype=np.uint8))
# Single-card and pair keys for the fast path: the rank key sum in bits 0..23, and in
# bits 24..31 one 2-bit field per suit. A card adds 1 to its suit's field, a pair adds 1
# only when both cards share the suit, so a field reaches 3 exactly for a flush.
_SUIT_FIELD: Final = np.array([1 << (24 + 2 * suit) for suit in range(4)], dtype=np.uint32)
_SINGLE_KEY: Final = _read_only(_RANK_KEY_OF_CARD + _SUIT_FIELD[np.arange(DECK_SIZE) & 3])


def _pair_keys() -> npt.NDArray[np.uint32]:
    first = np.arange(DECK_SIZE)
    pair = np.zeros(DECK_SIZE + 256 * (DECK_SIZE - 1), dtype=np.uint32)
    index = first[:, None] + 256 * first[None, :]
    same_suit = (first[:, None] & 3) == (first[None, :] & 3)
    value = _RANK_KEY_OF_CARD[:, None] + _RANK_KEY_OF_CARD[None, :]
    value = value + np.where(same_suit, _SUIT_FIELD[first & 3][:, None], 0).astype(np.uint32)
    pair[index] = value
    return _read_only(pair)


_PAIR_KEY: Final = _pair_keys()

TABLES_NBYTES: Final = sum(
    a.nbytes
    for a in (
        _STRENGTH_TABLE,
        _CATEGORY_OF_STRENGTH,
        _RANK_KEY_OF_CARD,
        _SUIT_BIT_OF_CARD,
        _SINGLE_KEY,
        _PAIR_KEY,
    )
)
"""Bytes held by the evaluator's lookup tables (about 1.1 MB)."""


# The fast path: four nested look-ups, no arithmetic on the cards.
#
#   strength = _QUAD_ROWS[_PAIR_CLASS[a][b]][_PAIR_CLASS[c][d]][_E_CLASS[e]]
#
# ``_PAIR_CLASS[x][y]`` is the class of the two cards x != y (194 classes, so the ids are
# CPython's cached small ints): their two ranks, whether they share a suit, whether card
# 0 or 1 is among them; x == y and ids outside 0..51 (52..103 and negative ids read
# padding) give ``_NO_PAIR``, an index past the end of ``_QUAD_ROWS``: ``IndexError``, the
# careful path. ``_QUAD_ROWS[p][q]`` is a 16-slot row shared by every two pair classes
# with the same four ranks, the same "both pairs suited", the same card-0/1 flag and the
# same answer to "do the two pairs share a rank" (5,502 rows); slot ``_E_CLASS[e]`` (e's
# rank, or 13 and 14 for cards 0 and 1, or 15 for ids 52..103 and -52..-1) holds the
# strength of the five cards as if not a flush, plus flags; ``_BAD`` for slot 15 and for
# a rank five times. Flags: ``_CHECK_E`` when e's rank is among the four (e may repeat one
# of them), ``_CHECK_X`` when the pairs share a rank (a card of one may repeat a card of
# the other), ``_CHECK_FLUSH`` when both pairs are suited and the five ranks differ (a
# flush if a, c and e share a suit: ``_FLUSH_OF`` then gives the flush strength),
# ``_CHECK_BOOL`` when card 0 or 1 is in the hand (``False``/``True`` index the same
# entries). A repeated card inside a pair never gets a class, so one comparison
# (``strength > _MAX_PLAIN``) lets about half of random hands through with no further
# test, and the others compare only the cards that can be equal (4 comparisons for a pair
# across the two pairs or with e, none for a pair inside one of them). The tables (2.0 MB
# with their int objects) are built on the first scalar call (about 0.1 s; the import
# stays fast): until then they are empty and every hand takes the careful path, which
# builds them.
_CHECK_E: Final = 1 << 13
_CHECK_X: Final = 1 << 14
_CHECK_FLUSH: Final = 1 << 15
_CHECK_BOOL: Final = 1 << 16
_BAD: Final = 1 << 17
_MAX_PLAIN: Final = _CHECK_E - 1
_NO_PAIR: Final = 1 << 20
_ROW: Final = 2 * DECK_SIZE
_E_CLASSES: Final = 15
_E_CLASS: Final[tuple[int, ...]] = (13, 14, *(card >> 2 for card in range(2, DECK_SIZE)), *(_E_CLASSES,) * DECK_SIZE)
"""The row slot of card e: its rank, 13 and 14 for cards 0 and 1, 15 (``_BAD``) for ids
52..103 and -52..-1."""
if (_MAX_PLAIN, _CHECK_E, _CHECK_X, _CHECK_FLUSH, _CHECK_BOOL, _BAD) != (
    8191,
    8192,
    16384,
    32768,
    65536,
    131072,
):  # pragma: no cover
    raise AssertionError("evaluate() and strength_of() compare against these values as literals")


def _fast_tables() -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[tuple[int, ...], ...], ...]]:
    """``(_PAIR_CLASS, _QUAD_ROWS)`` as described above, built with numpy."""
    cards = np.arange(DECK_SIZE)
    rank, suit = cards >> 2, cards & 3
    x, y = np.meshgrid(cards, cards, indexing="ij")
    low, high = np.minimum(rank[x], rank[y]), np.maximum(rank[x], rank[y])
    suited = suit[x] == suit[y]
    has_card_0_or_1 = (x < 2) | (y < 2)
    pair_code = (((low * 13 + high) * 2 + suited) * 2 + has_card_0_or_1)[x != y]
    codes, pair_of = np.unique(pair_code, return_inverse=True)
    pair_class = np.full((_ROW, _ROW), _NO_PAIR, dtype=np.int64)
    pair_class[:DECK_SIZE, :DECK_SIZE][x != y] = pair_of.ravel()
    p_flag, p_suited = codes % 2, (codes // 2) % 2
    p_high, p_low = (codes // 4) % 13, codes // 52
    # Classes of two pair classes: rank counts (base 5), both suited, card 0/1, shared rank.
    first, second = np.meshgrid(np.arange(len(codes)), np.arange(len(codes)), indexing="ij")
    counts_code = 5 ** p_low[first] + 5 ** p_high[first] + 5 ** p_low[second] + 5 ** p_high[second]
    both_suited = p_suited[first] & p_suited[second]
    flag = p_flag[first] | p_flag[second]
    shared = (
        (p_low[first] == p_low[second])
        | (p_low[first] == p_high[second])
        | (p_high[first] == p_low[second])
        | (p_high[first] == p_high[second])
    )
    quad_code = ((counts_code * 2 + both_suited) * 2 + flag) * 2 + shared
    quads, quad_of = np.unique(quad_code, return_inverse=True)
    q_shared, q_flag, q_both_suited = quads % 2, (quads // 2) % 2, (quads // 4) % 2
    q_counts = (quads // 8)[:, None] // 5 ** np.arange(13) % 5  # (classes, 13)
    key_sum = q_counts @ np.array(RANK_KEYS, dtype=np.int64)
    # e enters through its class: its rank (0..12), or 13 and 14 for cards 0 and 1 (rank 0,
    # and a bool may stand for them); suits need no class, the flush flag compares them.
    e_rank = np.array([*range(13), 0, 0])
    e_low = np.arange(_E_CLASSES) >= 13
    e_count = q_counts[:, e_rank]  # (classes, 15): how often e's rank is among the four
    distinct = (q_counts.max(axis=1) == 1)[:, None] & (e_count == 0)
    index = key_sum[:, None] + np.array(RANK_KEYS, dtype=np.int64)[e_rank][None, :]
    strength = _STRENGTH_TABLE[np.minimum(index, _TABLE_SIZE - 1)]
    value = (
        strength.astype(np.int64)
        + np.where(e_count > 0, _CHECK_E, 0)
        + np.where(q_shared == 1, _CHECK_X, 0)[:, None]
        + np.where((q_both_suited == 1)[:, None] & distinct, _CHECK_FLUSH, 0)
        + np.where((q_flag == 1)[:, None] | e_low[None, :], _CHECK_BOOL, 0)
    )
    value = np.where(e_count >= 4, _BAD, value)
    rows = np.full((len(quads), _E_CLASSES + 1), _BAD, dtype=np.int64)  # the last: not a card
    rows[:, :_E_CLASSES] = value
    # One Python int object per distinct value, shared by every slot that holds it; object
    # arrays let numpy place the references, so no per-slot Python work.
    used = np.flatnonzero(np.bincount(rows.ravel(), minlength=_BAD + 1))
    objects = np.empty(_BAD + 1, dtype=object)
    objects[used] = used.tolist()
    row_tuples = np.empty(len(quads), dtype=object)
    for number, row in enumerate(objects[rows].tolist()):
        row_tuples[number] = tuple(row)
    quad_rows = tuple(map(tuple, row_tuples[quad_of.reshape(first.shape)].tolist()))
    no_pair = (_NO_PAIR,) * _ROW
    pairs = tuple(tuple(line) for line in pair_class[:DECK_SIZE].tolist()) + (no_pair,) * DECK_SIZE
    return pairs, quad_rows


def _flush_of() -> tuple[int, ...]:
    """``_FLUSH_OF``: for each rank key sum of five ranks, its strength to its flush strength."""
    index = np.flatnonzero(_STRENGTH_TABLE[:_FLUSH_OFFSET])
    flush = _STRENGTH_TABLE[np.minimum(index + _FLUSH_OFFSET, _TABLE_SIZE - 1)]
    mapping = np.arange(MAX_STRENGTH + 1)
    five_ranks = (index + _FLUSH_OFFSET < _TABLE_SIZE) & (flush != 0)
    mapping[_STRENGTH_TABLE[index[five_ranks]]] = flush[five_ranks]
    return tuple(mapping.tolist())
