"""Password spraying is locked out per address (security audit 2026-11-26, L1: one address
tried one password on 40 usernames at ``/login/`` and got 40 answers, no delay), on the
site, the admin and the API token endpoint together; and a token is issued without a
session (Info: every ``POST /api/auth/token/`` created a ``django_session`` row and set a
``sessionid`` cookie)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.core.cache import cache
from django.test import Client
from rest_framework.test import APIClient

PASSWORD = "correct horse battery"
SPRAYER = "10.9.8.7"


@pytest.fixture(autouse=True)
def _limits(settings: Any) -> Iterator[None]:
    settings.AXES_FAILURE_LIMIT = 3
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 6
    cache.clear()
    yield
    cache.clear()


def _site(username: str, password: str, address: str = SPRAYER) -> int:
    return Client(REMOTE_ADDR=address).post("/login/", {"username": username, "password": password}).status_code


@pytest.mark.django_db(transaction=True)
def test_one_password_on_many_usernames_locks_the_address_out_on_every_door(alice: User) -> None:
    codes = [_site(f"victim{n}", "Summer2026!") for n in range(6)]
    assert codes[:5] == [200] * 5  # each username failed once: no pair reached its limit
    assert codes[5] == 429
    assert _site("alice", PASSWORD) == 429  # the right password, from the spraying address
    admin = Client(REMOTE_ADDR=SPRAYER).post("/admin/login/", {"username": "alice", "password": PASSWORD})
    assert admin.status_code == 429
    api = APIClient(REMOTE_ADDR=SPRAYER).post(
        "/api/auth/token/", {"username": "alice", "password": PASSWORD}, format="json"
    )
    assert (api.status_code, api.json()["code"]) == (429, "login_locked_out")
    assert _site("alice", PASSWORD, address="10.0.0.7") == 302  # alice elsewhere logs in


@pytest.mark.django_db(transaction=True)
def test_failures_count_across_the_doors_and_a_login_of_ones_own_does_not_clear_them(alice: User) -> None:
    api = APIClient(REMOTE_ADDR=SPRAYER)
    for n in range(3):
        assert api.post("/api/auth/token/", {"username": f"api{n}", "password": "x"}, format="json").status_code == 401
    assert api.post("/api/auth/token/", {"username": "alice", "password": PASSWORD}, format="json").status_code == 200
    assert [_site(f"site{n}", "x") for n in range(2)] == [200, 200]
    admin = Client(REMOTE_ADDR=SPRAYER).post("/admin/login/", {"username": "admin0", "password": "x"})
    assert admin.status_code == 429  # the sixth failure from the address


@pytest.mark.django_db(transaction=True)
def test_a_token_is_issued_without_a_session(alice: User) -> None:
    before = Session.objects.count()
    for _ in range(3):
        response = APIClient().post("/api/auth/token/", {"username": "alice", "password": PASSWORD}, format="json")
        assert response.status_code == 200
        assert "sessionid" not in response.cookies
    assert Session.objects.count() == before
    key = response.json()["token"]
    assert APIClient(HTTP_AUTHORIZATION=f"Token {key}").get("/api/wallet/").status_code == 200
    alice.refresh_from_db()
    assert alice.last_login is not None  # still recorded as a login
    site = Client()
    assert site.post("/login/", {"username": "alice", "password": PASSWORD}).status_code == 302
    assert Session.objects.count() == before + 1  # the site's login keeps its session
