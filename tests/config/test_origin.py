"""Security audit F12: the WebSocket origin check compares scheme, host and port."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.test import Client, override_settings

from config.origin import origin_allowed, parse_origin
from tests.conftest import make_player
from tests.helpers import create_fun_table


def scope(origin: str | None, host: str = "127.0.0.1:8000", scheme: str = "ws", **extra: str) -> dict[str, Any]:
    headers = [(b"host", host.encode())]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    headers += [(name.encode(), value.encode()) for name, value in extra.items()]
    return {"type": "websocket", "scheme": scheme, "headers": headers}


@pytest.mark.parametrize(
    ("origin", "host", "scheme", "allowed"),
    [
        ("http://127.0.0.1:8000", "127.0.0.1:8000", "ws", True),
        ("http://127.0.0.1:9999", "127.0.0.1:8000", "ws", False),  # the audit's case: another port
        ("https://127.0.0.1:8000", "127.0.0.1:8000", "ws", False),  # another scheme
        ("http://localhost:8000", "127.0.0.1:8000", "ws", False),  # another host, even an allowed one
        ("http://LOCALHOST", "localhost:80", "ws", True),
        ("http://localhost", "localhost", "ws", True),
        ("https://localhost", "localhost", "wss", True),
        ("http://localhost", "localhost", "wss", False),
        ("http://[::1]:8000", "[::1]:8000", "ws", True),
        ("null", "127.0.0.1:8000", "ws", False),
        (None, "127.0.0.1:8000", "ws", False),
        ("http://evil.example:8000", "evil.example:8000", "ws", False),  # Host not in ALLOWED_HOSTS
        ("http://127.0.0.1:8000/path", "127.0.0.1:8000", "ws", False),
        ("http://127.0.0.1:99999", "127.0.0.1:8000", "ws", False),
    ],
)
def test_only_the_pages_own_origin_may_open_a_socket(origin: str | None, host: str, scheme: str, allowed: bool) -> None:
    assert origin_allowed(scope(origin, host, scheme), trusted=[]) is allowed


def test_trusted_origins_are_matched_with_their_port() -> None:
    trusted = ["https://play.example:8443"]
    assert origin_allowed(scope("https://play.example:8443", "127.0.0.1:8000"), trusted=trusted)
    assert not origin_allowed(scope("https://play.example", "127.0.0.1:8000"), trusted=trusted)


def test_behind_a_tls_proxy_the_forwarded_scheme_counts_only_when_trusted() -> None:
    forwarded = scope("https://localhost", "localhost", "ws", **{"x-forwarded-proto": "https"})
    assert not origin_allowed(forwarded, trusted=[])
    with override_settings(SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https")):
        assert origin_allowed(forwarded, trusted=[])
        assert not origin_allowed(scope("http://localhost", "localhost", "ws", **{"x-forwarded-proto": "https"}))


def test_parse_origin_normalises_case_and_default_ports() -> None:
    assert parse_origin("HTTPS://Play.Example") == ("https", "play.example", 443)
    assert parse_origin("ftp://play.example") is None


@pytest.mark.django_db(transaction=True)
def test_the_application_refuses_a_foreign_port_and_accepts_its_own_origin() -> None:
    from config.asgi import application

    player = make_player("alice")
    table = create_fun_table()
    client = Client()
    client.force_login(player)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()

    async def attempt(origin: str) -> bool:
        headers = [(b"origin", origin.encode()), (b"host", b"127.0.0.1:8000"), (b"cookie", cookie)]
        communicator = WebsocketCommunicator(application, f"/ws/tables/{table.pk}/", headers=headers)
        connected, _ = await communicator.connect(timeout=10)
        await communicator.disconnect()
        return bool(connected)

    assert async_to_sync(attempt)("http://127.0.0.1:9999") is False
    assert async_to_sync(attempt)("http://127.0.0.1:8000") is True
