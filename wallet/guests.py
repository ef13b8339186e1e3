"""Guests: practice players without an account (seed 004, BigHoldem: "senza registrazione",
a nickname for the leaderboard).

A guest is a Django user with no usable password, a generated name (``guest-`` and twelve
hex digits) and membership of the group ``GUEST_GROUP``; he is logged in for the browser
session that started his practice game and cannot log in again. He has no wallet: a practice
game's chips are issued to its table, never to a player. Every service that seats a player at
a real table or moves money into a wallet refuses a guest (``refuse_guest``), so the doors
(pages, REST, sockets) need no checks of their own.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.cache import cache
from django.db import transaction

from wallet.errors import GuestLimitError, GuestPracticeOnlyError

GUEST_GROUP = "Practice guests"
GUEST_PREFIX = "guest-"


def is_guest(user_id: int) -> bool:
    """Whether the user is a guest (a member of ``GUEST_GROUP``). One query."""
    return User.objects.filter(pk=user_id, groups__name=GUEST_GROUP).exists()


def refuse_guest(*, user_id: int) -> None:
    """Raise GuestPracticeOnlyError (``guest_practice_only``, 403) when the user is a guest:
    guests play practice games only. None otherwise."""
    if is_guest(user_id):
        raise GuestPracticeOnlyError("guests play practice games only: sign up to play at the tables")


def count_guest_start(*, address: str) -> None:
    """Count one guest started from the client ``address`` in the current hour; raise
    GuestLimitError (``guest_limit``, 429, ``extra.limit``) past ``POKER_GUESTS_PER_ADDRESS_HOUR``
    (a guest is a user row and a running practice table: an address may not make thousands).
    The count lives in the cache, so it is per cache (Redis in production: the whole site)."""
    limit = int(settings.POKER_GUESTS_PER_ADDRESS_HOUR)
    key = f"guests:{address}"
    cache.add(key, 0, timeout=3600)
    try:
        started = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=3600)
        started = 1
    if started > limit:
        raise GuestLimitError(f"at most {limit} guest games an hour from one address", limit=limit)


@transaction.atomic
def create_guest() -> User:
    """A new guest user (no usable password, no wallet, in ``GUEST_GROUP``); the caller logs
    him in for the session and starts his practice game in the same request."""
    group, _created = Group.objects.get_or_create(name=GUEST_GROUP)
    user = User(username=GUEST_PREFIX + secrets.token_hex(6))
    user.set_unusable_password()
    user.save()
    user.groups.add(group)
    return user
