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

from dataclasses import dataclass

from .errors import SetupError

__all__ = ["MAX_PLAYERS", "MIN_PLAYERS", "DealPositions", "deal_positions"]

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
