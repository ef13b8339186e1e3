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


def test_a_sign_up_that_loses_the_race_for_its_name_gets_a_form_error(
    client: Client, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Security audit F8: the form's check passed, then another sign-up took the name."""
    from django.contrib.auth.forms import UserCreationForm

    # As if "Alice" signed up between this form's uniqueness check and its insert.
    monkeypatch.setattr(UserCreationForm, "clean_username", lambda form: form.cleaned_data["username"])
    for name in ("alice", "Alice"):
        response = client.post("/signup/", {"username": name, "password1": PASSWORD, "password2": PASSWORD})
        assert response.status_code == 200
        assert response.context["form"].errors["username"] == ["A user with that username already exists."]
    assert User.objects.count() == 1
    assert Transfer.objects.filter(kind=TransferKind.FUN_GRANT).count() == 1  # alice's own grant only


def test_a_new_player_has_an_empty_cash_wallet_staff_can_deposit_into(client: Client) -> None:
    from wallet.models import Account, AccountKind

    client.post("/signup/", {"username": "dora", "password1": PASSWORD, "password2": PASSWORD})
    dora = User.objects.get(username="dora")
    cash = Account.objects.get(user=dora, kind=AccountKind.PLAYER, currency=Currency.EUR)
    assert cash.balance_minor == 0


@pytest.mark.django_db(transaction=True)
def test_concurrent_sign_ups_with_one_name_give_one_account_and_no_500() -> None:
    import threading

    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL for real concurrency")
    barrier = threading.Barrier(8)
    statuses: list[int] = []

    def sign_up(index: int) -> None:
        try:
            barrier.wait()
            name = "twin" if index % 2 else "Twin"
            response = Client(raise_request_exception=False).post(
                "/signup/", {"username": name, "password1": PASSWORD, "password2": PASSWORD}
            )
            statuses.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=sign_up, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [200] * 7 + [302]
    assert User.objects.filter(username__iexact="twin").count() == 1
