"""Simulated Hold'em players that "take their decisions from a data base" (seed 004).

Seed 004 (``004_9968266ac0af5695.txt``), *Giocatore*: "I giocatori simulati prendono
autonomamente le loro decisioni di gioco riferendosi ai dati di un apposita base di
dati"; *PRE-FLOP* .. *RIVER*: each player "valuta la probabilità di vincere la mano" and
plays, raises or bluffs by it. The data base here is ``DECISION_TABLE``, a frozen mapping
built once from the small tables below (``docs/holdem.md``, *Bots*):

    (street, strength bucket, position, price bucket) -> Frequencies(fold, call, raise, size)

* **Strength bucket** (``Strength``): the player's equity against as many random hands as
  opponents are still in, times the number of players still in (1.0 = a fair share):
  below 0.8 ``TRASH``, then ``WEAK`` (< 1.0), ``MEDIUM`` (< 1.2), ``STRONG`` (< 1.5),
  ``MONSTER``. Pre-flop the equity comes from ``preflop_equity`` (the 169 starting hands
  against 1..9 random hands, built lazily, one entry at a time, by the engine's Monte
  Carlo ``equity`` with a seed derived from the entry); after the flop from ``equity``
  with a small Monte Carlo sample seeded by the cards themselves, so it is a pure,
  cached function of (hole, board, opponents, samples).
* **Position** (``Position``): the blinds, and the others split early / middle / late,
  the button and the cut-off being late.
* **Price bucket** (``Price``): pot odds ``call / (pot + call)``: ``FREE`` (nothing to
  call), ``CHEAP`` (<= 0.2), ``FAIR`` (<= 1/3), ``DEAR``.
* **Frequencies**: fold, check/call and bet/raise weights summing to 1, and the bet or
  raise size as a fraction of the pot after calling.

A ``Personality`` reshapes the table (tight or loose: fold weight; passive or aggressive:
raise weight; bluffing: raise weight of the two weakest buckets; bet size), see
``PERSONALITIES``. ``decide`` samples one action from the reshaped row with one draw of
the caller's ``numpy`` ``Generator`` and returns a legal ``Action`` (amounts clamped to
``min_to .. max_to``, which in fixed limit is the one allowed size). The baselines used
to measure them are ``random_action`` (uniform over legal kinds, amounts uniform in the
range) and ``calling_station`` (always checks or calls).

>>> from numpy.random import default_rng
>>> from tables.engine.holdem import HandSetup, Structure, start_hand
>>> state = start_hand(HandSetup(Structure.no_limit(1, 2), (200, 200), 0, tuple(range(52))))
>>> action = decide(state, TAG, default_rng(7))
>>> action.seat == state.to_act and action.kind in state.legal_actions().kinds
True
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from types import MappingProxyType
from typing import Final

from numpy.random import Generator, default_rng

from ..cards import rank_of, suit_of
from .equity import equity
from .state import Action, ActionKind, HandState, Phase, Street

__all__ = [
    "DECISION_TABLE",
    "DEFAULT_SAMPLES",
    "LAG",
    "NIT",
    "PERSONALITIES",
    "PREFLOP_SAMPLES",
    "ROCK",
    "TAG",
    "Frequencies",
    "Personality",
    "Position",
    "Price",
    "Situation",
    "Strength",
    "calling_station",
    "decide",
    "hand_class",
    "preflop_equity",
    "random_action",
    "situation",
    "strength_bucket",
]

DEFAULT_SAMPLES: Final = 128
"""Monte Carlo deals per post-flop equity estimate (standard error about 0.04)."""
PREFLOP_SAMPLES: Final = 4_000
"""Monte Carlo deals per entry of the pre-flop table (standard error below 0.008)."""


class Strength(IntEnum):
    """Hand-strength bucket: equity times the players still in (1.0 = a fair share)."""

    TRASH = 0
    WEAK = 1
    MEDIUM = 2
    STRONG = 3
    MONSTER = 4


STRENGTH_BOUNDS: Final = (0.8, 1.0, 1.2, 1.5)
"""Lower bounds of ``WEAK`` .. ``MONSTER`` on the relative equity. Heads-up: equity 0.40,
0.50, 0.60, 0.75."""


class Position(IntEnum):
    """Where the player sits relative to the button."""

    EARLY = 0
    MIDDLE = 1
    LATE = 2
    BLINDS = 3


class Price(IntEnum):
    """Pot-odds bucket of ``call / (pot + call)``."""

    FREE = 0
    CHEAP = 1
    FAIR = 2
    DEAR = 3


PRICE_BOUNDS: Final = (0.2, 1 / 3)
"""Upper bounds of ``CHEAP`` and ``FAIR``; anything dearer is ``DEAR``."""


@dataclass(frozen=True, slots=True)
class Frequencies:
    """One row of the data base: action weights (summing to 1) and the bet size.

    ``size`` is the bet or raise as a fraction of the pot after calling: raise to
    ``top bet + size x (pot + call)``, chips, clamped to the legal range.
    """

    fold: float
    call: float
    raise_: float
    size: float


_Row = tuple[float, float, float, float]
_Rows = tuple[_Row, _Row, _Row, _Row, _Row]  # by Strength

# The data base proper: (fold, check/call, bet/raise, size) by street group, price bucket
# and strength bucket, for a player in the blinds; the position and street factors below
# reshape it. Bet sizes grow with strength (value), bluffs are smaller.
_PREFLOP: Final[dict[Price, _Rows]] = {
    Price.FREE: (
        (0.00, 0.90, 0.10, 0.75),  # TRASH
        (0.00, 0.80, 0.20, 0.75),  # WEAK
        (0.00, 0.45, 0.55, 0.75),  # MEDIUM
        (0.00, 0.15, 0.85, 1.00),  # STRONG
        (0.00, 0.05, 0.95, 1.00),  # MONSTER
    ),
    Price.CHEAP: (
        (0.70, 0.25, 0.05, 0.75),  # TRASH
        (0.30, 0.60, 0.10, 0.75),  # WEAK
        (0.05, 0.65, 0.30, 0.75),  # MEDIUM
        (0.00, 0.35, 0.65, 1.00),  # STRONG
        (0.00, 0.10, 0.90, 1.00),  # MONSTER
    ),
    Price.FAIR: (
        (0.85, 0.13, 0.02, 0.75),  # TRASH
        (0.45, 0.50, 0.05, 0.75),  # WEAK
        (0.10, 0.60, 0.30, 0.75),  # MEDIUM
        (0.00, 0.40, 0.60, 1.00),  # STRONG
        (0.00, 0.10, 0.90, 1.00),  # MONSTER
    ),
    Price.DEAR: (
        (0.97, 0.03, 0.00, 0.75),  # TRASH
        (0.85, 0.15, 0.00, 0.75),  # WEAK
        (0.35, 0.60, 0.05, 1.00),  # MEDIUM
        (0.05, 0.60, 0.35, 1.00),  # STRONG
        (0.00, 0.25, 0.75, 1.00),  # MONSTER
    ),
}
_POSTFLOP: Final[dict[Price, _Rows]] = {
    Price.FREE: (
        (0.00, 0.85, 0.15, 0.50),  # TRASH
        (0.00, 0.85, 0.15, 0.50),  # WEAK
        (0.00, 0.55, 0.45, 0.60),  # MEDIUM
        (0.00, 0.20, 0.80, 0.75),  # STRONG
        (0.00, 0.10, 0.90, 1.00),  # MONSTER
    ),
    Price.CHEAP: (
        (0.75, 0.22, 0.03, 0.50),  # TRASH
        (0.35, 0.60, 0.05, 0.50),  # WEAK
        (0.05, 0.80, 0.15, 0.60),  # MEDIUM
        (0.00, 0.45, 0.55, 0.90),  # STRONG
        (0.00, 0.15, 0.85, 1.00),  # MONSTER
    ),
    Price.FAIR: (
        (0.90, 0.09, 0.01, 0.50),  # TRASH
        (0.60, 0.38, 0.02, 0.50),  # WEAK
        (0.15, 0.75, 0.10, 0.60),  # MEDIUM
        (0.02, 0.50, 0.48, 0.90),  # STRONG
        (0.00, 0.20, 0.80, 1.00),  # MONSTER
    ),
    Price.DEAR: (
        (0.97, 0.03, 0.00, 0.50),  # TRASH
        (0.85, 0.15, 0.00, 0.50),  # WEAK
        (0.40, 0.55, 0.05, 0.60),  # MEDIUM
        (0.08, 0.60, 0.32, 0.90),  # STRONG
        (0.00, 0.30, 0.70, 1.00),  # MONSTER
    ),
}
_POSITION_FACTORS: Final = {
    Position.EARLY: (1.25, 0.85),
    Position.MIDDLE: (1.10, 0.95),
    Position.LATE: (0.80, 1.15),
    Position.BLINDS: (1.00, 1.00),
}
"""(fold factor, raise factor) by position: tighter early, looser and bolder late."""
_STREET_RAISE_FACTORS: Final = {Street.PREFLOP: 1.0, Street.FLOP: 1.0, Street.TURN: 1.0, Street.RIVER: 0.9}
"""Raise factor by street: a little less betting on the river, where nothing improves."""


def _reshape(
    row: _Row, fold_factor: float, raise_factor: float, bluff_factor: float, size_factor: float
) -> Frequencies:
    """Scale the fold and raise weights of a row, renormalise, scale the size."""
    fold, call, raise_, size = row
    fold, raise_ = fold * fold_factor, raise_ * raise_factor * bluff_factor
    total = fold + call + raise_
    return Frequencies(fold / total, call / total, raise_ / total, size * size_factor)


def _build_table() -> Mapping[tuple[Street, Strength, Position, Price], Frequencies]:
    table = {}
    for street in Street:
        base = _PREFLOP if street is Street.PREFLOP else _POSTFLOP
        for strength in Strength:
            for position, (fold_factor, raise_factor) in _POSITION_FACTORS.items():
                for price in Price:
                    row = base[price][strength]
                    factor = raise_factor * _STREET_RAISE_FACTORS[street]
                    table[street, strength, position, price] = _reshape(row, fold_factor, factor, 1.0, 1.0)
    return MappingProxyType(table)


DECISION_TABLE: Final = _build_table()
"""The data base: ``(Street, Strength, Position, Price) -> Frequencies``, 320 rows, built
once at import from ``_PREFLOP`` / ``_POSTFLOP`` (blinds rows) and the position and
street factors. Read-only."""


@dataclass(frozen=True, slots=True)
class Personality:
    """How a simulated player reshapes ``DECISION_TABLE``.

    ``fold``: factor on the fold weight (> 1 tight, < 1 loose); ``raise_``: factor on the
    bet/raise weight (> 1 aggressive, < 1 passive); ``bluff``: further factor on the raise
    weight of ``TRASH`` and ``WEAK`` hands; ``size``: factor on the bet size.
    """

    name: str
    fold: float
    raise_: float
    bluff: float
    size: float

    def frequencies(self, street: Street, strength: Strength, position: Position, price: Price) -> Frequencies:
        """This personality's row of the data base (cached)."""
        return _personal_table(self)[street, strength, position, price]


