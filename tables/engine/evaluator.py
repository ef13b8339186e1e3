"""Hand evaluator: Texas Hold'em ranking of five-card hands, scalar and vectorised.

The ranking is the one of seed 000 (How it works, Hand Ranking) and seed 001 (General
rules 2): ten categories from high card to royal flush; suits never break ties; the ace
plays high, or low in A-2-3-4-5. A hand's **strength** is its dense rank among the 7462
distinct five-card hand values: 1 is the worst high card (7-5-4-3-2), 7462 the royal
flush. Two hands tie exactly when their strengths are equal, so strengths fit ``uint16``
and sort, rank and compare as plain integers.

How the vectorised path works: every rank has a key from ``RANK_KEYS``, chosen so that the
sum of the keys of any five ranks (each rank at most four times) identifies the ranks.
The sum, plus a fixed offset for a flush, indexes one ``uint16`` table of strengths. A
``(N, 5)`` block of ``uint8`` card ids is read as two little-endian ``uint16`` pair indices
and one byte per row; pair keys come from a 13,108-entry table (``c0 + 256 * c1``).

>>> evaluate(["As", "Ks", "Qs", "Js", "Ts"]).category.label
'Royal flush'
>>> int(evaluate_many(np.array([[0, 4, 8, 12, 21]], dtype=np.uint8))[0])  # 7-5-4-3-2
1
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from .cards import DECK_SIZE, as_card_id, card_code
from .evaluator_tables import (
    _CATEGORY_OF_STRENGTH,
    _CHUNK_ROWS,
    _E_CLASS,
    _FLUSH_OFFSET,
    _PAIR_KEY,
    _RANK_KEY_OF_CARD,
    _SINGLE_KEY,
    _STRENGTH_TABLE,
    _SUIT_BIT_OF_CARD,
    MAX_STRENGTH,
    RANK_KEYS,
    HandCategory,
    _fast_tables,
    _flush_of,
)

__all__ = [
    "HandValue",
    "category_of",
    "category_of_strength",
    "evaluate",
    "evaluate_many",
    "evaluate_product",
    "strength_of",
]


class HandValue:
    """The value of one five-card hand, ordered and compared by ``strength`` only.

    ``strength`` is 1..7462 (higher is better, equal iff the hands tie under seed 000,
    Hand Ranking); ``category`` follows from it; ``cards`` are the five card ids as given,
    as plain ints (not part of comparisons, equality or the hash).

    Immutable: the three fields are read-only properties over private slots (a frozen
    dataclass's ``__setattr__`` would make every ``evaluate()`` pay about 0.1 µs more to set
    them, issue 23 item 8). ``HandValue(strength, category, cards)`` checks its input:
    ``ValueError`` for a strength outside 1..7462, a category that is not the strength's or
    a card that is not an id 0..51.

    >>> evaluate(["Ah", "Ad", "7c", "7s", "2d"]) > evaluate(["Kh", "Kd", "Qc", "Qs", "As"])
    True
    >>> HandValue(7462, HandCategory.ROYAL_FLUSH, (51, 47, 43, 39, 35)).label
    'Royal flush'
    """

    __slots__ = ("_cards", "_strength")
    __match_args__ = ("strength", "category", "cards")
    _strength: int
    _cards: tuple[int, ...]

    def __init__(self, strength: int, category: HandCategory | None = None, cards: Sequence[int] = ()) -> None:
        if type(strength) is not int or not 1 <= strength <= MAX_STRENGTH:
            raise ValueError(f"strength must be an int in 1..7462, got {strength!r}")
        if category is not None and category is not _CATEGORY_BY_STRENGTH[strength]:
            raise ValueError(f"strength {strength} is a {_CATEGORY_BY_STRENGTH[strength].label}, not {category!r}")
        self._strength = strength
        self._cards = tuple(as_card_id(card) for card in cards)

    @property
    def strength(self) -> int:
        """Dense rank 1..7462 of the hand (7462 is a royal flush)."""
        return self._strength

    @property
    def category(self) -> HandCategory:
        """The hand's category, from its strength."""
        return _CATEGORY_BY_STRENGTH[self._strength]

    @property
    def cards(self) -> tuple[int, ...]:
        """The five card ids as given, as plain ints (numpy integers converted on first read)."""
        cards = self._cards
        if all(type(card) is int for card in cards):
            return cards
        cards = tuple(operator.index(card) for card in cards)
        self._cards = cards
        return cards

    @property
    def label(self) -> str:
        """The category's human label, e.g. ``"Two pair"``."""
        return _CATEGORY_BY_STRENGTH[self._strength].label

    def codes(self) -> tuple[str, ...]:
        """The cards as codes, in the order given."""
        return tuple(card_code(card) for card in self.cards)

    def __repr__(self) -> str:
        return f"HandValue(strength={self._strength!r}, category={self.category!r}, cards={self.cards!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, HandValue):
            return self._strength == other._strength
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        if isinstance(other, HandValue):
            return self._strength != other._strength
        return NotImplemented

    def __lt__(self, other: HandValue) -> bool:
        if isinstance(other, HandValue):
            return self._strength < other._strength
        return NotImplemented

    def __le__(self, other: HandValue) -> bool:
        if isinstance(other, HandValue):
            return self._strength <= other._strength
        return NotImplemented

    def __gt__(self, other: HandValue) -> bool:
        if isinstance(other, HandValue):
            return self._strength > other._strength
        return NotImplemented

    def __ge__(self, other: HandValue) -> bool:
        if isinstance(other, HandValue):
            return self._strength >= other._strength
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self._strength,))

    def __reduce__(self) -> tuple[type[HandValue], tuple[int, HandCategory, tuple[int, ...]]]:
        return HandValue, (self._strength, self.category, self.cards)


