"""Seed 003 rules through the doors players use (REST, socket): folding when checking is
free, the first button, the showdown choice to show or muck (docs/holdem.md)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from tables.clock import advance_table
from tables.engine.holdem import ActionKind, Phase
from tables.holdem import records as holdem_records
from tables.holdem.records import replay
from tables.holdem.selectors import get_holdem_private_frame, get_holdem_table_frame
from tables.holdem.services.deal import _seat_bot
from tables.models import HoldemConditions, HoldemHand, HoldemHandStatus, Seat
from tests.engine.holdem.helpers import stacked_deck
from tests.helpers import logged_in
from tests.tables.holdem_helpers import assert_books, assert_phh_replays, deal_now, holdem_table, run_until

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
    assert deal_now(table, timezone.now())
    state = replay(HoldemHand.objects.get(table=table))
    button = state.to_act  # heads-up the button posts the small blind and acts first
    assert button is not None
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
    # The sitting order is set, not left to the clock (on a loaded box Alice's join could be
    # stamped later than ``now + 1 s``).
    Seat.objects.filter(table=table, user=alice).update(joined_at=now)
    Seat.objects.filter(table=table, user=bob).update(joined_at=now + timedelta(seconds=1))
    Seat.objects.filter(table=table, user=carol).update(joined_at=now + timedelta(seconds=2))
    run_until(table, now, hands=2)
    buttons = [h.setup["button"] for h in HoldemHand.objects.filter(table=table).order_by("number")[:2]]
    assert buttons == [4, 1]
    assert_books(table)


def _stack_the_deck(monkeypatch: pytest.MonkeyPatch, holes: list[str], board: str) -> None:
    """Every hand of the test is dealt ``holes`` (dealing order) and ``board``."""
    deck = stacked_deck(holes, board)
    monkeypatch.setattr(holdem_records, "holdem_deck", lambda seed: deck)


def _check_down_to_the_showdown(table: Any, clients: dict[int, Any]) -> None:
    """The player to act calls or checks through REST until the hand reaches the showdown."""
    url = f"/api/tables/{table.pk}/holdem"
    for _ in range(12):
        state = replay(HoldemHand.objects.get(table=table))
        if state.phase is not Phase.BETTING:
            return
        kind = "check" if ActionKind.CHECK in state.legal_actions().kinds else "call"
        answer = _post(clients[state.to_act or 0], f"{url}/{kind}/")
        assert answer.status_code == 200, answer.json()
    raise AssertionError("no showdown")


@pytest.fixture
def showdown_table(monkeypatch: pytest.MonkeyPatch, alice: User, bob: User) -> tuple[Any, Any, Any]:
    """Heads-up, Alice on seat 0 and Bob on seat 1; the big blind (dealt first) gets aces,
    the button 7-2: checked down, the big blind shows first and the button loses."""
    _stack_the_deck(monkeypatch, ["AsAh", "7c2d"], "KsQd9h4c3s")
    table = holdem_table()
    a, b = logged_in(alice), logged_in(bob)
    url = f"/api/tables/{table.pk}/holdem"
    assert _post(a, f"{url}/join/", {"seat": 0, "buy_in_minor": 500}).status_code == 200
    assert _post(b, f"{url}/join/", {"seat": 1, "buy_in_minor": 500}).status_code == 200
    assert deal_now(table, timezone.now())
    _check_down_to_the_showdown(table, {0: a, 1: b})
    return table, a, b


def test_a_losing_player_chooses_to_show_his_cards(showdown_table: tuple[Any, Any, Any], alice: User) -> None:
    """Seed 003, Showdown: "the remaining players may/may not show their cards as they
    wish". Alice sat first, so she has the button (seat 0) and the losing 7-2."""
    table, a, _ = showdown_table
    hand = HoldemHand.objects.get(table=table)
    state = replay(hand)
    assert state.phase is Phase.SHOWDOWN and hand.status == HoldemHandStatus.PLAYING
    assert state.to_act == 0
    public = get_holdem_table_frame(table_id=table.pk, now=timezone.now())
    shown = {seat["seat"]: seat["shown"] for seat in public["seats"]}
    assert shown == {1: ["As", "Ah"], 0: None}  # Bob showed first, by the rules; Alice chooses
    assert public["hand"] is not None and public["hand"]["to_act"] == 0
    assert public["hand"]["time_bank_from"] is None
    legal = get_holdem_private_frame(table_id=table.pk, user_id=alice.pk, now=timezone.now())["legal"]
    assert legal is not None and legal["kinds"] == ["show", "muck"]
    answer = _post(a, f"/api/tables/{table.pk}/holdem/show/")
    assert answer.status_code == 200, answer.json()
    hand.refresh_from_db()
    assert hand.status == HoldemHandStatus.SETTLED
    assert hand.results["shown"] == {"1": ["As", "Ah"], "0": ["7c", "2d"]}
    assert [(e["kind"], e["seat"], e.get("auto", False)) for e in hand.actions[-2:]] == [
        ("show", 1, True),
        ("show", 0, False),
    ]
    assert_phh_replays(table)
    assert_books(table)