NIT: Final = Personality("nit", fold=2.5, raise_=0.6, bluff=0.2, size=0.8)
"""Very tight, seldom bluffs, bets small."""
ROCK: Final = Personality("rock", fold=1.5, raise_=0.4, bluff=0.3, size=0.9)
"""Tight and passive: calls where others raise."""
TAG: Final = Personality("tag", fold=1.3, raise_=1.5, bluff=0.8, size=1.0)
"""Tight-aggressive."""
LAG: Final = Personality("lag", fold=0.6, raise_=1.7, bluff=1.5, size=1.1)
"""Loose-aggressive: plays many hands, bets and bluffs often, bets big."""
PERSONALITIES: Final = (NIT, ROCK, TAG, LAG)
"""The simulated players, tightest first."""


@functools.cache
def _personal_table(
    personality: Personality,
) -> Mapping[tuple[Street, Strength, Position, Price], Frequencies]:
    table = {}
    for key, row in DECISION_TABLE.items():
        bluff = personality.bluff if key[1] <= Strength.WEAK else 1.0
        base = (row.fold, row.call, row.raise_, row.size)
        table[key] = _reshape(base, personality.fold, personality.raise_, bluff, personality.size)
    return MappingProxyType(table)


# -- the situation: strength, position, price ------------------------------------------


