"""Template context for every page."""

from __future__ import annotations

from django.http import HttpRequest

from wallet.guests import GUEST_PREFIX, is_guest


def guest(request: HttpRequest) -> dict[str, bool]:
    """``is_guest``: the visitor is a practice guest (wallet/guests.py; the header then offers
    sign-up instead of the wallet). A query only for a user whose name has the guests' prefix."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not user.get_username().startswith(GUEST_PREFIX):
        return {"is_guest": False}
    return {"is_guest": is_guest(user.pk)}