class _Evaluated(HandValue):
    """What ``evaluate()`` builds: a ``HandValue`` made without ``__init__``'s checks.

    Calling a class with no Python ``__init__`` and setting two slots is the cheapest way
    CPython 3.11 has to make such an object (about 55 ns here with its deallocation;
    ``object.__new__`` is about 25 ns slower, the slot descriptors' ``__set__`` over
    100 ns). ``evaluate()`` has already checked the hand. Pickles as a ``HandValue``.
    """

    __slots__ = ()
    __init__ = object.__init__


# The scalar path works on plain Python ints, not numpy. ``_CHECKED_KEY`` is the careful
# one: a key per card whose sum over five cards holds the rank key sum in bits 0..23, a
# 3-bit count per suit in bits 24..35 (a flush is a count of 5) and one bit per card from
# bit 36 on (five distinct cards leave exactly five bits set; a repeated card carries into
# a neighbour and leaves fewer). It is padded with zeros to 104 entries: an id in 52..103,
# or a negative one (read from the end), adds no card bit, so the bit count catches it.
_CHECKED_KEY: Final[tuple[int, ...]] = (
    tuple(RANK_KEYS[card >> 2] + (1 << (24 + 3 * (card & 3))) + (1 << (36 + card)) for card in range(DECK_SIZE))
    + (0,) * DECK_SIZE
)
_FLUSH_SUIT_COUNTS: Final = frozenset(5 << (3 * suit) for suit in range(4))
_STRENGTH_OF_INDEX: Final[dict[int, int]] = {
    int(index): int(_STRENGTH_TABLE[index]) for index in np.flatnonzero(_STRENGTH_TABLE)
}
_CATEGORY_BY_STRENGTH: Final[tuple[HandCategory, ...]] = (  # index 0 is not a hand
    HandCategory.HIGH_CARD,
    *(HandCategory(int(category)) for category in _CATEGORY_OF_STRENGTH[1:]),
)

_PAIR_CLASS: tuple[tuple[int, ...], ...] = ()
_QUAD_ROWS: tuple[tuple[tuple[int, ...], ...], ...] = ()
_FLUSH_OF: tuple[int, ...] = ()
"""By the strength of five cards of five ranks, not all of one suit: their strength when they
are (a flush, or a straight's straight flush); other strengths map to themselves."""


def _build_fast_tables() -> None:
    global _PAIR_CLASS, _QUAD_ROWS, _FLUSH_OF  # built once, on the first scalar call
    if not _QUAD_ROWS:
        _FLUSH_OF = _flush_of()
        _PAIR_CLASS, _QUAD_ROWS = _fast_tables()


