"""Texas Hold'em ring-game engine: betting, pots, showdown, clocks and PHH histories.

Pure Python and numpy (STYLE, Engine). The rules are seed 003
(``003_c848e011f7df0184.txt``); ``docs/holdem.md`` records every decision where the seed
is silent. Amounts are integer chips; cards are ``tables.engine.cards`` ids.
"""

from __future__ import annotations

from .dealing import MAX_PLAYERS, MIN_PLAYERS, DealPositions, deal_positions
from .errors import (
    AmountTooLargeError,
    AmountTooSmallError,
    HandOverError,
    HoldemError,
    IllegalActionError,
    NotYourTurnError,
    PhhError,
    SetupError,
)
from .pots import Pot, build_pots, split_pot
from .showdown import best_strengths
from .state import (
    Action,
    ActionKind,
    Event,
    HandSetup,
    HandState,
    LegalActions,
    Phase,
    Street,
    play_showdown,
    start_hand,
)
from .structure import MAX_RAKE_BPS, PHH_LIMIT_CAPS, SEED_LIMIT_CAPS, Betting, Structure, small_blind_for

__all__ = [
    "MAX_PLAYERS",
    "MAX_RAKE_BPS",
    "MIN_PLAYERS",
    "PHH_LIMIT_CAPS",
    "SEED_LIMIT_CAPS",
    "Action",
    "ActionKind",
    "AmountTooLargeError",
    "AmountTooSmallError",
    "Betting",
    "DealPositions",
    "Event",
    "HandOverError",
    "HandSetup",
    "HandState",
    "HoldemError",
    "IllegalActionError",
    "LegalActions",
    "NotYourTurnError",
    "Phase",
    "PhhError",
    "Pot",
    "SetupError",
    "Street",
    "Structure",
    "best_strengths",
    "build_pots",
    "deal_positions",
    "play_showdown",
    "small_blind_for",
    "split_pot",
    "start_hand",
]
