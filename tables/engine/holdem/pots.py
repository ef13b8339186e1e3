"""Main and side pots from what each player put in, and their split among winners.

Seed 003, Exceptions to the value of betting in each round (the all-in rule: an all-in
player is eligible for the pot "to the point of his final wager"; later bets form side
pots) and Showdown (split pots; "If there is an odd chip, the winning player to the left
of the button/dealer will receive it"). Player indices are in dealing order: index 0 is the
first player left of the button, so the lowest winning index gets the odd chip.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Pot", "build_pots", "split_pot"]


@dataclass(frozen=True, slots=True)
class Pot:
    """One pot: ``amount`` in chips and the ``eligible`` player indices (ascending)."""

    amount: int
    eligible: tuple[int, ...]


def build_pots(contributions: Sequence[int], live: Sequence[bool]) -> tuple[Pot, ...]:
    """Main pot first, then side pots, from each player's total contribution in chips.

    ``contributions[i]`` is everything player ``i`` put in (antes, blinds, bets), folded or
    not; ``live[i]`` is whether player ``i`` can still win (not folded, not mucked). Each
    distinct contribution level makes a layer; adjacent layers with the same eligible
    players merge into one pot. Layers no live player reached are added to the pot below
    (they cannot occur after uncalled bets are returned).

    >>> build_pots([50, 100, 100, 30], [True, True, True, False])
    (Pot(amount=180, eligible=(0, 1, 2)), Pot(amount=100, eligible=(1, 2)))
    """
    pots: list[Pot] = []
    previous = 0
    for level in sorted(set(contributions)):
        if level == 0:
            continue
        amount = sum(min(c, level) - min(c, previous) for c in contributions)
        eligible = tuple(i for i, c in enumerate(contributions) if c >= level and live[i])
        previous = level
        if pots and (pots[-1].eligible == eligible or not eligible):
            pots[-1] = Pot(pots[-1].amount + amount, pots[-1].eligible)
        elif amount:
            pots.append(Pot(amount, eligible))
    return tuple(pots)


def split_pot(amount: int, winners: Sequence[int]) -> dict[int, int]:
    """Split ``amount`` chips equally among ``winners`` (player indices, any order).

    The odd chips go to the first winner left of the button: the lowest index (seed 003,
    Showdown). Raises ``ValueError`` if there is no winner.

    >>> split_pot(101, [2, 0])
    {0: 51, 2: 50}
    """
    if not winners:
        raise ValueError("a pot needs at least one winner")
    ordered = sorted(winners)
    share, odd = divmod(amount, len(ordered))
    return {w: share + (odd if k == 0 else 0) for k, w in enumerate(ordered)}
