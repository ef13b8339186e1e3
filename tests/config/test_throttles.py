"""Every API endpoint is rate limited per user and per client address, in the shared cache,
so the limits hold across processes; a busy database answers 503, not 500; each deployment
keeps to its own Redis names."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import OperationalError
from django.test import RequestFactory
from rest_framework.test import APIClient

from config.infra.throttles import AddressThrottle, UserThrottle
from config.middleware import DatabaseBusyMiddleware

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _fresh_counters() -> Iterator[None]:
    cache.clear()
    yield
    cache.clear()


@pytest.mark.django_db
def test_reads_are_throttled_per_user(alice: User, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(UserThrottle, "THROTTLE_RATES", {"user": "3/min"})
    client = APIClient()
    client.force_authenticate(alice)
    codes = [client.get("/api/tables/").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    assert client.get("/api/wallet/").json()["code"] == "rate_limited"


@pytest.mark.django_db
def test_many_accounts_behind_one_address_share_its_limit(
    alice: User, bob: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(AddressThrottle, "THROTTLE_RATES", {"address": "3/min"})
    codes = []
    for user in (alice, bob, alice, bob):
        client = APIClient(REMOTE_ADDR="10.1.2.3")
        client.force_authenticate(user)
        codes.append(client.get("/api/tables/").status_code)
    assert codes == [200, 200, 200, 429]
    other = APIClient(REMOTE_ADDR="10.9.9.9")
    other.force_authenticate(alice)
    assert other.get("/api/tables/").status_code == 200


@pytest.mark.redis
@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs Redis: the shared cache")
def test_the_address_limit_holds_across_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two requests here and two from another process: the fourth is refused, because both
    processes count in the same Redis. (Anonymous, invalid token requests: no database.)"""
    monkeypatch.setattr(AddressThrottle, "THROTTLE_RATES", {"address": "3/min"})
    client = APIClient(REMOTE_ADDR="10.4.4.4")
    assert [client.post("/api/auth/token/", {}, format="json").status_code for _ in range(2)] == [400, 400]
    code = (
        "from rest_framework.test import APIClient; c = APIClient(REMOTE_ADDR='10.4.4.4'); "
        "print([c.post('/api/auth/token/', {}, format='json').status_code for _ in range(2)])"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings_test",
        "DJANGO_ALLOWED_HOSTS": "testserver",
        "POKER_API_ADDRESS_RATE": "3/min",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[400, 429]"
    assert client.post("/api/auth/token/", {}, format="json").status_code == 429


def _pool_timeout() -> OperationalError:
    from psycopg_pool import PoolTimeout

    try:
        try:
            raise PoolTimeout("couldn't get a connection after 30.00 sec")
        except PoolTimeout as cause:
            raise OperationalError(str(cause)) from cause
    except OperationalError as wrapped:
        return wrapped


def test_an_exhausted_connection_pool_answers_503_with_a_code_on_the_api() -> None:
    middleware = DatabaseBusyMiddleware(lambda request: None)  # type: ignore[arg-type, return-value]
    request = RequestFactory().post("/api/tables/1/draws/")
    response = middleware.process_exception(request, _pool_timeout())
    assert response is not None
    assert response.status_code == 503
    assert response["Retry-After"] == "2"
    assert b'"code": "busy"' in response.content


def test_other_database_errors_are_not_disguised_as_busy() -> None:
    middleware = DatabaseBusyMiddleware(lambda request: None)  # type: ignore[arg-type, return-value]
    request = RequestFactory().get("/")
    assert middleware.process_exception(request, OperationalError("server closed the connection")) is None


def test_each_deployment_keeps_to_its_own_redis_names(settings: Any) -> None:
    from tables.realtime.bus import channel_prefix

    if settings.REDIS_URL:
        assert channel_prefix().startswith(settings.REDIS_PREFIX)
        assert settings.CACHES["default"]["KEY_PREFIX"].startswith(settings.REDIS_PREFIX)
        assert settings.CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"].startswith(settings.REDIS_PREFIX)


@pytest.mark.parametrize(
    ("env", "prefix"),
    [
        ({"DATABASE_URL": "postgres://u@h:5432/casino_a"}, "wp-casino_a"),
        ({"DATABASE_URL": "postgres://u@h:5432/casino_b"}, "wp-casino_b"),
        ({"DATABASE_URL": "postgres://u@h:5432/casino_a", "POKER_REDIS_PREFIX": "eu-1"}, "eu-1"),
    ],
)
def test_the_redis_prefix_defaults_to_the_database_name(env: dict[str, str], prefix: str) -> None:
    code = (
        "from django.conf import settings as s; from tables.realtime.bus import channel_prefix; print(channel_prefix())"
    )
    base = {key: os.environ[key] for key in ("PATH", "HOME") if key in os.environ}
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env={
            **base,
            **env,
            "REDIS_URL": "redis://127.0.0.1:6379/0",
            "DJANGO_SECRET_KEY": "x" * 60,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "POKER_BEACON": "drand",
            "POKER_SIGNER_KEY_FILE": "/var/lib/widerpoker/signer/chain-signer.key",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == f"{prefix}.asgi:table:"
