"""The lobby page and its JSON fallback list every table with its conditions."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tables.models import Table
from tables.widerpoker.services.create import create_table
from tests.helpers import create_fun_table, deal_hand, logged_in

pytestmark = pytest.mark.django_db


def test_lobby_lists_every_table_with_its_conditions(client: Client) -> None:
    table = create_fun_table("Rail Test")
    create_table(
        name="Euro Night",
        mode="cash",
        currency="EUR",
        ante_minor=250,
        draw_price_bps=4000,
        redeal_price_minor=200,
        rake_bps=250,
        change_seconds=60,
    )
    page = client.get("/")
    assert page.status_code == 200
    html = page.content.decode()
    assert {row["name"] for row in page.context["tables"]} == {"Rail Test", "Euro Night"}
    assert "Rail Test" in html and f'href="/tables/{table.pk}/"' in html
    assert "1.00 FUN" in html and "2.50 EUR" in html
    assert "5%" in html and "2.5%" in html
    assert "fast · 30 s" in html and "normal · 60 s" in html


def test_lobby_json_shows_players_and_the_live_prize_pool(
    client: Client, table: Table, alice: User, bob: User, now: datetime
) -> None:
    before = client.get("/lobby/tables.json").json()["tables"]
    assert before[0]["players"] == 0 and before[0]["pool_minor"] is None
    deal_hand(table, [alice, bob], now)
    line = client.get("/lobby/tables.json").json()["tables"][0]
    assert line["id"] == table.pk
    assert line["players"] == 2
    assert line["phase"] == "change"
    assert line["pool_minor"] == 200 - 200 * 500 // 10_000  # two antes less the 5% rake
    assert "1.90 FUN" in client.get("/").content.decode()


def test_the_rules_page_renders_docs_rules_md_for_anyone(client: Client) -> None:
    page = client.get("/rules/").content.decode()
    assert "<h1" in page and "How to play WiderPoker" in page
    assert "<table>" in page or '<table tabindex="0">' in page
    assert '<pre tabindex="0"><code>' in page
    assert 'href="/responsible-gaming/"' in page and 'href="/rules/"' in page


def test_the_admin_pages_carry_the_sites_favicon(croupier: User) -> None:
    page = logged_in(croupier).get("/admin/").content.decode()
    assert 'rel="icon"' in page


def test_the_logged_out_sign_up_button_is_a_primary_button(db: None) -> None:
    page = Client().get("/").content.decode()
    assert 'class="button button-small button-primary" href="/signup/"' in page