def _five_ids(cards: Sequence[int | str]) -> tuple[int, int, int, int, int]:
    """The five card ids of ``cards`` (ids or codes) as plain ints, else ``ValueError``."""
    try:
        a, b, c, d, e = cards if not isinstance(cards, str) else ()
    except (TypeError, ValueError):
        raise ValueError(f"a hand has exactly five cards, got {cards!r}") from None
    a, b, c, d, e = (as_card_id(card) for card in (a, b, c, d, e))
    return a, b, c, d, e


def _strength_of_ids(ids: tuple[int, int, int, int, int], cards: Sequence[int | str]) -> int:
    """Strength of five valid card ids; ``ValueError`` naming ``cards`` if two are equal."""
    key = _CHECKED_KEY
    a, b, c, d, e = ids
    total = key[a] + key[b] + key[c] + key[d] + key[e]
    if (total >> 36).bit_count() != 5:
        raise ValueError(f"a hand needs five distinct cards, got {tuple(cards)!r}")
    index = total & 0xFFFFFF
    if (total >> 24) & 0xFFF in _FLUSH_SUIT_COUNTS:
        index += _FLUSH_OFFSET
    return _STRENGTH_OF_INDEX[index]


def _careful_strength(cards: Sequence[int | str]) -> tuple[int, tuple[int, int, int, int, int]]:
    """Strength and plain-int ids by the careful keys (codes, odd types, errors)."""
    _build_fast_tables()
    ids = _five_ids(cards)
    return _strength_of_ids(ids, cards), ids


def _careful_evaluate(cards: Sequence[int | str]) -> HandValue:
    strength, ids = _careful_strength(cards)
    value: HandValue = _Evaluated()
    value._strength = strength
    value._cards = ids
    return value


def evaluate(cards: Sequence[int | str]) -> HandValue:
    """Evaluate one five-card hand given as card ids (0..51) or codes.

    Implements seed 000, Hand Ranking (and seed 001, General rules 2).
    Raises ``ValueError`` unless there are exactly five distinct valid cards; a bad code
    is named in the message. Card ids may be ints or numpy integers (``bool`` is refused);
    ids take the fast path (four nested look-ups), codes the careful one. Use
    ``strength_of`` when only the strength is needed (it skips the ``HandValue``).

    >>> hand = evaluate(["5d", "4c", "3h", "2s", "Ad"])
    >>> hand.category.name, hand.strength
    ('STRAIGHT', 5854)
    >>> evaluate(["As", "As", "Kd", "Qh", "Jc"])
    Traceback (most recent call last):
    ...
    ValueError: a hand needs five distinct cards, got ('As', 'As', 'Kd', 'Qh', 'Jc')
    """
    try:
        a, b, c, d, e = cards
        strength = _QUAD_ROWS[_PAIR_CLASS[a][b]][_PAIR_CLASS[c][d]][_E_CLASS[e]]  # type: ignore[index]
    except (TypeError, ValueError, IndexError):
        return _careful_evaluate(cards)
    # The flags as literals (a global costs a look-up each): 8191 is _MAX_PLAIN, 8192
    # _CHECK_E, 16384 _CHECK_X, 32768 _CHECK_FLUSH, 65536 _CHECK_BOOL, 131072 _BAD (checked
    # at import).
    if strength > 8191:  # a card may repeat another, or be a bool: compare what can be
        if strength >= 65536:
            if strength >= 131072:
                return _careful_evaluate(cards)
            if a is True or a is False or b is True or b is False or c is True or c is False:
                return _careful_evaluate(cards)
            if d is True or d is False or e is True or e is False:
                return _careful_evaluate(cards)
            strength -= 65536
        if strength >= 32768:  # both pairs suited, five ranks: a flush if a, c and e share a suit
            strength -= 32768
            if a & 3 == c & 3 == e & 3:  # type: ignore[operator]
                strength = _FLUSH_OF[strength]
        if strength >= 16384:
            if a == c or a == d or b == c or b == d:  # noqa: SIM109 (`in` builds a tuple: slower)
                return _careful_evaluate(cards)
            strength -= 16384
        if strength > 8191:
            if e == a or e == b or e == c or e == d:  # noqa: SIM109
                return _careful_evaluate(cards)
            strength -= 8192
    value: HandValue = _Evaluated()
    value._strength = strength
    value._cards = cards if type(cards) is tuple else (a, b, c, d, e)
    return value


