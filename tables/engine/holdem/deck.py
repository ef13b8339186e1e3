"""Provably fair Hold'em deck: the shuffle and which deck position goes where.

Seed 003, *The Game* ("a fresh deck of cards for the hand", a single 52-card deck,
shuffled every hand) and seed 004, *Cartaio* (cards dealt one at a time, starting left
of the dealer, clockwise, until everyone has two; then the community cards). The full
algorithm, with a worked test vector, is ``docs/provably-fair.md``, *Texas Hold'em*.

* ``holdem_deck(seed)``: Fisher-Yates (Durstenfeld) on stream ``"holdem-deck"``
  (``tables.engine.rng.shuffled``): from ``[0, ..., 51]``, for ``i`` from 51 down to
  1, ``j = randbelow(i + 1)``, swap positions ``i`` and ``j``.
* ``deal_positions(n)`` (``dealing.py``, the one implementation): in dealing order (first seat dealt left of the button,
  clockwise; heads-up the big blind first, then the button) player ``k`` gets deck
  positions ``k`` and ``k + n``; burn ``2n``, flop ``2n+1 .. 2n+3``, burn ``2n+4``, turn
  ``2n+5``, burn ``2n+6``, river ``2n+7``.

>>> deal = deal_cards(holdem_deck(bytes(range(32))), 3)
>>> len(deal.hole), len(deal.board)
(3, 5)
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ..cards import DECK_SIZE, card_code
from ..rng import hmac_sha256_many, shuffled
from .dealing import MAX_PLAYERS, MIN_PLAYERS, DealPositions, deal_positions

__all__ = [
    "LABEL_CARD_SALT",
    "LABEL_HOLDEM_DECK",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "Deal",
    "DealPositions",
    "card_commitment",
    "card_salts",
    "deal_cards",
    "deal_commitments",
    "deal_positions",
    "dealt_positions",
    "holdem_deck",
]

LABEL_HOLDEM_DECK: Final = "holdem-deck"
"""Stream label of the Hold'em shuffle (``docs/provably-fair.md``, *Texas Hold'em*)."""

LABEL_CARD_SALT: Final = "holdem-card-salt"
"""Label of the per-position card salts (``docs/provably-fair.md``, *Card commitments*)."""


def holdem_deck(server_seed: bytes) -> tuple[int, ...]:
    """The hand's shuffled deck: 52 card ids, index = deck position.

    Start from ``[0, 1, ..., 51]``; for ``i`` from 51 down to 1, ``j = randbelow(i + 1)``
    on stream ``"holdem-deck"``, swap positions ``i`` and ``j`` (Fisher-Yates,
    Durstenfeld; 51 draws). Seed 003, *The Game*; ``docs/provably-fair.md``, *Texas
    Hold'em*. Raises ``ValueError`` unless ``server_seed`` is 32 bytes.

    >>> deck = holdem_deck(bytes(range(32)))
    >>> sorted(deck) == list(range(52)), deck == holdem_deck(bytes(range(32)))
    (True, True)
    """
    return shuffled(server_seed, LABEL_HOLDEM_DECK, DECK_SIZE)


@dataclass(frozen=True)
class Deal:
    """The cards of one hand: hole cards in dealing order, burns and the five-card board."""

    hole: tuple[tuple[int, int], ...]
    burns: tuple[int, int, int]
    board: tuple[int, int, int, int, int]

    def hole_codes(self) -> tuple[str, ...]:
        """Each player's hole cards as one string, e.g. ``"As Kd"``, in dealing order."""
        return tuple(f"{card_code(a)} {card_code(b)}" for a, b in self.hole)

    def board_codes(self) -> tuple[str, ...]:
        """The five board cards as codes: flop, turn, river."""
        return tuple(card_code(card) for card in self.board)


def deal_cards(deck: Sequence[int], n_players: int) -> Deal:
    """The hand's cards: ``deck`` (52 ids, e.g. from ``holdem_deck``) read per ``deal_positions``.

    Raises ``ValueError`` unless ``deck`` is a permutation of 0..51 and ``n_players`` is
    2..10.
    """
    if len(deck) != DECK_SIZE or sorted(deck) != list(range(DECK_SIZE)):
        raise ValueError("a deck is a permutation of the 52 card ids 0..51")
    p = deal_positions(n_players)
    b1, b2, b3 = p.burns
    f1, f2, f3, t, r = p.board
    return Deal(
        hole=tuple((deck[a], deck[b]) for a, b in p.holes),
        burns=(deck[b1], deck[b2], deck[b3]),
        board=(deck[f1], deck[f2], deck[f3], deck[t], deck[r]),
    )


def dealt_positions(n_players: int) -> int:
    """How many deck positions a hand of ``n_players`` deals, burns included: ``2n + 8``
    (positions ``0 .. 2n+7``, ``deal_positions``). Raises ``SetupError`` unless 2..10."""
    deal_positions(n_players)
    return 2 * n_players + 8


def card_salts(server_seed: bytes, count: int) -> tuple[bytes, ...]:
    """The 32-byte salt of each deck position ``0 .. count-1``: block ``i`` of stream
    ``"holdem-card-salt"``, i.e. ``HMAC-SHA256(server_seed, "holdem-card-salt" 0x00 i)``
    with ``i`` as an unsigned 64-bit big-endian integer (``docs/provably-fair.md``,
    *Card commitments*). A salt tells nothing of the seed or of any other salt. Raises
    ``ValueError`` unless ``server_seed`` is 32 bytes.

    >>> [s.hex()[:8] for s in card_salts(bytes(range(32)), 2)]
    ['18586a84', '3686bd20']
    """
    if len(server_seed) != 32:
        raise ValueError("a server seed is 32 bytes")
    prefix = LABEL_CARD_SALT.encode("ascii") + b"\x00"
    return tuple(hmac_sha256_many(server_seed, prefix, (struct.pack(">Q", i) for i in range(count))))


def card_commitment(card: int, salt: bytes) -> str:
    """The commitment to one dealt card: lowercase hex ``SHA-256(UTF-8(card code) || salt)``
    (the code as in ``docs/provably-fair.md`` section 3, e.g. ``"As"``; ``salt`` 32 bytes).

    >>> card_commitment(51, bytes(32))[:12]
    '85d96e031fe7'
    """
    return hashlib.sha256(card_code(card).encode("ascii") + bytes(salt)).hexdigest()


def deal_commitments(server_seed: bytes, n_players: int) -> tuple[str, ...]:
    """The commitments of every position a hand deals (``dealt_positions``): position ``i``
    commits to ``holdem_deck(server_seed)[i]`` with salt ``card_salts(server_seed, ...)[i]``.
    Published at the deal; opening one (card and salt) proves that card without telling
    anything of the others (``docs/provably-fair.md``, *Card commitments*). Raises
    ``ValueError`` for a bad seed or player count.
    """
    deck = holdem_deck(server_seed)
    count = dealt_positions(n_players)
    return tuple(card_commitment(deck[i], salt) for i, salt in enumerate(card_salts(server_seed, count)))
