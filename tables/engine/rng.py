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
import struct
from collections.abc import Iterable
from typing import Any, Final

__all__ = ["SEED_BYTES", "RandomStream", "commitment", "hmac_sha256_many", "shuffled"]

SEED_BYTES: Final = 32
"""Length of a server seed in bytes."""

_WORD_LIMIT: Final = 1 << 64
_BLOCK: Final = struct.Struct(">4Q")
_COUNTER: Final = struct.Struct(">Q")
_SHA256_BLOCK: Final = 64


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


def _hmac_states(key: bytes, prefix: bytes) -> tuple[Any, Any]:
    """HMAC-SHA256's two SHA-256 states for ``key`` (at most 64 bytes) after the padded key,
    the inner one also after ``prefix`` (RFC 2104, section 4: precomputed once, continued
    for every message that starts with ``prefix``)."""
    padded = key.ljust(_SHA256_BLOCK, b"\x00")
    inner = hashlib.sha256(bytes(byte ^ 0x36 for byte in padded) + prefix)
    outer = hashlib.sha256(bytes(byte ^ 0x5C for byte in padded))
    return inner, outer


def _continue_hmac(inner_state: Any, outer_state: Any, suffixes: Iterable[bytes]) -> list[bytes]:
    """``HMAC-SHA256(key, prefix || suffix)`` of each suffix, from ``_hmac_states(key, prefix)``."""
    out = []
    for suffix in suffixes:
        inner = inner_state.copy()
        inner.update(suffix)
        outer = outer_state.copy()
        outer.update(inner.digest())
        out.append(outer.digest())
    return out


def hmac_sha256_many(key: bytes, prefix: bytes, suffixes: Iterable[bytes]) -> list[bytes]:
    """``[HMAC-SHA256(key, prefix || suffix) for suffix in suffixes]`` (32 bytes each), about
    twice as fast as ``hmac.digest`` per message: the key is hashed once. ``key``: at most 64
    bytes (a seed is 32). Raises ``ValueError`` for a longer key."""
    if len(key) > _SHA256_BLOCK:
        raise ValueError("an HMAC key of more than 64 bytes is hashed first: not supported here")
    return _continue_hmac(*_hmac_states(bytes(key), bytes(prefix)), suffixes)


class RandomStream:
    """A deterministic stream of 64-bit words and unbiased integers for one label.

    ``server_seed``: 32 bytes; ``label``: any string (UTF-8 encoded, must not contain
    NUL). Block ``i`` = ``HMAC-SHA256(server_seed, label || 0x00 || i.to_bytes(8, "big"))``,
    read as four big-endian unsigned 64-bit words. The stream is the only stateful object
    of the engine: it is created, consumed and dropped inside one function call.
    Raises ``ValueError`` for a bad seed or a label containing NUL.
    """

    __slots__ = ("_counter", "_inner", "_label", "_outer", "_prefix", "_seed", "_words")

    def __init__(self, server_seed: bytes, label: str) -> None:
        if "\x00" in label:
            raise ValueError("a stream label must not contain NUL")
        self._seed = _check_seed(server_seed)
        self._label = label
        self._prefix = label.encode("utf-8") + b"\x00"
        self._counter = 0
        self._words: list[int] = []
        # HMAC's two SHA-256 states after the padded key (and, inside, the label): every block
        # continues from copies of them instead of hashing the key again (RFC 2104, section 4).
        self._inner, self._outer = _hmac_states(self._seed, self._prefix)

    @property
    def label(self) -> str:
        """The stream's label."""
        return self._label

    def block(self, counter: int) -> bytes:
        """Block number ``counter`` (32 bytes) of this stream, without consuming anything."""
        return _continue_hmac(self._inner, self._outer, (_COUNTER.pack(counter),))[0]

    def blocks(self, start: int, count: int) -> bytes:
        """Blocks ``start .. start + count - 1`` of this stream, concatenated (``32 * count``
        bytes), without consuming anything: what a hand of 100,000 entries reads in bulk
        (``widerpoker.deal.initial_combination_indices``, about 290,000 blocks)."""
        return b"".join(_continue_hmac(self._inner, self._outer, map(_COUNTER.pack, range(start, start + count))))

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


def shuffled(server_seed: bytes, label: str, size: int) -> tuple[int, ...]:
    """``0 .. size-1`` shuffled by Fisher-Yates (Durstenfeld) on the stream ``label``.

    Start from ``[0, 1, ..., size-1]``; for ``i`` from ``size-1`` down to 1,
    ``j = randbelow(i + 1)``, swap positions ``i`` and ``j``. Every game's deck is this
    shuffle of the 52 card ids on its own label (WiderPoker ``"board"``, Hold'em
    ``"holdem-deck"``; docs/provably-fair.md). Raises ``ValueError`` for a bad seed or label,
    or unless ``size >= 1``.

    >>> sorted(shuffled(bytes(range(32)), "board", 52)) == list(range(52))
    True
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"size must be an integer >= 1, got {size!r}")
    stream = RandomStream(server_seed, label)
    order = list(range(size))
    for i in range(size - 1, 0, -1):
        j = stream.randbelow(i + 1)
        order[i], order[j] = order[j], order[i]
    return tuple(order)
