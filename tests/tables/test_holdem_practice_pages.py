"""The practice game's pages: the setup form with its messages, the running game on the
Hold'em screen with the banner, the summary, the public leaderboard linked from the lobby."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from tables.models import PracticeGame, PracticeStatus, Seat, Table
from tests.tables.test_holdem_practice import run_game


def form_data(**items: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "nickname": "Ada",
        "players": 3,
        "max_hands": 2,
        "max_minutes": 30,
        "max_raises": 3,
        "currency_label": "chips",
        "action_seconds": 30,
        "betting": "pot-limit",
        "stakes": "standard",
        "show_probabilities": "on",
        "felt": "blue",
    }
    return values | items


def test_the_setup_form_explains_each_item_and_refuses_out_of_range_ones(client: Client, alice: User) -> None:
    client.force_login(alice)
    page = client.get(reverse("practice-setup"))
    assert page.status_code == 200
    text = page.content.decode()
    for word in (
        "giocatori",
        "mani",
        "durata",
        "rilanci",
        "moneta",
        "timer",
        "ante",
        "limite",
        "probabilità",
        "tavolo",
    ):
        assert word in text
    refused = client.post(reverse("practice-setup"), form_data(players=11, max_minutes=500))
    assert refused.status_code == 200
    assert "Select a valid choice" in refused.content.decode()
    assert "less than or equal to 240" in refused.content.decode()
    assert not PracticeGame.objects.exists()


def test_a_player_starts_plays_and_stops_a_practice_game(client: Client, alice: User) -> None:
    client.force_login(alice)
    started = client.post(reverse("practice-setup"), form_data())
    game = PracticeGame.objects.get()
    assert started.status_code == 302 and started["Location"] == reverse("practice-game", args=[game.pk])
    screen = client.get(started["Location"])
    assert screen.status_code == 200
    html = screen.content.decode()
    assert 'data-testid="practice-banner"' in html and 'data-testid="oval"' in html
    assert "practice-felt-blue" in html
    banner = client.get(reverse("practice-banner", args=[game.pk])).json()
    assert (banner["level"], banner["small_blind_minor"], banner["hands_left"]) == (1, 1_000, 2)
    assert Seat.objects.filter(table=game.table, user=alice).exists()
    stopped = client.post(reverse("practice-stop", args=[game.pk]))
    assert stopped["Location"] == reverse("practice-summary", args=[game.pk])
    summary = client.get(stopped["Location"]).content.decode()
    assert "The player left the game" in summary
    assert summary.count('data-testid="practice-result"') == 3
    game.refresh_from_db()
    assert game.status == PracticeStatus.FINISHED
    assert client.get(reverse("practice-game", args=[game.pk]))["Location"] == reverse(
        "practice-summary", args=[game.pk]
    )


def test_an_empty_nickname_watches_bots_and_the_leaderboard_is_public_and_linked(client: Client, alice: User) -> None:
    client.force_login(alice)
    client.post(reverse("practice-setup"), form_data(nickname="", max_hands=1))
    game = PracticeGame.objects.get()
    assert not game.interactive
    assert not Seat.objects.filter(table=game.table, is_bot=False).exists()
    run_game(game.table, game.started_at + timedelta(milliseconds=1))
    lobby = client.get(reverse("lobby")).content.decode()
    assert reverse("practice-leaderboard") in lobby and reverse("practice-setup") in lobby
    assert Table.objects.get(pk=game.table_id).name not in lobby
    client.logout()
    board = client.get(reverse("practice-leaderboard"))
    assert board.status_code == 200
    assert "No finished practice game yet." in board.content.decode()  # automatic games are not ranked
    assert client.get(reverse("practice-summary", args=[game.pk])).status_code == 200


def test_the_rest_api_starts_reads_stops_and_ranks_practice_games(client: Client, alice: User, bob: User) -> None:
    assert client.post("/api/practice/", {}, content_type="application/json").status_code in (401, 403)
    client.force_login(alice)
    refused = client.post("/api/practice/", {"players": 12}, content_type="application/json")
    assert refused.status_code == 400
    assert (refused.json()["code"], refused.json()["extra"]["field"]) == ("invalid_practice_setup", "players")
    cash = client.post("/api/practice/", {"currency": "EUR"}, content_type="application/json")
    assert (cash.status_code, cash.json()["code"]) == (400, "practice_fun_only")
    started = client.post("/api/practice/", {"nickname": "Ada", "players": 4}, content_type="application/json")
    assert started.status_code == 201
    body = started.json()
    assert (body["players"], body["players_left"], body["level"], body["status"]) == (4, 4, 1, "running")
    client.force_login(bob)
    not_his = client.post(f"/api/practice/{body['game_id']}/stop/")
    assert (not_his.status_code, not_his.json()["code"]) == (403, "practice_not_yours")
    client.logout()
    assert client.get(f"/api/practice/{body['game_id']}/").json()["nickname"] == "Ada"
    assert client.get("/api/practice/999999/").json()["code"] == "practice_not_found"
    client.force_login(alice)
    stopped = client.post(f"/api/practice/{body['game_id']}/stop/").json()
    assert (stopped["status"], stopped["end_reason"]) == ("finished", "abandoned")
    assert client.get("/api/practice/leaderboard/").json() == []


def test_the_practice_pages_and_the_holdem_screen_speak_italian(client: Client, alice: User) -> None:
    """docs/i18n.md: with the Italian cookie, the setup form, the running game's banner and
    Hold'em screen, and the summary are in Italian; data-testid values stay as they are."""
    client.cookies["django_language"] = "it"
    client.force_login(alice)
    setup = client.get(reverse("practice-setup")).content.decode()
    assert "Partita di allenamento BigHoldem" in setup and "Il tuo nome in classifica" in setup
    assert "standard (50 bui grandi)" in setup and "Players at the table" not in setup
    started = client.post(reverse("practice-setup"), form_data())
    screen = client.get(started["Location"]).content.decode()
    assert "Ada contro 2 bot" in screen and "Ferma la partita" in screen
    assert "Aspetta il buio grande" in screen and "Le tue carte" in screen
    assert 'data-testid="practice-stop"' in screen and "Stop the game" not in screen
    game = PracticeGame.objects.get()
    summary = client.post(reverse("practice-stop", args=[game.pk]), follow=True).content.decode()
    assert "Il giocatore ha lasciato la partita" in summary and "Media per mano" in summary
    assert "The player left the game" not in summary


