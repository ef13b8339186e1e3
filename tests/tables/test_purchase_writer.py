"""Purchases committed in batches by the process's purchase writer (issue 23, item 1;
tables/widerpoker/services/purchases.py; docs/platform.md, "Purchase writer").

Through the doors players use, the socket frame (channels' WebsocketCommunicator) and the
REST route, outside Django's test transaction (the writer commits from its own thread and
connection): many players' purchases commit together, a player who cannot pay is refused
while the others commit, the limits and loss limits hold, a resent ``ref`` is charged once,
and the books balance after settlement."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.db import connections
from django.test import Client, override_settings
from django.utils import timezone

from tables.models import Entry, Hand, PurchaseRef, Redeal, Table
from tables.realtime.frames import dumps
from tables.realtime.routing import websocket_urlpatterns
from tables.widerpoker.services import purchase_orders, purchase_statements, purchases
from tables.widerpoker.services.create import create_table
from tables.widerpoker.services.purchase_batch import commit_batch
from tests.conftest import make_player, postgres_only
from tests.helpers import create_fun_table, deal, logged_in, seat_players, settle
from wallet import protection
from wallet import services as wallet_services
from wallet.models import Account, FundsHold
from wallet.selectors import check_books

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fresh_throttle_counters"),
    postgres_only(),
]
router = URLRouter(websocket_urlpatterns)
DRAW = 50  # create_fun_table: ante 1.00, draws half of it
REDEAL = 80


@pytest.fixture(autouse=True)
def writer(settings: Any) -> Iterator[purchases.PurchaseWriter]:
    """The writer on, as production runs it, with a window wide enough that purchases sent
    together meet in one batch; holds captured by the clock (PostgreSQL's default)."""
    settings.PURCHASE_WRITER = "batch"
    settings.PURCHASE_CAPTURE = "batch"
    fresh = purchases.PurchaseWriter(batch_ms=300, batch_size=500)
    previous = purchases._WRITER
    purchases._WRITER = fresh
    purchase_orders._FACTS.clear()
    yield fresh
    purchases._WRITER = previous
    purchase_orders._FACTS.clear()


def players(count: int, prefix: str = "p") -> list[User]:
    return [make_player(f"{prefix}{i}") for i in range(count)]


def dealt_table(users: list[User], **config: Any) -> tuple[Table, Hand]:
    table = create_fun_table(**config)
    now = timezone.now()
    seat_players(table, users, now)
    return table, deal(table, now)


async def open_socket(user: User, table_id: int) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(router, f"/ws/tables/{table_id}/")
    communicator.scope["user"] = user
    connected, _ = await communicator.connect(timeout=10)
    assert connected
    await drain(communicator)
    return communicator


async def drain(communicator: WebsocketCommunicator, quiet: float = 0.3) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    while not await communicator.receive_nothing(timeout=quiet):
        frames.append(json.loads(await communicator.receive_from(timeout=10)))
    return frames


async def answer(communicator: WebsocketCommunicator, timeout: float = 20) -> dict[str, Any]:
    """The next ack or error frame (the entry_state after an ack is read by ``state``)."""
    for _ in range(10):
        frame: dict[str, Any] = json.loads(await communicator.receive_from(timeout=timeout))
        if frame["type"] in ("ack", "error"):
            return frame
    raise AssertionError("no answer")


async def state(communicator: WebsocketCommunicator) -> dict[str, Any]:
    frame: dict[str, Any] = json.loads(await communicator.receive_from(timeout=20))
    assert frame["type"] == "entry_state", frame
    return frame


def held(user: User, currency: str = "FUN") -> int:
    return int(Account.objects.get(user=user, currency=currency).held_minor)


def spendable(user: User, currency: str = "FUN") -> int:
    account = Account.objects.get(user=user, currency=currency)
    return int(account.balance_minor - account.held_minor)


async def test_many_players_buying_on_their_sockets_commit_in_batches(writer: purchases.PurchaseWriter) -> None:
    users = await sync_to_async(players)(12)
    table, hand = await sync_to_async(dealt_table)(users)
    sockets = [await open_socket(user, table.pk) for user in users]
    before = {user.pk: await sync_to_async(spendable)(user) for user in users}

    for index, socket in enumerate(sockets):
        await socket.send_to(text_data=json.dumps({"type": "buy_draw", "ref": f"d{index}"}))
    answers = await asyncio.gather(*(answer(socket) for socket in sockets))
    frames = await asyncio.gather(*(state(socket) for socket in sockets))

    assert [a["type"] for a in answers] == ["ack"] * 12
    assert [a["ref"] for a in answers] == [f"d{i}" for i in range(12)]
    assert writer.batches < 12  # several purchases per transaction
    assert writer.committed == 12
    for user, frame in zip(users, frames, strict=True):
        # The state built by the writer is the one a fresh read gives.
        fresh = await sync_to_async(services_state)(table.pk, user.pk)
        assert {k: v for k, v in frame["entry"].items() if fresh["entry"][k] != v} == {}
        assert frame == fresh
        assert frame["entry"]["draws_bought"] == 2
        assert frame["balance_minor"] == before[user.pk] - DRAW
    assert (
        await sync_to_async(lambda: FundsHold.objects.filter(destination__key=f"escrow:hand:{hand.pk}").count())() == 12
    )
    for socket in sockets:
        await socket.disconnect()


def services_state(table_id: int, user_id: int) -> dict[str, Any]:
    from tables.widerpoker.selectors import get_entry_state

    return dict(get_entry_state(table_id=table_id, user_id=user_id))


def euro_players(croupier: User, amounts: list[int]) -> list[User]:
    users = []
    for index, amount in enumerate(amounts):
        user = User.objects.create_user(username=f"e{index}", password="correct horse battery")
        wallet_services.deposit_cash(
            user_id=user.pk, currency="EUR", amount_minor=amount, reason="bank transfer", staff_user_id=croupier.pk
        )
        users.append(user)
    return users


def euro_table() -> Table:
    return create_table(
        name="Euro",
        mode="cash",
        currency="EUR",
        ante_minor=50,
        draw_price_bps=5000,
        redeal_price_minor=50,
        change_seconds=30,
    )


async def test_a_player_who_cannot_pay_is_refused_while_the_batch_commits(
    croupier: User, writer: purchases.PurchaseWriter
) -> None:
    # e0 keeps 10 cents after the 0.50 ante: a 0.25 draw is past his balance.
    users = await sync_to_async(euro_players)(croupier, [60, 5_000, 5_000, 5_000])
    table = await sync_to_async(euro_table)()
    await sync_to_async(seat_players)(table, users, timezone.now())
    hand = await sync_to_async(deal)(table, timezone.now())
    sockets = [await open_socket(user, table.pk) for user in users]
    for index, socket in enumerate(sockets):
        await socket.send_to(text_data=json.dumps({"type": "buy_draw", "ref": index}))
    answers = await asyncio.gather(*(answer(socket) for socket in sockets))

    assert answers[0]["type"] == "error"
    assert (answers[0]["code"], answers[0]["ref"]) == ("insufficient_funds", 0)
    assert answers[0]["extra"]["shortfall_minor"] == 15
    assert [a["type"] for a in answers[1:]] == ["ack"] * 3
    assert writer.batches < 4
    assert await sync_to_async(held)(users[0], "EUR") == 0
    assert await sync_to_async(spendable)(users[0], "EUR") == 10
    for user in users[1:]:
        assert await sync_to_async(held)(user, "EUR") == 25
    bought = await sync_to_async(lambda: dict(Entry.objects.filter(hand=hand).values_list("user_id", "draws_bought")))()
    assert bought == {users[0].pk: 1, **{user.pk: 2 for user in users[1:]}}
    for socket in sockets:
        await socket.disconnect()
    await sync_to_async(settle)(table)
    assert (await sync_to_async(check_books)()).ok


async def test_limits_hold_when_one_player_sends_more_than_the_table_allows() -> None:
    users = await sync_to_async(players)(3)
    table, hand = await sync_to_async(dealt_table)(users)  # 5 draws (1 with the ante), 2 redeals
    socket = await open_socket(users[0], table.pk)
    for ref in range(6):
        await socket.send_to(text_data=json.dumps({"type": "buy_draw", "ref": ref}))
    draws = [await answer(socket) for _ in range(6)]
    await drain(socket)
    for ref in range(3):
        await socket.send_to(text_data=json.dumps({"type": "redeal", "ref": f"r{ref}"}))
    redeals = [await answer(socket) for _ in range(3)]

    assert sorted(a["type"] for a in draws) == ["ack"] * 4 + ["error"] * 2
    assert {a["code"] for a in draws if a["type"] == "error"} == {"limit_reached"}
    assert sorted(a["type"] for a in redeals) == ["ack"] * 2 + ["error"]
    assert [a["code"] for a in redeals if a["type"] == "error"] == ["limit_reached"]
    entry = await sync_to_async(Entry.objects.get)(hand=hand, user=users[0])
    assert (entry.draws_bought, len(entry.redeals), entry.paid_minor) == (5, 2, 100 + 4 * DRAW + 2 * REDEAL)
    assert entry.combination != entry.initial_combination
    logged = await sync_to_async(lambda: list(Redeal.objects.filter(hand=hand).values_list("number", "combination")))()
    assert sorted(logged) == sorted((number, combination) for number, combination in entry.redeals)
    assert await sync_to_async(held)(users[0]) == 4 * DRAW + 2 * REDEAL
    # The process now knows the limit: a further draw is refused without the database.
    await drain(socket)
    await socket.send_to(text_data=json.dumps({"type": "buy_draw", "ref": "late"}))
    assert (await answer(socket))["code"] == "limit_reached"
    await socket.disconnect()
    await sync_to_async(settle)(table)
    assert (await sync_to_async(check_books)()).ok


async def test_a_resent_ref_is_charged_once() -> None:
    users = await sync_to_async(players)(2)
    table, hand = await sync_to_async(dealt_table)(users)
    socket = await open_socket(users[0], table.pk)
    await socket.send_to(text_data=json.dumps({"type": "buy_draw", "ref": "once"}))
    first = await answer(socket)
    first_state = await state(socket)
    await socket.send_to(text_data=json.dumps({"type": "buy_draw", "ref": "once"}))
    again = await answer(socket)
    again_state = await state(socket)

    assert first == {"type": "ack", "action": "buy_draw", "ref": "once"}
    assert again == {"type": "ack", "action": "buy_draw", "ref": "once", "duplicate": True}
    assert first_state["entry"]["draws_bought"] == again_state["entry"]["draws_bought"] == 2
    assert await sync_to_async(held)(users[0]) == DRAW
    assert await sync_to_async(PurchaseRef.objects.filter(hand=hand, user=users[0]).count)() == 1
    await socket.disconnect()


def test_rest_purchases_from_many_players_commit_in_batches(writer: purchases.PurchaseWriter) -> None:
    users = players(8)
    table, hand = dealt_table(users)
    results: dict[int, tuple[int, dict[str, Any]]] = {}

    def buy(user: User) -> None:
        try:
            response = logged_in(user).post(f"/api/tables/{table.pk}/draws/", {}, content_type="application/json")
            results[user.pk] = (response.status_code, response.json())
        finally:
            connections.close_all()

    threads = [threading.Thread(target=buy, args=(user,)) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert {status for status, _ in results.values()} == {200}
    assert {body["entry"]["draws_bought"] for _, body in results.values()} == {2}
    assert writer.batches < 8
    assert sorted(Entry.objects.filter(hand=hand).values_list("draws_bought", flat=True)) == [2] * 8
    assert all(held(user) == DRAW for user in users)


def test_a_rest_purchase_resent_with_its_idempotency_key_is_charged_once() -> None:
    users = players(2)
    table, hand = dealt_table(users)
    client: Client = logged_in(users[0])
    first = client.post(
        f"/api/tables/{table.pk}/redeals/", {}, content_type="application/json", headers={"idempotency-key": "k-1"}
    )
    again = client.post(
        f"/api/tables/{table.pk}/redeals/", {}, content_type="application/json", headers={"idempotency-key": "k-1"}
    )
    other = client.post(
        f"/api/tables/{table.pk}/redeals/", {}, content_type="application/json", headers={"idempotency-key": "k-2"}
    )
    assert (first.status_code, again.status_code, other.status_code) == (200, 200, 200)
    assert first.json()["entry"]["redeals_used"] == again.json()["entry"]["redeals_used"] == 1
    assert first.json()["entry"]["combination"] == again.json()["entry"]["combination"]
    assert other.json()["entry"]["redeals_used"] == 2
    assert held(users[0]) == 2 * REDEAL
    assert Redeal.objects.filter(hand=hand).count() == 2


def test_a_batch_counts_held_cents_against_loss_limits(croupier: User) -> None:
    users = euro_players(croupier, [5_000, 5_000])
    now = timezone.now()
    protection.set_limit(user_id=users[0].pk, kind="loss", currency="EUR", value=100, now=now)
    table = euro_table()
    seat_players(table, users, now)
    deal(table, now)  # ante 0.50: 0.50 lost
    client = logged_in(users[0])

    def buy(what: str) -> tuple[int, str | None]:
        response = client.post(f"/api/tables/{table.pk}/{what}/", {}, content_type="application/json")
        return response.status_code, None if response.status_code == 200 else response.json()["code"]

    assert buy("draws") == (200, None)  # 0.75 with the draw on hold
    assert buy("draws") == (200, None)  # 1.00: at the limit
    assert held(users[0], "EUR") == 50
    assert buy("draws") == (409, "loss_limit")
    assert buy("redeals") == (409, "loss_limit")
    assert held(users[0], "EUR") == 50
    # The other player, with no limit, buys in the same hand.
    response = logged_in(users[1]).post(f"/api/tables/{table.pk}/draws/", {}, content_type="application/json")
    assert response.status_code == 200
    settle(table)
    assert check_books().ok


def test_purchases_after_the_change_phase_are_refused_and_books_hold_after_settlement() -> None:
    users = players(3)
    table, hand = dealt_table(users)
    for user in users:
        assert (
            logged_in(user).post(f"/api/tables/{table.pk}/draws/", {}, content_type="application/json").status_code
            == 200
        )
    settled = settle(table)
    assert settled.draws_minor == 3 * DRAW
    late = logged_in(users[0]).post(f"/api/tables/{table.pk}/draws/", {}, content_type="application/json")
    assert (late.status_code, late.json()["code"]) == (409, "phase_closed")
    assert check_books().ok
    assert not Account.objects.filter(user__in=users, held_minor__gt=0).exists()
    assert hand.change_deadline < timezone.now() + timedelta(seconds=31)


def test_a_purchase_dropped_before_its_batch_is_neither_confirmed_nor_charged() -> None:
    """A socket that closes while its purchase waits in the queue cancels the wait: the writer
    drops the order (the model of a process dying with purchases queued, docs/platform.md):
    nothing is charged, and the other purchase of the batch commits."""
    users = players(2)
    table, hand = dealt_table(users)
    slow = purchases.PurchaseWriter(batch_ms=500, batch_size=500)
    now = timezone.now()
    dropped = slow.submit(purchases.Order(kind=purchases.DRAW, table_id=table.pk, user_id=users[0].pk, now=now))
    kept = slow.submit(purchases.Order(kind=purchases.DRAW, table_id=table.pk, user_id=users[1].pk, now=now))
    assert dropped.cancel()
    outcome = kept.result(timeout=60)
    assert outcome.error is None and outcome.frame is not None
    assert dict(Entry.objects.filter(hand=hand).values_list("user_id", "draws_bought")) == {
        users[0].pk: 1,
        users[1].pk: 2,
    }
    assert (held(users[0]), held(users[1])) == (0, DRAW)
    assert slow.committed == 1


@override_settings(DEAL_ALGORITHM=3)
async def test_algorithm_3_redeals_through_the_writer_wait_for_their_round(
    writer: purchases.PurchaseWriter,
) -> None:
    """The writer pays and numbers a redeal in its batch, and under algorithm 3 leaves it
    pending on the first beacon round after the batch (docs/provably-fair.md 1.9): the
    answer says so, a second redeal is refused with ``redeal_pending``, the clock deals it at
    its round, and the hand verifies."""
    from tables.services import beacon
    from tables.widerpoker.services.play import resolve_pending_redeals
    from tests.tables.test_deal_beacon import _deal_at_round, _freeze

    users = await sync_to_async(players)(2, prefix="r")
    table = await sync_to_async(create_fun_table)()
    freeze = await sync_to_async(_freeze)(table, users, timezone.now())
    hand = await sync_to_async(_deal_at_round)(table, freeze, users)
    socket = await open_socket(users[0], table.pk)
    old = await sync_to_async(lambda: Entry.objects.get(hand=hand, user=users[0]).combination)()

    await socket.send_to(text_data=json.dumps({"type": "redeal", "ref": "r1"}))
    assert (await answer(socket))["type"] == "ack"
    frame = await state(socket)
    pending = frame["entry"]["redeal_pending"]
    redeal = await sync_to_async(Redeal.objects.get)(hand=hand, user=users[0])
    assert redeal.combination is None and pending["number"] == redeal.number == 0
    assert pending["round"] == redeal.beacon_round == beacon.round_after(redeal.created_at)
    assert frame == await sync_to_async(services_state)(table.pk, users[0].pk)  # as a fresh read
    await socket.send_to(text_data=json.dumps({"type": "redeal", "ref": "r2"}))
    refused = await answer(socket)
    assert (refused["type"], refused["code"]) == ("error", "redeal_pending")

    released = beacon.time_of(int(redeal.beacon_round or 0))
    assert await sync_to_async(resolve_pending_redeals)(now=released) == 1
    entry = await sync_to_async(Entry.objects.get)(hand=hand, user=users[0])
    assert entry.combination != old and entry.redeals == [[0, entry.combination]]
    assert entry.paid_minor == 100 + REDEAL  # the ante and one redeal, charged once
    await drain(socket)  # the redeal's private frame
    # A draw after the redeal: the writer's frame shows the redealt cards, as a fresh read
    # does (it once read the entry's columns out of the model's order and showed the
    # initial combination's cards).
    await socket.send_to(text_data=json.dumps({"type": "buy_draw", "ref": "d1"}))
    assert (await answer(socket))["type"] == "ack"
    drawn = await state(socket)
    assert drawn == await sync_to_async(services_state)(table.pk, users[0].pk)
    assert drawn["entry"]["combination"] == [int(d) for d in f"{entry.combination:05d}"]
    await socket.disconnect()
    await sync_to_async(settle)(table)
    assert (await sync_to_async(check_books)()).ok
    from handhistory.verification import verify_hand

    report = await sync_to_async(verify_hand)(hand_id=hand.pk)
    assert report.ok, report.mismatches


async def test_the_answer_is_the_text_a_fresh_read_serialises() -> None:
    """The frame after the ack is sent as text built with the panel's cached JSON: the very
    text ``frames.dumps`` gives for the state read afresh, after a draw and after a redeal
    (a new combination: another panel)."""
    users = await sync_to_async(players)(2, prefix="t")
    table, _hand = await sync_to_async(dealt_table)(users)
    socket = await open_socket(users[0], table.pk)
    for kind in ("buy_draw", "redeal", "buy_draw"):
        await socket.send_to(text_data=json.dumps({"type": kind, "ref": kind + "1"}))
        assert (await answer(socket))["type"] == "ack"
        text = await socket.receive_from(timeout=20)
        fresh = await sync_to_async(services_state)(table.pk, users[0].pk)
        assert fresh["entry"]["panel"] is not None
        assert text == dumps(fresh)
    await socket.disconnect()


@override_settings(DEAL_ALGORITHM=3)
def test_a_batch_sends_the_same_few_statements_whatever_its_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three statements a batch (the hand, the entries, the payment with every write, which
    returns the power-up sessions' counts), one more with redeals (the redeal counter), for 2 purchases as for
    11: nothing is sent per purchase (algorithm 3: a redeal's combination comes later)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.tables.test_deal_beacon import _deal_at_round, _freeze

    users = players(14, prefix="s")
    table = create_fun_table()
    hand = _deal_at_round(table, _freeze(table, users, timezone.now()), users)
    sent: list[str] = []
    run = purchase_statements.run

    def counted(sql: str, params: Any) -> list[tuple[Any, ...]]:
        sent.append(sql)
        return run(sql, params)

    monkeypatch.setattr(purchase_statements, "run", counted)

    def statements(kind: str, buyers: list[User]) -> int:
        sent.clear()
        now = timezone.now()
        orders = [purchases.Order(kind=kind, table_id=table.pk, user_id=u.pk, now=now, ref=kind) for u in buyers]
        with CaptureQueriesContext(connection) as queries:
            outcomes = commit_batch(orders)
        assert [outcome.error for outcome in outcomes] == [None] * len(buyers)
        statements = [q["sql"] for q in queries.captured_queries if q["sql"] not in ("BEGIN", "COMMIT")]
        return len(sent) + len(statements)

    commit_batch([purchases.Order(kind=purchases.DRAW, table_id=table.pk, user_id=users[0].pk, now=timezone.now())])
    draws = statements(purchases.DRAW, users[1:3])
    assert statements(purchases.DRAW, users[3:14]) == draws == 3
    assert statements(purchases.REDEAL, users[1:3]) == statements(purchases.REDEAL, users[3:14]) == draws + 1
    assert sorted(Entry.objects.filter(hand=hand).values_list("draws_bought", flat=True)) == [2] * 14
    assert sorted(Redeal.objects.filter(hand=hand).values_list("number", flat=True)) == list(range(13))


@override_settings(DEAL_ALGORITHM=3)
async def test_algorithm_3_redeals_of_one_batch_are_numbered_in_its_order(
    writer: purchases.PurchaseWriter,
) -> None:
    """Several players redeal in one batch: the payment's statement gives their redeals the
    hand's next numbers in the batch's order, each pending on the first beacon round after
    the batch; the clock deals them all at their round and the hand verifies."""
    from tables.services import beacon
    from tables.widerpoker.services.play import resolve_pending_redeals
    from tests.tables.test_deal_beacon import _deal_at_round, _freeze

    users = await sync_to_async(players)(5, prefix="b")
    table = await sync_to_async(create_fun_table)()
    freeze = await sync_to_async(_freeze)(table, users, timezone.now())
    hand = await sync_to_async(_deal_at_round)(table, freeze, users)
    sockets = [await open_socket(user, table.pk) for user in users]
    for index, socket in enumerate(sockets):
        await socket.send_to(text_data=json.dumps({"type": "redeal", "ref": f"r{index}"}))
    assert [a["type"] for a in await asyncio.gather(*(answer(socket) for socket in sockets))] == ["ack"] * 5
    frames = [await state(socket) for socket in sockets]

    assert writer.batches < 5
    logged = await sync_to_async(
        lambda: list(
            Redeal.objects.filter(hand=hand)
            .order_by("number")
            .values_list("number", "user_id", "combination", "beacon_round")
        )
    )()
    assert [number for number, *_ in logged] == [0, 1, 2, 3, 4]
    assert {user for _, user, _, _ in logged} == {user.pk for user in users}
    assert all(combination is None for _, _, combination, _ in logged)
    numbers = {user: number for number, user, _, _ in logged}
    for user, frame in zip(users, frames, strict=True):
        assert frame["entry"]["redeal_pending"]["number"] == numbers[user.pk]
        assert frame == await sync_to_async(services_state)(table.pk, user.pk)
    rounds = {int(round_number or 0) for *_, round_number in logged}
    assert await sync_to_async(resolve_pending_redeals)(now=beacon.time_of(max(rounds))) == 5
    paid = await sync_to_async(lambda: list(Entry.objects.filter(hand=hand).values_list("paid_minor", "redeals")))()
    assert all(p == 100 + REDEAL and len(r) == 1 for p, r in paid)
    for socket in sockets:
        await socket.disconnect()
    await sync_to_async(settle)(table)
    assert (await sync_to_async(check_books)()).ok
    from handhistory.verification import verify_hand

    report = await sync_to_async(verify_hand)(hand_id=hand.pk)
    assert report.ok, report.mismatches
