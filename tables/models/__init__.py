"""The ``tables`` app's models, one module per room: the house (tables.models.house), and
each game's (tables.models.widerpoker, tables.models.holdem); tournaments keep theirs in
tables/tournaments/models.py. Every model is named here too, so ``from tables.models import
X`` reads any of them and the app registry and the migrations see them all under the one app
label ``tables`` (the models moved without a migration: their tables and names are unchanged)."""

from __future__ import annotations

from tables.models.holdem import (
    HOLDEM_CONFIG_FIELDS,
    HoldemBetting,
    HoldemConditions,
    HoldemFreeze,
    HoldemFreezeStatus,
    HoldemHand,
    HoldemHandPlayer,
    HoldemHandStatus,
    PracticeEnd,
    PracticeGame,
    PracticeResult,
    PracticeStatus,
)
from tables.models.house import (
    AsgiProcess,
    BeaconRound,
    PlatformFault,
    PlatformFaultKind,
    PlayerClientSeed,
    Seat,
    SeatSockets,
    SeatStatus,
    SeedChain,
    Table,
    TableConfigChange,
    TableGame,
    TableMode,
    TablePhase,
)
from tables.models.widerpoker import (
    CONFIG_FIELDS,
    Entry,
    GamingSession,
    Hand,
    HandFreeze,
    HandStatus,
    PowerUpRules,
    PurchaseRef,
    Redeal,
    RedealCounter,
    SpecialHandKind,
    SpecialHandSchedule,
    WiderPokerConditions,
)

# Tournaments live in their own module of this app (tables/tournaments); imported here so the
# app registry and the migrations see their models.
from tables.tournaments.models import Entrant, Tournament, TournamentRound

__all__ = [
    "CONFIG_FIELDS",
    "HOLDEM_CONFIG_FIELDS",
    "AsgiProcess",
    "BeaconRound",
    "Entrant",
    "Entry",
    "GamingSession",
    "Hand",
    "HandFreeze",
    "HandStatus",
    "HoldemBetting",
    "HoldemConditions",
    "HoldemFreeze",
    "HoldemFreezeStatus",
    "HoldemHand",
    "HoldemHandPlayer",
    "HoldemHandStatus",
    "PlatformFault",
    "PlatformFaultKind",
    "PlayerClientSeed",
    "PowerUpRules",
    "PracticeEnd",
    "PracticeGame",
    "PracticeResult",
    "PracticeStatus",
    "PurchaseRef",
    "Redeal",
    "RedealCounter",
    "Seat",
    "SeatSockets",
    "SeatStatus",
    "SeedChain",
    "SpecialHandKind",
    "SpecialHandSchedule",
    "Table",
    "TableConfigChange",
    "TableGame",
    "TableMode",
    "TablePhase",
    "Tournament",
    "TournamentRound",
    "WiderPokerConditions",
]
