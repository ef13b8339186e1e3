"""Signs of automated play (seed 001, Notes 4: "usage of BOT players ... is not allowed"):
a player's figures and the heuristics that flag them for a croupier's review. Pure: no
database, no clock; ``backoffice.services.record_play_patterns`` feeds it.

The heuristics (docs/platform.md, "Automated play") flag, never judge: a croupier reads the
figures and decides. A player is flagged when any of these holds:

* ``superhuman_reactions``: the median reaction is under ``SUPERHUMAN_MEDIAN_MS`` (400 ms)
  over at least ``MIN_DECISIONS`` (20) decisions. People read the board and choose; a
  program answers at once.
* ``regular_reactions``: the reaction times' coefficient of variation (standard deviation
  / mean) is under ``REGULAR_CV`` (0.2) over at least ``MIN_DECISIONS``. People's times
  spread widely (a CV near 1 is usual); a program's are regular, even when it waits on
  purpose.
* ``long_sessions``: a session of ``LONG_SESSION_HOURS`` (8 h) or more without a break of
  ``SESSION_BREAK_MINUTES``. People stop.
* ``tireless_pace``: more than ``FAST_ACTIONS_PER_HOUR`` (1,500) actions per hour over at
  least ten minutes of play: many tables at once, every option taken.
* ``api_only``: he played, holds an API token or got one in the window, and never had the
  game screen (a game socket) open at any table he played at in the window. The game
  screen is the people's door; an API client may be legitimate, a croupier asks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

MIN_DECISIONS: Final = 20
SUPERHUMAN_MEDIAN_MS: Final = 400
REGULAR_CV: Final = 0.2
LONG_SESSION_HOURS: Final = 8
FAST_ACTIONS_PER_HOUR: Final = 1500
REACTION_BUCKETS_MS: Final = (250, 500, 1000, 2000, 5000, 10000)
"""Upper bounds of the reaction-time histogram the review page shows; the last interval is
open. Each is one of ``FINE_BOUNDS_MS``."""

FINE_BOUNDS_MS: Final = (
    50, 100, 150, 200, 250, 300, 400, 500, 650, 800, 1000, 1300, 1600,
    2000, 2500, 3200, 4000, 5000, 6500, 8000, 10000, 13000, 16000, 20000, 30000,
)  # fmt: skip
"""Upper bounds of the stored histogram's intervals (the last is open, read as up to 1.5
times the last bound): fine enough to read a median and a 10th percentile from it."""

FLAGS: Final = {
    "superhuman_reactions": "superhuman reactions",
    "regular_reactions": "machine-regular reactions",
    "long_sessions": "long sessions without a break",
    "tireless_pace": "tireless pace",
    "api_only": "API-only play",
}
"""Flag code -> what the review page says."""


@dataclass(frozen=True, slots=True)
class Reactions:
    """Reaction times summarised, in whole milliseconds (None without any): median and 10th
    percentile (read from the ``FINE_BOUNDS_MS`` histogram, linear within an interval),
    mean and standard deviation (exact), and counts per ``REACTION_BUCKETS_MS`` interval
    (``len(REACTION_BUCKETS_MS) + 1`` counts)."""

    count: int
    median_ms: int | None
    p10_ms: int | None
    mean_ms: int | None
    stdev_ms: int | None
    buckets: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ReactionTally:
    """Reaction times as sums that add up across hands and days (``+``): how many, their
    sum and sum of squares in milliseconds, and counts per ``FINE_BOUNDS_MS`` interval
    (``len(FINE_BOUNDS_MS) + 1`` counts). What a day of a player stores."""

    count: int
    total_ms: float
    total_sq: float
    counts: tuple[int, ...]

    @classmethod
    def of(cls, milliseconds: Sequence[float] | np.ndarray) -> ReactionTally:
        """The tally of the times ``milliseconds`` (negative ones, clock skew, count as 0)."""
        times = np.clip(np.asarray(milliseconds, dtype=np.float64), 0, None)
        slots = np.searchsorted(FINE_BOUNDS_MS, times, side="right")
        counts = np.bincount(slots, minlength=len(FINE_BOUNDS_MS) + 1)
        return cls(int(times.size), float(times.sum()), float((times * times).sum()), tuple(int(c) for c in counts))

    @classmethod
    def empty(cls) -> ReactionTally:
        return cls(0, 0.0, 0.0, (0,) * (len(FINE_BOUNDS_MS) + 1))

    def __add__(self, other: ReactionTally) -> ReactionTally:
        return ReactionTally(
            self.count + other.count,
            self.total_ms + other.total_ms,
            self.total_sq + other.total_sq,
            tuple(a + b for a, b in zip(self.counts, other.counts, strict=True)),
        )

    def quantile_ms(self, q: float) -> float | None:
        """The ``q`` quantile (0..1) read from the histogram, linear within its interval."""
        if not self.count:
            return None
        wanted = q * self.count
        below = 0
        for slot, count in enumerate(self.counts):
            if count and below + count >= wanted:
                low = FINE_BOUNDS_MS[slot - 1] if slot else 0
                high = FINE_BOUNDS_MS[slot] if slot < len(FINE_BOUNDS_MS) else FINE_BOUNDS_MS[-1] * 1.5
                return low + (high - low) * max(0.0, wanted - below) / count
            below += count
        return float(FINE_BOUNDS_MS[-1])

    def summary(self) -> Reactions:
        """The ``Reactions`` a review shows.

        >>> tally = ReactionTally.of([100, 120, 140]) + ReactionTally.of([130])
        >>> summary = tally.summary()
        >>> summary.count, summary.mean_ms, summary.median_ms, summary.buckets
        (4, 122, 125, (4, 0, 0, 0, 0, 0, 0))
        """
        edges = np.searchsorted(FINE_BOUNDS_MS, REACTION_BUCKETS_MS, side="right")
        coarse = [sum(part) for part in np.split(np.asarray(self.counts), edges)]
        buckets = tuple(int(c) for c in coarse)
        if not self.count:
            return Reactions(0, None, None, None, None, buckets)
        mean = self.total_ms / self.count
        variance = max(0.0, self.total_sq / self.count - mean * mean)
        median, p10 = self.quantile_ms(0.5), self.quantile_ms(0.1)
        assert median is not None and p10 is not None
        return Reactions(self.count, round(median), round(p10), round(mean), round(variance**0.5), buckets)


def summarise_reactions(milliseconds: Sequence[float] | np.ndarray) -> Reactions:
    """``Reactions`` of the times ``milliseconds`` (``ReactionTally.of(...).summary()``)."""
    return ReactionTally.of(milliseconds).summary()


@dataclass(frozen=True, slots=True)
class PlayFigures:
    """What the heuristics read of one player over the review window: reaction times,
    actions and seconds of play, the longest session in seconds, the tables played with
    and without a game socket, logins by door, and whether he holds an API token."""

    reactions: Reactions
    hands: int
    actions: int
    play_seconds: int
    longest_session_seconds: int
    socket_tables: int
    rest_tables: int
    api_logins: int
    browser_logins: int
    has_api_token: bool

    @property
    def actions_per_hour(self) -> float:
        """Actions per hour of play (0 without play time)."""
        return self.actions * 3600 / self.play_seconds if self.play_seconds else 0.0


def automation_flags(figures: PlayFigures) -> list[str]:
    """The codes of ``FLAGS`` whose heuristic (the module's table) ``figures`` match, in the
    table's order; empty when nothing looks automated."""
    flags = []
    reactions = figures.reactions
    enough = reactions.count >= MIN_DECISIONS
    if enough and reactions.median_ms is not None and reactions.median_ms < SUPERHUMAN_MEDIAN_MS:
        flags.append("superhuman_reactions")
    regular = bool(reactions.mean_ms) and reactions.stdev_ms is not None
    if enough and regular and (reactions.stdev_ms or 0) / (reactions.mean_ms or 1) < REGULAR_CV:
        flags.append("regular_reactions")
    if figures.longest_session_seconds >= LONG_SESSION_HOURS * 3600:
        flags.append("long_sessions")
    if figures.play_seconds >= 600 and figures.actions_per_hour > FAST_ACTIONS_PER_HOUR:
        flags.append("tireless_pace")
    if figures.hands and figures.socket_tables == 0 and (figures.api_logins or figures.has_api_token):
        flags.append("api_only")
    return flags
