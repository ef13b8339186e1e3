"""Betting structures: fixed limit, no limit, pot limit, with blinds, antes and rake.

All amounts are integer chips (minor units). Seed 003 (``003_c848e011f7df0184.txt``),
sections "The First round" (blinds), "Some standard rules" (the four-bet cap) and the
No-Limit / Pot-Limit betting structures; ``docs/holdem.md``, "Rules as implemented".

>>> Structure.fixed_limit(5, 10).small_blind  # seed 003: 5/10 -> small blind 2
2
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from .errors import SetupError

__all__ = [
    "MAX_RAKE_BPS",
    "PHH_LIMIT_CAPS",
    "SEED_LIMIT_CAPS",
    "Betting",
    "Structure",
    "small_blind_for",
]

MAX_RAKE_BPS: Final = 1_000
"""The highest rake rate accepted: 10% in basis points."""

SEED_LIMIT_CAPS: Final = (3, 4, 4, 4)
"""Bets and raises allowed per round in fixed limit, by street (pre-flop .. river).

Seed 003, Some standard rules: "a maximum of four bets, which includes one bet, and three
raises". Pre-flop the big blind is the bet, so three raises remain; on later streets the
first bet and three raises. The cap does not lift heads-up (as in pokerkit)."""

PHH_LIMIT_CAPS: Final = (4, 4, 4, 4)
"""The caps of PHH's ``FT`` variant (pokerkit's ``FixedLimitTexasHoldem``): four voluntary
bets or raises on every street, the blind not counted. Used only to replay PHH texts."""


class Betting(StrEnum):
    """The betting structure of a table."""

    FIXED_LIMIT = "fixed-limit"
    NO_LIMIT = "no-limit"
    POT_LIMIT = "pot-limit"


def small_blind_for(lower_stake: int, chip: int = 1) -> int:
    """Half the lower stake rounded down to the chip unit, in chips.

    Seed 003, The First round: "The small blind is equal to half the lower stake ...
    rounded down to the nearest value chip." Raises ``SetupError`` for a non-positive
    stake or chip.

    >>> small_blind_for(5), small_blind_for(10), small_blind_for(25, chip=5)
    (2, 5, 10)
    """
    if lower_stake <= 0 or chip <= 0:
        raise SetupError(f"stake and chip must be positive, got {lower_stake} and {chip}")
    return (lower_stake // 2) // chip * chip


@dataclass(frozen=True, slots=True)
class Structure:
    """Frozen stakes and limits of a table, in chips.

    ``small_bet`` is the minimum bet (and the fixed bet size) on the pre-flop and flop,
    ``big_bet`` on the turn and river; in no limit and pot limit both equal the minimum bet
    (the big blind unless set). ``raise_caps`` gives, per street, how many voluntary bets
    and raises are allowed (``None``: unlimited). ``rake_bps`` is the rake rate in basis
    points (at most ``MAX_RAKE_BPS``), ``rake_cap`` its cap per hand in chips (``None``:
    no cap); no flop, no drop. ``call_all_in``: a player who cannot match a bet may call
    for all he has (seed 003, Exceptions to the value of betting: the "All-In" rule, the
    default); ``False`` is seed 004's BigHoldem rule (*Rilancio*: "se un giocatore non ha
    soldi sufficienti per pareggiare la puntata ... deve passare o abbandonare la mano"),
    where he may only fold. Use the constructors ``fixed_limit``, ``no_limit`` and
    ``pot_limit``. Raises ``SetupError`` for inconsistent values.
    """

    betting: Betting
    small_blind: int
    big_blind: int
    small_bet: int
    big_bet: int
    ante: int = 0
    raise_caps: tuple[int | None, int | None, int | None, int | None] = (None, None, None, None)
    rake_bps: int = 0
    rake_cap: int | None = None
    call_all_in: bool = True

    def __post_init__(self) -> None:
        for name in ("small_blind", "big_blind", "small_bet", "big_bet", "ante", "rake_bps"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise SetupError(f"{name} must be an integer >= 0, got {value!r}")
        if self.big_blind <= 0 or self.small_bet <= 0 or self.big_bet < self.small_bet:
            raise SetupError("big blind and bets must be positive, big bet >= small bet")
        if self.small_blind > self.big_blind:
            raise SetupError("the small blind cannot exceed the big blind")
        if self.rake_bps > MAX_RAKE_BPS:
            raise SetupError(f"rake_bps must be at most {MAX_RAKE_BPS}, got {self.rake_bps}")
        if self.rake_cap is not None and self.rake_cap < 0:
            raise SetupError("rake_cap must be >= 0")
        if len(self.raise_caps) != 4 or any(c is not None and c < 1 for c in self.raise_caps):
            raise SetupError("raise_caps needs four entries, each None or >= 1")

    @classmethod
    def fixed_limit(
        cls,
        lower: int,
        upper: int,
        *,
        small_blind: int | None = None,
        chip: int = 1,
        ante: int = 0,
        raise_caps: tuple[int | None, int | None, int | None, int | None] = SEED_LIMIT_CAPS,
        rake_bps: int = 0,
        rake_cap: int | None = None,
    ) -> Structure:
        """A ``lower``/``upper`` fixed-limit game (seed 003, The First round .. The Fourth Round).

        Big blind = small bet = ``lower``; big bet = ``upper``; small blind = half the
        lower stake rounded down to ``chip`` unless given.

        >>> s = Structure.fixed_limit(10, 20)
        >>> (s.small_blind, s.big_blind, s.small_bet, s.big_bet, s.raise_caps)
        (5, 10, 10, 20, (3, 4, 4, 4))
        """
        blind = small_blind_for(lower, chip) if small_blind is None else small_blind
        return cls(Betting.FIXED_LIMIT, blind, lower, lower, upper, ante, raise_caps, rake_bps, rake_cap)

    @classmethod
    def no_limit(
        cls,
        small_blind: int,
        big_blind: int,
        *,
        ante: int = 0,
        min_bet: int | None = None,
        rake_bps: int = 0,
        rake_cap: int | None = None,
    ) -> Structure:
        """A no-limit game: minimum bet the big blind (or ``min_bet``), maximum the stack."""
        bet = big_blind if min_bet is None else min_bet
        caps = (None, None, None, None)
        return cls(Betting.NO_LIMIT, small_blind, big_blind, bet, bet, ante, caps, rake_bps, rake_cap)

    @classmethod
    def pot_limit(
        cls,
        small_blind: int,
        big_blind: int,
        *,
        ante: int = 0,
        min_bet: int | None = None,
        rake_bps: int = 0,
        rake_cap: int | None = None,
    ) -> Structure:
        """A pot-limit game: minimum as no limit, maximum raise-to the pot (seed 003, Pot-Limit)."""
        bet = big_blind if min_bet is None else min_bet
        caps = (None, None, None, None)
        return cls(Betting.POT_LIMIT, small_blind, big_blind, bet, bet, ante, caps, rake_bps, rake_cap)

    def street_bet(self, street: int) -> int:
        """The bet size (fixed limit) or minimum bet of a street 0..3, in chips."""
        return self.small_bet if street < 2 else self.big_bet

    def rake(self, pot: int, *, flop_dealt: bool) -> int:
        """The rake of a hand's total pot, in chips: ``min(cap, floor(pot * bps / 10000))``.

        No flop, no drop: zero when the hand ended before the flop.

        >>> Structure.no_limit(1, 2, rake_bps=500, rake_cap=30).rake(1_000, flop_dealt=True)
        30
        >>> Structure.no_limit(1, 2, rake_bps=500).rake(99, flop_dealt=True)
        4
        """
        if not flop_dealt:
            return 0
        amount = pot * self.rake_bps // 10_000
        return amount if self.rake_cap is None else min(amount, self.rake_cap)
