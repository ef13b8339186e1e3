"""The hand-history pages and the JSON export: who may see what, and when secrets appear."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from handhistory import views
from tables.models import Entry, Hand, Table
from tests.helpers import behind_the_apps_back, deal_hand, logged_in

pytestmark = pytest.mark.django_db


def test_my_hands_lists_each_hand_with_final_hand_place_and_prize(settled_hand: Hand, alice: User) -> None:
    entry = Entry.objects.get(hand=settled_hand, user=alice)
    response = logged_in(alice).get("/history/")
    assert response.status_code == 200
    page = response.content.decode()
    assert f"/history/hands/{settled_hand.pk}/" in page
    assert "Test Rail" in page
    rows = response.context["rows"]
    assert [(row.hand_id, row.place, row.prize_minor) for row in rows] == [
        (settled_hand.pk, entry.place, entry.prize_minor)
    ]
    assert rows[0].category_label in page


def test_the_hand_page_shows_the_revealed_seed_keys_board_and_a_passing_verification(
    settled_hand: Hand, alice: User
) -> None:
    response = logged_in(alice).get(f"/history/hands/{settled_hand.pk}/")
    assert response.status_code == 200
    page = response.content.decode()
    assert settled_hand.server_seed in page
    assert settled_hand.commitment in page
    assert settled_hand.change_keys is not None
    assert "".join(str(d) for d in settled_hand.change_keys[0]) in page
    assert settled_hand.board["columns"][4][9] in page
    assert response.context["report"].ok
    assert "Verified" in page
    assert len(response.context["entries"]) == 2
    assert "/history/provably-fair/" in page
    assert f"/history/hands/{settled_hand.pk}/export.json" in page


def test_a_running_hand_page_shows_the_commitment_but_never_the_seed(
    fun_table: Table, alice: User, bob: User, base: datetime
) -> None:
    hand = deal_hand(fun_table, [alice, bob], base)
    response = logged_in(alice).get(f"/history/hands/{hand.pk}/")
    assert response.status_code == 200
    page = response.content.decode()
    assert hand.commitment in page
    assert hand.server_seed not in page
    assert "secret until the hand is over" in page
    assert response.context["report"] is None
    assert response.context["entries"] == []  # others' entries stay hidden while it runs


def test_a_tampered_hand_shows_its_mismatches(settled_hand: Hand, alice: User) -> None:
    with behind_the_apps_back():
        Entry.objects.filter(hand=settled_hand, user=alice).update(place=99)
    page = logged_in(alice).get(f"/history/hands/{settled_hand.pk}/").content.decode()
    assert "mismatch" in page and "place is 99" in page


def test_a_stranger_gets_404_for_the_hand_page_and_its_export(settled_hand: Hand, carol: User) -> None:
    client = logged_in(carol)
    assert client.get(f"/history/hands/{settled_hand.pk}/").status_code == 404
    assert client.get(f"/history/hands/{settled_hand.pk}/export.json").status_code == 404


def test_an_auditor_sees_any_hand_and_exports_it(settled_hand: Hand, auditor: User) -> None:
    client = logged_in(auditor)
    assert client.get(f"/history/hands/{settled_hand.pk}/").status_code == 200
    response = client.get(f"/history/hands/{settled_hand.pk}/export.json")
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    data = response.json()
    assert data["hand"]["server_seed"] == settled_hand.server_seed
    assert data["hand"]["change_keys"] == settled_hand.change_keys
    assert sorted(row["player"] for row in data["entries"]) == ["alice", "bob"]
    (bob_row,) = [row for row in data["entries"] if row["player"] == "bob"]
    assert bob_row["redeals"] == Entry.objects.get(hand=settled_hand, user__username="bob").redeals


def test_a_players_own_hand_can_be_exported(settled_hand: Hand, bob: User) -> None:
    assert logged_in(bob).get(f"/history/hands/{settled_hand.pk}/export.json").status_code == 200


def test_a_running_hand_cannot_be_exported_even_by_an_auditor(
    fun_table: Table, alice: User, bob: User, auditor: User, base: datetime
) -> None:
    hand = deal_hand(fun_table, [alice, bob], base)
    for user in (alice, auditor):
        response = logged_in(user).get(f"/history/hands/{hand.pk}/export.json")
        assert response.status_code == 404
        assert hand.server_seed not in response.content.decode()


def test_entries_are_paginated(settled_hand: Hand, alice: User, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(views, "ENTRIES_PER_PAGE", 1)
    client = logged_in(alice)
    first = client.get(f"/history/hands/{settled_hand.pk}/").context
    second = client.get(f"/history/hands/{settled_hand.pk}/?page=2").context
    assert first["page"].paginator.num_pages == 2
    players = [first["entries"][0].player, second["entries"][0].player]
    assert sorted(players) == ["alice", "bob"]


def test_the_history_needs_a_logged_in_player(settled_hand: Hand) -> None:
    for url in ("/history/", f"/history/hands/{settled_hand.pk}/"):
        response = Client().get(url)
        assert response.status_code == 302
        assert "/login/" in response["Location"]


def test_the_provably_fair_document_is_served_from_the_docs(alice: User) -> None:
    response = logged_in(alice).get("/history/provably-fair/algorithm/")
    assert response.status_code == 200
    assert "SHA-256" in response.content.decode()


def test_the_hand_page_draws_every_board_card_as_a_named_card_face(settled_hand: Hand, alice: User) -> None:
    from handhistory.templatetags.handhistory_tags import card_name

    page = logged_in(alice).get(f"/history/hands/{settled_hand.pk}/").content.decode()
    for column in settled_hand.board["columns"]:
        for code in column:
            assert f'src="/static/cards/mini/{code}.svg" alt="{card_name(code)}"' in page
    assert (Path(__file__).resolve().parents[2] / "static" / "cards" / "mini" / "Th.svg").read_text().count(
        "10 of hearts"
    ) == 2


def test_the_provably_fair_document_is_rendered_with_its_tables_and_code(alice: User) -> None:
    page = logged_in(alice).get("/history/provably-fair/algorithm/").content.decode()
    assert '<table tabindex="0">' in page and '<pre tabindex="0"><code' in page and "<h1" in page
    assert "```" not in page and "\n| " not in page


def test_markdown_shows_raw_html_as_text_and_drops_unsafe_links() -> None:
    from handhistory.documents import render_markdown

    html = render_markdown(
        '<img src=x onerror="alert(1)">\n\n[click](javascript:alert(1)) [ok](https://example.org) [doc](engine.md)'
    )
    assert "<img" not in html and "&lt;img" in html
    assert "javascript:" not in html
    assert 'href="https://example.org"' in html and 'href="engine.md"' in html
