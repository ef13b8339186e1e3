"""Ranking, prize pool allocation and rake, in integer minor units.

Seed 001, Prize Pool Allocation (increasing prizes among a configurable fraction of the
players), Rake (rounded down to the cent; at most 10%, Notes 1) and Jackpots (a royal
jackpot split equally); DESIGN item 11. Money is always an ``int`` (or ``int64`` array)
of minor units (cents); no floats.

**Places.** Place 1 is the best strength; tied entries share the best place they occupy
and the next place skips ("1224", standard competition ranking).

**Paid places.** ``P = max(1, floor(n * paid_fraction_bps / 10000))``, at most ``n``, then
lowered until ``P * min_prize_minor <= pool`` (never below 1).

**Slot prizes** (the prize ladder). Every paid place gets ``min_prize_minor``; the rest of
the pool, the surplus, is shared in proportion to integer harmonic weights
``w_i = floor(2**24 / i)`` for place ``i``, by largest remainder: each place first gets
``floor(surplus * w_i / W)`` (``W`` = sum of weights), then the cents still missing go
one each to the places with the largest remainders, ties to the better place. The ladder
sums exactly to the pool and never increases from one place to the next. (If the pool is
below one minimum prize, the single paid place gets the whole pool.)

**Ties and the remainder rule.** Entries tied at place ``p`` (``k`` of them) occupy slots
``p .. p+k-1``; they share equally the sum ``S`` of the paid slot prizes among those (a
tie straddling the last paid place shares only the paid slots). Each gets
``S // k``; the ``S % k`` cents that cannot be split equally are **remainder cents**
(``Allocation.breakage_minor``), which the platform carries to the table's next hand
pool. So ``sum(prizes) + breakage == pool`` always, tied hands get exactly equal prizes,
and a worse hand never gets more than a better one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = [
    "MAX_RAKE_BPS",
    "Allocation",
    "AllocationConfig",
    "allocate_pool",
    "paid_places",
    "prize_ladder",
    "rake_minor",
    "rank_places",
    "split_evenly",
]

MAX_RAKE_BPS: Final = 1000
"""Highest rake rate, in basis points: 10% (seed 001, Notes 1)."""
_WEIGHT_SCALE: Final = 1 << 24
_BINCOUNT_LIMIT: Final = 1 << 20


def _is_int(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def rank_places(strengths: npt.ArrayLike) -> npt.NDArray[np.int32]:
    """Competition places of hands: 1 = best, ties share the best place they occupy.

    ``strengths``: ``(N,)`` non-negative integers, higher is better (e.g. evaluator
    strengths 1..7462). Returns ``int32`` ``(N,)`` in input order: the place of entry ``i`` is
    1 + the number of entries strictly better. O(N) with a ``bincount`` over strength
    values (falls back to sorting for values above 2**20). Seed 001, Game course B.3 (the
    players' ranking). Raises ``ValueError`` for another shape or a negative value.

    >>> rank_places(np.array([10, 30, 20, 30])).tolist()
    [4, 1, 3, 1]
    """
    values = np.asarray(strengths)
    if values.ndim != 1:
        raise ValueError(f"strengths must be one-dimensional, got shape {values.shape}")
    if values.size == 0:
        return np.zeros(0, dtype=np.int32)
    if not np.issubdtype(values.dtype, np.integer):
        raise ValueError(f"strengths must be integers, got dtype {values.dtype}")
    if int(values.min()) < 0:
        raise ValueError("strengths must be non-negative")
    top = int(values.max())
    if top < _BINCOUNT_LIMIT:
        counts = np.bincount(values, minlength=top + 1)
        better = values.size - np.cumsum(counts)  # entries with a strictly higher value
        places = np.take(better, values) + 1
    else:
        _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
        places = (values.size - np.cumsum(counts))[inverse] + 1
    return places.astype(np.int32)


@dataclass(frozen=True)
class AllocationConfig:
    """A table's prize pool allocation (seed 001, Prize Pool Allocation; DESIGN item 11).

    ``paid_fraction_bps``: fraction of entries paid, in basis points (1500 = 15%), 1..10000.
    ``min_prize_minor``: minimum prize of each paid place, minor units, >= 0.
    Raises ``ValueError`` for values out of range.
    """

    paid_fraction_bps: int = 1500
    min_prize_minor: int = 0

    def __post_init__(self) -> None:
        if not _is_int(self.paid_fraction_bps) or not 1 <= self.paid_fraction_bps <= 10_000:
            raise ValueError(f"paid_fraction_bps must be in 1..10000, got {self.paid_fraction_bps!r}")
        if not _is_int(self.min_prize_minor) or self.min_prize_minor < 0:
            raise ValueError(f"min_prize_minor must be >= 0, got {self.min_prize_minor!r}")


@dataclass(frozen=True, eq=False)
class Allocation:
    """The result of ``allocate_pool``; arrays are read-only ``int64`` / ``int32``.

    * ``prizes_minor``: ``(N,)`` prize of each entry, input order.
    * ``places``: ``(N,)`` competition place of each entry (``rank_places``).
    * ``place_prizes_minor``: ``(P,)`` slot prize of places 1..P (the ladder).
    * ``breakage_minor``: remainder cents of tie splits, carried to the next hand.
    * ``paid_places``: ``P``.
    """

    prizes_minor: npt.NDArray[np.int64]
    places: npt.NDArray[np.int32]
    place_prizes_minor: npt.NDArray[np.int64]
    breakage_minor: int
    paid_places: int


def paid_places(entries: int, pool_minor: int, config: AllocationConfig) -> int:
    """Number of paid places for ``entries`` entries and a pool (rules in module docstring).

    Raises ``ValueError`` unless ``entries >= 1`` and ``pool_minor >= 0``.

    >>> paid_places(100, 10_000, AllocationConfig()), paid_places(3, 0, AllocationConfig())
    (15, 1)
    >>> paid_places(100, 10_000, AllocationConfig(min_prize_minor=1_000))
    10
    """
    if not _is_int(entries) or entries < 1:
        raise ValueError(f"entries must be >= 1, got {entries!r}")
    if not _is_int(pool_minor) or pool_minor < 0:
        raise ValueError(f"pool_minor must be >= 0, got {pool_minor!r}")
    places = min(entries, max(1, entries * config.paid_fraction_bps // 10_000))
    if config.min_prize_minor > 0:
        places = max(1, min(places, pool_minor // config.min_prize_minor))
    return int(places)


def prize_ladder(pool_minor: int, entries: int, config: AllocationConfig) -> npt.NDArray[np.int64]:
    """Slot prizes of places 1..P: non-increasing, each >= the minimum, summing to the pool.

    Harmonic weights ``floor(2**24 / i)`` on the surplus above the minimum, largest
    remainder, ties to the better place (module docstring). Returns read-only ``int64``
    ``(P,)``. Raises ``ValueError`` unless ``entries >= 1`` and ``pool_minor >= 0``.

    >>> prize_ladder(1_000, 20, AllocationConfig()).tolist()  # 15% of 20 entries: 3 places
    [545, 273, 182]
    >>> prize_ladder(100, 3, AllocationConfig(paid_fraction_bps=10_000)).tolist()
    [55, 27, 18]
    """
    count = paid_places(entries, pool_minor, config)
    minimum = config.min_prize_minor if count * config.min_prize_minor <= pool_minor else 0
    surplus = pool_minor - count * minimum
    weights = _WEIGHT_SCALE // np.arange(1, count + 1, dtype=np.int64)
    total = int(weights.sum())
    whole, rest = divmod(surplus, total)
    product = rest * weights  # < total * 2**24 < 2**53: no overflow
    ladder = whole * weights + product // total
    remainder = product % total
    missing = surplus - int(ladder.sum())
    if missing:
        order = np.lexsort((np.arange(count), -remainder))
        ladder[order[:missing]] += 1
    ladder += minimum
    ladder.flags.writeable = False
    return ladder


def allocate_pool(pool_minor: int, strengths: npt.ArrayLike, config: AllocationConfig | None = None) -> Allocation:
    """Split a prize pool among entries by their final strengths (higher is better).

    ``pool_minor``: the prize pool in minor units (net of rake and jackpot shares, plus any
    spin jackpot); ``strengths``: ``(N,)`` non-negative integers, ``N >= 1``; ``config``
    defaults to ``AllocationConfig()`` (15% paid, no minimum). Ties share equally the paid
    slot prizes of the places they occupy; the cents left over by those equal shares are
    ``breakage_minor`` (the remainder rule in the module docstring). Seed 001, Prize Pool
    Allocation; DESIGN item 11. Raises ``ValueError`` for a negative pool or no entries.

    >>> result = allocate_pool(1_000, np.array([5, 9, 9, 1]), AllocationConfig(5_000))
    >>> result.prizes_minor.tolist(), result.breakage_minor
    ([0, 500, 500, 0], 0)
    """
    config = config or AllocationConfig()
    places = rank_places(strengths)
    entries = int(places.size)
    if entries == 0:
        raise ValueError("a prize pool needs at least one entry")
    ladder = prize_ladder(pool_minor, entries, config)
    paid = int(ladder.size)
    cumulative = np.zeros(paid + 1, dtype=np.int64)
    np.cumsum(ladder, out=cumulative[1:])
    group_size = np.bincount(places, minlength=entries + 1)
    starts = np.flatnonzero(group_size)  # the places actually occupied
    sizes = group_size[starts]
    first = np.minimum(starts - 1, paid)
    last = np.minimum(starts - 1 + sizes, paid)
    shared = cumulative[last] - cumulative[first]
    share = np.zeros(entries + 1, dtype=np.int64)
    share[starts] = shared // sizes
    prizes = share[places]
    breakage = int((shared % sizes).sum())
    prizes.flags.writeable = False
    places.flags.writeable = False
    return Allocation(
        prizes_minor=prizes,
        places=places,
        place_prizes_minor=ladder,
        breakage_minor=breakage,
        paid_places=paid,
    )


def rake_minor(gross_minor: int, rate_bps: int) -> int:
    """The rake: ``floor(gross_minor * rate_bps / 10000)``, in minor units.

    Seed 001, Rake ("always rounded down to the second decimal digit") and Notes 1 (at most
    10%). Raises ``ValueError`` if ``gross_minor < 0`` or ``rate_bps`` is outside 0..1000.

    >>> rake_minor(12_345, 500)  # 5% of 123.45 is 6.1725: 6.17
    617
    """
    if not _is_int(gross_minor) or gross_minor < 0:
        raise ValueError(f"gross_minor must be an integer >= 0, got {gross_minor!r}")
    if not _is_int(rate_bps) or not 0 <= rate_bps <= MAX_RAKE_BPS:
        raise ValueError(f"rate_bps must be in 0..{MAX_RAKE_BPS} (10%), got {rate_bps!r}")
    return int(gross_minor) * int(rate_bps) // 10_000


def split_evenly(amount_minor: int, parts: int) -> tuple[int, int]:
    """Split an amount into ``parts`` equal integer shares: ``(share, remainder)``.

    ``share * parts + remainder == amount_minor`` with ``0 <= remainder < parts``. Used for
    tie shares and the royal jackpot split (seed 001, Jackpots 1). Raises ``ValueError``
    unless ``amount_minor >= 0`` and ``parts >= 1``.

    >>> split_evenly(1_000, 3)
    (333, 1)
    """
    if not _is_int(amount_minor) or amount_minor < 0:
        raise ValueError(f"amount_minor must be an integer >= 0, got {amount_minor!r}")
    if not _is_int(parts) or parts < 1:
        raise ValueError(f"parts must be an integer >= 1, got {parts!r}")
    share, remainder = divmod(int(amount_minor), int(parts))
    return share, remainder
