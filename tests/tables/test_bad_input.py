"""Security audit F7: every bad body or frame gets a 4xx or an error frame with a stable code,
never a 500 or a crashed socket; REST and the socket validate an action the same way; an
unknown ``/api/`` path answers JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client
from django.urls import URLPattern, get_resolver, reverse
from rest_framework.test import APIClient

from tables.models import Seat, Table
from tables.realtime.routing import websocket_urlpatterns
from tests.helpers import create_fun_table, logged_in

DEEP = "[" * 5000
DEEP_SMALL = "[" * 990 + "]" * 990  # within the socket's 2 KB
# The same action bodies over REST (path name, body) and the socket (frame type).
ACTIONS = {
    "table-hold": "hold",
    "table-draws": "buy_draw",
    "table-redeals": "redeal",
    "table-join": "join",
    "table-leave": "leave",
    "table-sit-out": "sit_out",
    "table-sit-in": "sit_in",
}
BODIES: list[tuple[str, dict[str, Any]]] = [
    ("table-hold", {"hold": [1, 0, 1, 0, 1]}),
    ("table-hold", {"hold": ["true", "false", "true", "false", "true"]}),
    ("table-hold", {"hold": [True, False, True, False]}),
    ("table-hold", {"hold": None}),
    ("table-hold", {}),
    ("table-hold", {"hold": [True, False, True, False, True], "stake": 10}),
    ("table-hold", {"hold": [True, False, True, False, True]}),
    ("table-draws", {"count": 3}),
    ("table-draws", {}),
    ("table-join", {"seat": 4}),
]


pytestmark = pytest.mark.usefixtures("fresh_throttle_counters")


def post_routes() -> list[str]:
    """The names of every API route that takes a POST."""
    resolver = get_resolver()
    api = resolver.url_patterns
    names = []
    for pattern in api:
        for inner in getattr(pattern, "url_patterns", []):
            view_class = getattr(inner.callback, "view_class", None) if isinstance(inner, URLPattern) else None
            if view_class is not None and hasattr(view_class, "post") and getattr(pattern, "namespace", None) == "api":
                names.append(str(inner.name))
    return names


def route_url(name: str, table: Table) -> str:
    for args in ([table.pk], [table.pk, "fold"], []):
        try:
            return reverse(f"api:{name}", args=args)
        except Exception:
            continue
    raise AssertionError(f"cannot reverse {name}")


@pytest.mark.django_db
@pytest.mark.parametrize("auth", ["session", "token"])
def test_a_deeply_nested_body_gets_400_too_deep_on_every_post(alice: User, auth: str) -> None:
    table = create_fun_table()
    names = post_routes()
    assert "table-hold" in names and "wallet-top-up" in names
    if auth == "session":
        client: Client | APIClient = logged_in(alice)
    else:
        client = APIClient()
        key = client.post("/api/auth/token/", {"username": "alice", "password": "correct horse battery"}).json()[
            "token"
        ]
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    for name in names:
        response = client.post(route_url(name, table), DEEP, content_type="application/json")
        assert response.status_code == 400, (name, response.status_code)
        assert response.json()["code"] == "too_deep", name
    assert not Seat.objects.filter(table=table).exists()


@pytest.mark.django_db
def test_a_deep_body_with_csrf_enforced_is_refused_cleanly(alice: User) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    table = create_fun_table()
    response = client.post(reverse("api:table-hold", args=[table.pk]), DEEP, content_type="application/json")
    assert response.status_code in (400, 403)
    assert response["Content-Type"].startswith("application/json")


@pytest.mark.django_db
def test_bad_json_nan_and_huge_bodies_get_their_codes(alice: User) -> None:
    client = logged_in(alice)
    table = create_fun_table()
    url = reverse("api:table-hold", args=[table.pk])
    cases = [
        ("{not json", 400, "bad_json"),
        ('{"hold": [NaN, true, true, true, true]}', 400, "bad_json"),
        ('["hold"]', 400, "bad_message"),
        ('{"hold": ' + "[" * 9 + "]" * 9 + "}", 400, "too_deep"),
        ('{"pad": "' + "x" * 3_000_000 + '"}', 413, "too_large"),
    ]
    for body, status, code in cases:
        response = client.post(url, body, content_type="application/json")
        assert (response.status_code, response.json()["code"]) == (status, code), body[:40]


def socket_codes(user: User, table: Table, frames: list[str]) -> list[str]:
    """The answer of the table socket to each frame: an error code, or "ok" (ack or pong)."""

    async def run() -> list[str]:
        communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/tables/{table.pk}/")
        communicator.scope["user"] = user
        connected, _ = await communicator.connect(timeout=10)
        assert connected
        codes = []
        for frame in frames:
            await communicator.send_to(text_data=frame)
            while True:
                answer = json.loads(await communicator.receive_from(timeout=10))
                if answer["type"] == "error":
                    codes.append(answer["code"])
                    break
                if answer["type"] in ("ack", "pong"):
                    codes.append("ok")
                    break
        await communicator.disconnect()
        return codes

    return async_to_sync(run)()


@pytest.mark.django_db(transaction=True)
def test_rest_and_the_socket_give_the_same_answer_to_the_same_action(alice: User) -> None:
    table = create_fun_table()
    client = logged_in(alice)
    rest = []
    frames = []
    for name, body in BODIES:
        response = client.post(reverse(f"api:{name}", args=[table.pk]), body, content_type="application/json")
        rest.append(response.json()["code"] if response.status_code >= 400 else "ok")
        frames.append(json.dumps({"type": ACTIONS[name], **body}))
    assert rest == socket_codes(alice, table, frames)
    assert rest[:6] == ["invalid_hold"] * 5 + ["unknown_field"]
    assert rest[7] == "unknown_field"


@pytest.mark.django_db(transaction=True)
def test_a_deep_frame_gets_an_error_frame_and_the_socket_lives_on(alice: User) -> None:
    table = create_fun_table()
    services_join = reverse("api:table-join", args=[table.pk])
    assert logged_in(alice).post(services_join).status_code == 200
    codes = socket_codes(alice, table, [DEEP_SMALL, '{"type": "hold", "hold": ' + DEEP_SMALL + "}", '{"type":"ping"}'])
    assert codes == ["too_deep", "too_deep", "ok"]
    seat = Seat.objects.get(table=table, user=alice)
    assert seat.ws_connections == 0  # the socket counted itself once and uncounted on close


@pytest.mark.django_db
def test_unknown_api_paths_answer_json_with_a_code(alice: User) -> None:
    client = logged_in(alice)
    for method in ("get", "post", "delete"):
        response = getattr(client, method)("/api/no/such/thing/")
        assert response.status_code == 404
        assert response.json()["code"] == "not_found"
    response = client.get("/api/tables")
    assert response.status_code == 404
    assert response.json()["extra"]["did_you_mean"] == "/api/tables/"
    assert Client().get("/api/nothing-here").json()["code"] == "not_found"


@pytest.mark.django_db
def test_the_fixed_parse_still_accepts_a_good_hold(alice: User, bob: User) -> None:
    from django.utils import timezone

    from tests.helpers import deal_hand

    table = create_fun_table()
    deal_hand(table, [alice, bob], timezone.now())
    response = logged_in(alice).post(
        reverse("api:table-hold", args=[table.pk]),
        {"hold": [True, False, True, False, False]},
        content_type="application/json",
    )
    assert response.status_code == 200
    assert response.json()["entry"]["hold"] == [True, False, True, False, False]
