"""Texas Hold'em ring-game engine: betting, pots, showdown, clocks, PHH histories, the
seven-card evaluator, equity, the provably-fair deck, BigHoldem scoring and simulated
players (``bots``: a decision table, personalities, baselines; ``simulation``: matches).

Pure Python and numpy (STYLE, Engine). The rules are seed 003
(``003_c848e011f7df0184.txt``); ``docs/holdem.md`` records every decision where the seed
is silent. Amounts are integer chips; cards are ``tables.engine.cards`` ids.

>>> from tables.engine.holdem import Action, ActionKind, HandSetup, Structure, start_hand
>>> state = start_hand(HandSetup(Structure.pot_limit(25, 50), (5_000,) * 4, 3, tuple(range(52))))
>>> state.to_act, state.legal_actions().max_to  # under the gun; a pot raise is to 175
(2, 175)
>>> state = state.act(Action(ActionKind.RAISE, 2, 175))
>>> state.to_act, state.legal_actions().call_amount
(3, 175)
>>> try:
...     state.act(Action(ActionKind.CALL, 1))
... except HoldemError as error:
...     print(error.code)
not_your_turn
"""

from __future__ import annotations

from .bigholdem import BlindLevel, HandResult, Standing, TableState, blind_level, leaderboard, start_table
from .bots import (
    DECISION_TABLE,
    LAG,
    NIT,
    PERSONALITIES,
    ROCK,
    TAG,
    Frequencies,
    Personality,
    calling_station,
    decide,
    random_action,
)
from .button import first_button, next_button
from .clocks import (
    ACT_MS,
    RECONNECT_MS,
    TIME_BANK_MS,
    ClockReading,
    ClockStage,
    TurnClock,
    apply_clock,
    deadline_ms,
    read_clock,
    timeout_action,
)
from .dealing import MAX_PLAYERS, MIN_PLAYERS, DealPositions, Seating, deal_positions, seat_hand
from .deck import (
    LABEL_CARD_SALT,
    LABEL_HOLDEM_DECK,
    Deal,
    card_commitment,
    card_salts,
    deal_cards,
    deal_commitments,
    dealt_positions,
    holdem_deck,
)
from .equity import Equity, PlayerEquity, equity
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
from .eval7 import evaluate7, evaluate7_one, evaluate_best
from .phh import PhhHand, hand_to_phh, hide_holes, read_phh, replay_phh
from .pots import Pot, PotResult, build_pots, rake_pots, split_pot
from .seed import (
    ALGORITHM_DEAL_ROUND,
    bot_rng,
    bot_stream,
    client_seed_commitment,
    deal_seed,
    freeze_digest,
    freeze_lines,
)
from .showdown import best_strengths
from .simulation import BotPlayer, MatchResult, Player, play_match
from .start import play_showdown, start_hand
from .state import (
    Action,
    ActionKind,
    Event,
    HandSetup,
    HandState,
    LegalActions,
    Phase,
    Street,
)
from .structure import MAX_RAKE_BPS, PHH_LIMIT_CAPS, SEED_LIMIT_CAPS, Betting, Structure, small_blind_for

__all__ = [
    "ACT_MS",
    "ALGORITHM_DEAL_ROUND",
    "DECISION_TABLE",
    "LABEL_CARD_SALT",
    "LABEL_HOLDEM_DECK",
    "LAG",
    "MAX_PLAYERS",
    "MAX_RAKE_BPS",
    "MIN_PLAYERS",
    "NIT",
    "PERSONALITIES",
    "PHH_LIMIT_CAPS",
    "RECONNECT_MS",
    "ROCK",
    "SEED_LIMIT_CAPS",
    "TAG",
    "TIME_BANK_MS",
    "Action",
    "ActionKind",
    "AmountTooLargeError",
    "AmountTooSmallError",
    "Betting",
    "BlindLevel",
    "BotPlayer",
    "ClockReading",
    "ClockStage",
    "Deal",
    "DealPositions",
    "Equity",
    "Event",
    "Frequencies",
    "HandOverError",
    "HandResult",
    "HandSetup",
    "HandState",
    "HoldemError",
    "IllegalActionError",
    "LegalActions",
    "MatchResult",
    "NotYourTurnError",
    "Personality",
    "Phase",
    "PhhError",
    "PhhHand",
    "Player",
    "PlayerEquity",
    "Pot",
    "PotResult",
    "Seating",
    "SetupError",
    "Standing",
    "Street",
    "Structure",
    "TableState",
    "TurnClock",
    "apply_clock",
    "best_strengths",
    "blind_level",
    "bot_rng",
    "bot_stream",
    "build_pots",
    "calling_station",
    "card_commitment",
    "card_salts",
    "client_seed_commitment",
    "deadline_ms",
    "deal_cards",
    "deal_commitments",
    "deal_positions",
    "deal_seed",
    "dealt_positions",
    "decide",
    "equity",
    "evaluate7",
    "evaluate7_one",
    "evaluate_best",
    "first_button",
    "freeze_digest",
    "freeze_lines",
    "hand_to_phh",
    "hide_holes",
    "holdem_deck",
    "leaderboard",
    "next_button",
    "play_match",
    "play_showdown",
    "rake_pots",
    "random_action",
    "read_clock",
    "read_phh",
    "replay_phh",
    "seat_hand",
    "small_blind_for",
    "split_pot",
    "start_hand",
    "start_table",
    "timeout_action",
]
