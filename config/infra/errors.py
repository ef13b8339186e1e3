"""The base of every refusal a player, a croupier or a client can cause: a stable ``code`` the
REST API, the socket frames and the admin carry, a sentence for people, and machine-readable
details. Plumbing, not domain: each app defines its own errors on it (wallet/errors.py,
tables/errors.py, ...), and the REST exception handler (config/api.py) answers them."""

from __future__ import annotations

from typing import Any, ClassVar

from django.utils.functional import Promise
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _


class DomainError(Exception):
    """Base of every error a player, a croupier or a client can cause.

    ``code`` is stable (clients switch on it); ``message`` is for people; ``extra`` carries
    machine-readable details. ``http_status`` is what the REST API answers with.
    """

    code: ClassVar[str] = "domain_error"
    http_status: ClassVar[int] = 400
    # One translatable sentence per code (locale/*/LC_MESSAGES/django.po): what a person
    # reads in a language other than the English the detailed ``message`` is written in.
    summary: ClassVar[str | Promise] = _("This request was refused.")

    def __init__(self, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.extra: dict[str, Any] = extra

    def for_people(self) -> str:
        """The refusal in the active language: the detailed English ``message`` in English,
        the code's translated ``summary`` in any other language (the details are written
        at the raise site in English). Never the stable ``code``, which is for clients."""
        if (get_language() or "en").split("-")[0] == "en":
            return str(self)
        return str(self.summary)