def hand_class(hole: Sequence[int]) -> int:
    """Index 0..168 of a starting hand: pairs, suited and offsuit combinations of ranks.

    ``13 * high + low`` with ``high >= low`` (ranks 0..12) for offsuit hands and pairs,
    ``13 * low + high`` for suited hands (the other half of the 13 x 13 grid), then packed.

    >>> from tables.engine.cards import parse_cards
    >>> hand_class(parse_cards(["As", "Ad"])) == hand_class(parse_cards(["Ah", "Ac"]))
    True
    >>> hand_class(parse_cards(["As", "Ks"])) != hand_class(parse_cards(["As", "Kd"]))
    True
    """
    a, b = rank_of(hole[0]), rank_of(hole[1])
    high, low = max(a, b), min(a, b)
    return 13 * low + high if suit_of(hole[0]) == suit_of(hole[1]) and high != low else 13 * high + low


def _class_cards(index: int) -> tuple[int, int]:
    """Representative hole cards of a ``hand_class`` grid index (spades, hearts)."""
    row, column = divmod(index, 13)
    if row < column:  # suited: row = low, column = high
        return 4 * column + 3, 4 * row + 3
    return 4 * row + 3, 4 * column + 2


@functools.cache
def preflop_equity(index: int, opponents: int) -> float:
    """Equity of starting hand ``hand_class`` ``index`` against ``opponents`` (1..9) random hands.

    The pre-flop table of 169 hands x 9 opponent counts, built lazily one entry at a time
    (each a Monte Carlo ``equity`` of ``PREFLOP_SAMPLES`` deals seeded by
    ``[index, opponents]``, a few milliseconds) and kept for the process. Deterministic.
    """
    hole = _class_cards(index)
    rng = default_rng([index, opponents])
    return equity([hole, *[None] * opponents], samples=PREFLOP_SAMPLES, seed=rng).players[0].equity


