"""REST purchases answered by the lean door on the event loop (tables/api/purchase_door.py;
issue 23, item 2): through the ASGI application a program calls, with its token, against
the same request answered by Django's view (the reference): the same status, headers and
bodies; the purchase goes through the purchase writer; refusals, the rate limits, a revoked
token and a loss limit hold; a request the door cannot answer exactly goes to the view."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, MutableMapping
from typing import Any

import httpx
import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.core.asgi import get_asgi_application
from django.utils import timezone
from rest_framework.authtoken.models import Token

from config.infra.throttles import ActionThrottle
from tables.api import purchase_door
from tables.api.purchase_door import RestPurchaseDoor
from tables.models import Entry
from tables.widerpoker.services import purchase_orders, purchases
from tests.conftest import postgres_only
from tests.helpers import deal, seat_players, settle
from tests.tables.test_purchase_writer import (
    DRAW,
    dealt_table,
    euro_players,
    euro_table,
    held,
    players,
    services_state,
)
from wallet import protection
from wallet.selectors import check_books

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fresh_throttle_counters"),
    postgres_only(),
]
SAME_HEADERS = ("content-type", "vary", "allow", "x-frame-options", "content-language", "x-content-type-options")


@pytest.fixture(autouse=True)
def writer(settings: Any) -> Iterator[purchases.PurchaseWriter]:
    settings.PURCHASE_WRITER = "batch"
    settings.PURCHASE_CAPTURE = "batch"
    fresh = purchases.PurchaseWriter(batch_ms=20, batch_size=500)
    previous = purchases._WRITER
    purchases._WRITER = fresh
    purchase_orders._FACTS.clear()
    purchase_door.TOKENS.entries.clear()
    purchase_door.THROTTLES.mirror.clear()
    purchase_door.THROTTLES.pending.clear()
    yield fresh
    purchases._WRITER = previous
    purchase_orders._FACTS.clear()


class Apps:
    """The door in front of Django's application, and Django's alone; ``passed`` counts the
    requests the door handed to Django."""

    def __init__(self) -> None:
        self.django = get_asgi_application()
        self.passed = 0

        async def counted(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
            self.passed += 1
            await self.django(dict(scope), receive, send)

        self.door = RestPurchaseDoor(counted)

    async def post(
        self, path: str, token: str, *, door: bool = True, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        app: Any = self.door if door else self.django
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            return await client.post(path, headers={"Authorization": f"Token {token}", **(headers or {})})


def token_of(user: User) -> str:
    return str(Token.objects.create(user=user).key)


async def test_a_token_purchase_is_answered_by_the_door_as_the_view_answers_it(
    writer: purchases.PurchaseWriter,
) -> None:
    users = await sync_to_async(players)(3)
    table, _hand = await sync_to_async(dealt_table)(users)
    tokens = [await sync_to_async(token_of)(user) for user in users]
    apps = Apps()
    path = f"/api/tables/{table.pk}/draws/"

    answers = await asyncio.gather(apps.post(path, tokens[0]), apps.post(path, tokens[1]))
    reference = await apps.post(path, tokens[2], door=False)

    assert apps.passed == 0  # both answered by the door
    assert writer.committed == 3
    assert [answer.status_code for answer in answers] == [200, 200] == [reference.status_code] * 2
    for answer in answers:
        assert {name: answer.headers.get(name) for name in SAME_HEADERS} == {
            name: reference.headers.get(name) for name in SAME_HEADERS
        }
        assert answer.headers["x-request-id"]
    for user, answer in zip(users[:2], answers, strict=True):
        assert answer.json() == await sync_to_async(services_state)(table.pk, user.pk)
        assert answer.json()["entry"]["draws_bought"] == 2
        assert await sync_to_async(held)(user) == DRAW


async def test_refusals_have_the_views_status_code_and_body_in_the_requests_language() -> None:
    users = await sync_to_async(players)(2)
    table, _hand = await sync_to_async(dealt_table)(users, max_draws=2)
    tokens = [await sync_to_async(token_of)(user) for user in users]
    apps = Apps()
    path = f"/api/tables/{table.pk}/draws/"
    italian = {"Accept-Language": "it"}
    for token in tokens:  # the ante's draw and one bought: the table's 2
        assert (await apps.post(path, token)).status_code == 200
    refused = await apps.post(path, tokens[0], headers=italian)
    reference = await apps.post(path, tokens[1], door=False, headers=italian)

    assert apps.passed == 0
    assert refused.status_code == reference.status_code == 409
    assert refused.json() == reference.json()
    assert refused.json()["code"] == "limit_reached"
    assert refused.headers["content-language"] == reference.headers["content-language"] == "it"


async def test_what_the_door_cannot_answer_exactly_goes_to_the_view() -> None:
    users = await sync_to_async(players)(2)
    table, _hand = await sync_to_async(dealt_table)(users)
    token = await sync_to_async(token_of)(users[0])
    apps = Apps()
    path = f"/api/tables/{table.pk}/draws/"

    unknown = await apps.post(path, "not-a-token")
    assert (unknown.status_code, apps.passed) == (403, 1)  # the view's answer (DRF: session first)
    transport = httpx.ASGITransport(app=apps.door.__call__)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        free = await client.post(path, json={"free": True}, headers={"Authorization": f"Token {token}"})
        bad = await client.post(
            path, content=b"[1,", headers={"Authorization": f"Token {token}", "Content-Type": "application/json"}
        )
    assert (free.status_code, free.json()["code"]) == (409, "no_free_item")
    assert (bad.status_code, apps.passed) == (400, 3)


async def test_the_action_rate_limit_holds_through_the_door(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ActionThrottle, "THROTTLE_RATES", {"action": "3/min"})
    users = await sync_to_async(players)(2)
    table, _hand = await sync_to_async(dealt_table)(users, max_draws=4)
    token = await sync_to_async(token_of)(users[0])
    apps = Apps()
    path = f"/api/tables/{table.pk}/draws/"

    codes = [(await apps.post(path, token)).status_code for _ in range(2)]
    codes.append((await apps.post(path, token, door=False)).status_code)  # the view counts in the same history
    refused = await apps.post(path, token)

    assert codes == [200, 200, 200]
    assert refused.status_code == 429
    assert refused.json()["code"] == "rate_limited"
    assert apps.passed == 1  # the refused one, answered by the view's check
    entry = await sync_to_async(Entry.objects.get)(hand__table=table, user=users[0])
    assert entry.draws_bought == 4  # three bought, none past the limit


async def test_a_deleted_token_is_refused_at_once() -> None:
    users = await sync_to_async(players)(2)
    table, _hand = await sync_to_async(dealt_table)(users, max_draws=4)
    token = await sync_to_async(token_of)(users[0])
    apps = Apps()
    path = f"/api/tables/{table.pk}/draws/"
    assert (await apps.post(path, token)).status_code == 200

    await sync_to_async(lambda: Token.objects.filter(key=token).delete())()
    refused = await apps.post(path, token)

    assert refused.status_code == 403  # the view's refusal of an unknown token
    assert await sync_to_async(held)(users[0]) == DRAW


async def test_a_resent_idempotency_key_is_charged_once_through_the_door() -> None:
    users = await sync_to_async(players)(2)
    table, _hand = await sync_to_async(dealt_table)(users, max_draws=4)
    token = await sync_to_async(token_of)(users[0])
    apps = Apps()
    path = f"/api/tables/{table.pk}/draws/"
    key = {"Idempotency-Key": "buy-1"}

    first = await apps.post(path, token, headers=key)
    again = await apps.post(path, token, headers=key)

    assert (first.status_code, again.status_code, apps.passed) == (200, 200, 0)
    assert first.json() == again.json()
    assert first.json()["entry"]["draws_bought"] == 2
    assert await sync_to_async(held)(users[0]) == DRAW


async def test_a_loss_limit_counts_held_cents_through_the_door(croupier: User) -> None:
    users = await sync_to_async(euro_players)(croupier, [5_000, 5_000])
    now = timezone.now()
    await sync_to_async(protection.set_limit)(user_id=users[0].pk, kind="loss", currency="EUR", value=100, now=now)
    table = await sync_to_async(euro_table)()
    await sync_to_async(seat_players)(table, users, now)
    await sync_to_async(deal)(table, now)  # ante 0.50: 0.50 lost
    tokens = [await sync_to_async(token_of)(user) for user in users]
    apps = Apps()

    async def buy(what: str, token: str) -> tuple[int, str | None]:
        response = await apps.post(f"/api/tables/{table.pk}/{what}/", token)
        return response.status_code, None if response.status_code == 200 else response.json()["code"]

    assert await buy("draws", tokens[0]) == (200, None)  # 0.75 with the draw on hold
    assert await buy("draws", tokens[0]) == (200, None)  # 1.00: at the limit
    assert await buy("draws", tokens[0]) == (409, "loss_limit")
    assert await buy("redeals", tokens[0]) == (409, "loss_limit")
    assert await sync_to_async(held)(users[0], "EUR") == 50
    assert await buy("draws", tokens[1]) == (200, None)
    assert apps.passed == 0
    await sync_to_async(settle)(table)
    assert (await sync_to_async(check_books)()).ok


async def test_panels_from_a_hand_s_panel_table_are_the_panels_computed_one_by_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Once a process has computed ``panel_tables.tuning["after"]`` panels of a hand (REST buyers who
    never opened the game screen), the hand's table answers the others' (issue 23,
    s5-rest): the answers carry, field for field, the panel ``odds.panel`` computes, and
    the purchases are made as before."""
    from tables.engine.widerpoker import board_grid, panel
    from tables.widerpoker import panel_cache, panel_tables
    from tables.widerpoker.records import board_from_json

    users = await sync_to_async(players)(6)
    table, hand = await sync_to_async(dealt_table)(users)
    tokens = [await sync_to_async(token_of)(user) for user in users]
    panel_tables.forget()
    panel_cache.PANELS.clear()
    monkeypatch.setitem(panel_tables.tuning, "after", 2)
    computed: list[tuple[int, ...]] = []

    def counted(grid: Any, combination: Any) -> Any:
        computed.append(tuple(combination))
        return panel(grid, combination)

    monkeypatch.setattr(panel_tables, "panel", counted)
    apps = Apps()
    path = f"/api/tables/{table.pk}/draws/"

    answers = [await apps.post(path, tokens[0]), await apps.post(path, tokens[1])]
    for _ in range(250):  # the table is built in a thread of its own
        if panel_tables._TABLES.get(hand.pk) is not None:
            break
        await asyncio.sleep(0.02)
    assert panel_tables._TABLES.get(hand.pk) is not None
    answers += await asyncio.gather(*(apps.post(path, token) for token in tokens[2:]))

    assert len(computed) == 2 and apps.passed == 0
    grid = board_grid(board_from_json(hand.board))
    for user, answer in zip(users, answers, strict=True):
        assert answer.status_code == 200
        entry = answer.json()["entry"]
        assert entry["panel"] == json.loads(json.dumps(panel(grid, entry["combination"]).as_dict()))
        assert entry["panel"]["tip1"] is not None and entry["draws_bought"] == 2
        assert await sync_to_async(held)(user) == DRAW
    panel_tables.forget()