def test_the_practice_currency_label_is_euro_by_default(client: Client, alice: User) -> None:
    """Seed 004, *moneta*: "per default Euro" — shown as "play €": the chips are always FUN."""
    client.force_login(alice)
    page = client.get(reverse("practice-setup")).content.decode()
    assert re.search(r'<option value="play-euro"[^>]*selected', page)
    started = client.post("/api/practice/", {"nickname": "Ada", "players": 2}, content_type="application/json")
    assert started.status_code == 201
    game = PracticeGame.objects.get(pk=started.json()["game_id"])
    assert game.currency_label == "play-euro" and game.table.currency == "FUN"


def test_the_practice_screen_uses_the_chosen_label_and_shows_no_wallet_buy_in_or_rake(
    client: Client, alice: User
) -> None:
    """UX audit 2026-11-26, N9 and N18: the currency label reached only the banner (blinds,
    stacks, pots, summary said FUN), and the screen showed the player's real FUN wallet and
    a buy-in and rake that mean nothing in a practice game."""
    client.force_login(alice)
    started = client.post(reverse("practice-setup"), form_data(currency_label="fiches", felt="red"))
    game = PracticeGame.objects.get()
    html = client.get(started["Location"]).content.decode()
    assert "practice-felt-red" in html and 'data-currency-label="fiches"' in html
    conditions = html.split('data-testid="conditions"', 1)[1].split("</p>", 1)[0]
    assert "Blinds 10.00 fiches / 20.00 fiches" in conditions
    assert "Buy-in" not in conditions and "Rake" not in conditions and "FUN" not in conditions
    assert '<div class="stat" hidden><dt>Wallet</dt>' in html
    banner = html.split('data-testid="practice-banner"', 1)[1].split("</section>", 1)[0]
    assert "FUN" not in banner and "10.00 fiches" in banner
    summary = client.post(reverse("practice-stop", args=[game.pk]), follow=True).content.decode()
    results = summary.split('data-testid="practice-result"', 1)[1]
    assert "fiches" in results and "FUN" not in results.split("</table>", 1)[0]


def test_a_real_holdem_table_still_shows_its_wallet_buy_in_and_rake(client: Client, alice: User) -> None:
    from tests.tables.holdem_helpers import holdem_table

    table = holdem_table()
    client.force_login(alice)
    html = client.get(reverse("table", args=[table.pk])).content.decode()
    conditions = html.split('data-testid="conditions"', 1)[1].split("</p>", 1)[0]
    assert "Buy-in 2.00 FUN to 20.00 FUN" in conditions and "Rake 5%" in conditions
    assert '<div class="stat"><dt>Wallet</dt>' in html
