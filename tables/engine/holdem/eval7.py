"""Seven-card evaluation: the best five of seven cards, vectorised, on the five-card scale.

Texas Hold'em showdown (seed 003, *Showdown*: "Five cards of the total of hole and
community cards are to be used"; suits never break ties). The strength of seven cards is
the strength, on exactly the scale of ``tables.engine.evaluator.evaluate_many`` (1..7462,
higher is better, equal iff tied), of the best of their 21 five-card subsets. See
``docs/holdem.md``, *Seven-card evaluation*.

How it works. Every card has a 64-bit key; the key of seven cards is the sum of theirs:

* bits 0..16: the rank counts of ranks 2..8 as base-5 digits (a rank appears at most
  four times), bits 17..30: those of ranks 9..A, also in base 5;
* bits 32..47: one 4-bit counter per suit, biased by 3, so a counter reaches 8 (its top
  bit) exactly when five or more cards share that suit.

Without a flush the best hand depends only on the multiset of seven ranks (49,205 of
them). The two base-5 halves index two small tables whose sum is a minimal perfect hash
of the multiset into a 49,205-entry strength table. With a flush (at most one suit can
have five of seven cards, and then no full house or four of a kind is possible) the
13-bit mask of that suit's ranks indexes an 8,192-entry table of the best flush or
straight flush. The tables (about 0.8 MB) are built on first use from ``evaluate_many``
itself, so the two evaluators agree by construction; the tests re-check it on random
hands against the 21-subset maximum.

>>> from tables.engine.cards import parse_cards
>>> hand = np.array([parse_cards("As Ks Qs Js Ts 2c 2d".split())], dtype=np.uint8)
>>> int(evaluate7(hand)[0])
7462
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import cache
from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt

from ..cards import DECK_SIZE
from ..evaluator import evaluate_many

__all__ = [
    "KEY_BIAS",
    "SEVEN_CARD_RANK_MULTISETS",
    "card_keys",
    "evaluate7",
    "evaluate7_one",
    "evaluate_best",
    "strengths_from_keys",
    "tables_nbytes",
]

SEVEN_CARD_RANK_MULTISETS: Final = 49_205
"""Multisets of seven ranks out of 13 with each rank at most four times."""

_LOW_RANKS: Final = 7  # ranks 2..8 in the low base-5 half
_HIGH_RANKS: Final = 6  # ranks 9..A in the high half
_LOW_BITS: Final = 17  # 5**7 = 78,125 < 2**17
_HIGH_MASK: Final = (1 << 14) - 1  # 5**6 = 15,625 < 2**14
_SUIT_SHIFT: Final = 32
_SUIT_BIAS: Final = 0x3333 << _SUIT_SHIFT
_FLUSH_BITS: Final = 0x8888 << _SUIT_SHIFT
_CHUNK_ROWS: Final = 1 << 15
_SUBSETS: Final = np.array(list(itertools.combinations(range(7), 5)), dtype=np.intp)


class _Tables(NamedTuple):
    pair_key: npt.NDArray[np.uint64]  # indexed by c0 + 256 * c1
    single_key: npt.NDArray[np.uint64]  # indexed by card id, includes the suit bias
    pair_both: npt.NDArray[np.uint64]  # (13108, 2): pair key and (1 << c0) + (1 << c1)
    single_both: npt.NDArray[np.uint64]  # (52, 2): single key and 1 << card
    low_base: npt.NDArray[np.uint32]  # by low base-5 code
    high_rank: npt.NDArray[np.uint32]  # by high base-5 code
    non_flush: npt.NDArray[np.uint16]  # by perfect hash of the rank multiset
    flush: npt.NDArray[np.uint16]  # by 13-bit rank mask of the flush suit


def _card_keys() -> npt.NDArray[np.uint64]:
    cards = np.arange(DECK_SIZE)
    rank, suit = cards >> 2, cards & 3
    digit = np.where(rank < _LOW_RANKS, 5 ** np.minimum(rank, 6), (5 ** np.maximum(rank - 7, 0)) << _LOW_BITS)
    suit_bit = np.left_shift(np.uint64(1), (_SUIT_SHIFT + 4 * suit).astype(np.uint64))
    keys: npt.NDArray[np.uint64] = (digit.astype(np.uint64) + suit_bit).astype(np.uint64)
    return keys


def _pairs(single: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    cards = np.arange(DECK_SIZE)
    table = np.zeros(DECK_SIZE + 256 * (DECK_SIZE - 1), dtype=np.uint64)
    table[cards[:, None] + 256 * cards[None, :]] = single[:, None] + single[None, :]
    return table


def _count_vectors(ranks: int) -> npt.NDArray[np.int64]:
    """All count vectors over ``ranks`` ranks (digit r = count of rank r, 0..4), by code."""
    codes = np.arange(5**ranks)
    return (codes[:, None] // 5 ** np.arange(ranks)[None, :]) % 5


def _rank_within_size(sizes: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Index of each code among the codes of the same size (card count), in code order."""
    rank = np.zeros(len(sizes), dtype=np.int64)
    for size in range(8):
        where = np.flatnonzero(sizes == size)
        rank[where] = np.arange(len(where))
    return rank