def strength_of(cards: Sequence[int | str]) -> int:
    """Strength (1..7462) of one five-card hand: ``evaluate(cards).strength``, faster.

    The scalar peer of eval7's ``evaluate``, which also returns a bare int. Same input
    and errors as ``evaluate`` (card ids 0..51, numpy integers included, or codes;
    ``ValueError`` unless five distinct valid cards), seed 000, Hand Ranking.

    >>> strength_of([51, 47, 43, 39, 35]), strength_of(["7c", "5d", "4h", "3s", "2c"])
    (7462, 1)
    """
    try:
        a, b, c, d, e = cards
        strength = _QUAD_ROWS[_PAIR_CLASS[a][b]][_PAIR_CLASS[c][d]][_E_CLASS[e]]  # type: ignore[index]
    except (TypeError, ValueError, IndexError):
        return _careful_strength(cards)[0]
    if strength > 8191:  # the same checks as ``evaluate``
        if strength >= 65536:
            if strength >= 131072:
                return _careful_strength(cards)[0]
            if a is True or a is False or b is True or b is False or c is True or c is False:
                return _careful_strength(cards)[0]
            if d is True or d is False or e is True or e is False:
                return _careful_strength(cards)[0]
            strength -= 65536
        if strength >= 32768:  # both pairs suited, five ranks: a flush if a, c and e share a suit
            strength -= 32768
            if a & 3 == c & 3 == e & 3:  # type: ignore[operator]
                strength = _FLUSH_OF[strength]
        if strength >= 16384:
            if a == c or a == d or b == c or b == d:  # noqa: SIM109 (`in` builds a tuple: slower)
                return _careful_strength(cards)[0]
            strength -= 16384
        if strength > 8191:
            if e == a or e == b or e == c or e == d:  # noqa: SIM109
                return _careful_strength(cards)[0]
            strength -= 8192
    return strength


def evaluate_many(ids: npt.NDArray[np.integer]) -> npt.NDArray[np.uint16]:
    """Strengths of many five-card hands at once.

    ``ids``: array of shape ``(N, 5)``, any integer dtype, card ids 0..51; a C-contiguous
    ``uint8`` array is the fast path (no copy). Returns a new ``uint16`` array of shape
    ``(N,)`` with strengths 1..7462 (seed 000, Hand Ranking).

    Raises ``ValueError`` for another shape or an id outside 0..51, ``TypeError`` for a
    non-integer dtype. Duplicate cards inside a row are **not** detected (for speed); such
    a row gets an unspecified value in 0..7462.

    >>> hands = np.array([[51, 47, 43, 39, 35], [0, 1, 2, 3, 4]], dtype=np.uint8)
    >>> evaluate_many(hands).tolist()
    [7462, 7297]
    """
    array = np.asarray(ids)
    if array.ndim != 2 or array.shape[1] != 5:
        raise ValueError(f"expected an array of shape (N, 5), got shape {array.shape}")
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"card ids must be integers, got dtype {array.dtype}")
    rows = array.shape[0]
    out = np.empty(rows, dtype=np.uint16)
    if rows == 0:
        return out
    if int(array.max()) >= DECK_SIZE or (array.dtype.kind == "i" and int(array.min()) < 0):
        raise ValueError("card ids must be in 0..51")
    if array.dtype != np.uint8 or not array.flags.c_contiguous:
        array = np.ascontiguousarray(array, dtype=np.uint8)
    # Row r is bytes 5r..5r+4: read (c0, c1) and (c2, c3) as little-endian uint16 pairs.
    pairs01 = np.ndarray((rows,), dtype="<u2", buffer=array, offset=0, strides=(5,))
    pairs23 = np.ndarray((rows,), dtype="<u2", buffer=array, offset=2, strides=(5,))
    last = array[:, 4]
    size = min(rows, _CHUNK_ROWS)
    key = np.empty(size, dtype=np.uint32)
    part = np.empty(size, dtype=np.uint32)
    suits = np.empty(size, dtype=np.uint8)
    shifted = np.empty(size, dtype=np.uint8)
    flush = np.empty(size, dtype=np.bool_)
    for start in range(0, rows, _CHUNK_ROWS):
        stop = min(rows, start + _CHUNK_ROWS)
        n = stop - start
        k, p, s, t, f = key[:n], part[:n], suits[:n], shifted[:n], flush[:n]
        np.take(_PAIR_KEY, pairs01[start:stop], out=k, mode="clip")
        np.take(_PAIR_KEY, pairs23[start:stop], out=p, mode="clip")
        k += p
        np.take(_SINGLE_KEY, last[start:stop], out=p, mode="clip")
        k += p
        np.right_shift(k, 24, out=s, casting="unsafe")
        np.right_shift(s, 1, out=t)
        t &= s
        t &= 0x55
        np.not_equal(t, 0, out=f)
        k &= 0xFFFFFF
        np.add(k, _FLUSH_OFFSET, out=k, where=f)
        np.take(_STRENGTH_TABLE, k, out=out[start:stop], mode="clip")
    return out


