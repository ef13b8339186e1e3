"""Provably fair randomness: labelled HMAC-SHA256 streams of a per-hand server seed.

DESIGN, Architecture, "Provably fair"; seed 000, Glossary, Randomization (the order of
the board's cards, the initial combinations and the card changes are random). Each hand
has a secret 32-byte **server seed**; its SHA-256 (the **commitment**) is published when
the hand starts and the seed itself after settlement, so anyone can recompute the hand.
The full algorithm, with a worked test vector, is in ``docs/provably-fair.md``.

* Stream bytes: block ``i`` (``i`` = 0, 1, 2, ...) is
  ``HMAC-SHA256(key=server_seed, msg=UTF-8(label) || 0x00 || i as 8-byte big-endian)``;
  each 32-byte block is four 64-bit big-endian **words**, consumed in order.
* ``randbelow(n)``: take the next word ``x``; if ``x >= (2**64 // n) * n`` reject it and
  take the next; otherwise return ``x % n``. No modulo bias.

>>> seed = bytes(range(32))
>>> RandomStream(seed, "board").randbelow(52) == RandomStream(seed, "board").randbelow(52)
True
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections.abc import Set
from enum import StrEnum
from typing import Final

from .board import Board
from .cards import DECK_SIZE
from .change import (
    COMBINATION_COUNT,
    MAX_DRAWS,
    ChangeKey,
    Combination,
    combination_from_index,
)

__all__ = [
    "LABEL_BOARD",
    "LABEL_CHANGE_KEYS",
    "LABEL_COMBINATIONS",
    "LABEL_SPIN_JACKPOT",
    "SEED_BYTES",
    "RandomStream",
    "SpinJackpot",
    "change_keys",
    "commitment",
    "deal_board",
    "initial_combinations",
    "redeal_combination",
    "redeal_label",
    "shuffle_deck",
    "spin_jackpot_draw",
]

SEED_BYTES: Final = 32
"""Length of a server seed in bytes."""
LABEL_BOARD: Final = "board"
LABEL_COMBINATIONS: Final = "combinations"
LABEL_CHANGE_KEYS: Final = "change-keys"
LABEL_SPIN_JACKPOT: Final = "spin-jackpot"

_WORD_LIMIT: Final = 1 << 64
_BLOCK: Final = struct.Struct(">4Q")
_COUNTER: Final = struct.Struct(">Q")


def _check_seed(server_seed: bytes) -> bytes:
    if not isinstance(server_seed, bytes | bytearray) or len(server_seed) != SEED_BYTES:
        raise ValueError("a server seed is exactly 32 bytes")
    return bytes(server_seed)


def commitment(server_seed: bytes) -> str:
    """The published commitment: lowercase hex SHA-256 of the 32-byte server seed.

    Raises ``ValueError`` unless ``server_seed`` is exactly 32 bytes.

    >>> commitment(bytes(32))[:16]
    '66687aadf862bd77'
    """
    return hashlib.sha256(_check_seed(server_seed)).hexdigest()


class RandomStream:
    """A deterministic stream of 64-bit words and unbiased integers for one label.

    ``server_seed``: 32 bytes; ``label``: any string (UTF-8 encoded, must not contain
    NUL). Block ``i`` = ``HMAC-SHA256(server_seed, label || 0x00 || i.to_bytes(8, "big"))``,
    read as four big-endian unsigned 64-bit words. The stream is the only stateful object
    of the engine: it is created, consumed and dropped inside one function call.
    Raises ``ValueError`` for a bad seed or a label containing NUL.
    """

    __slots__ = ("_counter", "_label", "_prefix", "_seed", "_words")

    def __init__(self, server_seed: bytes, label: str) -> None:
        if "\x00" in label:
            raise ValueError("a stream label must not contain NUL")
        self._seed = _check_seed(server_seed)
        self._label = label
        self._prefix = label.encode("utf-8") + b"\x00"
        self._counter = 0
        self._words: list[int] = []

    @property
    def label(self) -> str:
        """The stream's label."""
        return self._label

    def block(self, counter: int) -> bytes:
        """Block number ``counter`` (32 bytes) of this stream, without consuming anything."""
        message = self._prefix + _COUNTER.pack(counter)
        return hmac.digest(self._seed, message, "sha256")

    def next_word(self) -> int:
        """The next 64-bit word (0 .. 2**64 - 1) of the stream."""
        if not self._words:
            self._words = list(reversed(_BLOCK.unpack(self.block(self._counter))))
            self._counter += 1
        return self._words.pop()

    def randbelow(self, n: int) -> int:
        """A uniform integer in ``0 .. n-1`` by rejection sampling on 64-bit words.

        A word ``x`` is rejected while ``x >= (2**64 // n) * n``; the first accepted word
        gives ``x % n``. Every call consumes at least one word (also for ``n == 1``).
        Raises ``ValueError`` unless ``1 <= n <= 2**64``.
        """
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= _WORD_LIMIT:
            raise ValueError(f"randbelow needs 1 <= n <= 2**64, got {n!r}")
        limit = _WORD_LIMIT - _WORD_LIMIT % n
        while True:
            x = self.next_word()
            if x < limit:
                return x % n


def shuffle_deck(server_seed: bytes) -> tuple[int, ...]:
    """The shuffled deck: 52 card ids, index = deck position.

    Start from ``[0, 1, ..., 51]``; for ``i`` from 51 down to 1, ``j = randbelow(i + 1)``
    on stream ``"board"``, swap positions ``i`` and ``j`` (Fisher-Yates, Durstenfeld).
    Seed 001, Game course B.2 (the deck is shuffled); DESIGN item 1. Raises
    ``ValueError`` for a bad seed.

    >>> sorted(shuffle_deck(bytes(range(32)))) == list(range(52))
    True
    """
    stream = RandomStream(server_seed, LABEL_BOARD)
    deck = list(range(DECK_SIZE))
    for i in range(DECK_SIZE - 1, 0, -1):
        j = stream.randbelow(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


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
    stream = RandomStream(server_seed, LABEL_COMBINATIONS)
    seen: set[int] = set()
    result: list[Combination] = []
    randbelow = stream.randbelow
    while len(result) < count:
        index = randbelow(COMBINATION_COUNT)
        if index not in seen:
            seen.add(index)
            result.append(combination_from_index(index))
    return result


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
    label = redeal_label(redeal_number)
    if any(not 0 <= index < COMBINATION_COUNT for index in taken):
        raise ValueError("taken combination indices must be in 0..99999")
    if len(taken) >= COMBINATION_COUNT:
        raise ValueError("every combination of this hand is taken")
    stream = RandomStream(server_seed, label)
    while True:
        index = stream.randbelow(COMBINATION_COUNT)
        if index not in taken:
            return combination_from_index(index)


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


def spin_jackpot_draw(server_seed: bytes) -> SpinJackpot | None:
    """The spin jackpot drawn at the start of the hand, if any.

    Stream ``"spin-jackpot"``: ``x = randbelow(6000)``; 0 is gold (1 in 6000), 1..20
    silver (1 in 300), 21..220 bronze (1 in 30), anything else none. At most one jackpot
    a hand. Seed 001, Jackpots 2; DESIGN item 12. Raises ``ValueError`` for a bad seed.
    """
    x = RandomStream(server_seed, LABEL_SPIN_JACKPOT).randbelow(6000)
    if x == 0:
        return SpinJackpot.GOLD
    if x <= 20:
        return SpinJackpot.SILVER
    if x <= 220:
        return SpinJackpot.BRONZE
    return None
