"""The site in English and Italian (issue 11, item 4): Accept-Language and the header's
switch choose the language, the switch keeps the player on his page and is remembered in the
language cookie, the JavaScript catalog is served, money follows the language, refusals are
translated while their codes stay stable, and the rules are served in Italian."""

from __future__ import annotations

import json
import re

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from django.utils import translation

from tables.models import Table
from tables.widerpoker.labels import card_name, category_name
from tests.helpers import logged_in
from wallet.errors import InsufficientFundsError
from wallet.money import format_minor

pytestmark = pytest.mark.django_db

ITALIAN = {"Accept-Language": "it-IT,it;q=0.9,en;q=0.5"}


def _catalog(script: str) -> dict[str, object]:
    """The messages of a JavaScriptCatalog response (the JSON object it assigns)."""
    found = re.search(r"const newcatalog = (\{.*?\});\n", script, re.S)
    return json.loads(found.group(1)) if found else {}


def test_the_lobby_follows_accept_language_and_defaults_to_english(table: Table) -> None:
    english = Client().get("/").content.decode()
    italian = Client().get("/", headers=ITALIAN).content.decode()
    assert '<html lang="en">' in english and "Game lobby" in english and "Prize pool" in english
    assert '<html lang="it">' in italian and "Lobby di gioco" in italian and "Montepremi" in italian
    assert "Game lobby" not in italian
    # An unsupported language falls back to English, not to an error.
    assert "Game lobby" in Client().get("/", headers={"Accept-Language": "ja"}).content.decode()


@pytest.mark.parametrize("path", ["/", "/rules/", "/simulator/", "/login/", "/signup/"])
def test_every_page_has_the_language_switch_posting_to_set_language_with_csrf(path: str) -> None:
    page = Client().get(path).content.decode()
    form = re.search(r'<form[^>]*data-testid="language-switch".*?</form>', page, re.S)
    assert form is not None, path
    assert 'method="post"' in form.group(0) and 'action="/i18n/setlang/"' in form.group(0)
    assert 'name="csrfmiddlewaretoken"' in form.group(0)
    assert f'name="next" value="{path}"' in form.group(0)
    assert 'name="language" value="it"' in form.group(0)


def test_the_switch_keeps_the_player_on_his_page_and_is_remembered(alice: User) -> None:
    client = logged_in(alice)
    assert "Wallet" in client.get("/wallet/?currency=FUN").content.decode()
    response = client.post("/i18n/setlang/", {"language": "it", "next": "/wallet/?currency=FUN"})
    assert response.status_code == 302
    assert response["Location"] == "/wallet/?currency=FUN"
    cookie = response.cookies[settings.LANGUAGE_COOKIE_NAME]
    assert cookie.value == "it" and int(cookie["max-age"]) == settings.LANGUAGE_COOKIE_AGE
    # Remembered: later pages are Italian, whatever the browser asks for.
    page = client.get("/wallet/?currency=FUN", headers={"Accept-Language": "en"}).content.decode()
    assert "Conto gioco" in page and "Movimenti" in page
    assert 'name="language" value="en"' in page
    back = client.post("/i18n/setlang/", {"language": "en", "next": "/history/"})
    assert back["Location"] == "/history/"
    assert "My hands" in client.get("/history/").content.decode()


def test_the_switch_refuses_to_send_the_player_off_site() -> None:
    response = Client().post("/i18n/setlang/", {"language": "it", "next": "https://evil.example/"})
    assert response.status_code == 302
    assert "evil.example" not in response["Location"]


def test_the_javascript_catalog_is_served_in_the_language_of_the_page() -> None:
    italian = Client().get("/jsi18n/", headers=ITALIAN)
    assert italian.status_code == 200
    assert italian["Content-Type"].startswith("text/javascript")
    catalog = _catalog(italian.content.decode())
    assert catalog["poker hand\x04Royal flush"] == "Scala reale"
    assert catalog["card rank\x04Queen"] == "Donna"
    assert catalog["Buy draw"] == "Acquista draw"
    assert "Buy draw" not in _catalog(Client().get("/jsi18n/").content.decode())
    # Every page loads it before its modules, which call gettext on load.
    page = Client().get("/", headers=ITALIAN).content.decode()
    assert page.index('src="/jsi18n/"') < page.index("js/lobby.js")


