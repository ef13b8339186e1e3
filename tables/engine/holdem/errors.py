"""Domain errors of the Hold'em engine, each with a stable string ``code``.

An illegal step raises one of these and changes nothing: states are immutable, so the
caller still holds the state it had (seed 003, The Game: every action is taken "during
their turn" and within the limits of the structure).
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "AmountTooLargeError",
    "AmountTooSmallError",
    "HandOverError",
    "HoldemError",
    "IllegalActionError",
    "NotYourTurnError",
    "PhhError",
    "SetupError",
]


class HoldemError(Exception):
    """Base class: ``code`` is a stable machine-readable string, the message is for people."""

    code: ClassVar[str] = "holdem_error"


class SetupError(HoldemError, ValueError):
    """The hand's setup (seats, stacks, blinds, deck) is invalid."""

    code = "invalid_setup"


class NotYourTurnError(HoldemError):
    """The seat acting is not the seat whose turn it is."""

    code = "not_your_turn"


class IllegalActionError(HoldemError):
    """The action kind is not offered now (for example a check facing a bet, a raise after the cap)."""

    code = "illegal_action"


class AmountTooSmallError(HoldemError):
    """A bet or raise-to amount below the minimum the structure allows."""

    code = "amount_too_small"


class AmountTooLargeError(HoldemError):
    """A bet or raise-to amount above the maximum (limit, pot or stack)."""

    code = "amount_too_large"


class HandOverError(HoldemError):
    """The hand is complete: no further action is accepted."""

    code = "hand_over"


class PhhError(HoldemError, ValueError):
    """A PHH text that cannot be read or replayed by this engine."""

    code = "invalid_phh"
