"""A WiderPoker hand's whole arithmetic, in one place, over frozen conditions.

Settlement (``tables.widerpoker.services.settlement``), verification (``handhistory.verification``),
the live pool estimate and the prize-pool simulator all call these functions, so the
platform, the auditor and the player's screen cannot disagree. Money is integer minor units
(cents), never floats.

The order of the money (seed 001, Prize Pool Allocation, Rake, Jackpots, Notes 1; DESIGN
items 11 and 12), for a hand whose entries paid ``gross`` in total:

1. **Jackpot contributions.** Each jackpot that feeds the table sets aside
   ``floor(gross x contribution_bps / 10000)`` before rake.
2. **Rake** ``= floor(gross x rake_bps / 10000)``, at most 10% (rounded down to the cent).
3. **Pool** ``= gross - contributions - rake + carry_in + spin_award``: the cents carried
   from the table's previous hand and the spin jackpot drawn at the start of this hand
   (moved into the hand's escrow when it was drawn) join the pool.
4. **Allocation** of the pool by the table's curve (``tables.engine.allocation``); the
   remainder cents of tie splits (breakage) are carried to the table's next hand.
5. **Royal jackpots.** A final hand that is a royal flush wins every royal jackpot that
   feeds the table, whole: its balance before the hand plus this hand's contribution.
   Simultaneous royal flushes split it equally (``split_evenly``); the indivisible
   remainder cents stay in the jackpot, which then restarts from its reset amount plus
   that remainder.

Default holds (seed 001, B.2 and Notes 2): an entry with no hold received keeps all its
cards if its player was disconnected at the end of the change phase, and changes all of
them if connected.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

from ..allocation import (
    MAX_RAKE_BPS,
    AllocationConfig,
    allocate_pool,
    prize_ladder,
    rake_minor,
    rank_places,
    split_evenly,
)
from ..evaluator import category_of
from ..evaluator_tables import MAX_STRENGTH
from .change import best_draws, draw_strengths
from .grid import BoardGrid

__all__ = [
    "MAX_CONTRIBUTION_BPS",
    "NO_HOLD",
    "EntryScores",
    "HandConditions",
    "HandOutcome",
    "JackpotFeed",
    "PoolSplit",
    "PrizeSimulation",
    "RoyalAward",
    "default_holds",
    "hand_outcome",
    "pool_split",
    "score_entries",
    "simulate_prizes",
]

NO_HOLD: Final = -1
"""The hold mask of an entry whose player sent no hold."""
HOLD_ALL_MASK: Final = 0b11111
MAX_CONTRIBUTION_BPS: Final = 1000
"""At most 10% of the gross is set aside for all the jackpots of a table together."""


def _is_int(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


@dataclass(frozen=True)
class JackpotFeed:
    """A jackpot that feeds on, and can be won at, the hand's table.

    ``key``: a stable name (the platform uses ``"jackpot:<id>"``); ``kind``: ``"royal"``,
    ``"gold"``, ``"silver"`` or ``"bronze"``; ``contribution_bps``: share of the gross set
    aside for it (0..1000); ``balance_minor``: its balance when the hand is settled, before
    this hand's contribution (only royal jackpots use it); ``reset_minor``: the amount it
    restarts from after a win. Raises ``ValueError`` for values out of range.
    """

    key: str
    kind: str
    contribution_bps: int
    balance_minor: int = 0
    reset_minor: int = 0

    def __post_init__(self) -> None:
        if self.kind not in ("royal", "gold", "silver", "bronze"):
            raise ValueError(f"unknown jackpot kind {self.kind!r}")
        if not _is_int(self.contribution_bps) or not 0 <= self.contribution_bps <= MAX_CONTRIBUTION_BPS:
            raise ValueError(f"contribution_bps must be in 0..{MAX_CONTRIBUTION_BPS}, got {self.contribution_bps!r}")
        for name in ("balance_minor", "reset_minor"):
            value = getattr(self, name)
            if not _is_int(value) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {value!r}")


@dataclass(frozen=True)
class HandConditions:
    """The money conditions a hand is played under (frozen when the hand is dealt).

    ``rake_bps``: 0..1000 (seed 001, Notes 1: at most 10%); ``paid_fraction_bps`` and
    ``min_prize_minor``: the allocation (``AllocationConfig``); ``jackpots``: the jackpots
    feeding the table, their contributions together at most ``MAX_CONTRIBUTION_BPS``.
    Raises ``ValueError`` for values out of range.
    """

    rake_bps: int
    paid_fraction_bps: int = 1500
    min_prize_minor: int = 0
    jackpots: tuple[JackpotFeed, ...] = field(default=())

    def __post_init__(self) -> None:
        if not _is_int(self.rake_bps) or not 0 <= self.rake_bps <= MAX_RAKE_BPS:
            raise ValueError(f"rake_bps must be in 0..{MAX_RAKE_BPS}, got {self.rake_bps!r}")
        AllocationConfig(self.paid_fraction_bps, self.min_prize_minor)  # validates
        object.__setattr__(self, "jackpots", tuple(self.jackpots))
        if sum(jackpot.contribution_bps for jackpot in self.jackpots) > MAX_CONTRIBUTION_BPS:
            raise ValueError(f"the jackpots' contributions add up to more than {MAX_CONTRIBUTION_BPS} bps")
        if len({jackpot.key for jackpot in self.jackpots}) != len(self.jackpots):
            raise ValueError("a jackpot is listed twice")

    @property
    def allocation(self) -> AllocationConfig:
        """The prize pool allocation of these conditions."""
        return AllocationConfig(self.paid_fraction_bps, self.min_prize_minor)


@dataclass(frozen=True)
class PoolSplit:
    """Where a hand's gross goes: ``contributions`` (``(key, minor)`` per jackpot, in the
    order of ``HandConditions.jackpots``), ``rake_minor`` and ``pool_minor``; with
    ``gross - sum(contributions) - rake + carry_in + spin_award == pool``."""

    gross_minor: int
    contributions: tuple[tuple[str, int], ...]
    rake_minor: int
    carry_in_minor: int
    spin_award_minor: int
    pool_minor: int

    @property
    def contributions_minor(self) -> int:
        """All the jackpot contributions of the hand together."""
        return sum(amount for _, amount in self.contributions)


def pool_split(
    gross_minor: int, conditions: HandConditions, *, carry_in_minor: int = 0, spin_award_minor: int = 0
) -> PoolSplit:
    """Contributions, rake and pool of a hand whose entries paid ``gross_minor`` (module
    docstring, steps 1-3). Also the live estimate while the hand runs. Raises
    ``ValueError`` for negative amounts.

    >>> split = pool_split(10_000, HandConditions(rake_bps=500, jackpots=(JackpotFeed("r", "royal", 100),)))
    >>> split.contributions, split.rake_minor, split.pool_minor
    ((('r', 100),), 500, 9400)
    """
    for name, value in (("gross", gross_minor), ("carry_in", carry_in_minor), ("spin_award", spin_award_minor)):
        if not _is_int(value) or value < 0:
            raise ValueError(f"{name}_minor must be an integer >= 0, got {value!r}")
    contributions = tuple(
        (jackpot.key, int(gross_minor) * jackpot.contribution_bps // 10_000) for jackpot in conditions.jackpots
    )
    rake = rake_minor(int(gross_minor), conditions.rake_bps)
    pool = int(gross_minor) - sum(amount for _, amount in contributions) - rake + carry_in_minor + spin_award_minor
    return PoolSplit(int(gross_minor), contributions, rake, int(carry_in_minor), int(spin_award_minor), pool)


def default_holds(hold_masks: npt.ArrayLike, connected: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """The hold each entry plays: its own, or the default when none arrived.

    ``hold_masks``: ``(N,)`` integers, bit ``c`` set = column ``c`` held, ``NO_HOLD`` (-1) =
    no choice received; ``connected``: ``(N,)`` bool, the player was connected at the end of
    the change phase. No hold and connected: change all cards (mask 0, seed 001, B.2); no
    hold and disconnected: keep all (mask 31, Notes 2). Returns ``int64`` ``(N,)``. Raises
    ``ValueError`` for shapes that differ or masks outside -1..31.

    >>> default_holds([5, -1, -1], [True, True, False]).tolist()
    [5, 0, 31]
    """
    masks = np.asarray(hold_masks, dtype=np.int64)
    online = np.asarray(connected, dtype=np.bool_)
    if masks.ndim != 1 or online.shape != masks.shape:
        raise ValueError("hold_masks and connected must be (N,) arrays of one length")
    if masks.size and (int(masks.min()) < NO_HOLD or int(masks.max()) > HOLD_ALL_MASK):
        raise ValueError("hold masks are in 0..31, or -1 for no hold")
    return np.where(masks == NO_HOLD, np.where(online, 0, HOLD_ALL_MASK), masks).astype(np.int64)


@dataclass(frozen=True, eq=False)
class EntryScores:
    """Per-entry results of the draws (arrays read-only, input order): ``strengths``
    ``uint16`` ``(N, 5)`` after each of the five draws, ``best_strength`` ``uint16`` ``(N,)``
    over the draws bought, ``best_draw`` ``uint8`` ``(N,)`` (0-based, earliest on ties),
    ``categories`` ``uint8`` ``(N,)``, ``places`` ``int32`` ``(N,)`` (1 = best)."""

    strengths: npt.NDArray[np.uint16]
    best_strength: npt.NDArray[np.uint16]
    best_draw: npt.NDArray[np.uint8]
    categories: npt.NDArray[np.uint8]
    places: npt.NDArray[np.int32]


def score_entries(
    grid: BoardGrid,
    keys: npt.ArrayLike,
    combinations: npt.ArrayLike,
    holds: npt.ArrayLike,
    draws_bought: npt.ArrayLike,
) -> EntryScores:
    """Every entry's five draws, best bought draw, category and place.

    ``keys``: ``(5, 5)`` change keys; ``combinations``: ``(N, 5)`` digits 0..9; ``holds``:
    ``(N,)`` masks 0..31 (after ``default_holds``); ``draws_bought``: ``(N,)`` in 1..5.
    Seed 000, How it works 3 and Glossary (MultiDraw); seed 001, B.3 and C.1. Raises
    ``ValueError`` for wrong shapes or values.
    """
    comb = np.asarray(combinations, dtype=np.uint8).reshape(-1, 5)
    masks = np.asarray(holds, dtype=np.int64)
    if masks.shape != (comb.shape[0],):
        raise ValueError("holds must be an (N,) array of masks")
    held = ((masks[:, None] >> np.arange(5)) & 1).astype(np.bool_)
    strengths = draw_strengths(grid, comb, held, np.asarray(keys, dtype=np.int64))
    best, best_draw = best_draws(strengths, np.asarray(draws_bought, dtype=np.int64))
    categories = category_of(best) if comb.shape[0] else np.zeros(0, dtype=np.uint8)
    places = rank_places(best)
    for array in (strengths, best, best_draw, categories, places):
        array.flags.writeable = False
    return EntryScores(strengths, best, best_draw, categories, places)


@dataclass(frozen=True)
class RoyalAward:
    """A royal jackpot won in the hand: ``amount_minor`` (its balance before the hand plus
    this hand's contribution), ``share_minor`` paid to each of ``winners`` (entry indices),
    ``remainder_minor`` kept in the jackpot, and ``balance_after_minor`` = reset +
    remainder."""

    key: str
    amount_minor: int
    winners: tuple[int, ...]
    share_minor: int
    remainder_minor: int
    balance_after_minor: int


@dataclass(frozen=True, eq=False)
class HandOutcome:
    """Everything a settled hand's records hold, from ``hand_outcome``.

    ``holds``: ``int64`` ``(N,)`` holds played; ``scores``: ``EntryScores``; ``split``:
    ``PoolSplit``; ``prizes_minor``: ``int64`` ``(N,)`` pool prizes; ``breakage_minor``:
    carried to the next hand; ``royal_awards``: one per royal jackpot won;
    ``royal_prizes_minor``: ``int64`` ``(N,)`` jackpot money per entry; ``order``: entry
    indices by place, then join order (the leaderboard order).
    """

    holds: npt.NDArray[np.int64]
    scores: EntryScores
    split: PoolSplit
    prizes_minor: npt.NDArray[np.int64]
    breakage_minor: int
    royal_awards: tuple[RoyalAward, ...]
    royal_prizes_minor: npt.NDArray[np.int64]
    order: npt.NDArray[np.int64]

    @property
    def paid_out_minor(self) -> int:
        """Pool prizes and royal jackpot shares paid to entries, together."""
        return int(self.prizes_minor.sum()) + int(self.royal_prizes_minor.sum())


def hand_outcome(
    grid: BoardGrid,
    keys: npt.ArrayLike,
    *,
    combinations: npt.ArrayLike,
    hold_masks: npt.ArrayLike,
    connected: npt.ArrayLike,
    draws_bought: npt.ArrayLike,
    paid_minor: Sequence[int] | npt.ArrayLike,
    conditions: HandConditions,
    carry_in_minor: int = 0,
    spin_award_minor: int = 0,
) -> HandOutcome:
    """A hand's whole arithmetic (module docstring): holds, draws, places, contributions,
    rake, pool, allocation, breakage, royal jackpot awards and leaderboard order.

    Arrays are ``(N,)`` in join order except ``combinations`` ``(N, 5)`` and ``keys``
    ``(5, 5)``; ``paid_minor``: what each entry paid into the hand (ante, draws, redeals,
    free items included), so ``gross = sum(paid_minor)``. Pure and deterministic: the
    platform's settlement and an auditor's replay call it with the same inputs and get the
    same cents. Raises ``ValueError`` for inconsistent shapes or amounts.
    """
    paid = np.asarray(paid_minor, dtype=np.int64).reshape(-1)
    holds = default_holds(hold_masks, connected)
    if paid.shape != holds.shape:
        raise ValueError("paid_minor must have one amount per entry")
    if paid.size and int(paid.min()) < 0:
        raise ValueError("an entry cannot pay a negative amount")
    scores = score_entries(grid, keys, combinations, holds, draws_bought)
    split = pool_split(int(paid.sum()), conditions, carry_in_minor=carry_in_minor, spin_award_minor=spin_award_minor)
    count = holds.shape[0]
    if count:
        allocation = allocate_pool(split.pool_minor, scores.best_strength, conditions.allocation)
        prizes = allocation.prizes_minor.astype(np.int64)
        breakage = int(allocation.breakage_minor)
    else:
        prizes = np.zeros(0, dtype=np.int64)
        breakage = split.pool_minor
    royal_prizes = np.zeros(count, dtype=np.int64)
    winners = tuple(int(i) for i in np.flatnonzero(scores.best_strength == MAX_STRENGTH))
    awards: list[RoyalAward] = []
    if winners:
        contributed = dict(split.contributions)
        for jackpot in conditions.jackpots:
            if jackpot.kind != "royal":
                continue
            amount = jackpot.balance_minor + contributed[jackpot.key]
            share, remainder = split_evenly(amount, len(winners))
            royal_prizes[list(winners)] += share
            awards.append(RoyalAward(jackpot.key, amount, winners, share, remainder, jackpot.reset_minor + remainder))
    order = np.lexsort((np.arange(count), scores.places)).astype(np.int64)
    for array in (holds, prizes, royal_prizes, order):
        array.flags.writeable = False
    return HandOutcome(holds, scores, split, prizes, breakage, tuple(awards), royal_prizes, order)


@dataclass(frozen=True, eq=False)
class PrizeSimulation:
    """What a hand of ``entries`` players paying ``split.gross_minor`` would pay: the money
    split and ``place_prizes_minor`` (``int64`` ``(P,)``, the prize of places 1..P when no
    two final hands tie)."""

    entries: int
    split: PoolSplit
    place_prizes_minor: npt.NDArray[np.int64]

    @property
    def paid_places(self) -> int:
        """How many places are paid."""
        return int(self.place_prizes_minor.shape[0])


def simulate_prizes(
    entries: int,
    gross_minor: int,
    conditions: HandConditions,
    *,
    carry_in_minor: int = 0,
    spin_award_minor: int = 0,
) -> PrizeSimulation:
    """The prize-pool simulator (seed 001, Prize Pool Allocation: "You can use the simulator
    below to estimate your winning expectations"): the same ``pool_split`` and allocation
    ladder settlement uses, for ``entries`` >= 1 players. Raises ``ValueError`` for bad input.

    >>> sim = simulate_prizes(100, 10_000, HandConditions(rake_bps=500))
    >>> sim.split.pool_minor, sim.paid_places, int(sim.place_prizes_minor.sum())
    (9500, 15, 9500)
    """
    if not _is_int(entries) or entries < 1:
        raise ValueError(f"entries must be an integer >= 1, got {entries!r}")
    split = pool_split(gross_minor, conditions, carry_in_minor=carry_in_minor, spin_award_minor=spin_award_minor)
    ladder = prize_ladder(split.pool_minor, int(entries), conditions.allocation).astype(np.int64)
    ladder.flags.writeable = False
    return PrizeSimulation(int(entries), split, ladder)
