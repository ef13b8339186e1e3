"""Practice games without an account (seed 004, BigHoldem: "senza registrazione", a nickname
for the leaderboard): a visitor who is not logged in starts a game from the setup form as a
guest, plays it, and can do nothing else that needs an account (wallet/guests.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from tables.models import PracticeGame, PracticeStatus, Seat
from tests.helpers import create_fun_table
from tests.tables.holdem_helpers import holdem_table
from tests.tables.test_consumers import open_socket, receive
from tests.tables.test_holdem_practice_pages import form_data
from wallet import guests
from wallet import services as wallet_services
from wallet.errors import GuestPracticeOnlyError

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_throttle_counters")]


def start_as_guest(client: Client, **items: Any) -> PracticeGame:
    started = client.post(reverse("practice-setup"), form_data(**items), REMOTE_ADDR="203.0.113.9")
    game = PracticeGame.objects.latest("pk")
    assert started.status_code == 302 and started["Location"] == reverse("practice-game", args=[game.pk])
    return game


def test_a_visitor_without_an_account_plays_a_practice_game_as_a_guest(client: Client) -> None:
    setup = client.get(reverse("practice-setup"))
    assert setup.status_code == 200  # no redirect to the login page any more
    assert 'data-testid="practice-guest-note"' in setup.content.decode()
    game = start_as_guest(client, nickname="Zoe")
    guest = User.objects.get(pk=game.owner_id or 0)
    assert guests.is_guest(guest.pk) and guest.username.startswith("guest-")
    assert not guest.has_usable_password()  # he cannot log in again: the game lives with this session
    assert (game.nickname, game.status, game.interactive) == ("Zoe", PracticeStatus.RUNNING, True)
    assert Seat.objects.filter(table=game.table, user=guest, is_bot=False).exists()
    screen = client.get(reverse("practice-game", args=[game.pk]))
    assert screen.status_code == 200
    html = screen.content.decode()
    assert 'data-testid="guest-signup"' in html  # the header offers sign-up, not a wallet
    assert reverse("wallet") not in html
    stopped = client.post(reverse("practice-stop", args=[game.pk]))
    assert stopped["Location"] == reverse("practice-summary", args=[game.pk])
    game.refresh_from_db()
    assert game.status == PracticeStatus.FINISHED


def test_a_logged_in_player_is_no_guest_and_keeps_his_name_as_the_nickname(client: Client, alice: User) -> None:
    client.force_login(alice)
    page = client.get(reverse("practice-setup")).content.decode()
    assert 'data-testid="practice-guest-note"' not in page and 'value="alice"' in page
    game = start_as_guest(client)
    assert game.owner_id == alice.pk and not guests.is_guest(alice.pk)
    assert User.objects.filter(username__startswith="guest-").count() == 0


def test_a_guest_is_refused_a_seat_money_and_top_ups_at_every_door(client: Client, croupier: User) -> None:
    game = start_as_guest(client)
    guest = User.objects.get(pk=game.owner_id or 0)
    fun = create_fun_table()
    holdem = holdem_table()
    joined = client.post(f"/api/tables/{fun.pk}/join/", {}, content_type="application/json")
    assert (joined.status_code, joined.json()["code"]) == (403, "guest_practice_only")
    sat = client.post(
        f"/api/tables/{holdem.pk}/holdem/join/", {"seat": 0, "buy_in_minor": 10_000}, content_type="application/json"
    )
    assert (sat.status_code, sat.json()["code"]) == (403, "guest_practice_only")
    topped = client.post("/api/wallet/top-up/", {}, content_type="application/json")
    assert (topped.status_code, topped.json()["code"]) == (403, "guest_practice_only")
    with pytest.raises(GuestPracticeOnlyError):
        wallet_services.deposit_cash(
            user_id=guest.pk, currency="EUR", amount_minor=1_000, reason="test", staff_user_id=croupier.pk
        )
    assert not Seat.objects.filter(user=guest).exclude(table=game.table).exists()


@pytest.mark.asyncio
async def test_a_guest_joining_a_table_over_the_socket_is_refused_with_the_stable_code() -> None:
    def setup() -> tuple[User, int]:
        guest = guests.create_guest()
        return guest, create_fun_table().pk

    guest, table_id = await sync_to_async(setup)()
    communicator = await open_socket(guest, table_id)
    await receive(communicator, "entry_state")
    await communicator.send_to(text_data=json.dumps({"type": "join", "ref": 7}))
    error = await receive(communicator, "error")
    assert (error["code"], error["ref"]) == ("guest_practice_only", 7)
    assert not await sync_to_async(Seat.objects.filter(table_id=table_id, user=guest).exists)()
    await communicator.disconnect()


def test_one_address_starts_at_most_the_guests_an_hour_allows(settings: Any) -> None:
    settings.POKER_GUESTS_PER_ADDRESS_HOUR = 2
    settings.PRACTICE_GAMES_MAX = 10
    for _ in range(2):
        start_as_guest(Client())
    refused = Client().post(reverse("practice-setup"), form_data(), REMOTE_ADDR="203.0.113.9")
    assert refused.status_code == 200 and "guest_limit" in refused.content.decode()
    assert User.objects.filter(username__startswith="guest-").count() == 2
    other = Client().post(reverse("practice-setup"), form_data(), REMOTE_ADDR="198.51.100.4")
    assert other.status_code == 302  # the count is per address


def test_a_refused_start_leaves_no_guest_behind_and_nobody_logged_in(
    client: Client, alice: User, settings: Any
) -> None:
    settings.PRACTICE_GAMES_MAX = 1
    alice_client = Client()
    alice_client.force_login(alice)
    start_as_guest(alice_client)  # the site's one running game
    refused = client.post(reverse("practice-setup"), form_data(), REMOTE_ADDR="203.0.113.9")
    assert refused.status_code == 200 and "practice_full" in refused.content.decode()
    assert not User.objects.filter(username__startswith="guest-").exists()
    assert "_auth_user_id" not in client.session


def test_a_guest_may_sign_up_and_nobody_may_take_a_guest_name(client: Client) -> None:
    start_as_guest(client)
    assert client.get(reverse("signup")).status_code == 200  # a guest is not sent away
    password = "a-Long-enough-passphrase-42"
    taken = client.post(
        reverse("signup"), {"username": "guest-123456abcdef", "password1": password, "password2": password}
    )
    assert taken.status_code == 200 and "kept for guests" in taken.content.decode()
    signed = client.post(reverse("signup"), {"username": "zoe", "password1": password, "password2": password})
    assert signed.status_code == 302
    zoe = User.objects.get(username="zoe")
    assert client.session["_auth_user_id"] == str(zoe.pk) and not guests.is_guest(zoe.pk)
