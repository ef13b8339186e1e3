"""Sign-up, and ending a player's sessions when he may no longer play: the writes of the
lobby app."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import SESSION_KEY
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.db import IntegrityError, transaction
from django.utils.translation import gettext_lazy as _
from rest_framework.authtoken.models import Token

from config.infra.errors import DomainError
from tables.clock import remove_from_tables
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


@dataclass(frozen=True)
class EndedSessions:
    """What ``end_player_sessions`` ended: browser sessions deleted, API tokens revoked,
    tables left (their ids)."""

    sessions: int
    tokens: int
    tables: list[int]


def end_player_sessions(*, user_id: int, reason: str, now: datetime) -> EndedSessions:
    """Log the player out everywhere and take him away from the tables: staff suspended his
    account (seed 001, Notes 4; wallet.protection.suspend_player has committed).

    * his browser sessions are deleted, so his next request is anonymous (and the login
      refuses a suspended account: lobby/protection.py, PlayerLoginForm);
    * his API tokens are revoked (DRF ``Token``), so API clients get 401;
    * every seat is left and every game socket closed (tables.clock.remove_from_tables:
      an entry in the running hand stays in play and is paid what it wins; money is never
      moved here).

    The database session store cannot be searched by user: the unexpired sessions are read
    and decoded, one pass (a staff action, not a player's). Raises nothing of its own.
    """
    key = str(user_id)
    mine = [
        session.pk
        for session in Session.objects.filter(expire_date__gt=now).iterator(chunk_size=2000)
        if session.get_decoded().get(SESSION_KEY) == key
    ]
    sessions = Session.objects.filter(pk__in=mine).delete()[0] if mine else 0
    tokens = Token.objects.filter(user_id=user_id).delete()[0]
    tables = remove_from_tables(user_id=user_id, reason=reason, now=now)
    return EndedSessions(sessions=sessions, tokens=tokens, tables=tables)
