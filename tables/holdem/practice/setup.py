"""The setup of a BigHoldem practice game (seed 004, *assetto*): its items, their ranges and
defaults, and their validation (``validate_practice_setup``). The game itself is
``tables.holdem.practice.services``; docs/holdem-tables.md, "Practice games (BigHoldem)".
"""

from __future__ import annotations

from dataclasses import dataclass

from tables.engine.holdem import MAX_PLAYERS, MIN_PLAYERS
from tables.errors import (
    PracticeFunOnlyError,
    PracticeSetupError,
)
from tables.holdem.services.conditions import MAX_RAISES
from tables.models import (
    HoldemBetting,
)
from wallet.models import Currency

UNIT_MINOR = 100
"""One unit of the seed's sums ("1000 o 2000 unità monetarie", *Somma*) is one FUN chip,
100 minor units, so a 1,000-unit stack shows as 1,000.00 FUN on the Hold'em screen."""

STAKES = {"short": 25, "standard": 50, "deep": 100}
"""The limit's stakes as the starting depth in big blinds: minimum chip = starting sum /
(2 x depth). ``standard`` is the engine's ``base_minimum_minor`` (starting sum / 100)."""

CURRENCY_LABELS = {"chips": "chips", "fiches": "fiches", "points": "points", "play-euro": "play €"}
"""What the chips are called on screen (*moneta*). A label only: they are FUN chips."""

DEFAULT_CURRENCY_LABEL = "play-euro"
"""Seed 004, *moneta*: "per default Euro". Shown as "play €", so play chips never pass for
real euros (the money is always FUN)."""

FELTS = ("green", "blue", "red")
"""The table's felt (*tavolo*)."""

HANDS_RANGE = (1, 1000)
MINUTES_RANGE = (1, 240)
ACTION_SECONDS_RANGE = (10, 60)
"""The action timer: 10 s to act (seed 003) plus a time bank of 0 to 50 s."""


@dataclass(frozen=True)
class PracticeSetup:
    """The setup items of a practice game (seed 004, *assetto*), with the seed's defaults
    where it gives one (10 players, 3 raises; bets never above the pot, i.e. pot limit)
    and ours elsewhere. ``max_hands`` None: no hand limit; the duration is always set
    (seed 004, *Tempo massimo*: "una partita ... non può superare una certa durata").
    ``currency`` is the table's ledger currency and must be FUN."""

    players: int = 10
    max_hands: int | None = 100
    max_minutes: int = 30
    max_raises: int = 3
    currency_label: str = DEFAULT_CURRENCY_LABEL
    action_seconds: int = 30
    ante: bool = False
    betting: str = HoldemBetting.POT_LIMIT.value
    stakes: str = "standard"
    show_probabilities: bool = True
    felt: str = "green"
    currency: str = Currency.FUN.value


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def validate_practice_setup(setup: PracticeSetup) -> None:
    """Refuse an out-of-range item: PracticeFunOnlyError (``practice_fun_only``) for any
    currency but FUN, else PracticeSetupError (``invalid_practice_setup``) whose ``field``
    names the item. Ranges: players 2-10 (seed 004, *Giocatore*), hands 1-1000 or none,
    duration 1-240 minutes, raises 1-9, timer 10-60 s, the listed labels, structures,
    stakes and felts."""
    if setup.currency != Currency.FUN:
        raise PracticeFunOnlyError(
            "practice games play FUN chips only, never real money", field="currency", value=str(setup.currency)[:8]
        )
    checks: list[tuple[str, bool, str]] = [
        (
            "players",
            _whole(setup.players) and MIN_PLAYERS <= setup.players <= MAX_PLAYERS,
            "a game has 2 to 10 players",
        ),
        (
            "max_hands",
            setup.max_hands is None
            or (_whole(setup.max_hands) and HANDS_RANGE[0] <= setup.max_hands <= HANDS_RANGE[1]),
            "hands are 1 to 1000 (or no limit)",
        ),
        (
            "max_minutes",
            _whole(setup.max_minutes) and MINUTES_RANGE[0] <= setup.max_minutes <= MINUTES_RANGE[1],
            "the duration is 1 to 240 minutes",
        ),
        (
            "max_raises",
            _whole(setup.max_raises) and 1 <= setup.max_raises <= MAX_RAISES,
            f"raises per betting round are 1 to {MAX_RAISES}",
        ),
        ("currency_label", setup.currency_label in CURRENCY_LABELS, f"the label is one of {sorted(CURRENCY_LABELS)}"),
        (
            "action_seconds",
            _whole(setup.action_seconds) and ACTION_SECONDS_RANGE[0] <= setup.action_seconds <= ACTION_SECONDS_RANGE[1],
            "the timer is 10 to 60 seconds",
        ),
        ("ante", isinstance(setup.ante, bool), "ante is on or off"),
        ("betting", setup.betting in HoldemBetting.values, "the limit is fixed-limit, pot-limit or no-limit"),
        ("stakes", setup.stakes in STAKES, f"the stakes are one of {sorted(STAKES)}"),
        ("show_probabilities", isinstance(setup.show_probabilities, bool), "probabilities are on or off"),
        ("felt", setup.felt in FELTS, f"the table is one of {list(FELTS)}"),
    ]
    for name, ok, message in checks:
        if not ok:
            raise PracticeSetupError(message, field=name, value=repr(getattr(setup, name))[:20])
