"""Jackpot domain errors, each with a stable code."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from config.infra.errors import DomainError


class InvalidJackpotError(DomainError):
    """A jackpot or a table's set of jackpots is configured out of range; nothing changed.
    ``extra["field"]`` names the field at fault."""

    code = "invalid_jackpot"
    summary = _("This jackpot setting is out of range.")
