"""Errors of the hand history. Each has a stable ``code`` for API bodies."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from config.infra.errors import DomainError


class HandNotFoundError(DomainError):
    """No such hand, or not one the viewer may see: a player sees only the hands he played
    (auditors see every hand). Both answer the same, so hand ids reveal nothing."""

    code = "hand_not_found"
    summary = _("No such hand.")
    http_status = 404


class HandNotTerminalError(DomainError):
    """The hand is still being played: its seed and change keys are secret, so it can be
    neither exported nor verified until it is settled or cancelled."""

    code = "hand_not_terminal"
    summary = _("The hand is still being played.")
    http_status = 409