def _non_flush_table(counts: npt.NDArray[np.int64]) -> npt.NDArray[np.uint16]:
    """Best five-of-seven strength of each rank multiset (rows of 13 counts summing to 7)."""
    cumulative = np.cumsum(counts, axis=1)
    ranks = np.stack([(cumulative <= j).sum(axis=1) for j in range(7)], axis=1)  # sorted ranks
    ids = 4 * ranks + np.arange(7) % 4  # suits 0,1,2,3,0,1,2: equal ranks differ, no flush
    strengths = evaluate_many(ids[:, _SUBSETS].reshape(-1, 5).astype(np.uint8)).reshape(-1, 21)
    best: npt.NDArray[np.uint16] = strengths.max(axis=1).astype(np.uint16)
    return best


def _flush_table() -> npt.NDArray[np.uint16]:
    """Best flush or straight flush strength by 13-bit mask of one suit's ranks (5..7 bits)."""
    masks = np.arange(1 << 13, dtype=np.int64)
    bits = (masks[:, None] >> np.arange(13)[None, :]) & 1
    flushes = np.flatnonzero((bits.sum(axis=1) >= 5) & (bits.sum(axis=1) <= 7))
    table = np.zeros(1 << 13, dtype=np.uint16)
    # All C(k, 5) five-rank choices of each mask, as clubs; the best is the flush's value.
    best = np.zeros(len(flushes), dtype=np.uint16)
    for k in (5, 6, 7):
        rows = flushes[bits[flushes].sum(axis=1) == k]
        ranks = np.stack([np.flatnonzero(bits[m]) for m in rows]) if len(rows) else np.zeros((0, k), dtype=np.int64)
        choices = np.array(list(itertools.combinations(range(k), 5)), dtype=np.intp)
        ids = (4 * ranks[:, choices]).reshape(-1, 5).astype(np.uint8)
        value = evaluate_many(ids).reshape(len(rows), len(choices)).max(axis=1)
        best[np.searchsorted(flushes, rows)] = value
    table[flushes] = best
    return table


