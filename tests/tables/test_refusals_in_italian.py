"""Refusals speak the player's language through every door (issue 24, item 4): the
``message`` of a REST error body and of a socket error frame is Italian for a player who
chose Italian (language cookie) or whose browser asks for it (``Accept-Language``); the
stable ``code`` is the same in every language (docs/i18n.md, docs/protocol.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from tables.realtime.consumers import language_of_scope
from tests.conftest import make_player
from tests.helpers import create_fun_table

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_rest_refusal_is_in_italian_with_the_language_cookie_and_keeps_its_code(alice: User) -> None:
    client = Client()
    client.force_login(alice)
    english = client.post("/api/tables/999999/join/")
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "it"
    italian = client.post("/api/tables/999999/join/")
    assert english.status_code == italian.status_code == 404
    assert english.json()["code"] == italian.json()["code"] == "table_not_found"
    assert italian.json()["message"] == "Tavolo inesistente."
    assert english.json()["message"] != italian.json()["message"]


def test_a_rest_refusal_follows_accept_language_and_errors_without_a_summary_are_translated(alice: User) -> None:
    table = create_fun_table()
    client = Client(HTTP_ACCEPT_LANGUAGE="it-IT,it;q=0.9,en;q=0.5")
    client.force_login(alice)
    body = client.post(f"/api/tables/{table.pk}/holdem/fold/").json()
    assert (body["code"], body["message"]) == ("unknown_type", "Azione sconosciuta.")
    unknown = client.get("/api/no-such-thing/").json()
    assert (unknown["code"], unknown["message"]) == ("not_found", "Endpoint dell'API inesistente.")


async def _socket(user: User, table_id: int, **headers: str) -> WebsocketCommunicator:
    from config.asgi import application

    client = Client()
    await sync_to_async(client.force_login)(user)
    cookies = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
    if "language" in headers:
        cookies += f"; {settings.LANGUAGE_COOKIE_NAME}={headers.pop('language')}"
    raw = [(b"host", b"127.0.0.1"), (b"origin", b"http://127.0.0.1"), (b"cookie", cookies.encode())]
    raw += [(name.replace("_", "-").encode(), value.encode()) for name, value in headers.items()]
    communicator = WebsocketCommunicator(application, f"/ws/tables/{table_id}/", headers=raw)
    connected, _ = await communicator.connect(timeout=10)
    assert connected
    return communicator


async def _error(communicator: WebsocketCommunicator, text: str) -> dict[str, Any]:
    await communicator.send_to(text_data=text)
    for _ in range(20):
        frame: dict[str, Any] = json.loads(await communicator.receive_from(timeout=10))
        if frame["type"] == "error":
            return frame
    raise AssertionError("no error frame")


@pytest.mark.asyncio
async def test_a_socket_error_frame_is_in_the_connections_language_with_the_same_code() -> None:
    alice = await sync_to_async(make_player)("alice")
    table = await sync_to_async(create_fun_table)()
    italian = await _socket(alice, table.pk, language="it")
    by_header = await _socket(alice, table.pk, accept_language="it")
    english = await _socket(alice, table.pk)
    frames = [
        await _error(socket, json.dumps({"type": "buy_draw", "ref": 3})) for socket in (italian, by_header, english)
    ]
    assert [frame["code"] for frame in frames] == ["phase_closed"] * 3
    assert frames[0]["message"] == frames[1]["message"] == "La fase di cambio è terminata."
    assert frames[2]["message"] != frames[0]["message"] and frames[0]["ref"] == 3
    bad = await _error(italian, "{not json")
    assert (bad["code"], bad["message"]) == ("bad_json", "Il messaggio non è un JSON valido.")
    for socket in (italian, by_header, english):
        await socket.disconnect()


@pytest.mark.parametrize(
    ("cookies", "header", "language"),
    [
        ({"django_language": "it"}, "en", "it"),
        ({}, "it-CH,en;q=0.5", "it"),
        ({}, "de-DE,fr;q=0.8", "en"),
        ({"django_language": "xx"}, "", "en"),
        ({}, "", "en"),
    ],
)
def test_the_language_of_a_socket_is_chosen_as_a_pages(cookies: dict[str, str], header: str, language: str) -> None:
    scope = {"cookies": cookies, "headers": [(b"accept-language", header.encode())]}
    assert language_of_scope(scope) == language
