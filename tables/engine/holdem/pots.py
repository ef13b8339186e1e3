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

__all__ = ["Pot", "PotResult", "build_pots", "rake_pots", "split_pot"]


@dataclass(frozen=True, slots=True)
class Pot:
    """One pot: ``amount`` in chips and the ``eligible`` player indices (ascending)."""

    amount: int
    eligible: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PotResult:
    """How one settled pot was paid: its ``amount`` before rake and its ``rake`` in chips,
    and the player indices (dealing order, ascending) who shared the rest (``winners``)."""

    amount: int
    rake: int
    winners: tuple[int, ...]


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


def rake_pots(amounts: Sequence[int], *, rake_bps: int, rake_cap: int | None, flop_dealt: bool) -> tuple[int, ...]:
    """The rake of each pot, in chips, paid by that pot's own winners (docs/holdem.md, rake).

    ``amounts``: the pots' sizes in chips, main pot first, as settled (losing hands left
    first, so these are the pots pokerkit pushes). Each pot pays ``floor(amount * rake_bps
    / 10000)``, as pokerkit rakes pot by pot, so a short stack who wins the main pot never
    pays the side pot's rake (seed 003, Showdown: each pot is won on its own). No flop, no
    drop: all zero when the hand ended before the flop. ``rake_cap`` (``None``: no cap) is
    per hand: when ``floor(total * rake_bps / 10000)`` passes it, each pot pays
    ``floor(rake_cap * amount / total)`` instead, its share of the cap by size (never more
    than its own uncapped rake; the sum is at most the cap, short of it by less than one
    chip per pot).

    >>> rake_pots([10_000, 45_050], rake_bps=500, rake_cap=None, flop_dealt=True)
    (500, 2252)
    >>> rake_pots([1_000, 3_000], rake_bps=500, rake_cap=100, flop_dealt=True)
    (25, 75)
    >>> rake_pots([1_000], rake_bps=500, rake_cap=None, flop_dealt=False)
    (0,)
    """
    if not flop_dealt or not rake_bps:
        return tuple(0 for _ in amounts)
    total = sum(amounts)
    if rake_cap is not None and total * rake_bps // 10_000 > rake_cap:
        return tuple(rake_cap * amount // total for amount in amounts)
    return tuple(amount * rake_bps // 10_000 for amount in amounts)


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


def _collect(
    stacks: tuple[int, ...], bets: tuple[int, ...], committed: tuple[int, ...]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Move bets into the pots, returning the uncalled part of the biggest bet to its owner
    (an uncalled bet is never in the pot, so never raked)."""
    if not any(bets):
        return stacks, committed
    cutoff = sorted(bets)[-2]
    new_stacks = list(stacks)
    new_committed = list(committed)
    for j, bet in enumerate(bets):
        if bet > cutoff:
            new_stacks[j] += bet - cutoff
            bet = cutoff
        new_committed[j] += bet
    return tuple(new_stacks), tuple(new_committed)
