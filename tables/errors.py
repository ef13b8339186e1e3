"""Errors of the tables app. Each has a stable ``code`` for API bodies and WebSocket frames."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from wallet.errors import DomainError


class TableNotFoundError(DomainError):
    code = "table_not_found"
    summary = _("No such table.")
    http_status = 404


class TableClosedError(DomainError):
    code = "table_closed"
    summary = _("This table is closed.")
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