@functools.lru_cache(maxsize=1 << 14)
def _postflop_equity(hole: tuple[int, ...], board: tuple[int, ...], opponents: int, samples: int) -> float:
    rng = default_rng([*hole, *board, opponents, samples])
    return equity([hole, *[None] * opponents], board, samples=samples, seed=rng).players[0].equity


def strength_bucket(equity_: float, players: int) -> Strength:
    """The ``Strength`` of an equity among ``players`` still in (relative equity bounds).

    >>> strength_bucket(0.55, 2), strength_bucket(0.55, 3)
    (<Strength.MEDIUM: 2>, <Strength.MONSTER: 4>)
    """
    relative = equity_ * players
    return Strength(sum(relative >= bound for bound in STRENGTH_BOUNDS))


def _position(player: int, players: int) -> Position:
    """Position of dealing-order ``player`` (0 = first left of the button; button last)."""
    if players == 2:
        return Position.BLINDS if player == 0 else Position.LATE
    if player < 2:
        return Position.BLINDS
    from_button = players - 1 - player  # 0 = button, 1 = cut-off
    if from_button <= 1:
        return Position.LATE
    others = players - 4  # seats between the big blind and the cut-off
    return Position.EARLY if player - 2 < (others + 1) // 2 else Position.MIDDLE


def _price(call: int, pot: int) -> Price:
    if call <= 0:
        return Price.FREE
    odds = call / (pot + call)
    return Price(1 + sum(odds > bound for bound in PRICE_BOUNDS))


@dataclass(frozen=True, slots=True)
class Situation:
    """What a simulated player looks up: the row key and the equity behind it."""

    street: Street
    strength: Strength
    position: Position
    price: Price
    equity: float
    opponents: int


def situation(state: HandState, *, samples: int = DEFAULT_SAMPLES) -> Situation:
    """The data-base key of the player to act in a betting phase.

    Opponents are the other players not folded (all-in players included); dead cards are
    not used (folded hands are unseen). Raises ``HandOverError`` when the hand is over.
    """
    legal = state.legal_actions()
    i = state.actor
    assert i is not None
    opponents = sum(1 for j, f in enumerate(state.folded) if not f and j != i)
    opponents = max(1, opponents)
    hole = state.holes[i]
    if state.street is Street.PREFLOP:
        value = preflop_equity(hand_class(hole), opponents)
    else:
        value = _postflop_equity(tuple(sorted(hole)), tuple(sorted(state.board)), opponents, samples)
    return Situation(
        state.street,
        strength_bucket(value, opponents + 1),
        _position(i, state.player_count),
        _price(legal.call_amount, state.total_pot),
        value,
        opponents,
    )