@cache
def _tables() -> _Tables:
    single = _card_keys()
    pair = _pairs(single)
    card_bits = np.left_shift(np.uint64(1), np.arange(DECK_SIZE, dtype=np.uint64))
    low, high = _count_vectors(_LOW_RANKS), _count_vectors(_HIGH_RANKS)
    low_size, high_size = low.sum(axis=1), high.sum(axis=1)
    low_rank, high_rank = _rank_within_size(low_size), _rank_within_size(high_size)
    high_count = np.bincount(high_size, minlength=15)
    low_count = np.bincount(low_size, minlength=29)
    block = np.array([low_count[s] * high_count[7 - s] for s in range(8)], dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(block)[:-1]])
    valid_low = low_size <= 7
    low_base = np.zeros(len(low), dtype=np.int64)
    low_base[valid_low] = start[low_size[valid_low]] + low_rank[valid_low] * high_count[7 - low_size[valid_low]]
    # Every valid multiset: a low vector of size s with a high vector of size 7 - s.
    pairs = [
        (li, hi)
        for s in range(8)
        for li, hi in [np.meshgrid(np.flatnonzero(low_size == s), np.flatnonzero(high_size == 7 - s), indexing="ij")]
    ]
    low_index = np.concatenate([li.ravel() for li, _ in pairs])
    high_index = np.concatenate([hi.ravel() for _, hi in pairs])
    slots = low_base[low_index] + high_rank[high_index]
    counts = np.concatenate([low[low_index], high[high_index]], axis=1)
    non_flush = np.zeros(SEVEN_CARD_RANK_MULTISETS, dtype=np.uint16)
    non_flush[slots] = _non_flush_table(counts)
    tables = _Tables(
        pair_key=pair,
        single_key=single + np.uint64(_SUIT_BIAS),
        pair_both=np.ascontiguousarray(np.stack([pair, _pairs(card_bits)], axis=1)),
        single_both=np.ascontiguousarray(np.stack([single + np.uint64(_SUIT_BIAS), card_bits], axis=1)),
        low_base=low_base.astype(np.uint32),
        high_rank=np.where(high_size <= 7, high_rank, 0).astype(np.uint32),
        non_flush=non_flush,
        flush=_flush_table(),
    )
    for array in tables:
        array.flags.writeable = False
    return tables


def tables_nbytes() -> int:
    """Bytes held by the seven-card tables (built on first call if needed)."""
    return sum(array.nbytes for array in _tables())


def _checked(ids: npt.NDArray[np.integer]) -> npt.NDArray[np.uint8]:
    array = np.asarray(ids)
    if array.ndim != 2 or array.shape[1] != 7:
        raise ValueError(f"expected an array of shape (N, 7), got shape {array.shape}")
    if not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"card ids must be integers, got dtype {array.dtype}")
    if array.size and (int(array.max()) >= DECK_SIZE or (array.dtype.kind == "i" and int(array.min()) < 0)):
        raise ValueError("card ids must be in 0..51")
    if array.dtype != np.uint8 or not array.flags.c_contiguous:
        array = np.ascontiguousarray(array, dtype=np.uint8)
    return array


