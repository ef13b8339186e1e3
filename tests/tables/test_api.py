"""The REST API end to end: lobby, play actions, errors with stable codes, wallet, history,
and the OpenAPI schema. Hands are dealt and settled with an injected clock."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.utils import timezone
from rest_framework.test import APIClient

from tables.models import Entry, Hand, HandStatus, Seat, SeatStatus, Table
from tests.helpers import create_fun_table, deal_hand, logged_in, settle
from wallet.models import Currency
from wallet.selectors import check_books, get_balance_minor

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_throttle_counters")]


def client_for(user: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def fun(user: User) -> int:
    return get_balance_minor(user_id=user.pk, currency=Currency.FUN)


def test_the_api_needs_a_logged_in_player(table: Table) -> None:
    response = APIClient().get("/api/tables/")
    assert response.status_code in (401, 403)
    assert response.json()["code"] == "not_authenticated"


def test_lobby_lists_tables_with_their_conditions(table: Table, alice: User) -> None:
    response = client_for(alice).get("/api/tables/")
    assert response.status_code == 200
    [row] = response.json()
    assert (row["id"], row["name"], row["ante_minor"], row["draw_price_minor"]) == (
        table.pk,
        "Test Rail",
        100,
        50,
    )
    assert row["phase"] == "waiting"


def test_unknown_table_answers_404_table_not_found(alice: User) -> None:
    client = client_for(alice)
    for response in (
        client.get("/api/tables/999999/"),
        client.get("/api/tables/999999/me/"),
        client.post("/api/tables/999999/join/"),
    ):
        assert response.status_code == 404
        assert response.json()["code"] == "table_not_found"


def test_joining_seats_the_player_and_answers_his_private_state(table: Table, alice: User) -> None:
    response = client_for(alice).post(f"/api/tables/{table.pk}/join/")
    assert response.status_code == 200
    body = response.json()
    assert body["type"] == "entry_state"
    assert body["seat"]["status"] == SeatStatus.ACTIVE
    assert body["balance_minor"] == fun(alice)
    assert body["entry"] is None
    assert Seat.objects.filter(table=table, user=alice, status=SeatStatus.ACTIVE).exists()


def test_sit_out_sit_in_and_leave_change_the_seat(table: Table, alice: User) -> None:
    client = client_for(alice)
    client.post(f"/api/tables/{table.pk}/join/")
    assert client.post(f"/api/tables/{table.pk}/sit-out/").json()["seat"]["status"] == (SeatStatus.SITTING_OUT)
    assert client.post(f"/api/tables/{table.pk}/sit-in/").json()["seat"]["status"] == (SeatStatus.ACTIVE)
    assert client.post(f"/api/tables/{table.pk}/leave/").json()["seat"]["status"] == (SeatStatus.LEFT)


def test_sitting_out_without_a_seat_is_409_not_seated(table: Table, carol: User) -> None:
    response = client_for(carol).post(f"/api/tables/{table.pk}/sit-out/")
    assert response.status_code == 409
    assert response.json()["code"] == "not_seated"


def test_a_player_holds_buys_a_draw_and_a_redeal_during_the_change_phase(table: Table, alice: User, bob: User) -> None:
    hand = deal_hand(table, [alice, bob], timezone.now())
    client = client_for(alice)
    balance = fun(alice)

    held = client.post(f"/api/tables/{table.pk}/hold/", {"hold": [True, False, True, False, False]}, format="json")
    assert held.status_code == 200, held.json()
    assert held.json()["entry"]["hold"] == [True, False, True, False, False]
    assert Entry.objects.get(hand=hand, user=alice).hold_mask == 0b00101

    bought = client.post(f"/api/tables/{table.pk}/draws/")
    assert bought.status_code == 200, bought.json()
    assert bought.json()["entry"]["draws_bought"] == 2
    assert fun(alice) == balance - 50

    before = Entry.objects.get(hand=hand, user=alice).combination
    redealt = client.post(f"/api/tables/{table.pk}/redeals/")
    assert redealt.status_code == 200, redealt.json()
    entry = Entry.objects.get(hand=hand, user=alice)
    assert entry.combination != before
    assert redealt.json()["entry"]["redeals_used"] == 1
    assert redealt.json()["entry"]["hold"] is None  # a redeal resets the hold
    assert fun(alice) == balance - 50 - 80
    assert check_books().ok


def test_a_bad_hold_is_400_invalid_and_changes_nothing(table: Table, alice: User, bob: User) -> None:
    hand = deal_hand(table, [alice, bob], timezone.now())
    client = client_for(alice)
    for body in ({"hold": [True, False]}, {"hold": "HHDDD"}, {}, {"hold": [1, 2, 3, 4, 5]}):
        response = client.post(f"/api/tables/{table.pk}/hold/", body, format="json")
        assert response.status_code == 400, body
        assert response.json()["code"] == "invalid_hold"
    assert Entry.objects.get(hand=hand, user=alice).hold_mask is None


def test_buying_a_draw_without_funds_is_409_and_charges_nothing(alice: User, bob: User) -> None:
    table = create_fun_table("High Draws", ante_minor=settings.FUN_SIGNUP_GRANT_MINOR - 1, draw_price_bps=100_000)
    hand = deal_hand(table, [alice, bob], timezone.now())
    balance = fun(alice)
    response = client_for(alice).post(f"/api/tables/{table.pk}/draws/")
    assert response.status_code == 409
    assert response.json()["code"] == "insufficient_funds"
    assert fun(alice) == balance
    assert Entry.objects.get(hand=hand, user=alice).draws_bought == 1
    assert check_books().ok


def test_actions_after_the_change_deadline_are_409_phase_closed(table: Table, alice: User, bob: User) -> None:
    deal_hand(table, [alice, bob], timezone.now() - timedelta(seconds=60))
    client = client_for(alice)
    balance = fun(alice)
    for path, body in (
        ("hold/", {"hold": [True] * 5}),
        ("draws/", None),
        ("redeals/", None),
    ):
        response = client.post(f"/api/tables/{table.pk}/{path}", body, format="json")
        assert response.status_code == 409, path
        assert response.json()["code"] == "phase_closed"
    assert fun(alice) == balance


def test_a_player_who_is_not_in_the_hand_gets_409_not_in_hand(
    table: Table, alice: User, bob: User, carol: User
) -> None:
    deal_hand(table, [alice, bob], timezone.now())
    response = client_for(carol).post(f"/api/tables/{table.pk}/draws/")
    assert response.status_code == 409
    assert response.json()["code"] == "not_in_hand"


SECRET_FIELDS = {"server_seed", "seed", "change_keys", "keys", "key"}


def _secrets_in(payload: Any, hand: Hand) -> list[str]:
    """The seed wherever it appears, and every non-null field that would carry a secret."""
    found = [hand.server_seed] if hand.server_seed in json.dumps(payload) else []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for name, value in node.items():
                if name in SECRET_FIELDS and value is not None:
                    found.append(name)
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(payload)
    return found


def test_seed_and_change_keys_never_leave_the_api_before_the_hand_is_over(table: Table, alice: User, bob: User) -> None:
    hand = deal_hand(table, [alice, bob], timezone.now())
    client = client_for(alice)
    responses = [
        client.get(f"/api/tables/{table.pk}/"),
        client.get(f"/api/tables/{table.pk}/me/"),
        client.get("/api/tables/"),
        client.get("/api/hands/"),
        client.get(f"/api/hands/{hand.pk}/"),
        client.get(f"/api/hands/{hand.pk}/entries/"),
        client.post(f"/api/tables/{table.pk}/draws/"),
    ]
    for response in responses:
        assert response.status_code == 200
        assert _secrets_in(response.json(), hand) == []
    detail = responses[4].json()
    assert detail["server_seed"] is None and detail["change_keys"] is None
    assert detail["commitment"] == hand.commitment
    assert detail["viewer_entry"]["player"] == "alice"
    assert [row["player"] for row in responses[5].json()["results"]] == ["alice"]


def test_the_seed_and_keys_are_revealed_once_the_hand_is_settled(table: Table, alice: User, bob: User) -> None:
    hand = deal_hand(table, [alice, bob], timezone.now() - timedelta(seconds=60))
    hand = settle(table)
    assert hand.status == HandStatus.SETTLED
    client = client_for(alice)
    public = client.get(f"/api/tables/{table.pk}/").json()["hand"]
    assert public["server_seed"] == hand.server_seed
    assert public["change_keys"] == hand.change_keys
    detail = client.get(f"/api/hands/{hand.pk}/").json()
    assert detail["server_seed"] == hand.server_seed
    assert detail["pool_minor"] == hand.pool_minor
    entries = client.get(f"/api/hands/{hand.pk}/entries/").json()
    assert entries["count"] == 2
    assert sorted(row["player"] for row in entries["results"]) == ["alice", "bob"]
    assert all(len(row["draws"]) == 5 for row in entries["results"])


def test_my_hands_lists_the_hands_played_with_place_and_net(table: Table, alice: User, bob: User, carol: User) -> None:
    deal_hand(table, [alice, bob], timezone.now() - timedelta(seconds=60))
    hand = settle(table)
    response = client_for(alice).get("/api/hands/")
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 1
    [row] = body["results"]
    entry = Entry.objects.get(hand=hand, user=alice)
    assert (row["hand_id"], row["place"], row["prize_minor"]) == (
        hand.pk,
        entry.place,
        entry.prize_minor,
    )
    assert row["net_minor"] == entry.prize_minor - entry.paid_minor
    assert row["category_label"]
    assert client_for(carol).get("/api/hands/").json()["count"] == 0


def test_a_stranger_cannot_read_someone_elses_hand(table: Table, alice: User, bob: User, carol: User) -> None:
    deal_hand(table, [alice, bob], timezone.now() - timedelta(seconds=60))
    hand = settle(table)
    client = client_for(carol)
    for path in (f"/api/hands/{hand.pk}/", f"/api/hands/{hand.pk}/entries/"):
        response = client.get(path)
        assert response.status_code == 404
        assert response.json()["code"] == "hand_not_found"


def test_wallet_shows_balances_and_a_paginated_statement(table: Table, alice: User, bob: User) -> None:
    deal_hand(table, [alice, bob], timezone.now())
    client = client_for(alice)
    client.post(f"/api/tables/{table.pk}/draws/")
    wallet = client.get("/api/wallet/").json()
    balances = {row["currency"]: row["balance_minor"] for row in wallet["balances"]}
    assert balances["FUN"] == fun(alice)
    statement = client.get("/api/wallet/transactions/?page_size=2").json()
    assert statement["count"] == 3  # sign-up grant, ante, draw
    assert [row["kind"] for row in statement["results"]] == ["draw", "ante"]
    assert statement["results"][0]["delta_minor"] == -50
    assert statement["results"][0]["balance_after_minor"] == fun(alice)
    assert statement["next"] is not None
    bad = client.get("/api/wallet/transactions/?currency=XYZ")
    assert bad.status_code == 400
    assert bad.json()["code"] == "invalid"


def test_fun_chips_top_up_only_when_low(alice: User) -> None:
    response = client_for(alice).post("/api/wallet/top-up/")
    assert response.status_code == 409
    assert response.json()["code"] == "top_up_refused"


def test_reading_the_table_notes_the_players_presence(table: Table, alice: User) -> None:
    client = client_for(alice)
    client.post(f"/api/tables/{table.pk}/join/")
    long_ago = timezone.now() - timedelta(hours=1)
    Seat.objects.filter(table=table, user=alice).update(last_seen_at=long_ago)
    client.get(f"/api/tables/{table.pk}/me/")
    assert Seat.objects.get(table=table, user=alice).last_seen_at > long_ago


def test_action_endpoints_are_rate_limited(
    table: Table, alice: User, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tables.api import ActionThrottle

    monkeypatch.setattr(ActionThrottle, "THROTTLE_RATES", {"action": "3/min"})
    client = client_for(alice)
    codes = [client.post(f"/api/tables/{table.pk}/join/").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    assert client.post(f"/api/tables/{table.pk}/join/").json()["code"] == "rate_limited"


def test_the_openapi_schema_generates_without_warnings_and_lists_the_endpoints(
    tmp_path: Any,
) -> None:
    out = tmp_path / "schema.json"
    call_command("spectacular", "--validate", "--fail-on-warn", "--format", "openapi-json", "--file", out)
    paths = json.loads(out.read_text())["paths"]
    for path in (
        "/api/tables/",
        "/api/tables/{table_id}/",
        "/api/tables/{table_id}/me/",
        "/api/tables/{table_id}/join/",
        "/api/tables/{table_id}/hold/",
        "/api/tables/{table_id}/draws/",
        "/api/tables/{table_id}/redeals/",
        "/api/wallet/",
        "/api/wallet/transactions/",
        "/api/wallet/top-up/",
        "/api/hands/",
        "/api/hands/{hand_id}/",
    ):
        assert path in paths, path
    assert "requestBody" in paths["/api/tables/{table_id}/hold/"]["post"]
    page = paths["/api/hands/"]["get"]["responses"]["200"]["content"]["application/json"]
    assert "Paginated" in page["schema"]["$ref"]


def test_an_auditor_reads_any_settled_hand_through_the_api(table: Table, alice: User, bob: User, auditor: User) -> None:
    deal_hand(table, [alice, bob], timezone.now() - timedelta(seconds=60))
    hand = settle(table)
    client = client_for(auditor)
    detail = client.get(f"/api/hands/{hand.pk}/").json()
    assert (detail["server_seed"], detail["viewer_entry"]) == (hand.server_seed, None)
    assert client.get(f"/api/hands/{hand.pk}/entries/").json()["count"] == 2


def test_the_api_docs_page_serves_swagger_ui_from_our_own_static_files(alice: User) -> None:
    page = logged_in(alice).get("/api/docs/").content.decode()
    assert "drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in page
    assert "cdn.jsdelivr.net" not in page  # works on a closed network
