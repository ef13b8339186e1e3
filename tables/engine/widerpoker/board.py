"""The board: 50 cards in five columns of ten, plus the two cards out.

Seed 000, How it works, 1. Board: a shuffled deck of 52 is divided into five columns; the
two cards left over are the **cards out**. DESIGN item 1 fixes the layout: column ``c``
(0..4) holds deck positions ``10c .. 10c+9`` (position ``p`` of the column is deck
position ``10c + p``) and the cards out are deck positions 50 and 51.

>>> board = Board.from_deck(range(52))
>>> board.codes()[1][:3], board.card(4, 9), board.out
(['4h', '4s', '5c'], 49, (50, 51))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ..cards import DECK_SIZE, as_card_id, card_code
from ..evaluator_tables import HandCategory
from .grid import board_grid

__all__ = ["COLUMNS", "COLUMN_HEIGHT", "Board"]

COLUMNS: Final = 5
"""Columns on the board (seed 000, How it works, 1. Board)."""

COLUMN_HEIGHT: Final = 10
"""Cards per column."""


@dataclass(frozen=True)
class Board:
    """A dealt board: ``columns`` (5 tuples of 10 card ids, top to bottom = positions 0..9)
    and ``out`` (the 2 card ids at deck positions 50 and 51).

    Immutable and hashable, so derived data (the grid) is cached per board. The
    constructor checks that the 52 cards are exactly the deck (``ValueError`` otherwise).
    """

    columns: tuple[tuple[int, ...], ...]
    out: tuple[int, int]

    def __post_init__(self) -> None:
        if len(self.columns) != COLUMNS or any(len(column) != COLUMN_HEIGHT for column in self.columns):
            raise ValueError("a board has 5 columns of 10 cards")
        if len(self.out) != 2:
            raise ValueError("a board has exactly 2 cards out")
        # Normalise to tuples of plain ints (ValueError for anything but ids 0..51), so a
        # board built from lists or numpy integers still hashes and compares as a value.
        columns = tuple(tuple(as_card_id(card) for card in column) for column in self.columns)
        out = (as_card_id(self.out[0]), as_card_id(self.out[1]))
        object.__setattr__(self, "columns", columns)
        object.__setattr__(self, "out", out)
        cards = [card for column in columns for card in column] + list(out)
        if len(set(cards)) != DECK_SIZE:
            raise ValueError("the 52 cards of a board must all be different")

    @classmethod
    def from_columns(cls, columns: Sequence[Sequence[int | str]], out: Sequence[int | str]) -> Board:
        """Build a board from 5 columns of 10 cards and the 2 cards out, as ids or codes.

        Raises ``ValueError`` for a bad code, a wrong count or a repeated card.

        >>> Board.from_columns([["As"] * 10] * 5, ["2c", "2d"])
        Traceback (most recent call last):
        ...
        ValueError: the 52 cards of a board must all be different
        """
        if len(out) != 2:
            raise ValueError("a board has exactly 2 cards out")
        return cls(
            columns=tuple(tuple(as_card_id(card) for card in column) for column in columns),
            out=(as_card_id(out[0]), as_card_id(out[1])),
        )

    @classmethod
    def from_deck(cls, deck: Sequence[int]) -> Board:
        """Lay out a shuffled deck (a permutation of 0..51, index = deck position).

        Column ``c`` gets positions ``10c .. 10c+9``; positions 50 and 51 are the cards out
        (DESIGN item 1). Raises ``ValueError`` unless ``deck`` is a permutation of 0..51.
        """
        if len(deck) != DECK_SIZE:
            raise ValueError(f"a deck has 52 cards, got {len(deck)}")
        cards = [int(card) for card in deck]
        return cls(
            columns=tuple(tuple(cards[10 * c : 10 * c + 10]) for c in range(COLUMNS)),
            out=(cards[50], cards[51]),
        )

    def deck(self) -> tuple[int, ...]:
        """The 52 card ids in deck order (inverse of ``from_deck``)."""
        return tuple(card for column in self.columns for card in column) + self.out

    def card(self, column: int, position: int) -> int:
        """The card id at ``position`` (0..9) of ``column`` (0..4); ``IndexError`` otherwise."""
        if not (0 <= column < COLUMNS and 0 <= position < COLUMN_HEIGHT):
            raise IndexError(f"no card at column {column}, position {position}")
        return self.columns[column][position]

    def hand(self, combination: Sequence[int]) -> tuple[int, ...]:
        """The five card ids of a combination (one position 0..9 per column).

        Seed 000, How it works, 2. Initial combination. Raises ``ValueError`` for anything
        but five positions in 0..9.

        >>> Board.from_deck(range(52)).hand((0, 1, 2, 3, 9))
        (0, 11, 22, 33, 49)
        """
        if len(combination) != COLUMNS or not all(isinstance(p, int) and 0 <= p < COLUMN_HEIGHT for p in combination):
            raise ValueError(f"a combination is five positions 0..9, got {combination!r}")
        return tuple(self.columns[c][p] for c, p in enumerate(combination))

    def codes(self) -> list[list[str]]:
        """The columns as lists of card codes (5 lists of 10)."""
        return [[card_code(card) for card in column] for column in self.columns]

    def out_codes(self) -> list[str]:
        """The two cards out as codes."""
        return [card_code(card) for card in self.out]

    def achievable(self) -> frozenset[HandCategory]:
        """The hand categories some one-card-per-column hand of this board reaches.

        Seed 000, How it works, 3. Change procedure: a category is unreachable (greyed
        on the probability panel) when the cards it needs share a column. Computed from
        the board grid (cached per board).
        """
        return board_grid(self).achievable
