"""API clients authenticate with tokens, never HTTP Basic; repeated failed logins lock the
(username, address) pair out on the site, the admin and the API alike (django-axes)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"


@pytest.fixture(autouse=True)
def _fresh_counters(settings: Any) -> Iterator[None]:
    settings.AXES_FAILURE_LIMIT = 3
    cache.clear()
    yield
    cache.clear()


def _token(client: APIClient, username: str, password: str) -> Any:
    return client.post("/api/auth/token/", {"username": username, "password": password}, format="json")


def test_a_token_from_the_password_opens_the_api_and_can_be_revoked(alice: User) -> None:
    client = APIClient()
    response = _token(client, "alice", PASSWORD)
    assert response.status_code == 200
    key = response.json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/wallet/").status_code == 200
    assert client.delete("/api/auth/token/").status_code == 204
    assert client.get("/api/wallet/").status_code in {401, 403}


def test_http_basic_credentials_are_not_accepted(alice: User) -> None:
    basic = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    response = APIClient().get("/api/wallet/", HTTP_AUTHORIZATION=f"Basic {basic}")
    assert response.status_code in {401, 403}
    assert response.json()["code"] in {"not_authenticated", "authentication_failed"}


def test_a_cross_site_post_with_basic_credentials_moves_nothing(alice: User) -> None:
    basic = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    client = APIClient(enforce_csrf_checks=True)
    response = client.post("/api/wallet/top-up/", HTTP_AUTHORIZATION=f"Basic {basic}")
    assert response.status_code in {401, 403}


def test_wrong_passwords_on_the_api_lock_the_pair_out_even_for_the_right_one(alice: User) -> None:
    client = APIClient()
    codes = [_token(client, "alice", "wrong password").status_code for _ in range(3)]
    assert codes == [401, 401, 429]
    locked = _token(client, "alice", PASSWORD)
    assert locked.status_code == 429
    assert locked.json()["code"] == "login_locked_out"
    assert int(locked["Retry-After"]) > 0


def test_a_lockout_is_per_address_so_alice_elsewhere_can_still_log_in(alice: User) -> None:
    client = APIClient(REMOTE_ADDR="10.0.0.66")
    for _ in range(3):
        _token(client, "alice", "wrong password")
    assert _token(client, "alice", PASSWORD).status_code == 429
    assert _token(APIClient(REMOTE_ADDR="10.0.0.7"), "alice", PASSWORD).status_code == 200


def test_wrong_passwords_on_the_site_login_lock_it_out(alice: User) -> None:
    client = Client()
    statuses = [client.post("/login/", {"username": "alice", "password": "nope-nope"}).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    response = client.post("/login/", {"username": "alice", "password": PASSWORD})
    assert response.status_code == 429
    assert b"Too many failed logins" in response.content
    assert "_auth_user_id" not in client.session


def test_wrong_passwords_on_the_admin_login_lock_it_out(croupier: User) -> None:
    client = Client()
    for _ in range(3):
        client.post("/admin/login/", {"username": croupier.username, "password": "nope-nope"})
    response = client.post("/admin/login/", {"username": croupier.username, "password": PASSWORD})
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session


def test_a_successful_login_resets_the_failure_count(alice: User) -> None:
    client = APIClient()
    for _ in range(2):
        _token(client, "alice", "wrong password")
    assert _token(client, "alice", PASSWORD).status_code == 200
    assert [_token(client, "alice", "wrong password").status_code for _ in range(2)] == [401, 401]


def test_the_lockout_page_speaks_the_players_language_and_the_api_keeps_its_code(alice: User) -> None:
    client = Client(headers={"Accept-Language": "it"})
    for _ in range(3):
        client.post("/login/", {"username": "alice", "password": "nope-nope"})
    page = client.post("/login/", {"username": "alice", "password": PASSWORD})
    assert page.status_code == 429
    text = page.content.decode()
    assert "Troppi accessi non riusciti. Riprova tra 15 minuti." in text
    api = _token(APIClient(headers={"Accept-Language": "it"}), "alice", PASSWORD)
    assert api.status_code == 429 and api.json()["code"] == "login_locked_out"