# -- decisions ----------------------------------------------------------------------------


def _showdown_action(state: HandState) -> Action:
    legal = state.legal_actions()
    kind = ActionKind.MUCK if ActionKind.MUCK in legal.kinds else ActionKind.SHOW
    return Action(kind, legal.seat)


def decide(state: HandState, personality: Personality, rng: Generator, *, samples: int = DEFAULT_SAMPLES) -> Action:
    """The simulated player's legal action for the player to act in ``state``.

    Looks up ``situation(state)`` in ``personality``'s reshaped ``DECISION_TABLE`` and draws
    fold / check-call / bet-raise with exactly one ``rng.random()``; a fold when checking
    is free is a check; a raise that is not allowed is a call (or check); a raise goes to
    ``top + size x (pot + call)`` chips clamped to ``min_to .. max_to`` (fixed limit: the
    one allowed size). At showdown it mucks when allowed, else shows, without drawing.
    ``samples``: Monte Carlo deals of the post-flop equity. Same state, personality and
    generator state, same action. Raises ``HandOverError`` when the hand is over.
    Seed 004, *Giocatore* and *PRE-FLOP* .. *RIVER*; ``docs/holdem.md``, *Bots*.
    """
    if state.phase is Phase.SHOWDOWN:
        return _showdown_action(state)
    legal = state.legal_actions()
    if legal.kinds == (ActionKind.FOLD,):
        return Action(ActionKind.FOLD, legal.seat)  # short of the bet where seed 004 allows no all-in
    spot = situation(state, samples=samples)
    row = personality.frequencies(spot.street, spot.strength, spot.position, spot.price)
    draw = float(rng.random())
    kinds = legal.kinds
    passive = ActionKind.CHECK if ActionKind.CHECK in kinds else ActionKind.CALL
    if draw < row.fold:
        # A fold when checking is free is a check (the fold is legal, seed 003, but never wise).
        return Action(ActionKind.CHECK if ActionKind.CHECK in kinds else ActionKind.FOLD, legal.seat)
    if draw < row.fold + row.call or legal.min_to is None or legal.max_to is None:
        return Action(passive, legal.seat)
    kind = ActionKind.BET if ActionKind.BET in kinds else ActionKind.RAISE
    top = max(state.bets)
    target = top + round(row.size * (state.total_pot + legal.call_amount))
    return Action(kind, legal.seat, min(legal.max_to, max(legal.min_to, target)))


def calling_station(state: HandState, rng: Generator) -> Action:
    """Baseline: always checks or calls (shows at showdown); ``rng`` is not used."""
    if state.phase is Phase.SHOWDOWN:
        return _showdown_action(state)
    legal = state.legal_actions()
    if legal.kinds == (ActionKind.FOLD,):
        return Action(ActionKind.FOLD, legal.seat)  # short of the bet where seed 004 allows no all-in
    return Action(ActionKind.CHECK if ActionKind.CHECK in legal.kinds else ActionKind.CALL, legal.seat)


def random_action(state: HandState, rng: Generator) -> Action:
    """Baseline: a legal kind uniformly at random; a bet or raise-to uniform in ``min_to .. max_to``.

    It never folds when checking is free (a fold offered under seed 003's "folding can be
    done at any stage"): the baseline stays the one the bot figures in docs/holdem.md were
    measured against."""
    legal = state.legal_actions()
    kinds = legal.kinds
    if ActionKind.CHECK in kinds:
        kinds = tuple(k for k in kinds if k is not ActionKind.FOLD)
    kind = kinds[int(rng.integers(len(kinds)))]
    if kind in (ActionKind.BET, ActionKind.RAISE):
        assert legal.min_to is not None and legal.max_to is not None
        return Action(kind, legal.seat, int(rng.integers(legal.min_to, legal.max_to + 1)))
    return Action(kind, legal.seat)
