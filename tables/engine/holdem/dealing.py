"""Where each card of the hand comes from in the shuffled 52-card deck: the dealing contract.

The provably-fair deck (``deck.py``) publishes this contract; this module is its only
implementation in the engine (seed 003, The First round: "the down cards / hole cards
are dealt to each active player"; a single fresh deck per hand, "How does it work?").

Let ``n`` be the players dealt in, in dealing order: the first dealt seat left of the
button, clockwise, the button last (heads-up: the big blind first, then the button).
Player ``k`` (0-based) gets ``deck[k]`` and ``deck[k + n]``; then burn ``deck[2n]``, flop
``deck[2n+1 .. 2n+3]``, burn ``deck[2n+4]``, turn ``deck[2n+5]``, burn ``deck[2n+6]``,
river ``deck[2n+7]``.

>>> p = deal_positions(2)
>>> p.holes, p.burns, p.flop, p.turn, p.river
(((0, 2), (1, 3)), (4, 8, 10), (5, 6, 7), 9, 11)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from .button import first_button, next_button
from .errors import SetupError

__all__ = ["MAX_PLAYERS", "MIN_PLAYERS", "POST", "WAIT", "DealPositions", "Seating", "deal_positions", "seat_hand"]

MIN_PLAYERS = 2
MAX_PLAYERS = 10


@dataclass(frozen=True, slots=True)
class DealPositions:
    """Deck positions (0..51) of every card of a hand of ``len(holes)`` players."""

    holes: tuple[tuple[int, int], ...]
    burns: tuple[int, int, int]
    flop: tuple[int, int, int]
    turn: int
    river: int

    @property
    def board(self) -> tuple[int, int, int, int, int]:
        """The five board positions in dealing order (flop, turn, river)."""
        return (*self.flop, self.turn, self.river)


def deal_positions(n: int) -> DealPositions:
    """The dealing contract for ``n`` players (2..10): deck positions, see the module doc.

    Raises ``SetupError`` (a ``ValueError``) unless ``n`` is an integer in 2..10.
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise SetupError(f"the number of players is an integer, got {n!r}")
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise SetupError(f"a hand needs {MIN_PLAYERS}..{MAX_PLAYERS} players, got {n}")
    base = 2 * n
    return DealPositions(
        holes=tuple((k, k + n) for k in range(n)),
        burns=(base, base + 4, base + 6),
        flop=(base + 1, base + 2, base + 3),
        turn=base + 5,
        river=base + 7,
    )


WAIT: Final = "wait"
"""A player's choice, back at an active table: sit out until the big blind comes round."""
POST: Final = "post"
"""A player's choice, back at an active table: post a big blind now, out of turn."""


@dataclass(frozen=True, slots=True)
class Seating:
    """Who plays the next hand from where: the ``button`` seat, the seats ``waiting`` for
    the big blind (not dealt in) and the seats ``posting`` a big blind out of turn."""

    button: int
    waiting: frozenset[int]
    posting: frozenset[int]


def seat_hand(previous: int | None, positions: Sequence[int], choices: Mapping[int, str], seats: int) -> Seating:
    """The button and the blind choices of the next hand (seed 003, The First round; docs/holdem.md).

    ``previous``: the button of the table's last hand dealt, None for a fresh table.
    ``positions``: the seats (0-based, clockwise) of the players who can play, in seat order,
    or, for a fresh table, in the order they sat down (the first one deals). ``choices``:
    seat -> ``WAIT`` or ``POST`` for the players who came back and chose (other values and
    absent seats: no choice). ``seats``: the table's seat count.

    With a previous hand and two or more players without a choice, the button moves to the
    next of those clockwise; the big blind is the second player after the button who is
    neither posting nor the button, and a waiting player whose big blind this is plays (his
    wait ends), the others sit the hand out; posting players post. Otherwise (a fresh table,
    or a table that restarts with fewer than two such players) everyone is dealt in without
    a choice. Raises ``ValueError`` when ``positions`` is empty.

    >>> seat_hand(None, [3, 1, 5], {}, 6)
    Seating(button=3, waiting=frozenset(), posting=frozenset())
    >>> seat_hand(3, [1, 3, 4, 5], {4: WAIT, 5: WAIT}, 6)
    Seating(button=1, waiting=frozenset({5}), posting=frozenset())
    """
    if not positions:
        raise ValueError("a hand needs players dealt in")
    waiting_choice = {p for p in positions if choices.get(p) == WAIT}
    posting_choice = {p for p in positions if choices.get(p) == POST}
    regular = [p for p in positions if p not in waiting_choice | posting_choice]
    if previous is None:
        return Seating(first_button(positions), frozenset(), frozenset())
    if len(regular) < 2:
        return Seating(next_button(previous, positions, seats), frozenset(), frozenset())
    button = next_button(previous, regular, seats)
    around = sorted(
        (p for p in positions if p != button and p not in posting_choice), key=lambda s: (s - button - 1) % seats
    )
    candidates = [p for p in around if p in regular or p in waiting_choice]
    big_blind = candidates[1] if len(candidates) >= 2 else candidates[0]
    return Seating(button, frozenset(waiting_choice - {big_blind}), frozenset(posting_choice))
