"""WiderPoker's random draws: board, initial combinations, redeals, change keys, spin
jackpot and special hand, each from its own labelled stream of the hand's server seed.

DESIGN, Architecture, "Provably fair"; the algorithm, with a worked test vector, is in
``docs/provably-fair.md``. The streams themselves are shared with every game
(``tables.engine.rng``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Set
from enum import StrEnum
from types import MappingProxyType
from typing import Final

import numpy as np
import numpy.typing as npt

from ..cards import DECK_SIZE
from ..rng import RandomStream, shuffled
from .board import Board
from .change import (
    COMBINATION_COUNT,
    MAX_DRAWS,
    ChangeKey,
    Combination,
    combination_from_index,
)

__all__ = [
    "DEFAULT_SPIN_ONE_IN",
    "LABEL_BOARD",
    "LABEL_CHANGE_KEYS",
    "LABEL_COMBINATIONS",
    "LABEL_SPECIAL_HAND",
    "LABEL_SPIN_JACKPOT",
    "MAX_SPIN_ONE_IN",
    "SpinJackpot",
    "change_keys",
    "deal_board",
    "initial_combination_indices",
    "initial_combinations",
    "redeal_candidates",
    "redeal_combination",
    "redeal_label",
    "shuffle_deck",
    "special_hand_draw",
    "spin_jackpot_draw",
    "spin_outcomes",
]

LABEL_BOARD: Final = "board"
LABEL_COMBINATIONS: Final = "combinations"
LABEL_CHANGE_KEYS: Final = "change-keys"
LABEL_SPIN_JACKPOT: Final = "spin-jackpot"
LABEL_SPECIAL_HAND: Final = "special-hand"


def shuffle_deck(server_seed: bytes) -> tuple[int, ...]:
    """The shuffled deck: 52 card ids, index = deck position.

    ``shuffled(server_seed, "board", 52)``: start from ``[0, 1, ..., 51]``; for ``i`` from
    51 down to 1, ``j = randbelow(i + 1)`` on stream ``"board"``, swap positions ``i`` and
    ``j`` (Fisher-Yates, Durstenfeld). Seed 001, Game course B.2 (the deck is shuffled);
    DESIGN item 1. Raises ``ValueError`` for a bad seed.

    >>> sorted(shuffle_deck(bytes(range(32)))) == list(range(52))
    True
    """
    return shuffled(server_seed, LABEL_BOARD, DECK_SIZE)


def deal_board(server_seed: bytes) -> Board:
    """The board of a hand: ``Board.from_deck(shuffle_deck(server_seed))``.

    Column ``c`` is deck positions ``10c .. 10c+9``, the cards out are positions 50 and 51
    (seed 000, How it works, 1. Board; DESIGN item 1).
    """
    return Board.from_deck(shuffle_deck(server_seed))


def initial_combinations(server_seed: bytes, count: int) -> list[Combination]:
    """The first ``count`` initial combinations of the hand, distinct, in join order.

    Stream ``"combinations"``: draw ``randbelow(100000)`` repeatedly; an index not drawn
    before becomes the next combination (``combination_from_index``), a repeat is
    skipped. The list for ``count`` is a prefix of the list for any larger count, so the
    platform can assign entries as players join. Seed 000, How it works, 2. Initial
    combination; DESIGN item 2. Raises ``ValueError`` unless ``0 <= count <= 100000``.

    >>> combinations = initial_combinations(bytes(range(32)), 3)
    >>> len(set(combinations)) == 3
    True
    """
    if isinstance(count, bool) or not isinstance(count, int):
        raise ValueError(f"count must be an integer, got {count!r}")
    if not 0 <= count <= COMBINATION_COUNT:
        raise ValueError(f"count must be in 0..{COMBINATION_COUNT}, got {count}")
    return [combination_from_index(index) for index in initial_combination_indices(server_seed, count).tolist()]


_WORD_LIMIT = 1 << 64
_COMBINATION_LIMIT = _WORD_LIMIT - _WORD_LIMIT % COMBINATION_COUNT


def initial_combination_indices(server_seed: bytes, count: int) -> npt.NDArray[np.int64]:
    """``initial_combinations`` as indices (int64 array of shape ``(count,)``), computed in
    bulk: the same stream ``"combinations"``, the same words, the same rejection rule
    (``RandomStream.randbelow``) and the same rule for repeats (the first occurrence counts),
    read a few thousand blocks at a time and resolved with numpy. A hand of 100,000 needs
    about 1.2 million words. Raises ``ValueError`` as ``initial_combinations``.

    >>> seed = bytes(range(32))
    >>> indices = initial_combination_indices(seed, 5).tolist()
    >>> initial_combinations(seed, 5) == [combination_from_index(i) for i in indices]
    True
    """
    if isinstance(count, bool) or not isinstance(count, int):
        raise ValueError(f"count must be an integer, got {count!r}")
    if not 0 <= count <= COMBINATION_COUNT:
        raise ValueError(f"count must be in 0..{COMBINATION_COUNT}, got {count}")
    if count == 0:
        return np.zeros(0, dtype=np.int64)
    stream = RandomStream(server_seed, LABEL_COMBINATIONS)
    n = COMBINATION_COUNT
    # Expected draws for `count` distinct values out of n (coupon collector), plus a margin.
    expected = n * (math.log(n + 0.5) - math.log(n - count + 0.5))
    blocks = int(expected * 1.05 / 4) + 64
    read = 0
    chunks: list[npt.NDArray[np.uint64]] = []
    while True:
        data = stream.blocks(read, blocks)
        read += blocks
        chunks.append(np.frombuffer(data, dtype=">u8").astype(np.uint64))
        words = np.concatenate(chunks)
        accepted = (words[words < np.uint64(_COMBINATION_LIMIT)] % np.uint64(n)).astype(np.int64)
        _, first = np.unique(accepted, return_index=True)
        if len(first) >= count:
            return accepted[np.sort(first)[:count]]
        blocks = max(blocks, 1024)


def redeal_label(redeal_number: int) -> str:
    """Stream label of redeal number ``r`` (0, 1, 2, ... in order of purchase in the hand).

    >>> redeal_label(0)
    'redeal:0'
    """
    if isinstance(redeal_number, bool) or not isinstance(redeal_number, int):
        raise ValueError(f"a redeal number is an integer >= 0, got {redeal_number!r}")
    if redeal_number < 0:
        raise ValueError(f"a redeal number is an integer >= 0, got {redeal_number!r}")
    return f"redeal:{redeal_number}"


def redeal_combination(server_seed: bytes, taken: Set[int], redeal_number: int) -> Combination:
    """The new initial combination bought by redeal number ``redeal_number``.

    Redeals are numbered 0, 1, 2, ... in order of purchase across the whole hand.
    ``taken``: every combination index (0..99999) assigned in this hand so far, initial
    and redealt, folded or not. Stream ``"redeal:<r>"`` (``redeal_label``): draw
    ``randbelow(100000)`` until the index is not in ``taken``. Seed 001, C.2 Redeal;
    DESIGN item 6. Raises ``ValueError`` if every combination is taken, if ``taken``
    holds a value outside 0..99999, or for a bad seed or redeal number.
    """
    redeal_label(redeal_number)  # refuses a bad number
    if any(not 0 <= index < COMBINATION_COUNT for index in taken):
        raise ValueError("taken combination indices must be in 0..99999")
    if len(taken) >= COMBINATION_COUNT:
        raise ValueError("every combination of this hand is taken")
    for index in redeal_candidates(server_seed, redeal_number):
        if index not in taken:
            return combination_from_index(index)
    raise AssertionError("unreachable: the stream is endless")  # pragma: no cover


def redeal_candidates(server_seed: bytes, redeal_number: int) -> Iterator[int]:
    """The endless candidate indices of redeal ``redeal_number``: ``randbelow(100000)`` on
    stream ``"redeal:<r>"``, in order. The first not taken is the redeal's combination
    (``redeal_combination``); the platform checks them against its database a few at a time.

    >>> next(redeal_candidates(bytes(range(32)), 0)) < 100000
    True
    """
    stream = RandomStream(server_seed, redeal_label(redeal_number))
    while True:
        yield stream.randbelow(COMBINATION_COUNT)


def change_keys(server_seed: bytes) -> tuple[ChangeKey, ...]:
    """The five change keys of the hand, one per draw 1..5.

    Stream ``"change-keys"``: 25 draws of ``1 + randbelow(9)``, key 1 first, column 0
    first within a key. Seed 000, How it works, 3. Change procedure (figures 5-6: "change
    key 8 3 5 6 2"); DESIGN items 3 and 5. Raises ``ValueError`` for a bad seed.

    >>> keys = change_keys(bytes(range(32)))
    >>> len(keys), all(1 <= digit <= 9 for key in keys for digit in key)
    (5, True)
    """
    stream = RandomStream(server_seed, LABEL_CHANGE_KEYS)
    return tuple(tuple(1 + stream.randbelow(9) for _ in range(5)) for _ in range(MAX_DRAWS))


class SpinJackpot(StrEnum):
    """The three spin jackpots (seed 001, Jackpots 2; DESIGN item 12)."""

    GOLD = "gold"
    SILVER = "silver"
    BRONZE = "bronze"


DEFAULT_SPIN_ONE_IN: Final[Mapping[SpinJackpot, int]] = MappingProxyType(
    {SpinJackpot.GOLD: 6000, SpinJackpot.SILVER: 300, SpinJackpot.BRONZE: 30}
)
"""Seed 001, Jackpots 2: gold 1 in 6000 hands, silver 1 in 300, bronze 1 in 30."""

MAX_SPIN_ONE_IN: Final = 10_000_000
"""Largest "one in N" a spin jackpot may be configured with."""


def spin_outcomes(
    one_in: Mapping[SpinJackpot, int] = DEFAULT_SPIN_ONE_IN,
) -> tuple[int, tuple[tuple[SpinJackpot, int], ...]]:
    """The spin draw's table: ``(D, ((jackpot, width), ...))`` in the order gold, silver,
    bronze, for the jackpots present in ``one_in``.

    ``D`` is the least common multiple of the configured ``N`` (each jackpot is won "1 in
    N" hands) and jackpot ``k`` owns ``width_k = D / N_k`` consecutive values of
    ``0 .. D-1``, gold first. Raises ``ValueError`` unless every ``N`` is an integer in
    ``2 .. MAX_SPIN_ONE_IN`` and the probabilities add up to less than 1.

    >>> denominator, widths = spin_outcomes()
    >>> denominator, [(str(jackpot), width) for jackpot, width in widths]
    (6000, [('gold', 1), ('silver', 20), ('bronze', 200)])
    """
    present = [(jackpot, one_in[jackpot]) for jackpot in SpinJackpot if jackpot in one_in]
    for jackpot, n in present:
        if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= MAX_SPIN_ONE_IN:
            raise ValueError(f"the {jackpot} jackpot's 1-in-N must be an integer in 2..{MAX_SPIN_ONE_IN}, got {n!r}")
    denominator = math.lcm(*(n for _, n in present)) if present else 1
    widths = tuple((jackpot, denominator // n) for jackpot, n in present)
    if sum(width for _, width in widths) >= denominator:
        raise ValueError("the spin jackpots' probabilities must add up to less than 1")
    return denominator, widths


def spin_jackpot_draw(
    server_seed: bytes, one_in: Mapping[SpinJackpot, int] = DEFAULT_SPIN_ONE_IN
) -> SpinJackpot | None:
    """The spin jackpot drawn at the start of the hand, if any (at most one a hand).

    Stream ``"spin-jackpot"``: ``x = randbelow(D)`` with ``D`` and the widths of
    ``spin_outcomes(one_in)``; the values ``0 .. w_gold-1`` draw gold, the next ``w_silver``
    silver, the next ``w_bronze`` bronze, anything else nothing. With the defaults ``D`` is
    6000: 0 is gold, 1..20 silver, 21..220 bronze. Jackpots absent from ``one_in`` (the
    table has no such jackpot) own no values. The draw is made, and its ``x`` consumed, even
    when the table has no spin jackpot. Seed 001, Jackpots 2; DESIGN item 12. Raises
    ``ValueError`` for a bad seed or configuration.
    """
    denominator, widths = spin_outcomes(one_in)
    x = RandomStream(server_seed, LABEL_SPIN_JACKPOT).randbelow(denominator)
    for jackpot, width in widths:
        if x < width:
            return jackpot
        x -= width
    return None


def special_hand_draw(server_seed: bytes, one_in: int) -> bool:
    """Whether a table whose special hands come "1 in N" hands plays this hand as special.

    Stream ``"special-hand"``: ``randbelow(one_in) == 0``. Seed 001, D; DESIGN item 16.
    Raises ``ValueError`` for a bad seed or unless ``one_in`` is an integer >= 1.
    """
    if isinstance(one_in, bool) or not isinstance(one_in, int) or one_in < 1:
        raise ValueError(f"one_in must be an integer >= 1, got {one_in!r}")
    return RandomStream(server_seed, LABEL_SPECIAL_HAND).randbelow(one_in) == 0
