"""A player's open sessions follow what happens to his account elsewhere (issue #11).

Removed from play: staff suspend him (seed 001, Notes 4) or he starts a time-out or
self-exclusion. His browser sessions end (suspension), his API tokens are revoked
(suspension), his seats are left with the money of the running hand safe, and his game
sockets get the reason and are closed. A deposit recorded by staff shows at once on his open
game screen."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token

from lobby.services import end_player_sessions
from tables.clock import remove_from_tables
from tables.models import Entry, Seat, SeatStatus, Table
from tables.realtime.frames import CLOSE_KICKED
from tables.realtime.routing import websocket_urlpatterns
from tables.widerpoker.services.create import create_table
from tables.widerpoker.services.play import buy_draw
from tables.widerpoker.services.seating import join_table
from tests.conftest import make_player
from tests.helpers import create_fun_table, deal, logged_in, seat_players, settle
from wallet.errors import SelfExcludedError, SuspendedError
from wallet.models import Currency
from wallet.selectors import check_books, get_balance_minor
from wallet.services import ensure_player_account


def fun(user: User) -> int:
    return get_balance_minor(user_id=user.pk, currency=Currency.FUN)


@pytest.mark.django_db
def test_suspending_a_player_logs_him_out_revokes_his_tokens_and_takes_him_off_the_tables(
    table: Table, alice: User, bob: User, croupier: User, now: datetime
) -> None:
    seat_players(table, [alice, bob], now)
    hand = deal(table, now)
    browser, bobs_browser = logged_in(alice), logged_in(bob)
    token = Token.objects.create(user=alice)
    assert browser.get(reverse("wallet")).status_code == 200
    api = Client(headers={"authorization": f"Token {token.key}"})
    assert api.get("/api/tables/").status_code == 200
    paid = Entry.objects.get(hand=hand, user=alice).paid_minor
    balance = fun(alice)

    done = logged_in(croupier).post(
        reverse("admin:wallet_suspension_add"), {"username": "alice", "action": "suspend", "reason": "bot play"}
    )

    assert done.status_code == 302
    # Her next request is anonymous: the login page, which refuses a suspended account.
    page = browser.get(reverse("wallet"))
    assert page.status_code == 302 and page["Location"].startswith(reverse("login"))
    refused = api.get("/api/tables/")
    assert (refused.status_code, refused.json()["code"]) == (403, "authentication_failed"), refused.json()
    assert not Token.objects.filter(user=alice).exists()
    assert bobs_browser.get(reverse("wallet")).status_code == 200  # nobody else is touched
    # Her seat is left; her entry in the running hand stays, with what she paid.
    seat = Seat.objects.get(table=table, user=alice)
    assert (seat.status, seat.status_reason) == (SeatStatus.LEFT, "left")
    assert Entry.objects.get(hand=hand, user=alice).paid_minor == paid
    assert fun(alice) == balance  # nothing refunded, nothing forfeited
    with pytest.raises(SuspendedError):
        join_table(table_id=table.pk, user_id=alice.pk, now=now)
    with pytest.raises(SuspendedError):
        buy_draw(table_id=table.pk, user_id=alice.pk, now=now)
    settled = settle(table)
    entry = Entry.objects.get(hand=settled, user=alice)
    assert fun(alice) == balance + entry.prize_minor + entry.jackpot_minor  # her hand was paid as usual
    assert check_books().ok


@pytest.mark.django_db
def test_ending_sessions_touches_only_the_players_own_and_is_repeatable(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    seat_players(table, [alice, bob], now)
    logged_in(alice), logged_in(alice), logged_in(bob)
    Token.objects.create(user=alice)

    first = end_player_sessions(user_id=alice.pk, reason="suspended", now=timezone.now())
    again = end_player_sessions(user_id=alice.pk, reason="suspended", now=timezone.now())

    assert (first.sessions, first.tokens, first.tables) == (2, 1, [table.pk])
    assert (again.sessions, again.tokens, again.tables) == (0, 0, [])
    assert Seat.objects.get(table=table, user=bob).status == SeatStatus.ACTIVE


@pytest.mark.django_db
def test_starting_a_self_exclusion_leaves_the_tables_but_keeps_the_player_logged_in(
    table: Table, alice: User, now: datetime
) -> None:
    seat_players(table, [alice], now)
    browser = logged_in(alice)

    browser.post(
        reverse("responsible-gaming"), {"action": "break", "kind": "self_exclusion", "days": 182, "confirm": "on"}
    )

    assert Seat.objects.get(table=table, user=alice).status == SeatStatus.LEFT
    assert browser.get(reverse("wallet")).status_code == 200  # he can still see his money
    with pytest.raises(SelfExcludedError):
        join_table(table_id=table.pk, user_id=alice.pk, now=timezone.now() + timedelta(seconds=1))


router = URLRouter(websocket_urlpatterns)


async def _open(user: Any, table_id: int) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(router, f"/ws/tables/{table_id}/")
    communicator.scope["user"] = user
    connected, _ = await communicator.connect(timeout=10)
    assert connected
    for _ in range(2):  # the snapshot: table_state and entry_state
        await communicator.receive_from(timeout=10)
    return communicator


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_removed_players_game_sockets_get_the_reason_and_close() -> None:
    alice = await sync_to_async(make_player)("alice")
    bob = await sync_to_async(make_player)("bob")
    table = await sync_to_async(create_fun_table)()
    now = timezone.now()
    await sync_to_async(seat_players)(table, [alice, bob], now)
    hers, his = await _open(alice, table.pk), await _open(bob, table.pk)

    await sync_to_async(end_player_sessions)(user_id=alice.pk, reason="This account is suspended.", now=now)

    frames = []
    while True:
        output = await hers.receive_output(timeout=10)
        if output["type"] == "websocket.close":
            break
        frames.append(json.loads(output["text"]))
    assert output["code"] == CLOSE_KICKED
    assert {"type": "kicked", "reason": "This account is suspended."} in frames
    # Bob's socket stays open: a ping is answered.
    await his.send_to(text_data=json.dumps({"type": "ping"}))
    for _ in range(5):
        frame = json.loads(await his.receive_from(timeout=10))
        if frame["type"] == "pong":
            break
    assert frame["type"] == "pong"
    await his.disconnect()


def test_a_suspended_holdem_player_gets_his_chips_back_in_his_wallet(db: None) -> None:
    """Removing a player from play at a Hold'em table cashes his stack out (his chips are
    money on the table, seed 003 table stakes), where a WiderPoker seat only stops playing."""
    from tables.holdem.services import take_seat
    from tests.tables.holdem_helpers import assert_books, holdem_table

    alice = make_player("alice")
    table = holdem_table()
    wallet_before = get_balance_minor(user_id=alice.pk, currency=Currency.FUN)
    take_seat(table_id=table.pk, user_id=alice.pk, position=1, buy_in_minor=700, now=timezone.now())
    assert get_balance_minor(user_id=alice.pk, currency=Currency.FUN) == wallet_before - 700

    left = remove_from_tables(user_id=alice.pk, reason="suspended", now=timezone.now())

    assert left == [table.pk]
    assert get_balance_minor(user_id=alice.pk, currency=Currency.FUN) == wallet_before
    assert Seat.objects.get(table=table, user=alice).stack_minor == 0
    assert_books(table)


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_deposit_made_elsewhere_shows_at_once_on_the_open_game_screen() -> None:
    alice = await sync_to_async(make_player)("alice")
    croupier = await sync_to_async(User.objects.create_user)(
        username="croupier", password="croupier pass 1", is_staff=True, is_superuser=True
    )
    table = await sync_to_async(create_table)(
        name="Cash Rail", mode="cash", currency="EUR", ante_minor=100, draw_price_bps=5000, redeal_price_minor=80
    )
    account = await sync_to_async(ensure_player_account)(user_id=alice.pk, currency=Currency.EUR)
    screen = await _open(alice, table.pk)

    def deposit() -> int:
        staff = logged_in(croupier)
        url = reverse("admin:wallet_account_cash", args=[account.pk])
        token = staff.get(url).context["form"]["token"].value()
        reply = staff.post(url, {"direction": "deposit", "amount": "25.00", "reason": "bank", "token": token})
        return reply.status_code

    assert await sync_to_async(deposit)() == 302
    frame = json.loads(await screen.receive_from(timeout=10))
    assert (frame["type"], frame["balance_minor"], frame["currency"]) == ("entry_state", 2_500, "EUR")
    await screen.disconnect()
