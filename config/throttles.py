"""API rate limits that hold across processes (they count in the shared cache: Redis in
production), per user and per client address, on every endpoint."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle, UserRateThrottle


class UserThrottle(UserRateThrottle):
    """Every request of a signed-in user (``user`` rate); anonymous ones by address."""

    scope = "user"


class AddressThrottle(SimpleRateThrottle):
    """Every request from one client address (``address`` rate), signed in or not, so many
    accounts behind one address cannot add up their limits."""

    scope = "address"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class ActionThrottle(UserRateThrottle):
    """Play and wallet actions per player (``action`` rate), on top of the general limits."""

    scope = "action"
