"""Errors of the tables app. Each has a stable ``code`` for API bodies and WebSocket frames."""

from __future__ import annotations

from wallet.errors import DomainError


class TableNotFoundError(DomainError):
    code = "table_not_found"
    http_status = 404


class TableClosedError(DomainError):
    code = "table_closed"
    http_status = 409


class NotSeatedError(DomainError):
    """The player has no seat at this table (join it first)."""

    code = "not_seated"
    http_status = 409


class NotInHandError(DomainError):
    """The player holds no entry in the hand being played (sitting out, or joined late)."""

    code = "not_in_hand"
    http_status = 409


class PhaseClosedError(DomainError):
    """The action is only accepted during the change phase, before its deadline."""

    code = "phase_closed"
    http_status = 409


class RedealClosedError(DomainError):
    """The redeal window of this hand is over."""

    code = "redeal_closed"
    http_status = 409


class LimitReachedError(DomainError):
    """No more draws or redeals may be bought in this hand."""

    code = "limit_reached"
    http_status = 409


class InvalidHoldError(DomainError):
    """A hold must be five booleans (one per column)."""

    code = "invalid_hold"


class InvalidTableConfigError(DomainError):
    code = "invalid_table_config"
