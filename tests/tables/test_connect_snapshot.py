"""The public frame a new table socket is sent comes from the hub's per-process cache
(tables/realtime/hub.py, ``public_snapshot``): the same as a fresh read apart from
``server_time``, never older than a frame already pushed to the table, and cheap."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db.backends import utils as db_utils
from django.db.models import F
from django.utils import timezone

from tables.clock import advance_table
from tables.models import Table
from tables.widerpoker import selectors
from tables.widerpoker.services.lifecycle import publish_live_pools
from tables.widerpoker.services.play import buy_draw
from tables.widerpoker.services.seating import join_table
from tests.conftest import make_player
from tests.helpers import create_fun_table
from tests.tables.test_consumers import drain, open_socket, receive

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

SECOND_CONNECT_QUERIES = 14
"""At most, for a seated player's first socket at a table whose frame is cached, whatever the
number of seats (transaction control not counted): the table's game (1); counting the
socket (the seat locked, the process heartbeat, its socket row got or inserted, two
updates: 6); the version (1); the private state (table, seat, balance, entry, power-up
rules, session: 6). Building the public frame instead costs 5 or 6 more (the seat count,
the carried cents, the special hands, the jackpots)."""


class Counter:
    """Database queries of every thread (the consumer's reads run in a worker thread)."""

    def __init__(self) -> None:
        self.queries: list[str] = []


@pytest.fixture
def queries(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter]:
    counter = Counter()
    original = db_utils.CursorWrapper._execute  # type: ignore[attr-defined]  # django's, not in the stubs

    def counting(self: Any, sql: str, *args: Any) -> Any:
        if not sql.lstrip().upper().startswith(("BEGIN", "SAVEPOINT", "RELEASE", "ROLLBACK", "COMMIT")):
            counter.queries.append(sql)
        return original(self, sql, *args)

    monkeypatch.setattr(db_utils.CursorWrapper, "_execute", counting)
    yield counter


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The table ids of every public frame the hubs built for a connect."""
    from tables.realtime import hub

    built: list[int] = []
    original = hub.build_table_state

    def counting(table_id: int) -> Any:
        built.append(table_id)
        return original(table_id)

    monkeypatch.setattr(hub, "build_table_state", counting)
    return built


def without_clock(frame: dict[str, Any]) -> dict[str, Any]:
    return {**frame, "server_time": None}


async def fresh_state(table_id: int) -> dict[str, Any]:
    """What ``get_table_state`` reads now, through the same JSON as the wire."""
    state = await sync_to_async(selectors.get_table_state)(table_id=table_id)
    return dict(json.loads(json.dumps(state)))


async def dealt_table(*names: str) -> tuple[Table, list[Any]]:
    users = [await sync_to_async(make_player)(name) for name in names]
    table = await sync_to_async(create_fun_table)()
    now = timezone.now()
    for user in users:
        await sync_to_async(join_table)(table_id=table.pk, user_id=user.pk, now=now)
    assert await sync_to_async(advance_table)(table_id=table.pk, now=now)
    return table, users


async def test_a_second_socket_gets_the_cached_frame_equal_to_a_fresh_read(queries: Counter, builds: list[int]) -> None:
    table, (alice, bob) = await dealt_table("alice", "bob")
    first = await open_socket(alice, table.pk)
    mine = await receive(first, "table_state")
    await receive(first, "entry_state")
    assert builds == [table.pk]

    queries.queries.clear()
    second = await open_socket(bob, table.pk)
    theirs = await receive(second, "table_state")
    private = await receive(second, "entry_state")
    connect_queries = list(queries.queries)

    assert builds == [table.pk]  # served from the cache
    assert theirs["phase"] == "change" and theirs["hand"]["pool_minor"] is not None
    assert theirs["server_time"] >= mine["server_time"]  # stamped at the send, not at the build
    assert without_clock(theirs) == without_clock(await fresh_state(table.pk))
    assert private["entry"]["cards"]  # the private state is still bob's own, read fresh
    assert len(connect_queries) <= SECOND_CONNECT_QUERIES, "\n".join(sql[:90] for sql in connect_queries)
    assert not [sql for sql in connect_queries if "COUNT(" in sql.upper()]  # no seat count
    for socket in (first, second):
        await socket.disconnect()


async def test_after_a_version_change_the_new_frame_is_served(builds: list[int]) -> None:
    table, (alice, bob) = await dealt_table("alice", "bob")
    first = await open_socket(alice, table.pk)
    before = await receive(first, "table_state")
    await drain(first)

    await sync_to_async(advance_table)(table_id=table.pk, now=timezone.now() + timedelta(seconds=31))
    pushed = await receive(first, "table_state")
    assert (pushed["version"], pushed["phase"]) == (before["version"] + 1, "results")

    second = await open_socket(bob, table.pk)
    served = await receive(second, "table_state")
    assert without_clock(served) == without_clock(await fresh_state(table.pk))
    assert served["version"] == pushed["version"]
    assert builds == [table.pk, table.pk]
    for socket in (first, second):
        await socket.disconnect()


async def test_a_version_change_whose_push_never_arrived_is_served_too() -> None:
    """Pub/sub may lose a message: the version read catches a change the hub never heard of."""
    table, (alice, bob) = await dealt_table("alice", "bob")
    first = await open_socket(alice, table.pk)
    before = await receive(first, "table_state")
    await sync_to_async(Table.objects.filter(pk=table.pk).update)(version=F("version") + 1)  # no push

    second = await open_socket(bob, table.pk)
    assert (await receive(second, "table_state"))["version"] == before["version"] + 1
    for socket in (first, second):
        await socket.disconnect()


async def test_a_connect_never_gets_a_frame_older_than_a_push_of_the_same_version() -> None:
    """A join (a new player count) and a purchase (a live pool) change the public frame
    without a version bump; once their push reached the table, a new socket sees them."""
    table, (alice, bob) = await dealt_table("alice", "bob")
    carol = await sync_to_async(make_player)("carol")
    first = await open_socket(alice, table.pk)
    before = await receive(first, "table_state")
    await drain(first)

    await sync_to_async(join_table)(table_id=table.pk, user_id=carol.pk, now=timezone.now())
    joined = await receive(first, "table_state")
    assert (joined["version"], joined["players"]) == (before["version"], before["players"] + 1)
    second = await open_socket(carol, table.pk)
    assert (await receive(second, "table_state"))["players"] == joined["players"]

    await sync_to_async(buy_draw)(table_id=table.pk, user_id=bob.pk, now=timezone.now())
    await sync_to_async(publish_live_pools)()
    pool = await receive(first, "pool_updated")
    assert pool["gross_minor"] > before["hand"]["gross_minor"]
    third = await open_socket(bob, table.pk)
    hand = (await receive(third, "table_state"))["hand"]
    assert (hand["gross_minor"], hand["pool_minor"], hand["rake_minor"]) == (
        pool["gross_minor"],
        pool["pool_minor"],
        pool["rake_minor"],
    )
    for socket in (first, second, third):
        await socket.disconnect()