def evaluate_product(card_lists: Sequence[Sequence[int]]) -> npt.NDArray[np.uint16]:
    """Strengths of every hand taking one card from each of five card lists.

    ``card_lists``: five sequences of card ids (lengths ``L0..L4``). Returns a ``uint16``
    array of shape ``(L0, L1, L2, L3, L4)`` whose cell ``[i0, ..., i4]`` is the strength of
    ``(card_lists[0][i0], ..., card_lists[4][i4])``. This is how the board grid scores all
    10^5 one-card-per-column hands (DESIGN, "The game, as implemented", item 10). Cards
    must be distinct across lists (not checked); raises ``ValueError`` for a count other
    than five lists or an id outside 0..51.

    >>> evaluate_product([[51], [47], [43], [39], [35, 0]]).tolist()
    [[[[[7462, 1270]]]]]
    """
    if len(card_lists) != 5:
        raise ValueError(f"expected five card lists, got {len(card_lists)}")
    keys: list[npt.NDArray[np.uint32]] = []
    suits: list[npt.NDArray[np.uint8]] = []
    for cards in card_lists:
        ids = np.asarray(cards, dtype=np.intp).ravel()
        if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= DECK_SIZE):
            raise ValueError(f"card ids must be in 0..51, got {list(cards)!r}")
        keys.append(_RANK_KEY_OF_CARD[ids])
        suits.append(_SUIT_BIT_OF_CARD[ids])
    # Two small outer products (columns 0-1 and 2-4), then one large one: the inner loop
    # stays long, which is what makes broadcasting fast.
    head_key = np.add.outer(keys[0], keys[1]).ravel()
    tail_key = np.add.outer(np.add.outer(keys[2], keys[3]).ravel(), keys[4]).ravel()
    head_suit = np.bitwise_and.outer(suits[0], suits[1]).ravel()
    tail_suit = np.bitwise_and.outer(np.bitwise_and.outer(suits[2], suits[3]).ravel(), suits[4])
    index = np.add.outer(head_key, tail_key)
    flush = np.bitwise_and.outer(head_suit, tail_suit.ravel()) != 0
    np.add(index, _FLUSH_OFFSET, out=index, where=flush)
    shape = tuple(len(k) for k in keys)
    return np.take(_STRENGTH_TABLE, index, mode="clip").reshape(shape)


def category_of(strengths: npt.NDArray[np.integer]) -> npt.NDArray[np.uint8]:
    """Categories (``uint8`` values of ``HandCategory``) of an array of strengths.

    ``strengths``: any shape, integer dtype, values 1..7462. Returns a ``uint8`` array of
    the same shape. Raises ``ValueError`` for a value outside 1..7462.

    >>> category_of(np.array([1, 7462, 5854])).tolist()
    [0, 9, 4]
    """
    array = np.asarray(strengths)
    if array.size and (int(array.min()) < 1 or int(array.max()) > MAX_STRENGTH):
        raise ValueError("strengths must be in 1..7462")
    return np.take(_CATEGORY_OF_STRENGTH, array)


def category_of_strength(strength: int) -> HandCategory:
    """The ``HandCategory`` of one strength 1..7462; ``ValueError`` otherwise.

    >>> category_of_strength(7297)
    <HandCategory.FOUR_OF_A_KIND: 7>
    """
    if isinstance(strength, bool) or not 1 <= strength <= MAX_STRENGTH:
        raise ValueError(f"strength must be in 1..7462, got {strength!r}")
    return HandCategory(int(_CATEGORY_OF_STRENGTH[strength]))
