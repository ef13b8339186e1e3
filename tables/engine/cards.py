"""Cards: the 52-card French deck as small integers.

A card is the integer ``4 * rank + suit`` with rank 0..12 for 2..A and suit 0..3 for
clubs, diamonds, hearts, spades (seed 001, General rules 1: 52 French cards, no jokers).
Its code is rank letter then suit letter, as in ``"As"``, ``"Td"``, ``"2c"``.

>>> card_id("As"), card_code(0), parse_cards(["Td", "2c"])
(51, '2c', (33, 0))
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Final

__all__ = [
    "DECK_SIZE",
    "RANKS",
    "SUITS",
    "as_card_id",
    "card_code",
    "card_id",
    "parse_cards",
    "rank_of",
    "suit_of",
]

RANKS: Final = "23456789TJQKA"
"""Rank letters, lowest first: index = rank number 0..12 (seed 000, Glossary, Deck of Cards)."""

SUITS: Final = "cdhs"
"""Suit letters: index = suit number 0..3 (clubs, diamonds, hearts, spades); suits never rank."""

DECK_SIZE: Final = 52
"""Cards in the deck (seed 001, General rules 1)."""

_CODES: Final = tuple(rank + suit for rank in RANKS for suit in SUITS)
_IDS: Final = {code: index for index, code in enumerate(_CODES)}


def card_id(code: str) -> int:
    """Return the card id (0..51) of a two-letter code such as ``"As"``.

    The rank letter is one of ``RANKS`` (``T`` for ten) and the suit letter one of
    ``SUITS``; both are case-sensitive, exactly as ``card_code`` writes them.

    Raises ``ValueError`` naming the code when it is not a card.

    >>> card_id("2c"), card_id("Td"), card_id("As")
    (0, 33, 51)
    >>> card_id("Xx")
    Traceback (most recent call last):
    ...
    ValueError: unknown card code 'Xx'
    """
    try:
        return _IDS[code]
    except (KeyError, TypeError):
        raise ValueError(f"unknown card code {code!r}") from None


def card_code(card: int) -> str:
    """Return the two-letter code of a card id (0..51).

    Raises ``ValueError`` when ``card`` is not an integer in 0..51.

    >>> card_code(51), card_code(33)
    ('As', 'Td')
    """
    return _CODES[_checked_id(card)]


def _checked_id(card: object) -> int:
    """``card`` as a plain int 0..51 (numpy integers accepted), else ``ValueError``.

    A plain ``int`` takes the fast path (one type test and a range test). Anything else
    goes through ``operator.index`` in a ``try``: a runtime check against the
    ``SupportsIndex`` protocol cost about 9 µs per card (perf audit 2026-11-26, section 1).
    """
    if type(card) is int:
        if 0 <= card < DECK_SIZE:
            return card
    elif not isinstance(card, bool):
        try:
            index = operator.index(card)  # type: ignore[arg-type]
        except TypeError:
            pass
        else:
            if 0 <= index < DECK_SIZE:
                return index
    raise ValueError(f"card id must be an integer in 0..51, got {card!r}")


def parse_cards(codes: Iterable[str]) -> tuple[int, ...]:
    """Return the card ids of an iterable of codes, in order.

    Duplicates are not rejected here (callers that need distinct cards check it).
    Raises ``ValueError`` naming the first unknown code.

    >>> parse_cards("As Ks Qs".split())
    (51, 47, 43)
    """
    return tuple(card_id(code) for code in codes)


def rank_of(card: int) -> int:
    """Return the rank number 0..12 (2..A) of a card id. Raises ``ValueError`` if not 0..51.

    >>> RANKS[rank_of(card_id("Qh"))]
    'Q'
    """
    return _checked_id(card) >> 2


def suit_of(card: int) -> int:
    """Return the suit number 0..3 (c, d, h, s) of a card id. Raises ``ValueError`` if not 0..51.

    >>> SUITS[suit_of(card_id("Qh"))]
    'h'
    """
    return _checked_id(card) & 3


def as_card_id(card: int | str) -> int:
    """Return the card id of a card given as an id (0..51) or a code.

    Raises ``ValueError`` when it is neither.

    >>> as_card_id("As"), as_card_id(7)
    (51, 7)
    """
    if isinstance(card, str):
        return card_id(card)
    return _checked_id(card)
