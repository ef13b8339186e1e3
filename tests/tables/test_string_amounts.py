"""Amounts are JSON numbers over JSON and the socket; only HTML forms send text (security
audit 2026-11-26, L6: ``{"amount": "300"}`` was accepted as 300 over REST and the socket).
A string amount gets the stable code of a bad amount, ``invalid_field``, and changes
nothing; the no-JavaScript form and a form-encoded REST body still work."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from tables.models import Seat
from tests.helpers import logged_in
from tests.tables.holdem_helpers import holdem_table
from tests.tables.test_bad_input import socket_codes
from wallet.selectors import get_balance_minor

pytestmark = pytest.mark.usefixtures("fresh_throttle_counters")


@pytest.mark.django_db(transaction=True)
def test_a_string_amount_is_refused_over_rest_and_the_socket(alice: User) -> None:
    table = holdem_table()
    before = get_balance_minor(user_id=alice.pk, currency="FUN")
    url = reverse("api:table-holdem", args=[table.pk, "join"])
    bodies = [
        {"seat": 0, "buy_in_minor": "1000", "blind": "wait"},
        {"seat": "0", "buy_in_minor": 1000, "blind": "wait"},
    ]
    client = logged_in(alice)
    rest = []
    for body in bodies:
        response = client.post(url, body, content_type="application/json")
        rest.append((response.status_code, response.json()["code"]))
    assert rest == [(400, "invalid_field")] * 2
    frames = [json.dumps({"type": "join", **body}) for body in bodies]
    assert socket_codes(alice, table, frames) == ["invalid_field"] * 2
    assert not Seat.objects.filter(table=table, user=alice).exists()
    assert get_balance_minor(user_id=alice.pk, currency="FUN") == before


@pytest.mark.django_db(transaction=True)
def test_the_html_form_and_a_form_encoded_body_still_send_amounts_as_text(alice: User, bob: User) -> None:
    table = holdem_table()
    page = logged_in(alice).post(
        reverse("table-seat", args=[table.pk, "join"]), {"seat": "0", "buy_in_minor": "1000", "blind": "wait"}
    )
    assert page.status_code == 302
    assert Seat.objects.get(table=table, user=alice).stack_minor == 1000
    response = logged_in(bob).post(
        reverse("api:table-holdem", args=[table.pk, "join"]), {"seat": "1", "buy_in_minor": "500", "blind": "wait"}
    )
    assert response.status_code == 200, response.content
    assert Seat.objects.get(table=table, user=bob).stack_minor == 500


@pytest.mark.django_db(transaction=True)
def test_a_string_bet_is_refused_and_a_json_free_flag_must_be_a_boolean(alice: User) -> None:
    from tests.helpers import create_fun_table

    table = holdem_table(name="Bet Rail")
    client = logged_in(alice)
    response = client.post(
        reverse("api:table-holdem", args=[table.pk, "raise"]), {"amount": "300"}, content_type="application/json"
    )
    assert (response.status_code, response.json()["code"]) == (400, "invalid_field")
    widerpoker = create_fun_table()
    draws = reverse("api:table-draws", args=[widerpoker.pk])
    response = client.post(draws, {"free": "true"}, content_type="application/json")
    assert (response.status_code, response.json()["code"]) == (400, "invalid_field")
