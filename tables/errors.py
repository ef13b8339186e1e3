"""Errors of the tables app. Each has a stable ``code`` for API bodies and WebSocket frames."""

from __future__ import annotations

from typing import ClassVar

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from config.infra.errors import DomainError


class TableNotFoundError(DomainError):
    code = "table_not_found"
    summary = _("No such table.")
    http_status = 404


class TableClosedError(DomainError):
    code = "table_closed"
    summary = _("This table is closed.")
    http_status = 409


class TournamentLeaveError(DomainError):
    """A player asked to leave a tournament's table (docs/tournaments.md, "Sitting out"): a
    tournament deals every entry still in, so leaving would not stop the deal, and the table
    is closed to the lobby, so he could not come back. Sit out stops the deal and the antes."""

    code = "tournament_leave"
    summary = _("You cannot leave a tournament table: use Sit out to stop playing and paying antes.")
    http_status = 409


class NotSeatedError(DomainError):
    """The player has no seat at this table (join it first)."""

    code = "not_seated"
    summary = _("You have no seat at this table.")
    http_status = 409


class NotInHandError(DomainError):
    """The player holds no entry in the hand being played (sitting out, or joined late)."""

    code = "not_in_hand"
    summary = _("You are not in this hand.")
    http_status = 409


class PhaseClosedError(DomainError):
    """The action is only accepted during the change phase, before its deadline."""

    code = "phase_closed"
    summary = _("The change phase is over.")
    http_status = 409


class RedealClosedError(DomainError):
    """The redeal window of this hand is over."""

    code = "redeal_closed"
    summary = _("Redeals are closed for this hand.")
    http_status = 409


class RedealPendingError(DomainError):
    """The player's last redeal waits for its beacon round (algorithm 3): no second redeal
    and no hold until its combination is dealt."""

    code = "redeal_pending"
    summary = _("Your redeal is on its way: wait for the new combination.")
    http_status = 409


class LimitReachedError(DomainError):
    """No more draws or redeals may be bought in this hand."""

    code = "limit_reached"
    summary = _("No more can be bought in this hand.")
    http_status = 409


class InvalidHoldError(DomainError):
    """A hold must be five booleans (one per column)."""

    code = "invalid_hold"
    summary = _("Choose the cards to hold, one per column.")


class InvalidTableConfigError(DomainError):
    code = "invalid_table_config"
    summary = _("These table conditions are not valid.")


# --- Texas Hold'em (tables/holdem/services/) -----------------------------------------------


class WrongGameError(DomainError):
    """The action belongs to another game than the table's (a Hold'em bet at a WiderPoker
    table, a draw at a Hold'em table)."""

    code = "wrong_game"
    summary = _("This action belongs to another game than this table's.")
    http_status = 409


class InvalidSeatError(DomainError):
    """The seat number is not one of the table's seats (0 .. seats - 1)."""

    code = "invalid_seat"
    summary = _("There is no such seat at this table.")


class SeatTakenError(DomainError):
    """Another player sits in that seat."""

    code = "seat_taken"
    summary = _("Another player sits in that seat.")
    http_status = 409


class AlreadySeatedError(DomainError):
    """The player already has a seat at this table."""

    code = "already_seated"
    summary = _("You already have a seat at this table.")
    http_status = 409


class BuyInOutOfRangeError(DomainError):
    """The buy-in (or the stack after adding chips) is outside the table's minimum and
    maximum buy-in."""

    code = "buy_in_out_of_range"
    summary = _("The buy-in is outside this table's minimum and maximum.")


class HandInProgressError(DomainError):
    """Table stakes (seed 003): no chips may be bought while the player is in a hand."""

    code = "hand_in_progress"
    summary = _("Chips cannot be added while you are in a hand.")
    http_status = 409


class NoHandError(DomainError):
    """No Hold'em hand is being played at the table."""

    code = "no_hand"
    summary = _("No hand is being played at this table.")
    http_status = 409


