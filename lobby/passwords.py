"""Password rules of the sign-up form (settings.AUTH_PASSWORD_VALIDATORS)."""

from __future__ import annotations

from django.contrib.auth import password_validation
from django.utils.translation import ngettext


class MinimumLengthValidator(password_validation.MinimumLengthValidator):
    """Django's minimum length rule, whose refusal reads in the player's language. Django
    5.2 writes it with a ``%d`` its own Italian catalogue has no entry for (it has the
    ``%(min_length)d`` wording), so an Italian player read it in English (UX audit
    2026-11-26, N13); the sentence is the same, the rule unchanged."""

    def get_error_message(self) -> str:
        return ngettext(
            "This password is too short. It must contain at least %(min_length)d character.",
            "This password is too short. It must contain at least %(min_length)d characters.",
            self.min_length,
        ) % {"min_length": self.min_length}
