"""The language of an answer given outside Django's request stack (the game socket, the REST
purchase door on daphne's event loop), chosen as ``LocaleMiddleware`` chooses a page's
(docs/i18n.md)."""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.utils import translation
from django.utils.translation.trans_real import parse_accept_lang_header


def pick_language(cookie: str | None, accept_languages: Iterable[str]) -> str:
    """The ``django_language`` cookie's language, else the first of the ``Accept-Language``
    headers' languages (each header's first 255 characters, in their order, ``*`` ignored)
    that the site has, else ``settings.LANGUAGE_CODE``; always one of ``LANGUAGES``."""
    candidates = [cookie] if cookie else []
    for header in accept_languages:
        candidates += [code for code, _ in parse_accept_lang_header(header[:255]) if code != "*"]
    for candidate in candidates:
        try:
            return translation.get_supported_language_variant(candidate)
        except LookupError:
            continue
    return str(settings.LANGUAGE_CODE)
