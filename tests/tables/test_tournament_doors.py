"""Tournaments through the doors people use: a Croupier schedules and cancels one in the
admin; players register and unregister on the tournament page and the REST API, read the
countdown and their standing; an auditor downloads the export. docs/tournaments.md."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from tables.models import Table, TablePhase
from tables.realtime import bus
from tables.tournaments.models import Entrant, EntrantStatus, Tournament, TournamentState
from tests.helpers import logged_in
from tests.tables.tournament_helpers import BeatClock, funded_players, schedule
from wallet.models import Account, AccountKind
from wallet.selectors import check_books

pytestmark = pytest.mark.usefixtures("fresh_throttle_counters")

FORM = {
    "name": "Friday Wide",
    "mode": "fun",
    "currency": "FUN",
    "buy_in": "1.00",
    "fee": "0",
    "guaranteed": "50.00",
    "min_prize": "0",
    "starting_chips": "100",
    "redeal_price": "5",
    "paid_percent": "20",
    "hand_paid_percent": "15",
    "draw_percent": "50",
    "antes_text": "1: 10, 3: 20",
    "hands": "4",
    "duration_minutes": "",
    "change_seconds": "10",
    "results_seconds": "3",
    "max_draws": "5",
    "max_redeals": "2",
    "redeal_seconds": "10",
    "min_entrants": "2",
    "max_entrants": "500",
    "late_registration_hands": "0",
    "max_reentries": "0",
}


def _starts(minutes: int = 10) -> dict[str, str]:
    moment = timezone.localtime(timezone.now() + timedelta(minutes=minutes))
    return {"starts_at_0": moment.strftime("%Y-%m-%d"), "starts_at_1": moment.strftime("%H:%M:%S")}


@pytest.mark.django_db(transaction=True)
def test_a_croupier_schedules_and_cancels_a_tournament_in_the_admin(croupier: User) -> None:
    client = logged_in(croupier)
    assert client.get("/admin/tables/tournament/add/").status_code == 200
    refused = client.post("/admin/tables/tournament/add/", {**FORM, **_starts(), "antes_text": "2: 10"})
    assert refused.status_code == 200 and "levels start at hand 1" in refused.content.decode()
    assert not Tournament.objects.exists()
    response = client.post("/admin/tables/tournament/add/", {**FORM, **_starts()})
    assert response.status_code == 302, response.content.decode()[:2000]
    tournament = Tournament.objects.get()
    assert tournament.created_by == croupier
    assert tournament.antes == [{"from_hand": 1, "ante_minor": 1000}, {"from_hand": 3, "ante_minor": 2000}]
    assert (tournament.buy_in_minor, tournament.guaranteed_minor, tournament.starting_chips_minor) == (100, 5000, 10000)
    assert tournament.paid_fraction_bps == 2000 and tournament.draw_price_bps == 5000
    assert tournament.state == TournamentState.REGISTERING
    assert client.get("/admin/tables/tournament/").status_code == 200
    assert client.get(f"/admin/tables/tournament/{tournament.pk}/change/").status_code == 200

    (player,) = funded_players(1, currency="FUN", amount_minor=1000)
    player_client = logged_in(player)
    player_client.post(f"/tournaments/{tournament.pk}/register/")
    assert Account.objects.get(user=player, currency="FUN", kind=AccountKind.PLAYER).held_minor == 100

    data = {"action": "cancel_tournaments", "_selected_action": [tournament.pk]}
    asks = client.post("/admin/tables/tournament/", data)
    assert asks.status_code == 200 and "Reason" in asks.content.decode()
    done = client.post("/admin/tables/tournament/", {**data, "apply": "yes", "reason": "room closed"}, follow=True)
    assert "cancelled, every entry refunded" in done.content.decode()
    tournament.refresh_from_db()
    assert tournament.state == TournamentState.CANCELLED and tournament.cancelled_by == croupier
    assert Account.objects.get(user=player, currency="FUN", kind=AccountKind.PLAYER).held_minor == 0
    assert check_books().ok


@pytest.mark.django_db
def test_an_auditor_cannot_schedule(auditor: User) -> None:
    client = logged_in(auditor)
    assert client.get("/admin/tables/tournament/").status_code == 200
    assert client.post("/admin/tables/tournament/add/", {**FORM, **_starts()}).status_code == 403


@pytest.mark.django_db(transaction=True)
def test_players_register_and_unregister_on_the_page_and_the_api() -> None:
    now = timezone.now()
    tournament = schedule(now=now, starts_at=now + timedelta(minutes=5))
    alice, bob = funded_players(2, currency="EUR", amount_minor=5000, prefix="door")
    page = Client().get(f"/tournaments/{tournament.pk}/")
    assert page.status_code == 200 and "Log in to register" in page.content.decode()
    listing = Client().get("/tournaments/").content.decode()
    assert "Sunday Wide" in listing

    client = logged_in(alice)
    response = client.post(f"/tournaments/{tournament.pk}/register/", follow=True)
    body = response.content.decode()
    assert "You are registered" in body and 'data-testid="unregister"' in body
    assert 'data-starts-at="' in body
    again = client.post(f"/tournaments/{tournament.pk}/register/", follow=True).content.decode()
    assert "already registered" in again

    api = logged_in(bob)
    answer = api.post(f"/api/tournaments/{tournament.pk}/register/")
    assert answer.status_code == 201
    state = answer.json()
    assert state["entries"] == 2 and state["me"]["status"] == "registered" and state["seconds_to_start"] > 0
    assert api.post(f"/api/tournaments/{tournament.pk}/register/").json()["code"] == "already_registered"
    assert api.post(f"/api/tournaments/{tournament.pk}/unregister/").status_code == 200
    assert api.post(f"/api/tournaments/{tournament.pk}/unregister/").json()["code"] == "not_registered"
    assert Entrant.objects.get(user=bob).status == EntrantStatus.WITHDRAWN
    assert api.get("/api/tournaments/999999/").json()["code"] == "tournament_not_found"
    listed = api.get("/api/tournaments/").json()
    assert [row["id"] for row in listed] == [tournament.pk] and listed[0]["registered"] is False
    assert "/api/tournaments/{tournament_id}/register/" in api.get("/api/schema/?format=json").content.decode()


@pytest.mark.django_db(transaction=True)
def test_standings_between_hands_and_the_auditors_export(monkeypatch: pytest.MonkeyPatch, auditor: User) -> None:
    now = timezone.now()
    tournament = schedule(
        now=now,
        mode="fun",
        currency="FUN",
        fee_minor=0,
        hands=2,
        antes=[{"from_hand": 1, "ante_minor": 1000}],
    )
    players = funded_players(6, currency="FUN", amount_minor=5000, prefix="std")
    pushed: list[dict[str, Any]] = []
    monkeypatch.setattr(bus, "publish_table_frame", lambda table_id, text, **_: pushed.append(json.loads(text or "{}")))
    for player in players:
        logged_in(player).post(f"/api/tournaments/{tournament.pk}/register/")
    clock = BeatClock(monkeypatch, tournament.starts_at)
    clock.tick(0)
    assert tournament.table_id is not None
    while Table.objects.get(pk=tournament.table_id).phase != TablePhase.RESULTS:
        clock.tick()
    clock.tick(3)  # the standings after hand 1, and hand 2 dealt
    state: dict[str, Any] = logged_in(players[0]).get(f"/tournaments/{tournament.pk}/state.json").json()
    assert state["state"] == "running" and state["standings_after_hand"] == 1
    assert len(state["standings"]) == 6 and state["standings"][0]["rank"] == 1
    assert state["me"]["chips_minor"] == Entrant.objects.get(user=players[0]).chips_minor
    assert state["paid_places"] >= 1 and state["players_left"] == 6
    # The socket frame between hands (docs/protocol.md, tournament_standings).
    (frame,) = [item for item in pushed if item.get("type") == "tournament_standings"]
    assert frame["hand"] == 1 and frame["players_left"] == 6 and frame["table_id"] == tournament.table_id
    assert [row["chips_minor"] for row in frame["top"]] == [row["chips_minor"] for row in state["standings"][:6]]
    assert frame["url"] == f"/tournaments/{tournament.pk}/"
    page = logged_in(players[0]).get(f"/tournaments/{tournament.pk}/").content.decode()
    assert 'data-testid="standing-row"' in page and 'data-testid="my-rank"' in page
    for _ in clock.run_until_over(tournament.pk):
        pass
    export = logged_in(auditor).get(f"/tournaments/{tournament.pk}/export.json")
    assert export["Content-Disposition"].startswith("attachment")
    data = json.loads(export.content)
    assert data["schema"] == "widerpoker-tournament/1"
    assert [row["hand"] for row in data["rounds"]] == [1, 2]
    assert all(row["hand_id"] for row in data["rounds"])
    assert (
        sum(entry["prize_minor"] for entry in data["entrants"]) + data["tournament"]["results"]["breakage_minor"]
        == data["tournament"]["prize_pool_minor"]
    )
    finished = Client().get(f"/tournaments/{tournament.pk}/").content.decode()
    assert 'data-testid="result-row"' in finished
    assert logged_in(auditor).get(f"/api/tournaments/{tournament.pk}/export/").json()["schema"] == data["schema"]


@pytest.mark.django_db(transaction=True)
def test_a_tournament_table_has_no_leave_sit_out_stops_the_deal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Leaving would not stop a tournament's deal and the table is closed to the lobby, so
    Leave is not offered there and refused with ``tournament_leave`` through every door;
    Sit out is the way to stop (docs/tournaments.md)."""
    from tables.models import Seat, SeatStatus
    from tests.tables.test_bad_input import socket_codes

    now = timezone.now()
    tournament = schedule(
        now=now, mode="fun", currency="FUN", fee_minor=0, antes=[{"from_hand": 1, "ante_minor": 1000}]
    )
    alice, bob, carol = funded_players(3, currency="FUN", amount_minor=5000, prefix="lv")
    for player in (alice, bob, carol):
        logged_in(player).post(f"/api/tournaments/{tournament.pk}/register/")
    BeatClock(monkeypatch, tournament.starts_at).tick(0)
    tournament.refresh_from_db()
    table_id = tournament.table_id
    assert table_id is not None and Seat.objects.filter(table_id=table_id, status=SeatStatus.ACTIVE).count() == 3

    client = logged_in(alice)
    page = client.get(f"/tables/{table_id}/").content.decode()
    assert 'data-testid="sit-out"' in page and 'data-testid="leave"' not in page
    assert '"tournament": true' in page  # the reality check's Leave sits him out there
    answer = client.post(f"/api/tables/{table_id}/leave/")
    assert (answer.status_code, answer.json()["code"]) == (409, "tournament_leave")
    assert "Sit out" in answer.json()["message"] or "sit_out" in answer.json()["message"]
    table = Table.objects.get(pk=table_id)
    assert socket_codes(bob, table, ['{"type": "leave"}']) == ["tournament_leave"]
    form = client.post(f"/tables/{table_id}/seat/leave/", follow=True)
    assert "use sit_out" in form.content.decode() or "Sit out" in form.content.decode()
    assert Seat.objects.filter(table_id=table_id, status=SeatStatus.ACTIVE).count() == 3
    # Italian: the refusal's summary, the stable code unchanged.
    italian = client.post(f"/api/tables/{table_id}/leave/", HTTP_ACCEPT_LANGUAGE="it")
    assert italian.json()["code"] == "tournament_leave" and "Non puoi lasciare" in italian.json()["message"]

    assert client.post(f"/api/tables/{table_id}/sit-out/").status_code == 200
    assert Seat.objects.get(table_id=table_id, user=alice).status == SeatStatus.SITTING_OUT
