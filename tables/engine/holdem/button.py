"""Where the dealer button goes: the first hand of a fresh table and every hand after.

Seed 003 (``003_c848e011f7df0184.txt``), The First round: "A fresh table starts of with
the first person sitting on the table becoming the dealer and the next player posting the
small blind. A new game on a active table starts with the button moving clockwise to the
next player." Seats are table seat numbers (0-based, clockwise).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["first_button", "next_button"]


def first_button(dealt_in_sitting_order: Sequence[int]) -> int:
    """The button of a fresh table's first hand: the seat of the first person who sat down.

    ``dealt_in_sitting_order``: the seats dealt into that hand, earliest seated first (the
    caller orders them by when each player sat down). Raises ``ValueError`` when empty.
    """
    if not dealt_in_sitting_order:
        raise ValueError("the first hand needs players dealt in")
    return dealt_in_sitting_order[0]


def next_button(previous: int, dealt: Sequence[int], seat_count: int) -> int:
    """The button of the next hand on an active table: the first dealt-in seat clockwise
    after ``previous`` (seed 003: "the button moving clockwise to the next player").
    ``dealt``: the seats dealt in; ``seat_count``: the table's seats. Raises ``ValueError``
    when ``dealt`` is empty."""
    if not dealt:
        raise ValueError("a hand needs players dealt in")
    return min(dealt, key=lambda s: (s - previous - 1) % seat_count)
