"""Sign-up: the one write of the lobby app."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils.translation import gettext_lazy as _

from wallet.errors import DomainError
from wallet.models import Currency
from wallet.services import ensure_player_account, grant_signup_fun_chips


class UsernameTakenError(DomainError):
    """Another player took the name first (two sign-ups with one name at once)."""

    code = "username_taken"
    summary = _("A user with that username already exists.")
    http_status = 409


def register_player(*, username: str, password: str) -> User:
    """Create a player account, its empty cash wallets (staff can deposit into them before
    the player joins a cash table) and the sign-up FUN chips, in one transaction, so no
    player exists without the grant. ``password`` is already validated by the form.

    Raises UsernameTakenError when the name was taken meanwhile (the form checked it, but a
    concurrent sign-up may win the race; security audit F8). Nothing is created then.
    """
    try:
        with transaction.atomic(durable=True):
            user = User.objects.create_user(username=username, password=password)
            for currency in Currency.values:
                if currency != Currency.FUN:
                    ensure_player_account(user_id=user.pk, currency=currency)
            grant_signup_fun_chips(user_id=user.pk)
    except IntegrityError as error:
        if User.objects.filter(username__iexact=username).exists():
            raise UsernameTakenError(f"the name {username!r} is taken", username=username) from error
        raise
    return user
