"""Domain errors. Every error has a stable ``code`` that the API and WebSocket frames carry."""

from __future__ import annotations

from typing import Any, ClassVar


class DomainError(Exception):
    """Base of every error a player, a croupier or a client can cause.

    ``code`` is stable (clients switch on it); ``message`` is for people; ``extra`` carries
    machine-readable details. ``http_status`` is what the REST API answers with.
    """

    code: ClassVar[str] = "domain_error"
    http_status: ClassVar[int] = 400

    def __init__(self, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.extra: dict[str, Any] = extra


class InsufficientFundsError(DomainError):
    """The paying account does not hold the amount; nothing was changed."""

    code = "insufficient_funds"
    http_status = 409


class CurrencyMismatchError(DomainError):
    """A transfer tried to mix currencies (e.g. FUN chips into a EUR account)."""

    code = "currency_mismatch"


class UnbalancedTransferError(DomainError):
    """The legs of a transfer do not sum to zero."""

    code = "unbalanced_transfer"


class InvalidAmountError(DomainError):
    """An amount is not a positive whole number of minor units."""

    code = "invalid_amount"


class TransferConflictError(DomainError):
    """A transfer reference was reused for a different movement of money."""

    code = "transfer_conflict"
    http_status = 409


class TopUpRefusedError(DomainError):
    """Fun chips are topped up only when the balance is low."""

    code = "top_up_refused"
    http_status = 409


class DepositLimitError(DomainError):
    """The deposit would pass the player's own deposit limit; nothing was deposited."""

    code = "deposit_limit"
    http_status = 409


class LossLimitError(DomainError):
    """The stake would take the player's net loss past his own loss limit; nothing was charged."""

    code = "loss_limit"
    http_status = 409


class SessionLimitError(DomainError):
    """The player's session time limit is reached: he plays again after a break."""

    code = "session_limit"
    http_status = 409


class SelfExcludedError(DomainError):
    """The player excluded himself from playing until ``extra["until"]``."""

    code = "self_excluded"
    http_status = 403


class TimeOutError(DomainError):
    """The player took a time-out from playing until ``extra["until"]``."""

    code = "time_out"
    http_status = 403


class SuspendedError(DomainError):
    """Staff suspended the account; it can neither play nor log in."""

    code = "suspended"
    http_status = 403


class InvalidLimitError(DomainError):
    """A limit, break or suspension request out of range (e.g. a negative amount, no reason)."""

    code = "invalid_limit"
