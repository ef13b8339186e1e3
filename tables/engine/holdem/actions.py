"""The vocabulary of a hand: streets, phases, actions, legal options, log events, set-up.

Frozen values only; the state machine that uses them is ``state.py`` (seed 003,
``003_c848e011f7df0184.txt``: The Game, Some standard rules, Showdown).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, StrEnum

from .structure import Structure

__all__ = [
    "Action",
    "ActionKind",
    "Event",
    "HandSetup",
    "LegalActions",
    "Phase",
    "Street",
]


class Street(IntEnum):
    """Betting rounds (seed 003: The First .. The Fourth Round)."""

    PREFLOP = 0
    FLOP = 1
    TURN = 2
    RIVER = 3


class Phase(StrEnum):
    """What the hand waits for: a betting action, a show-or-muck decision, or nothing."""

    BETTING = "betting"
    SHOWDOWN = "showdown"
    COMPLETE = "complete"


class ActionKind(StrEnum):
    """A player's action. ``BET``/``RAISE`` carry the total the player's bet is raised *to*
    on this street; ``ALL_IN`` is a call or a raise for the whole stack; ``TIMEOUT_ALL_IN``
    is applied by the clock only (seed 003: the player stays in for what is already in)."""

    FOLD = "fold"
    CHECK = "check"
    CALL = "call"
    BET = "bet"
    RAISE = "raise"
    ALL_IN = "all_in"
    SHOW = "show"
    MUCK = "muck"
    TIMEOUT_ALL_IN = "timeout_all_in"


@dataclass(frozen=True, slots=True)
class Action:
    """An action by the player in ``seat``; ``amount`` (chips) is the raise-to total for
    ``BET`` and ``RAISE`` (``None``: the minimum) and ignored otherwise."""

    kind: ActionKind
    seat: int
    amount: int | None = None


@dataclass(frozen=True, slots=True)
class LegalActions:
    """What the player in ``seat`` may do now.

    ``call_amount``: chips a call adds (0 if checking is free). ``min_to``/``max_to``: the
    bet or raise-to range in chips (``None`` when no bet or raise is allowed); a minimum
    below a full raise is an all-in for less. ``all_in_to``: the street total after
    ``ALL_IN``, or ``None`` when it is not allowed.
    """

    seat: int
    kinds: tuple[ActionKind, ...]
    call_amount: int = 0
    min_to: int | None = None
    max_to: int | None = None
    all_in_to: int | None = None


@dataclass(frozen=True, slots=True)
class Event:
    """One entry of the hand's log: ``kind`` is an ``ActionKind`` value or ``"board"``;
    ``player`` is the dealing-order index (-1 for the dealer); ``amount`` is the street
    total for bets and raises, the chips added for calls; ``cards`` for board and show."""

    kind: str
    player: int
    amount: int = 0
    cards: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class HandSetup:
    """Everything a hand starts from.

    ``stacks``: chips per table seat (``None`` for an empty seat), 2..10 seats dealt in.
    ``button``: the dealer seat, which must be dealt in. ``deck``: 52 distinct card ids in
    deck order (positions 0..51, see ``dealing.py``). ``waiting``: seats that wait for
    their big blind in turn and are not dealt. ``posting``: new players who post a big
    blind now, out of position, as a live bet (seed 003, The First round); a posting seat
    that is the small or big blind posts that blind only.
    """

    structure: Structure
    stacks: tuple[int | None, ...]
    button: int
    deck: tuple[int, ...]
    waiting: frozenset[int] = frozenset()
    posting: frozenset[int] = frozenset()
