"""Fair without trusting the operator: seed chains, players' client seeds, and change keys
fixed by a public beacon (docs/provably-fair.md, "Threat model" and "Algorithm 2").

Shared by every game. Pure functions of bytes; the platform stores and publishes their
inputs and outputs.

* **Seed chain.** A table's chain is ``s_0 .. s_L``: ``s_L`` is a secret 32-byte terminal
  seed and ``s_{i-1} = SHA-256(s_i)``. The **anchor** ``s_0`` is published when the chain is
  created, before any hand uses it. Hand ``i`` of the chain uses ``s_i`` as its chain seed;
  its commitment ``SHA-256(s_i)`` equals ``s_{i-1}``, public since the previous hand was
  revealed (or the anchor), so the randomness of every hand is fixed before the operator
  knows who plays it and cannot be ground.
* **Hand seed.** ``HMAC-SHA256(key = s_i, msg = "hand" 0x00 table_id 0x00 hand_number 0x00
  digest)`` where ``digest`` is the SHA-256 of the players' client seeds (``name:seed``
  lines sorted by name, newline-joined). Every stream of the hand (deck, combinations,
  redeals, spin draw, special hand) uses the hand seed; so each player's own, unpredictable
  client seed changes the whole hand.
* **Entry order.** Entries receive combinations in the order of
  ``HMAC-SHA256(hand_seed, "order" 0x00 name)`` (ascending bytes), never an order the server
  chooses.
* **Keys seed.** The change keys come from the stream ``change-keys`` of
  ``HMAC-SHA256(hand_seed, "keys" 0x00 beacon_value)``, where ``beacon_value`` is the output
  of a public randomness beacon round fixed at the deal and published only after the change
  deadline: nobody, the operator included, knows the keys while choices can still be made.

>>> terminal = bytes(32)
>>> anchor = chain_anchor(terminal, 3)
>>> link_ok(chain_seed(terminal, 3, 1), anchor)
True
"""

from __future__ import annotations

import hashlib
import hmac
import math
import threading
from collections.abc import Sequence
from operator import itemgetter
from typing import Final

from tables.engine.rng import hmac_sha256_many

__all__ = [
    "ALGORITHM_CHAIN",
    "ALGORITHM_DEAL_BEACON",
    "MAX_CHAIN_LENGTH",
    "ChainWalk",
    "chain_anchor",
    "chain_seed",
    "client_seeds_digest",
    "deal_seed",
    "entry_order",
    "hand_seed",
    "keys_seed",
    "link_ok",
    "redeal_seed",
]

ALGORITHM_CHAIN: Final = 2
"""The algorithm version of hands dealt from a seed chain (version 1: a fresh seed a hand)."""
ALGORITHM_DEAL_BEACON: Final = 3
"""The algorithm version of hands whose seed also mixes in the deal round's beacon value, a
round released after the hand's inputs froze, and whose redeals wait for a round after their
purchase (docs/provably-fair.md, "Algorithm 3")."""
MAX_CHAIN_LENGTH: Final = 1_000_000
SEED_BYTES: Final = 32


def _check(seed: bytes, what: str = "seed") -> bytes:
    if not isinstance(seed, bytes | bytearray) or len(seed) != SEED_BYTES:
        raise ValueError(f"a {what} is exactly 32 bytes")
    return bytes(seed)


def chain_seed(terminal: bytes, length: int, index: int) -> bytes:
    """``s_index`` of the chain whose terminal seed is ``s_length``: SHA-256 applied
    ``length - index`` times. Raises ``ValueError`` unless ``0 <= index <= length <=
    MAX_CHAIN_LENGTH`` and the terminal seed is 32 bytes."""
    seed = _check(terminal, "terminal seed")
    if not (isinstance(length, int) and isinstance(index, int)) or not 0 <= index <= length <= MAX_CHAIN_LENGTH:
        raise ValueError(f"need 0 <= index <= length <= {MAX_CHAIN_LENGTH}, got {index}, {length}")
    for _ in range(length - index):
        seed = hashlib.sha256(seed).digest()
    return seed


