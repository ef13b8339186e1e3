"""The Hold'em hand seed of algorithm 3: inputs frozen first, then a beacon round mixed in,
and the bots' decisions drawn from the hand's own streams (docs/provably-fair.md, section
12, *Algorithm 3*).

* **Freeze.** Before a hand is dealt its inputs are fixed and published (the table frame's
  ``next_hand``): the table, the hand number, the chain element (``chain_id``, index,
  commitment), the button and every seat dealt in with its player's name and the
  commitment of his client seed (bots included: a bot's client seed is fresh for every hand).
  ``freeze_digest`` is the SHA-256 of those lines (``freeze_lines``).
* **Deal round.** The hand waits for the first beacon round released strictly after the
  freeze (``tables.services.beacon.round_after``); nobody, the operator included, knows its
  value while any input can change.
* **Hand seed.** ``server_seed = HMAC-SHA256(key = hand_seed_v2, message = "holdem-deal"
  0x00 freeze_digest beacon_value)``, where ``hand_seed_v2`` is algorithm 2's hand seed
  (``tables.engine.fairness.hand_seed``: the chain seed, table, number and every client
  seed). The deck, the card salts and every other stream of the hand come from it exactly as
  in algorithm 2 (``deck.py``).
* **Bots.** A house bot's ``m``-th decision of the hand (``m`` = the number of actions
  stored before it) draws from ``numpy.random.default_rng(int(B))`` where ``B =
  HMAC-SHA256(server_seed, "holdem-bot" 0x00 seat 0x00 m)`` read as a 256-bit big-endian
  integer: any hand's bot play replays from its seed, and a stream tells nothing of the
  seed (so nothing of a hole card).

Pure functions of bytes and strings: no Django, no clock.

>>> seats = [(0, "ana", client_seed_commitment("ana", "x")), (1, "ben", client_seed_commitment("ben", "y"))]
>>> d = freeze_digest(freeze_lines(table_id=1, number=1, chain_id=1, chain_index=1, commitment="00" * 32,
...     button=0, seats=seats, deal_round=7))
>>> len(deal_seed(bytes(32), d, bytes(32)))
32
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import Final

from numpy.random import Generator, default_rng

__all__ = [
    "ALGORITHM_DEAL_ROUND",
    "FREEZE_FORMAT",
    "LABEL_BOT",
    "LABEL_DEAL",
    "bot_rng",
    "bot_stream",
    "client_seed_commitment",
    "deal_seed",
    "freeze_digest",
    "freeze_lines",
]

ALGORITHM_DEAL_ROUND: Final = 3
"""The algorithm version of Hold'em hands dealt from frozen inputs and a beacon round."""

FREEZE_FORMAT: Final = "holdem-freeze/1"
"""The first line of ``freeze_lines``."""

LABEL_DEAL: Final = "holdem-deal"
"""Label of the hand seed's HMAC message (``deal_seed``)."""

LABEL_BOT: Final = "holdem-bot"
"""Label of a bot decision's stream (``bot_stream``)."""


def client_seed_commitment(name: str, client_seed: str) -> str:
    """The public commitment to a player's client seed: lowercase hex
    ``SHA-256(UTF-8(name ":" client_seed))``, published at the freeze; the seed itself is
    published with the hand's server seed. Raises ValueError for a name with ``:`` or a
    newline, or a seed with a newline (as ``fairness.client_seeds_digest``)."""
    if ":" in name or "\n" in name or "\n" in client_seed:
        raise ValueError(f"a name has no ':' or newline, a client seed no newline: {name!r}")
    return hashlib.sha256(f"{name}:{client_seed}".encode()).hexdigest()


def freeze_lines(
    *,
    table_id: int,
    number: int,
    chain_id: int | None,
    chain_index: int | None,
    commitment: str,
    button: int,
    seats: Sequence[tuple[int, str, str]],
    deal_round: int,
) -> list[str]:
    """The frozen inputs as text lines (the freeze record, in this order):
    ``holdem-freeze/1``, ``table:<id>``, ``hand:<number>``, ``chain:<chain id>:<index>``,
    ``commitment:<hex>``, ``button:<seat>``, ``round:<deal round>``, then one line
    ``seat:<seat>:<name>:<client seed commitment>`` per seat dealt in, by seat number. Numbers
    in decimal ASCII, hex lowercase. Raises ValueError for a seat listed twice or a name
    with ``:`` or a newline."""
    positions = [int(seat) for seat, _, _ in seats]
    if len(set(positions)) != len(positions):
        raise ValueError("a seat is listed twice")
    lines = [
        FREEZE_FORMAT,
        f"table:{int(table_id)}",
        f"hand:{int(number)}",
        f"chain:{'' if chain_id is None else int(chain_id)}:{'' if chain_index is None else int(chain_index)}",
        f"commitment:{commitment.lower()}",
        f"button:{int(button)}",
        f"round:{int(deal_round)}",
    ]
    for seat, name, seed_commitment in sorted(seats, key=lambda s: int(s[0])):
        if ":" in name or "\n" in name:
            raise ValueError(f"a name has no ':' or newline: {name!r}")
        lines.append(f"seat:{int(seat)}:{name}:{seed_commitment.lower()}")
    return lines


def freeze_digest(lines: Sequence[str]) -> bytes:
    """SHA-256 of ``lines`` joined with ``\\n`` (UTF-8, no trailing newline): 32 bytes."""
    return hashlib.sha256("\n".join(lines).encode("utf-8")).digest()


def deal_seed(hand_seed_v2: bytes, digest: bytes, beacon_value: bytes) -> bytes:
    """The hand's server seed (algorithm 3): ``HMAC-SHA256(key = hand_seed_v2, message =
    "holdem-deal" 0x00 digest beacon_value)``. Raises ValueError unless the hand seed and
    the digest are 32 bytes and the beacon value is not empty."""
    if len(hand_seed_v2) != 32 or len(digest) != 32:
        raise ValueError("the hand seed and the freeze digest are 32 bytes")
    if not beacon_value:
        raise ValueError("the beacon value is missing")
    message = LABEL_DEAL.encode("ascii") + b"\x00" + bytes(digest) + bytes(beacon_value)
    return hmac.digest(bytes(hand_seed_v2), message, "sha256")


def bot_stream(server_seed: bytes, seat: int, decision: int) -> bytes:
    """Block of a house bot's decision: ``HMAC-SHA256(server_seed, "holdem-bot" 0x00
    seat 0x00 decision)`` with seat and decision number in decimal ASCII (``decision``: how
    many actions the hand had stored before it). Raises ValueError unless the seed is 32
    bytes and both numbers are >= 0."""
    if len(server_seed) != 32:
        raise ValueError("a server seed is 32 bytes")
    if int(seat) < 0 or int(decision) < 0:
        raise ValueError("seat and decision number are >= 0")
    message = f"{LABEL_BOT}\x00{int(seat)}\x00{int(decision)}".encode("ascii")
    return hmac.digest(bytes(server_seed), message, "sha256")


def bot_rng(server_seed: bytes, seat: int, decision: int) -> Generator:
    """The generator a house bot's decision draws from (``bots.decide``): numpy's default
    generator (PCG64) seeded with ``bot_stream`` read as a 256-bit big-endian integer."""
    return default_rng(int.from_bytes(bot_stream(server_seed, seat, decision), "big"))