def evaluate7(ids: npt.NDArray[np.integer], *, check_distinct: bool = True) -> npt.NDArray[np.uint16]:
    """Strengths of many seven-card hands (two hole cards plus a five-card board).

    ``ids``: array of shape ``(N, 7)``, any integer dtype, card ids 0..51 in any order;
    a C-contiguous ``uint8`` array is the fast path (no copy). Returns a new ``uint16``
    array of shape ``(N,)``: for each row the strength (1..7462, higher is better, equal
    iff the hands tie) of its best five cards, equal to the maximum of ``evaluate_many``
    over the row's 21 five-card subsets (seed 003, *Showdown*; ``docs/holdem.md``,
    *Seven-card evaluation*).

    Raises ``ValueError`` for another shape, a non-integer dtype, an id outside 0..51 or,
    when ``check_distinct`` is true (the default), a row holding a card twice. Callers
    whose cards are distinct by construction (equity enumeration) pass
    ``check_distinct=False``; a row with a repeated card then gets an unspecified value.

    >>> hands = np.array([[51, 47, 43, 39, 35, 0, 1], [0, 4, 8, 12, 21, 25, 50]], dtype=np.uint8)
    >>> evaluate7(hands).tolist()  # a royal flush; 5-4-3-2-A
    [7462, 5854]
    """
    array = _checked(ids)
    rows = array.shape[0]
    out = np.empty(rows, dtype=np.uint16)
    if rows == 0:
        return out
    t = _tables()
    # Row r is bytes 7r..7r+6: read (c0, c1), (c2, c3), (c4, c5) as little-endian uint16.
    pair_views = [np.ndarray((rows,), dtype="<u2", buffer=array, offset=o, strides=(7,)) for o in (0, 2, 4)]
    last = array[:, 6]
    size = min(rows, _CHUNK_ROWS)
    both = np.empty((size, 2), dtype=np.uint64)  # key and card bits, side by side
    part_both = np.empty((size, 2), dtype=np.uint64)
    key = np.empty(size, dtype=np.uint64)
    part = np.empty(size, dtype=np.uint64)
    index = np.empty(size, dtype=np.uint64)
    slot = np.empty(size, dtype=np.uint32)
    slot2 = np.empty(size, dtype=np.uint32)
    bit_count = np.empty(size, dtype=np.uint8)
    flush = np.empty(size, dtype=np.bool_)
    flushed_rows: list[npt.NDArray[np.intp]] = []
    flushed_bits: list[npt.NDArray[np.uint64]] = []
    for begin in range(0, rows, _CHUNK_ROWS):
        end = min(rows, begin + _CHUNK_ROWS)
        n = end - begin
        k, p, ix, s, s2, f = key[:n], part[:n], index[:n], slot[:n], slot2[:n], flush[:n]
        if check_distinct:
            kb, pb = both[:n], part_both[:n]
            np.take(t.single_both, last[begin:end], axis=0, out=kb, mode="clip")
            for view in pair_views:
                np.take(t.pair_both, view[begin:end], axis=0, out=pb, mode="clip")
                kb += pb
            # Seven distinct powers of two sum to seven set bits; a repeated card carries,
            # leaving fewer, so the total is 7n exactly when every row is distinct.
            c = np.bitwise_count(kb[:, 1], out=bit_count[:n])
            if int(c.sum(dtype=np.int64)) != 7 * n:
                bad = begin + int(np.flatnonzero(c != 7)[0])
                raise ValueError(f"row {bad} holds a card twice: {array[bad].tolist()}")
            k[:] = kb[:, 0]
        else:
            np.take(t.single_key, last[begin:end], out=k, mode="clip")
            for view in pair_views:
                np.take(t.pair_key, view[begin:end], out=p, mode="clip")
                k += p
        _lookup(k, ix, s, s2, out[begin:end], t)
        np.bitwise_and(k, _FLUSH_BITS, out=ix)
        np.not_equal(ix, 0, out=f)
        flushed = np.flatnonzero(f)
        if len(flushed):
            flushed_rows.append(begin + flushed)
            flushed_bits.append(ix[flushed])
    # About 3% of random rows hold a flush: one pass over all of them after the chunks
    # (a pass per chunk cost about 2 ns per row of the whole input in numpy call overhead).
    if flushed_rows:
        where = np.concatenate(flushed_rows)
        out[where] = _flush_strengths(array[where], np.concatenate(flushed_bits), t.flush)
    return out


def _lookup(
    key: npt.NDArray[np.uint64],
    index: npt.NDArray[np.uint64],
    slot: npt.NDArray[np.uint32],
    slot2: npt.NDArray[np.uint32],
    out: npt.NDArray[np.uint16],
    t: _Tables,
) -> None:
    """Non-flush strengths of biased key sums into ``out``; ``index``, ``slot*`` are scratch."""
    np.bitwise_and(key, (1 << _LOW_BITS) - 1, out=index)
    np.take(t.low_base, index, out=slot, mode="clip")
    np.right_shift(key, _LOW_BITS, out=index)
    index &= _HIGH_MASK
    np.take(t.high_rank, index, out=slot2, mode="clip")
    slot += slot2
    np.take(t.non_flush, slot, out=out, mode="clip")


KEY_BIAS: Final = _SUIT_BIAS
"""Added once to a sum of ``card_keys()``: it arms the flush test (see the module doc)."""