class ChainWalk:
    """``chain_seed`` of one chain, remembering checkpoints: the elements at the multiples of
    ``stride`` (by default the square root of the length) met on the way down from the
    terminal seed. The first walk (the anchor's, at publication) costs ``length`` hashes;
    each element after costs at most ``stride`` (100 for a chain of 10,000) instead of up
    to ``length``, in any order. The checkpoints are elements of the future hands: only
    the holder of the terminal seed (the signer, tables/signer.py) keeps a walk, in its
    memory, never in the application database (docs/provably-fair.md, 1.10). Thread-safe.
    Raises ``ValueError`` like ``chain_seed``.

    >>> walk = ChainWalk(bytes(32), 100)
    >>> walk.seed(7) == chain_seed(bytes(32), 100, 7)
    True
    """

    def __init__(self, terminal: bytes, length: int, stride: int | None = None) -> None:
        chain_seed(terminal, length, length)  # checks the terminal seed and the length
        self.length = length
        self.stride = max(1, stride or math.isqrt(length))
        self._checkpoints: dict[int, bytes] = {length: bytes(terminal)}
        self._lock = threading.Lock()

    def seed(self, index: int) -> bytes:
        """``s_index`` (32 bytes); raises ``ValueError`` unless ``0 <= index <= length``."""
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index <= self.length:
            raise ValueError(f"need 0 <= index <= length <= {MAX_CHAIN_LENGTH}, got {index}, {self.length}")
        with self._lock:
            start = -(-index // self.stride) * self.stride  # the multiple of the stride at or above
            while start < self.length and start not in self._checkpoints:
                start += self.stride
            start = min(start, self.length)
            seed = self._checkpoints[start]
            for at in range(start - 1, index - 1, -1):
                seed = hashlib.sha256(seed).digest()
                if at % self.stride == 0:
                    self._checkpoints[at] = seed
            return seed


def chain_anchor(terminal: bytes, length: int) -> bytes:
    """The chain's public anchor ``s_0``."""
    return chain_seed(terminal, length, 0)


def link_ok(seed: bytes, previous: bytes) -> bool:
    """Whether ``seed`` is the chain element after ``previous`` (``SHA-256(seed) == previous``)."""
    return hmac.compare_digest(hashlib.sha256(_check(seed)).digest(), _check(previous))


def client_seeds_digest(client_seeds: Sequence[tuple[str, str]]) -> bytes:
    """SHA-256 of ``name:seed`` lines sorted by name and joined by newlines (UTF-8). Raises
    ``ValueError`` for a name listed twice or containing ``:`` or a newline."""
    names = [name for name, _ in client_seeds]
    if len(set(names)) != len(names):
        raise ValueError("a player is listed twice")
    # Checked on the joined strings first (no ':' or newline can appear across a join):
    # 100,000 players in one pass of C each instead of three tests each in Python.
    joined = "".join(names)
    if ":" in joined or "\n" in joined or "\n" in "".join([seed for _, seed in client_seeds]):
        for name, seed in client_seeds:
            if ":" in name or "\n" in name or "\n" in seed:
                raise ValueError(f"a name has no ':' or newline, a client seed no newline: {name!r}")
    # Sorted by name: the names are distinct, so this is the order of the pairs themselves.
    lines = "\n".join([f"{name}:{seed}" for name, seed in sorted(client_seeds, key=itemgetter(0))])
    return hashlib.sha256(lines.encode("utf-8")).digest()


def hand_seed(chain_seed_: bytes, table_id: int, hand_number: int, client_seeds: Sequence[tuple[str, str]]) -> bytes:
    """The seed every stream of the hand uses (module docstring). ``client_seeds``: the
    ``(name, client seed)`` of every player dealt in. Raises ``ValueError`` for bad input.

    >>> hand_seed(bytes(32), 1, 1, [("ana", "x")]) != hand_seed(bytes(32), 1, 1, [("ana", "y")])
    True
    """
    message = b"hand\x00" + str(int(table_id)).encode() + b"\x00" + str(int(hand_number)).encode() + b"\x00"
    return hmac.digest(_check(chain_seed_), message + client_seeds_digest(client_seeds), "sha256")


def deal_seed(chain_seed_: bytes, table_id: int, hand_number: int, digest: bytes, deal_value: bytes) -> bytes:
    """Algorithm 3's hand seed: ``HMAC-SHA256(key = s_i, msg = "hand" 0x00 table_id 0x00
    hand_number 0x00 D || V)``, where ``D`` (32 bytes) is ``client_seeds_digest`` of the
    players frozen into the hand and ``V`` (32 bytes) the value of the **deal round**, the
    first beacon round released strictly after the freeze (docs/provably-fair.md, "Algorithm
    3"). Nobody, whoever holds ``s_i`` and ``D``, knows the seed before that round. Raises
    ``ValueError`` for a seed, digest or value that is not 32 bytes.

    >>> deal_seed(bytes(32), 1, 1, bytes(32), bytes(32)) != deal_seed(bytes(32), 1, 1, bytes(32), bytes([1]) * 32)
    True
    """
    message = b"hand\x00" + str(int(table_id)).encode() + b"\x00" + str(int(hand_number)).encode() + b"\x00"
    return hmac.digest(
        _check(chain_seed_), message + _check(digest, "digest") + _check(deal_value, "beacon value"), "sha256"
    )


def redeal_seed(seed: bytes, redeal_number: int, round_value: bytes) -> bytes:
    """Algorithm 3: the seed of redeal ``redeal_number``'s stream ``redeal:<n>``:
    ``HMAC-SHA256(hand_seed, "redeal" 0x00 n 0x00 V)`` where ``V`` (32 bytes) is the value of
    the first beacon round released strictly after the redeal was bought; so nobody, the
    operator included, knows a redeal's combination when it is bought. Raises ``ValueError``
    for a bad seed, value or number."""
    if not isinstance(redeal_number, int) or isinstance(redeal_number, bool) or redeal_number < 0:
        raise ValueError(f"a redeal number is a non-negative integer, got {redeal_number!r}")
    message = b"redeal\x00" + str(redeal_number).encode() + b"\x00" + _check(round_value, "beacon value")
    return hmac.digest(_check(seed), message, "sha256")


def entry_order(seed: bytes, names: Sequence[str]) -> list[int]:
    """Indices of ``names`` in the order their entries receive combinations: ascending
    ``HMAC-SHA256(hand_seed, "order" 0x00 UTF-8(name))``. Raises ``ValueError`` for a bad
    seed or a name listed twice."""
    key = _check(seed)
    if len(set(names)) != len(names):
        raise ValueError("a player is listed twice")
    tags = hmac_sha256_many(key, b"order\x00", (name.encode("utf-8") for name in names))
    return sorted(range(len(names)), key=tags.__getitem__)


def keys_seed(seed: bytes, beacon_value: bytes) -> bytes:
    """The seed of the hand's change keys: ``HMAC-SHA256(hand_seed, "keys" 0x00 beacon_value)``.
    Raises ``ValueError`` for a bad seed or an empty beacon value."""
    if not beacon_value:
        raise ValueError("the beacon value is missing")
    return hmac.digest(_check(seed), b"keys\x00" + bytes(beacon_value), "sha256")
