"""Domain errors. Every error has a stable ``code`` that the API and WebSocket frames carry."""

from __future__ import annotations

from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from config.infra.errors import DomainError


class InsufficientFundsError(DomainError):
    """The paying account does not hold the amount; nothing was changed."""

    code = "insufficient_funds"
    summary = _("Your balance is too low for this.")
    http_status = 409


class StakeNotCoveredError(InsufficientFundsError):
    """A player whose wallet cannot pay one hand's stake asks for a seat (or to sit in):
    refused at once with ``insufficient_funds`` instead of seating him to be sat out at the
    next deal. ``extra``: ``needed_minor`` (the stake, minor units), ``balance_minor`` (what
    he may spend), ``currency``, ``wallet_url`` (where to add money or top up)."""

    def for_people(self) -> str:
        """The amounts in the active language's way of writing them, in every language."""
        from wallet.money import format_minor

        currency = str(self.extra["currency"])
        return gettext(
            "You need at least %(needed)s to play at this table; your wallet holds %(balance)s. "
            "Add money in your wallet first."
        ) % {
            "needed": format_minor(int(self.extra["needed_minor"]), currency),
            "balance": format_minor(int(self.extra["balance_minor"]), currency),
        }


class CurrencyMismatchError(DomainError):
    """A transfer tried to mix currencies (e.g. FUN chips into a EUR account)."""

    code = "currency_mismatch"
    summary = _("These currencies cannot be mixed.")


class UnbalancedTransferError(DomainError):
    """The legs of a transfer do not sum to zero."""

    code = "unbalanced_transfer"
    summary = _("The movement of money does not balance.")


class InvalidAmountError(DomainError):
    """An amount is not a positive whole number of minor units."""

    code = "invalid_amount"
    summary = _("That is not a valid amount.")


class TransferConflictError(DomainError):
    """A transfer reference was reused for a different movement of money."""

    code = "transfer_conflict"
    summary = _("This movement of money was already recorded differently.")
    http_status = 409


class TopUpRefusedError(DomainError):
    """Fun chips are topped up only when the balance is low."""

    code = "top_up_refused"
    summary = _("Fun chips are topped up only when your balance is low.")
    http_status = 409


class DepositLimitError(DomainError):
    """The deposit would pass the player's own deposit limit; nothing was deposited."""

    code = "deposit_limit"
    summary = _("This deposit would pass your deposit limit.")
    http_status = 409


class LossLimitError(DomainError):
    """The stake would take the player's net loss past his own loss limit; nothing was charged."""

    code = "loss_limit"
    summary = _("This would take your losses past your loss limit.")
    http_status = 409


class SessionLimitError(DomainError):
    """The player's session time limit is reached: he plays again after a break."""

    code = "session_limit"
    summary = _("You reached your session time limit: take a break before playing again.")
    http_status = 409


class SelfExcludedError(DomainError):
    """The player excluded himself from playing until ``extra["until"]``."""

    code = "self_excluded"
    summary = _("You excluded yourself from playing.")
    http_status = 403


class TimeOutError(DomainError):
    """The player took a time-out from playing until ``extra["until"]``."""

    code = "time_out"
    summary = _("You are on a time-out from playing.")
    http_status = 403


class SuspendedError(DomainError):
    """Staff suspended the account; it can neither play nor log in."""

    code = "suspended"
    summary = _("This account is suspended.")
    http_status = 403


class InvalidLimitError(DomainError):
    """A limit, break or suspension request out of range (e.g. a negative amount, no reason)."""

    code = "invalid_limit"
    summary = _("That limit is out of range.")


class GuestPracticeOnlyError(DomainError):
    """A guest (a practice player without an account, seed 004 "senza registrazione") asked
    for something only an account may do: a seat at a table, a deposit, a top-up."""

    code = "guest_practice_only"
    summary = _("Guests play practice games only: sign up to play at the tables.")
    http_status = 403


class GuestLimitError(DomainError):
    """Too many guests started from one address within the hour; ``extra``: ``limit``."""

    code = "guest_limit"
    summary = _("Too many guest games from your address: try again later or sign up.")
    http_status = 429