class TurnOverError(DomainError):
    """A Hold'em action sent when the player's turn is over: at or after the turn's
    deadline (``tables.holdem.records.turn_deadline``: 10 s to act, then the table's time
    bank, plus the reconnection time once when granted; seed 003). The clock plays the
    timeout rule for him at its next tick; nothing changed."""

    code = "turn_over"
    summary = _("Your time to act is over.")
    http_status = 409


class HoldemActionError(DomainError):
    """The Hold'em engine refused the action (tables.engine.holdem.HoldemError); ``code``
    is the engine's: ``not_your_turn``, ``illegal_action``, ``amount_too_small``,
    ``amount_too_large``, ``hand_over``. Nothing changed."""

    code = "illegal_action"
    summary = _("That action is not allowed now.")
    http_status = 409
    # The engine's codes for people (tables/engine/holdem/errors.py); others read ``summary``.
    SUMMARIES: ClassVar[dict[str, str | Promise]] = {
        "not_your_turn": _("It is not your turn."),
        "illegal_action": _("That action is not allowed now."),
        "amount_too_small": _("That amount is too small."),
        "amount_too_large": _("That amount is too large."),
        "hand_over": _("This hand is over."),
    }

    def __init__(self, message: str, *, engine_code: str, **extra: object) -> None:
        super().__init__(message, **extra)
        self.code = engine_code  # type: ignore[misc]  # the engine's stable code, per instance
        self.summary = self.SUMMARIES.get(engine_code, type(self).summary)  # type: ignore[misc,assignment]


class InvalidActionError(DomainError):
    """A Hold'em action that is not one of fold, check, call, bet, raise, all_in, or an
    amount that is not a positive whole number of chips."""

    code = "invalid_action"
    summary = _("That is not a valid action or amount.")


class PracticeSetupError(DomainError):
    """A BigHoldem practice setup item is out of range (seed 004, *assetto*); ``field``
    names the item, the message gives the allowed range."""

    code = "invalid_practice_setup"
    summary = _("This practice setup is out of range.")


class PracticeFunOnlyError(DomainError):
    """Practice games play FUN chips only: a practice game (bots only or not) on a cash
    currency is refused (seed 004: "Non si vincono soldi"; seed 001 Notes 4: no bots where
    money is at stake)."""

    code = "practice_fun_only"
    summary = _("Practice games are played with fun chips only.")


class PracticeNotFoundError(DomainError):
    code = "practice_not_found"
    summary = _("No such practice game.")
    http_status = 404


class PracticeNotYoursError(DomainError):
    """Only the player who started a practice game may play or stop it."""

    code = "practice_not_yours"
    summary = _("Only the player who started this practice game may play it.")
    http_status = 403


class PracticeOverError(DomainError):
    """The practice game has ended."""

    code = "practice_over"
    summary = _("This practice game has ended.")
    http_status = 409


class PracticeLimitError(DomainError):
    """The player already runs as many practice games as one account may
    (``PRACTICE_GAMES_PER_PLAYER``, ``extra["limit"]``): he stops or finishes one first
    (security audit M2; docs/holdem-tables.md, "Practice games (BigHoldem)")."""

    code = "practice_limit"
    summary = _("You already have as many practice games running as you may: stop one first.")
    http_status = 409


class PracticeFullError(DomainError):
    """The site runs as many practice games as it takes (``PRACTICE_GAMES_MAX``,
    ``extra["limit"]``): try again when one ends (security audit M2)."""

    code = "practice_full"
    summary = _("Too many practice games are running on the site: try again in a few minutes.")
    http_status = 503


class PracticeTableError(DomainError):
    """A practice game's table takes no one else, and its chips are not bought or cashed
    out: its player stops the game instead of leaving (tables/holdem/practice/services.py)."""

    code = "practice_table"
    summary = _("A practice game takes no one else: stop the game instead.")
    http_status = 409