def test_a_losing_player_mucks_and_the_winner_cannot(showdown_table: tuple[Any, Any, Any]) -> None:
    """The first to show has no choice (Bob's show was played for him); Alice mucks and her
    cards are never shown."""
    table, a, b = showdown_table
    url = f"/api/tables/{table.pk}/holdem"
    refused = _post(b, f"{url}/muck/")
    assert refused.status_code == 409 and refused.json()["code"] == "not_your_turn"
    assert _post(a, f"{url}/muck/").status_code == 200
    hand = HoldemHand.objects.get(table=table)
    assert hand.status == HoldemHandStatus.SETTLED and hand.results["shown"] == {"1": ["As", "Ah"]}
    assert '"7c"' not in json.dumps(get_holdem_table_frame(table_id=table.pk, now=timezone.now()))
    assert_books(table)


def test_a_losing_player_who_does_not_choose_in_10_seconds_mucks(showdown_table: tuple[Any, Any, Any]) -> None:
    table, _, _ = showdown_table
    hand = HoldemHand.objects.get(table=table)
    table.refresh_from_db()
    assert table.phase_deadline is not None and hand.turn_started_at is not None
    assert table.phase_deadline == hand.turn_started_at + timedelta(seconds=10)  # no time bank
    advance_table(table_id=table.pk, now=table.phase_deadline + timedelta(milliseconds=1))
    hand.refresh_from_db()
    assert hand.status == HoldemHandStatus.SETTLED
    assert hand.results["shown"] == {"1": ["As", "Ah"]}
    assert {k: v for k, v in hand.actions[-1].items() if k != "at"} == {"kind": "muck", "seat": 0, "timeout": True}


def test_a_house_bot_seated_first_is_not_the_first_dealer(alice: User, bob: User) -> None:
    """Seed 003 gives the first button to the first *person* sitting down: a house bot
    seated before anyone (only a setup script does that) does not take it."""
    table = holdem_table(bot_seats=1)
    now = timezone.now()
    conditions = HoldemConditions.objects.get(table=table)
    _seat_bot(table, conditions, 0, now=now - timedelta(seconds=5))
    url = f"/api/tables/{table.pk}/holdem"
    for user, seat in ((alice, 4), (bob, 2)):
        assert _post(logged_in(user), f"{url}/join/", {"seat": seat, "buy_in_minor": 500}).status_code == 200
    Seat.objects.filter(table=table, user=bob).update(joined_at=now + timedelta(seconds=1))
    assert deal_now(table, now + timedelta(seconds=2))
    hand = HoldemHand.objects.get(table=table)
    assert hand.setup["button"] == 4 and 0 in replay(hand).seats
