"""What one REST purchase costs the process that serves it (issue 12, "purchases at scale";
docs/benchmarks.md, "REST purchases"): its statements and cache round trips are pinned here
so they cannot silently grow back, and the cheaper reads still give the exact private state
the player's socket is pushed."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.authtoken.models import Token

from tables.models import Hand, Table
from tables.realtime.routing import websocket_urlpatterns
from tables.widerpoker import selectors
from tables.widerpoker.services.play import buy_draw
from tables.widerpoker.services.seating import join_table
from tables.widerpoker.services.settlement import cancel_hand
from tests.conftest import make_player
from tests.helpers import create_fun_table, deal_hand, settle

ROUTES = {"hold": "hold/", "draw": "draws/", "redeal": "redeals/"}
BODIES = {"hold": {"hold": [True, False, True, False, False]}, "draw": {}, "redeal": {}}

# Statements of one REST purchase, the test's savepoints aside: token (1), the table's game
# (1), the purchase (PostgreSQL, batched capture: lock-and-read, the hold on the wallet or
# the hold's write, the entry and session; a redeal also takes its number), then the answer:
# the table with its hand, the seat, the balance, the entry, the power-up rules and session
# (6). SQLite takes the step-by-step path of tables/widerpoker/services/play.py, with the capture inline.
MAX_QUERIES = {
    "postgresql": {"hold": 10, "draw": 11, "redeal": 12},
    "sqlite": {"hold": 14, "draw": 35, "redeal": 40},
}
PRIVATE_STATE_QUERIES = 6  # tables/widerpoker/selectors.py, _private_table + _entry_states


pytestmark = pytest.mark.usefixtures("fresh_throttle_counters")


def token_client(user: User) -> Client:
    """An API client as a program is one: ``Authorization: Token <key>``, no session."""
    return Client(headers={"authorization": f"Token {Token.objects.create(user=user).key}"})


def statements(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]


@pytest.mark.django_db
@pytest.mark.parametrize("action", ["hold", "draw", "redeal"])
def test_a_rest_purchase_sends_a_bounded_number_of_statements(action: str, settings: Any) -> None:
    if connection.vendor == "postgresql":
        settings.PURCHASE_CAPTURE = "batch"  # production's default there
    players = [make_player(f"p{i}") for i in range(4)]
    table = create_fun_table()
    deal_hand(table, players, timezone.now())
    client = token_client(players[0])
    with CaptureQueriesContext(connection) as queries:
        response = client.post(
            f"/api/tables/{table.pk}/{ROUTES[action]}", BODIES[action], content_type="application/json"
        )
    assert response.status_code == 200, response.json()
    sent = statements(queries)
    assert len(sent) <= MAX_QUERIES[connection.vendor][action], "\n".join(sent)
    if connection.vendor == "postgresql":  # SQLite's purchase path reads the whole hand row
        assert "not_dealt" not in " ".join(sent)


@pytest.mark.django_db
def test_a_private_frame_is_one_read_of_each_kind(alice: User, bob: User) -> None:
    table = create_fun_table()
    deal_hand(table, [alice, bob], timezone.now())
    for build in (
        lambda: selectors.get_entry_state(table_id=table.pk, user_id=alice.pk),
        lambda: selectors.get_entry_state(table_id=table.pk, user_id=alice.pk),
        lambda: selectors.render_entry_states(table_id=table.pk, user_ids={alice.pk, bob.pk}),
    ):
        with CaptureQueriesContext(connection) as queries:
            build()
        assert len(statements(queries)) == PRIVATE_STATE_QUERIES, statements(queries)
        # Never what a private frame does not show: the hand's list of players not dealt in
        # (10^5 ids in a big hand), its leaderboard and jackpot results.
        reads = " ".join(statements(queries))
        for column in ("not_dealt", "leaderboard", "jackpot_results", "draws_minor"):
            assert column not in reads, column


@pytest.mark.django_db
def test_the_narrower_reads_give_the_full_private_state_in_every_phase(alice: User, bob: User, carol: User) -> None:
    """The frame built from the columns it reads equals the one built from whole rows, for a
    player in the change phase (panel), after settlement (result of every draw), after a
    cancellation (refund), and for a seated player not in the hand."""
    table = create_fun_table()
    now = timezone.now()
    hand = deal_hand(table, [alice, bob], now)
    buy_draw(table_id=table.pk, user_id=alice.pk, now=now + timedelta(seconds=1))
    join_table(table_id=table.pk, user_id=carol.pk, now=now)

    def whole_rows(user: User) -> dict[str, Any]:
        """The frame as built before the reads were narrowed: every column of every row."""
        full_table = Table.objects.select_related("current_hand").get(pk=table.pk)
        return selectors._entry_states(full_table, {user.pk})[user.pk]  # type: ignore[return-value]

    for user in (alice, bob, carol):
        assert selectors.get_entry_state(table_id=table.pk, user_id=user.pk) == whole_rows(user)
    playing = selectors.get_entry_state(table_id=table.pk, user_id=alice.pk)["entry"]
    assert playing is not None and playing["panel"] is not None and playing["draws_bought"] == 2
    settle(table)
    hand.refresh_from_db()
    assert hand.status == "settled"
    state = selectors.get_entry_state(table_id=table.pk, user_id=alice.pk)
    assert state == whole_rows(alice)
    assert state["entry"] is not None and state["entry"]["result"] is not None
    assert len(state["entry"]["result"]["draws"]) == 5


@pytest.mark.django_db
def test_a_cancelled_hand_shows_the_refund_from_the_narrower_reads(alice: User, bob: User) -> None:
    table = create_fun_table()
    hand = deal_hand(table, [alice, bob], timezone.now())
    Hand.objects.filter(pk=hand.pk).update(not_dealt=[10**6 + i for i in range(5000)])  # never read
    cancel_hand(hand_id=hand.pk, reason="malfunction", now=timezone.now())
    state = selectors.get_entry_state(table_id=table.pk, user_id=alice.pk)
    assert state["entry"] is not None
    assert state["entry"]["result"] == {"cancelled": True, "reason": "malfunction", "refunded_minor": 100}


@pytest.mark.django_db
def test_a_play_action_reads_and_writes_its_rate_limits_in_one_round_trip_each(
    alice: User, bob: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = create_fun_table()
    deal_hand(table, [alice, bob], timezone.now())
    client = token_client(alice)
    calls: list[str] = []
    depth = [0]  # LocMemCache's get_many calls its own get: count the outer calls only
    for name in ("get", "set", "get_many", "set_many"):
        original = getattr(cache, name)

        def counted(*args: Any, _name: str = name, _original: Any = original, **kwargs: Any) -> Any:
            if not depth[0]:
                calls.append(_name)
            depth[0] += 1
            try:
                return _original(*args, **kwargs)
            finally:
                depth[0] -= 1

        monkeypatch.setattr(cache, name, counted)
    response = client.post(f"/api/tables/{table.pk}/draws/", {}, content_type="application/json")
    assert response.status_code == 200
    assert calls == ["get_many", "set_many"]  # user, address and action limits together
    histories = cache.get_many([f"throttle_user_{alice.pk}", f"throttle_action_{alice.pk}"])
    assert [len(history) for history in histories.values()] == [1, 1]  # each limit counted it


@pytest.mark.django_db
def test_a_request_refused_by_one_limit_still_counts_in_the_others(
    alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DRF's rule, kept by the batched check: every limit that is not full counts the request."""
    from config.infra.throttles import ActionThrottle, UserThrottle

    monkeypatch.setattr(ActionThrottle, "THROTTLE_RATES", {"action": "1/min"})
    monkeypatch.setattr(UserThrottle, "THROTTLE_RATES", {"user": "3/min"})
    table = create_fun_table()
    client = token_client(alice)
    codes = [client.post(f"/api/tables/{table.pk}/join/").status_code for _ in range(2)]
    assert codes == [200, 429]  # the action limit (1/min) refuses the second
    assert client.get("/api/tables/").status_code == 200  # third request of the user limit
    refused = client.get("/api/tables/")
    assert refused.status_code == 429  # the refused join counted in the user limit
    assert int(refused["Retry-After"]) > 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_rest_answer_is_the_private_frame_his_socket_is_pushed() -> None:
    alice = await sync_to_async(make_player)("alice")
    bob = await sync_to_async(make_player)("bob")
    table = await sync_to_async(create_fun_table)()
    now = timezone.now()
    await sync_to_async(deal_hand)(table, [alice, bob], now)
    client = await sync_to_async(token_client)(alice)
    socket = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/tables/{table.pk}/")
    socket.scope["user"] = alice
    connected, _ = await socket.connect(timeout=10)
    assert connected
    while not await socket.receive_nothing(timeout=0.5):
        await socket.receive_from(timeout=10)  # the connect's snapshot
    for action in ("hold", "draw", "redeal"):
        response = await sync_to_async(client.post)(
            f"/api/tables/{table.pk}/{ROUTES[action]}", BODIES[action], content_type="application/json"
        )
        assert response.status_code == 200
        pushed = json.loads(await socket.receive_from(timeout=10))
        assert pushed == response.json()
        assert pushed["type"] == "entry_state" and pushed["entry"]["panel"] is not None
    assert pushed["entry"]["draws_bought"] == 2 and pushed["entry"]["redeals_used"] == 1
    await socket.disconnect()
