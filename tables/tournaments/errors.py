"""Refusals of the tournament services, each with a stable ``code`` (docs/protocol.md)."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from config.infra.errors import DomainError


class TournamentNotFoundError(DomainError):
    code = "tournament_not_found"
    summary = _("No such tournament.")
    http_status = 404


class InvalidTournamentError(DomainError):
    """A tournament's conditions break a rule; ``extra["field"]`` names the field."""

    code = "invalid_tournament"
    summary = _("These tournament conditions are not valid.")
    http_status = 400


class RegistrationClosedError(DomainError):
    """Registration is not open: not yet, no longer (started and past late registration),
    or the tournament is over or cancelled."""

    code = "registration_closed"
    summary = _("Registration for this tournament is closed.")
    http_status = 409


class AlreadyRegisteredError(DomainError):
    code = "already_registered"
    summary = _("You are already registered for this tournament.")
    http_status = 409


class NotRegisteredError(DomainError):
    code = "not_registered"
    summary = _("You are not registered for this tournament.")
    http_status = 409


class TournamentFullError(DomainError):
    code = "tournament_full"
    summary = _("This tournament is full.")
    http_status = 409


class ReentryLimitError(DomainError):
    """An eliminated player asked to re-enter past the tournament's maximum of re-entries."""

    code = "reentry_limit"
    summary = _("You have used every re-entry of this tournament.")
    http_status = 409


class TournamentOverError(DomainError):
    """The tournament is finished or cancelled: it cannot be cancelled again."""

    code = "tournament_over"
    summary = _("This tournament is over.")
    http_status = 409