def card_keys() -> npt.NDArray[np.uint64]:
    """The 64-bit key of each card id 0..51 (read-only ``uint64`` array of shape ``(52,)``).

    A building block for callers that enumerate many boards (``equity``): the key of seven
    distinct cards is ``KEY_BIAS`` plus the sum of their keys, and ``strengths_from_keys``
    turns such sums into strengths.
    """
    return _tables().single_key - np.uint64(_SUIT_BIAS)


def strengths_from_keys(
    keys: npt.NDArray[np.uint64], cards_of: Callable[[npt.NDArray[np.intp]], npt.NDArray[np.uint8]]
) -> npt.NDArray[np.uint16]:
    """Strengths (``uint16``, shape ``(N,)``) of seven-card hands given by their key sums.

    ``keys``: ``uint64`` array of shape ``(N,)``, each ``KEY_BIAS`` plus the sum of
    ``card_keys()`` over seven distinct cards (not checked). ``cards_of(rows)`` must return
    the ``(len(rows), 7)`` card ids of the given rows; it is called once, only for the rows
    that hold a flush (about 3% of random hands). Same scale as ``evaluate7``.
    """
    t = _tables()
    n = len(keys)
    out = np.empty(n, dtype=np.uint16)
    _lookup(
        keys,
        np.empty(n, dtype=np.uint64),
        np.empty(n, dtype=np.uint32),
        np.empty(n, dtype=np.uint32),
        out,
        t,
    )
    flush_bits = keys & np.uint64(_FLUSH_BITS)
    flushed = np.flatnonzero(flush_bits)
    if len(flushed):
        out[flushed] = _flush_strengths(cards_of(flushed), flush_bits[flushed], t.flush)
    return out


def _flush_strengths(
    cards: npt.NDArray[np.uint8], flush_bits: npt.NDArray[np.uint64], table: npt.NDArray[np.uint16]
) -> npt.NDArray[np.uint16]:
    """Strengths of rows known to hold a flush; ``flush_bits`` marks the flush suit's counter."""
    suit = ((np.bitwise_count(flush_bits - np.uint64(1)) - (_SUIT_SHIFT + 3)) >> 2).astype(np.uint8)  # bit 35 + 4s
    rank_bits = _RANK_BIT[cards]  # (n, k) uint16: 1 << rank, zeroed off the flush suit
    rank_bits *= (cards & 3) == suit[:, None]
    mask = rank_bits[:, 0] + rank_bits[:, 1]  # column by column: an axis-1 reduction is slower
    for column in range(2, cards.shape[1]):
        mask += rank_bits[:, column]
    strengths: npt.NDArray[np.uint16] = table[mask]
    return strengths


_RANK_BIT: Final = np.array([1 << (card >> 2) for card in range(DECK_SIZE)], dtype=np.uint16)
_RANK_BIT.flags.writeable = False


_SUBSETS_OF_SIX: Final = np.array(list(itertools.combinations(range(6), 5)), dtype=np.intp)


