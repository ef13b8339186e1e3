"""The Italian site leaves no English behind on the players' pages the UX audit listed
(2026-11-26, N13): the lobby's practice line and Hold'em games, the sign-up password rules,
wallet memos and their amounts, the Hold'em history and hand page, the checks list of a hand
page, and the 404 and 500 pages. Each page is read as a player reads it, in Italian."""

from __future__ import annotations

import html
from datetime import datetime

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client, RequestFactory
from django.utils import translation
from django.views.defaults import server_error

from tables.models import Table
from tests.handhistory.test_holdem_history import played_hand
from tests.helpers import deal, logged_in, seat_players, settle
from tests.tables.holdem_helpers import holdem_table

pytestmark = pytest.mark.django_db

ITALIAN = {"Accept-Language": "it"}


def read(client: Client, path: str) -> str:
    """The page's text with HTML entities decoded (Django escapes apostrophes)."""
    return html.unescape(client.get(path).content.decode())


def italian(user: User | None = None) -> Client:
    client = logged_in(user) if user is not None else Client()
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "it"
    return client


def test_the_lobby_names_practice_and_holdem_games_in_italian(alice: User) -> None:
    holdem_table()
    page = read(italian(alice), "/")
    assert "Allenamento BigHoldem:" in page and "classifica dell'allenamento" in page
    assert "Hold'em No Limit" in page
    assert "BigHoldem practice" not in page and "Hold'em no-limit" not in page


def test_the_sign_up_password_rules_refuse_in_italian() -> None:
    page = italian().post("/signup/", {"username": "zed", "password1": "abc", "password2": "abc"}).content.decode()
    assert "Questa password è troppo corta. Deve contenere almeno 8 caratteri." in page
    assert "This password is too short" not in page


def test_wallet_memos_and_their_amounts_read_in_italian(table: Table, alice: User, bob: User, now: datetime) -> None:
    seat_players(table, [alice, bob], now)
    deal(table, now)
    hand = settle(table)
    rake, pool = hand.rake_minor, hand.gross_minor - hand.rake_minor
    assert rake > 0 and pool > 0
    # The settlement pays the winner: both wallets read together hold its memo once.
    page = read(italian(alice), "/wallet/?currency=FUN") + read(italian(bob), "/wallet/?currency=FUN")
    assert f"Ante della mano n. {hand.number} a Test Rail" in page
    italian_amounts = f"montepremi {pool // 100},{pool % 100:02d} FUN, rake 0,{rake:02d} FUN"
    assert f"Premio della mano n. {hand.number} a Test Rail ({italian_amounts})" in page
    assert "Fiches FUN assegnate all'iscrizione" in page
    assert "Settlement of hand" not in page and "Ante of hand" not in page
    english = read(logged_in(alice), "/wallet/?currency=FUN") + read(logged_in(bob), "/wallet/?currency=FUN")
    # issue 24: the hand by number and table, read as the prize it paid, not "1#1".
    assert (
        f"Prize of hand #{hand.number} at Test Rail (pool {pool // 100}.{pool % 100:02d} FUN, rake 0.{rake:02d} FUN)"
        in english
    )


def test_the_holdem_history_and_hand_page_read_in_italian(alice: User, bob: User) -> None:
    hand = played_hand(alice, bob)
    client = italian(alice)
    history = read(client, "/history/")
    assert '<th class="num">Posto</th>' in history and ">Seat<" not in history and ">Net<" not in history
    page = read(client, f"/history/holdem/{hand.pk}/")
    for english in (
        "Players",
        "Actions",
        "Download this hand",
        "Commitment",
        "seat 1:",
        "hand seed from",
        "cards you can see",
    ):
        assert english not in page, english
    # issue 24: replayed street by street, with names and pots instead of "posto 1:".
    assert f"Mano di Hold'em n. {hand.number}" in page and "Giocatori" in page and "Piatto principale" in page
    assert "Liquidata" in page and "Settled" not in page
    assert "vede" in page or "fa check" in page
    checks = page.split('data-testid="holdem-verification"', 1)[1].split("</ul>", 1)[0]
    assert "✔ le carte che puoi vedere corrispondono agli impegni pubblicati alla distribuzione: 9 carte" in checks


def test_the_checks_run_list_of_a_hand_page_is_italian(table: Table, alice: User, bob: User, now: datetime) -> None:
    seat_players(table, [alice, bob], now)
    deal(table, now)
    hand = settle(table)
    page = read(italian(alice), f"/history/hands/{hand.pk}/")
    checks = page.split("Controlli eseguiti", 1)[1].split("</details>", 1)[0]
    assert "<li>combinazione iniziale</li>" in checks and "<li>rake = raccolta lorda per" in checks
    assert "initial combination" not in checks and "entry order" not in checks


def test_the_404_and_500_pages_are_italian() -> None:
    response = italian().get("/no-such-page/")
    assert response.status_code == 404
    page = response.content.decode()
    assert "Pagina non trovata" in page and "Torna alla lobby" in page and "Not Found" not in page
    request = RequestFactory().get("/", headers=ITALIAN)
    with translation.override("it"):
        error = server_error(request)
    assert error.status_code == 500 and "Errore del server" in error.content.decode()
