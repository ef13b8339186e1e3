"""Sign-up, log-in and log-out through the web pages."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from wallet.models import Currency, Transfer, TransferKind
from wallet.selectors import get_balance_minor

pytestmark = pytest.mark.django_db
PASSWORD = "felt-green-ante-42"


def test_sign_up_grants_fun_chips_and_logs_in(client: Client) -> None:
    response = client.post("/signup/", {"username": "dora", "password1": PASSWORD, "password2": PASSWORD})
    assert response.status_code == 302
    assert response["Location"] == "/"
    dora = User.objects.get(username="dora")
    assert get_balance_minor(user_id=dora.pk, currency=Currency.FUN) == (settings.FUN_SIGNUP_GRANT_MINOR)
    assert Transfer.objects.filter(kind=TransferKind.FUN_GRANT).count() == 1
    lobby = client.get("/")
    assert lobby.context["user"] == dora
    assert "1,000.00 FUN to play with" in lobby.content.decode()


def test_sign_up_with_mismatched_passwords_creates_nobody(client: Client) -> None:
    response = client.post("/signup/", {"username": "dora", "password1": PASSWORD, "password2": PASSWORD + "x"})
    assert response.status_code == 200
    assert "password2" in response.context["form"].errors
    assert not User.objects.filter(username="dora").exists()
    assert not Transfer.objects.exists()


def test_sign_up_refuses_a_taken_username_in_any_case(client: Client, alice: User) -> None:
    response = client.post("/signup/", {"username": "ALICE", "password1": PASSWORD, "password2": PASSWORD})
    assert response.status_code == 200
    assert "username" in response.context["form"].errors
    assert User.objects.count() == 1


def test_log_in_goes_to_the_lobby_and_a_wrong_password_does_not(client: Client, alice: User) -> None:
    wrong = client.post("/login/", {"username": "alice", "password": "nope"})
    assert wrong.status_code == 200
    assert "_auth_user_id" not in client.session
    right = client.post("/login/", {"username": "alice", "password": "correct horse battery"})
    assert right.status_code == 302
    assert right["Location"] == "/"
    assert client.session["_auth_user_id"] == str(alice.pk)


def test_log_out_needs_a_post_and_ends_the_session(client: Client, alice: User) -> None:
    client.force_login(alice)
    assert client.get("/logout/").status_code == 405
    assert "_auth_user_id" in client.session
    response = client.post("/logout/")
    assert response.status_code == 302
    assert "_auth_user_id" not in client.session