def test_cards_and_hands_are_named_as_italian_players_say_them() -> None:
    with translation.override("it"):
        assert card_name("Qs") == "Donna di picche"
        assert card_name("Ah") == "Asso di cuori"
        assert card_name("Td") == "10 di quadri"
        assert card_name("Jc") == "Fante di fiori"
        assert card_name("Kh") == "Re di cuori"
        assert [category_name(c) for c in range(10)] == [
            "Carta alta",
            "Coppia",
            "Doppia coppia",
            "Tris",
            "Scala",
            "Colore",
            "Full",
            "Poker",
            "Scala colore",
            "Scala reale",
        ]
    with translation.override("en"):
        assert card_name("Qs") == "Queen of spades"
        assert category_name(9) == "Royal flush"
    with pytest.raises(KeyError):
        card_name("Xs")


def test_money_follows_the_language() -> None:
    assert format_minor(123456, "EUR", language="it") == "1.234,56 €"
    assert format_minor(123456, "EUR", language="en") == "1,234.56 EUR"
    assert format_minor(-123456789, "FUN", language="it") == "-1.234.567,89 FUN"
    assert format_minor(7, "", language="it") == "0,07"
    with translation.override("it"):
        assert format_minor(100000, "FUN") == "1.000,00 FUN"
    with translation.override("en"):
        assert format_minor(100000, "FUN") == "1,000.00 FUN"


def test_the_wallet_shows_the_balance_in_the_players_language(alice: User) -> None:
    client = logged_in(alice)
    english = client.get("/wallet/").content.decode()
    italian = client.get("/wallet/", headers=ITALIAN).content.decode()
    assert "1,000.00 FUN" in english
    assert "1.000,00 FUN" in italian and "1,000.00 FUN" not in italian


def test_a_refusal_is_translated_but_its_code_is_not(alice: User) -> None:
    error = InsufficientFundsError("FUN:alice holds 0.00 FUN, needs 5.00 FUN")
    with translation.override("it"):
        assert error.for_people() == "Il tuo saldo non è sufficiente."
    with translation.override("en"):
        assert error.for_people() == "FUN:alice holds 0.00 FUN, needs 5.00 FUN"
    assert error.code == "insufficient_funds"
    # On a page: the top-up refusal reads in Italian.
    response = logged_in(alice).post("/wallet/top-up/", follow=True, headers=ITALIAN)
    page = response.content.decode()
    assert "Ricarica rifiutata: Le fiches FUN si ricaricano solo quando il saldo è basso." in page


def test_an_api_error_keeps_its_stable_code_in_italian(alice: User) -> None:
    response = logged_in(alice).post(
        "/api/tables/999999/join/", data="{}", content_type="application/json", headers=ITALIAN
    )
    assert response.status_code == 404
    assert response.json()["code"] == "table_not_found"


def test_form_errors_are_italian() -> None:
    response = Client().post("/signup/", {"username": "", "password1": "x", "password2": "y"}, headers=ITALIAN)
    page = response.content.decode()
    assert "Campo obbligatorio." in page  # Django's own Italian catalog
    assert "Registrati" in page and "Crea il conto" in page


def test_the_rules_are_served_in_italian_and_the_fairness_page_says_it_is_english_only() -> None:
    italian = Client().get("/rules/", headers=ITALIAN).content.decode()
    assert "Come si gioca a WiderPoker" in italian and "Scala reale" in italian and "montepremi" in italian
    assert 'lang="it"' in italian and "document-language-note" not in italian
    english = Client().get("/rules/").content.decode()
    assert "How to play WiderPoker" in english
    fair = Client().get("/history/provably-fair/algorithm/", headers=ITALIAN).content.decode()
    assert "Questo documento è disponibile solo in inglese." in fair
    assert '<article class="document panel" data-testid="provably-fair" lang="en">' in fair


def test_the_table_page_speaks_italian(table: Table, alice: User) -> None:
    page = logged_in(alice).get(f"/tables/{table.pk}/", headers=ITALIAN).content.decode()
    assert "Probabilità" in page and "Siediti al tavolo" in page and "Montepremi" in page
    assert "Acquista draw" in page and "Classifica" in page
    details = Client().get(f"/tables/{table.pk}/details/", headers=ITALIAN).content.decode()
    assert "Tutte le condizioni di gioco di questo tavolo" in details
    assert "1,00 FUN" in details