def evaluate_best(ids: npt.NDArray[np.integer]) -> npt.NDArray[np.uint16]:
    """Strengths of the best five cards of rows of five, six or seven cards.

    ``ids``: shape ``(N, k)`` with ``k`` in 5, 6, 7 (a hand on the flop, turn or river:
    two hole cards plus the board so far), any integer dtype, ids 0..51, distinct in a
    row. Returns ``uint16`` of shape ``(N,)`` on the scale of ``evaluate_many``: ``k = 7``
    is ``evaluate7``, ``k = 6`` the best of the six five-card subsets, ``k = 5`` the hand
    itself. Raises ``ValueError`` for another shape, an id outside 0..51, a repeated card
    or a non-integer dtype.

    >>> evaluate_best(np.array([[51, 47, 43, 39, 0, 5]])).tolist()  # A-K-Q-J of spades, 2c, 3d
    [1271]
    """
    array = np.asarray(ids)
    if array.ndim != 2 or array.shape[1] not in (5, 6, 7):
        raise ValueError(f"expected an array of shape (N, 5), (N, 6) or (N, 7), got shape {array.shape}")
    if array.shape[1] == 7:
        return evaluate7(array)
    if not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"card ids must be integers, got dtype {array.dtype}")
    if array.size and (int(array.max()) >= DECK_SIZE or int(array.min()) < 0):
        raise ValueError("card ids must be in 0..51")
    cards = array.astype(np.uint8)
    bits = np.left_shift(np.uint64(1), cards.astype(np.uint64)).sum(axis=1, dtype=np.uint64)
    repeated = np.flatnonzero(np.bitwise_count(bits) != cards.shape[1])
    if len(repeated):
        raise ValueError(f"row {int(repeated[0])} holds a card twice: {cards[repeated[0]].tolist()}")
    if cards.shape[1] == 5:
        return evaluate_many(np.ascontiguousarray(cards))
    subsets = np.ascontiguousarray(cards[:, _SUBSETS_OF_SIX].reshape(-1, 5))
    best: npt.NDArray[np.uint16] = evaluate_many(subsets).reshape(-1, 6).max(axis=1)
    return best


@cache
def _scalar_tables() -> tuple[tuple[int, ...], memoryview, memoryview, memoryview, memoryview]:
    """The seven-card tables as plain ints (card keys) and memoryviews (index with a Python
    int, get a Python int back: no numpy scalar), for ``evaluate7_one``."""
    t = _tables()
    keys = tuple(int(key) for key in card_keys())
    return keys, t.low_base.data, t.high_rank.data, t.non_flush.data, t.flush.data


def evaluate7_one(cards: tuple[int, ...] | list[int]) -> int:
    """Strength (1..7462) of one hand of seven distinct card ids; scalar helper.

    Seven plain ``int`` ids take a pure-Python path over the same tables as ``evaluate7``
    (a key sum, two table reads, or the flush table for a flush): a few microseconds
    instead of a round trip through numpy for one row (about 100 µs, perf audit
    2026-11-26). Anything else goes through ``evaluate7``. Raises ``ValueError`` unless
    there are seven distinct ids in 0..51.

    >>> evaluate7_one([51, 47, 43, 39, 35, 0, 1])
    7462
    """
    if (type(cards) is list or type(cards) is tuple) and len(cards) == 7:
        a, b, c, d, e, f, g = cards
        if (
            int is type(a) is type(b) is type(c) is type(d) is type(e) is type(f) is type(g)
            and 0 <= a < DECK_SIZE
            and 0 <= b < DECK_SIZE
            and 0 <= c < DECK_SIZE
            and 0 <= d < DECK_SIZE
            and 0 <= e < DECK_SIZE
            and 0 <= f < DECK_SIZE
            and 0 <= g < DECK_SIZE
            and ((1 << a) | (1 << b) | (1 << c) | (1 << d) | (1 << e) | (1 << f) | (1 << g)).bit_count() == 7
        ):
            keys, low_base, high_rank, non_flush, flush = _scalar_tables()
            key = KEY_BIAS + keys[a] + keys[b] + keys[c] + keys[d] + keys[e] + keys[f] + keys[g]
            flush_bits = key & _FLUSH_BITS
            if flush_bits:
                suit = (flush_bits.bit_length() - 1 - _SUIT_SHIFT - 3) >> 2  # bit 35 + 4 * suit
                mask = 0
                for card in cards:
                    if card & 3 == suit:
                        mask |= 1 << (card >> 2)
                return int(flush[mask])
            slot = low_base[key & ((1 << _LOW_BITS) - 1)] + high_rank[(key >> _LOW_BITS) & _HIGH_MASK]
            return int(non_flush[slot])
    return int(evaluate7(np.array([cards], dtype=np.int64).reshape(1, -1))[0])
