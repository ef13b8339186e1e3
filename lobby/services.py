"""Sign-up: the one write of the lobby app."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction

from wallet.services import grant_signup_fun_chips


@transaction.atomic(durable=True)
def register_player(*, username: str, password: str) -> User:
    """Create a player account and grant the sign-up FUN chips in the same transaction, so
    no player exists without the grant. ``password`` is already validated by the form."""
    user = User.objects.create_user(username=username, password=password)
    grant_signup_fun_chips(user_id=user.pk)
    return user
