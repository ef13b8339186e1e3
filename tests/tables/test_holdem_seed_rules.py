"""Seed 003 rules through the doors players use (REST, socket): folding when checking is
free, the first button, the showdown choice to show or muck (docs/holdem.md)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from tables import services
from tables.holdem_records import replay
from tables.holdem_selectors import get_holdem_private_frame
from tables.models import HoldemHand, HoldemHandStatus, Seat
from tests.helpers import logged_in
from tests.tables.holdem_helpers import assert_books, holdem_table, run_until

pytestmark = pytest.mark.django_db


def _post(client: Any, url: str, body: dict[str, Any] | None = None) -> Any:
    return client.post(url, body or {}, content_type="application/json")


def test_the_big_blind_may_fold_when_checking_is_free(alice: User, bob: User) -> None:
    """Seed 003, Some standard rules: "Folding can be done at any stage of the game"."""
    table = holdem_table()
    a, b = logged_in(alice), logged_in(bob)
    url = f"/api/tables/{table.pk}/holdem"
    assert _post(a, f"{url}/join/", {"seat": 0, "buy_in_minor": 500}).status_code == 200
    assert _post(b, f"{url}/join/", {"seat": 1, "buy_in_minor": 500}).status_code == 200
    services.advance_table(table_id=table.pk, now=timezone.now())
    state = replay(HoldemHand.objects.get(table=table))
    button = state.to_act  # heads-up the button posts the small blind and acts first
    first, second = (a, b) if button == 0 else (b, a)
    assert _post(first, f"{url}/call/").status_code == 200
    second_user = bob if first is a else alice
    legal = get_holdem_private_frame(table_id=table.pk, user_id=second_user.pk, now=timezone.now())["legal"]
    assert legal is not None and {"fold", "check"} <= set(legal["kinds"]) and legal["call_minor"] == 0
    folded = _post(second, f"{url}/fold/")
    assert folded.status_code == 200, folded.json()
    hand = HoldemHand.objects.get(table=table)
    assert hand.status == HoldemHandStatus.SETTLED
    assert [entry["kind"] for entry in hand.actions] == ["call", "fold"]
    big_blind = 1 - button
    assert hand.results["finishing_stacks"] == {str(button): 510, str(big_blind): 490}
    assert_books(table)


def test_a_fresh_tables_first_button_is_the_first_player_who_sat_down(alice: User, bob: User, carol: User) -> None:
    """Seed 003, The First round: "A fresh table starts of with the first person sitting on
    the table becoming the dealer"; then the button moves clockwise (audit probe P4)."""
    table = holdem_table()
    now = timezone.now()
    url = f"/api/tables/{table.pk}/holdem"
    for user, seat in ((alice, 4), (bob, 1), (carol, 2)):  # Alice first, at the highest seat
        assert _post(logged_in(user), f"{url}/join/", {"seat": seat, "buy_in_minor": 500}).status_code == 200
    Seat.objects.filter(table=table, user=bob).update(joined_at=now + timedelta(seconds=1))
    Seat.objects.filter(table=table, user=carol).update(joined_at=now + timedelta(seconds=2))
    run_until(table, now, hands=2)
    buttons = [h.setup["button"] for h in HoldemHand.objects.filter(table=table).order_by("number")[:2]]
    assert buttons == [4, 1]
    assert_books(table)
