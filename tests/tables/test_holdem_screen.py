"""The Hold'em game screen: the table's URL serves it for a Hold'em table (and the
WiderPoker screen otherwise), with the two frames embedded and only the caller's cards."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from tables.engine.cards import card_code
from tables.holdem.lobby import stakes_label
from tables.holdem.services import replay, take_seat
from tables.models import HoldemHand, Table
from tests.helpers import create_fun_table, logged_in
from tests.tables.holdem_helpers import holdem_table, tick

pytestmark = pytest.mark.django_db


@pytest.fixture
def table(db: Any) -> Table:
    return holdem_table()


def _boot(html: str) -> dict[str, Any]:
    found = re.search(r'<script id="holdem-boot" type="application/json">(.*?)</script>', html, re.S)
    assert found is not None, "the page embeds no Hold'em boot data"
    return dict(json.loads(found.group(1)))


def test_a_holdem_table_url_serves_the_holdem_screen_with_both_frames(table: Table, alice: User) -> None:
    response = logged_in(alice).get(f"/tables/{table.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "js/holdem.js" in html and "js/table.js" not in html
    boot = _boot(html)
    assert boot["table"]["type"] == "holdem_state" and boot["table"]["table_id"] == table.pk
    assert boot["private"]["type"] == "holdem_private" and boot["private"]["seat"] is None
    assert boot["urls"]["snapshot"] == f"/tables/{table.pk}/snapshot.json"
    assert 'data-testid="take-seat' not in html  # the seats are drawn by holdem.js from the frame


def test_a_widerpoker_table_url_still_serves_the_widerpoker_screen(alice: User) -> None:
    wider = create_fun_table()
    html = logged_in(alice).get(f"/tables/{wider.pk}/").content.decode()
    assert "js/table.js" in html and "holdem-boot" not in html


def test_a_missing_table_is_a_404(alice: User) -> None:
    assert logged_in(alice).get("/tables/999999/").status_code == 404


def test_the_page_carries_the_callers_cards_only(table: Table, alice: User, bob: User, carol: User) -> None:
    now = timezone.now()
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    take_seat(table_id=table.pk, user_id=bob.pk, position=3, buy_in_minor=1_000, now=now)
    tick(table, now + timedelta(milliseconds=1))
    state = replay(HoldemHand.objects.get(table=table))
    alice_cards = [card_code(c) for c in state.holes[state.seats.index(0)]]
    bob_cards = [card_code(c) for c in state.holes[state.seats.index(3)]]
    boot = _boot(logged_in(alice).get(f"/tables/{table.pk}/").content.decode())
    assert boot["private"]["hole"] == alice_cards
    page = json.dumps(boot)
    assert all(f'"{code}"' not in page for code in bob_cards if code not in alice_cards)
    watcher = _boot(logged_in(carol).get(f"/tables/{table.pk}/").content.decode())
    assert watcher["private"]["hole"] is None
    assert all(seat["shown"] is None for seat in watcher["table"]["seats"])


def test_the_stakes_read_as_poker_rooms_write_them() -> None:
    base = {"small_blind_minor": 50, "big_blind_minor": 100, "big_bet_minor": 200}
    assert stakes_label({**base, "betting": "no-limit"}) == "NL 0.50/1"
    assert stakes_label({**base, "betting": "pot-limit", "small_blind_minor": 5}) == "PL 0.05/1"
    assert stakes_label({**base, "betting": "fixed-limit"}) == "FL 1/2"


def test_the_lobby_lists_holdem_tables_with_stakes_seats_and_buy_in(table: Table, alice: User, client: Any) -> None:
    create_fun_table()
    take_seat(table_id=table.pk, user_id=alice.pk, position=2, buy_in_minor=500, now=timezone.now())
    page = client.get("/")
    assert all(row["game"] != "holdem" for row in page.context["tables"])
    [row] = page.context["holdem_tables"]
    assert (row["stakes"], row["seats_taken"], row["seats"]) == ("NL 0.05/0.10", 1, 6)
    html = page.content.decode()
    assert 'data-testid="holdem-row"' in html and "2.00 FUN to 20.00 FUN" in html and ">1/6<" in html
    body = client.get("/lobby/tables.json").json()
    assert body["holdem_tables"][0]["seats_taken"] == 1 and body["holdem_tables"][0]["stakes"] == "NL 0.05/0.10"
