"""Special hands (seed 001, D; DESIGN item 16): schedules staff edit with a reason, applied to
exactly the scheduled hands, announced, refused when they never fire or overlap."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from config.infra.errors import DomainError
from tables.clock import advance_table
from tables.engine.widerpoker import special_hand_draw
from tables.errors import InvalidTableConfigError
from tables.models import Hand, SpecialHandSchedule, Table, TableConfigChange
from tables.selectors import get_lobby_table
from tables.services.seating import touch_presence
from tables.widerpoker.selectors import get_entry_state, get_table_state
from tables.widerpoker.services.play import buy_draw, buy_redeal
from tables.widerpoker.services.special import ScheduleInput, save_schedule
from tests.helpers import create_fun_table, deal, logged_in, seat_players, settle

pytestmark = pytest.mark.django_db

TURBO = {"tips": False, "max_draws": 2, "change_seconds": 10}


def schedule(table: Table, staff: User, now: datetime, **fields: Any) -> SpecialHandSchedule:
    return save_schedule(
        table_id=table.pk,
        schedule=ScheduleInput(**{"name": "Turbo", "kind": "every_n", "every_n": 3, "overrides": TURBO, **fields}),
        staff_user_id=staff.pk,
        reason="weekend promotion",
        now=now,
    )


def play_hands(table: Table, players: list[User], count: int, start: datetime) -> list[Hand]:
    """Seat ``players`` and play ``count`` hands back to back through the clock (the results
    phase's end deals the next hand); the players stay connected throughout."""
    seat_players(table, players, start)
    hands = [deal(table, start)]
    while len(hands) < count:
        settle(table)
        table.refresh_from_db()
        at = table.phase_deadline
        assert at is not None
        for user in players:
            touch_presence(table_id=table.pk, user_id=user.pk, now=at)
        assert advance_table(table_id=table.pk, now=at)
        table.refresh_from_db()
        assert table.current_hand is not None
        hands.append(table.current_hand)
    return hands


def test_a_special_hand_applies_its_overrides_to_exactly_the_scheduled_hands(
    table: Table, croupier: User, alice: User, bob: User, now: datetime
) -> None:
    schedule(table, croupier, now)
    hands = [Hand.objects.get(pk=h.pk) for h in play_hands(table, [alice, bob], 7, now)]
    special = [h.number for h in hands if h.config.get("overrides")]
    assert special == [3, 6]
    for hand in hands:
        if hand.number in (3, 6):
            assert hand.config["tips"] is False and hand.config["max_draws"] == 2
            assert hand.config["special"] == ["Turbo"]
            assert (hand.change_deadline - hand.started_at) == timedelta(seconds=10)
            assert hand.config["overrides"]["max_draws"] == {"value": 2, "source": "special", "was": 5}
        else:
            assert hand.config["tips"] is True and hand.config["max_draws"] == table.widerpoker.max_draws


def test_the_server_refuses_what_the_special_hand_switches_off(
    table: Table, croupier: User, alice: User, bob: User, now: datetime
) -> None:
    schedule(table, croupier, now, every_n=2, overrides={"tips": False, "max_draws": 1, "max_redeals": 0})
    hand = play_hands(table, [alice, bob], 2, now)[-1]
    assert hand.number == 2 and hand.config["max_draws"] == 1
    entry = get_entry_state(table_id=table.pk, user_id=alice.pk)["entry"]
    assert entry is not None
    assert entry["panel"]["tip1"] is None and entry["panel"]["tip2"] is None
    with pytest.raises(DomainError) as refused:
        buy_draw(table_id=table.pk, user_id=alice.pk, now=hand.started_at)
    assert refused.value.code == "limit_reached"
    with pytest.raises(DomainError):
        buy_redeal(table_id=table.pk, user_id=alice.pk, now=hand.started_at)
    public = get_table_state(table_id=table.pk)["hand"]
    assert public is not None and public["overrides"]["tips"]["source"] == "special"


def test_the_lobby_announces_the_next_special_hand(table: Table, croupier: User, alice: User, now: datetime) -> None:
    schedule(table, croupier, now)
    line = get_lobby_table(table_id=table.pk)
    assert line["next_special"].startswith("Turbo in 3 hands (hand #3): no tips")
    assert "Special: Turbo" in logged_in(alice).get("/").content.decode()


def test_schedules_that_never_fire_or_overlap_are_refused_and_change_nothing(
    table: Table, croupier: User, now: datetime
) -> None:
    bad: list[dict[str, Any]] = [
        {"every_n": 1},
        {"kind": "times", "times": ()},
        {"kind": "times", "times": ("25:00",)},
        {"kind": "chance", "one_in": 1},
        {"overrides": {}},
        {"overrides": {"rake_bps": 0}},
        {"overrides": {"max_draws": 9}},
        {"overrides": {"tips": "no"}},
    ]
    for fields in bad:
        with pytest.raises(InvalidTableConfigError):
            schedule(table, croupier, now, **fields)
    assert not SpecialHandSchedule.objects.exists() and not TableConfigChange.objects.exists()
    schedule(table, croupier, now)
    with pytest.raises(InvalidTableConfigError, match="overlaps"):
        schedule(table, croupier, now, every_n=5, overrides={"panel": False})
    with pytest.raises(InvalidTableConfigError, match="also changes tips"):
        schedule(table, croupier, now, kind="chance", one_in=10, overrides={"tips": False})
    schedule(table, croupier, now, kind="chance", one_in=10, overrides={"panel": False})
    change = TableConfigChange.objects.filter(field__startswith="special_hand:").first()
    assert change is not None and change.reason == "weekend promotion" and change.changed_by == croupier


def test_chance_special_hands_come_from_the_hands_stream(
    croupier: User, alice: User, bob: User, now: datetime, monkeypatch: Any
) -> None:
    table = create_fun_table(name="Chance Rail")
    schedule(table, croupier, now, kind="chance", one_in=4, overrides={"panel": False})
    seeds = [i.to_bytes(32, "big") for i in range(40)]
    special = next(s for s in seeds if special_hand_draw(s, 4))
    monkeypatch.setattr("tables.widerpoker.services.deal.derive_hand_seed", lambda *args: special)
    seat_players(table, [alice, bob], now)
    hand = deal(table, now)
    assert hand.config["panel"] is False
    entry = get_entry_state(table_id=table.pk, user_id=alice.pk)["entry"]
    assert entry is not None and entry["panel"] is None


def test_times_of_day_make_the_first_hand_after_each_time_special(croupier: User, alice: User, bob: User) -> None:
    table = create_fun_table(name="Noon Rail")
    noon = timezone.localtime(timezone.now()).replace(hour=12, minute=0, second=0, microsecond=0)
    schedule(table, croupier, noon, kind="times", times=("12:00",), overrides={"tips": False})
    hands = play_hands(table, [alice, bob], 3, noon - timedelta(minutes=1))
    flags = [Hand.objects.get(pk=h.pk).config["tips"] for h in hands]
    assert flags.count(False) == 1  # the first hand dealt at or after 12:00, and only that one
    first_after = next(h for h in hands if h.started_at >= noon)
    assert Hand.objects.get(pk=first_after.pk).config["tips"] is False


def test_the_banner_says_shares_in_percent_money_in_the_currency_and_times_in_seconds(
    table: Table, croupier: User, now: datetime
) -> None:
    schedule(
        table,
        croupier,
        now,
        overrides={"paid_fraction_bps": 5000, "redeal_price_minor": 150, "change_seconds": 45, "draw_price_bps": 1250},
    )
    line = get_lobby_table(table_id=table.pk)["next_special"]
    assert "share of entries paid 50 %" in line
    assert "price of each draw after the first 12.5 %" in line
    assert "price of a redeal 1.50 FUN" in line
    assert "change phase length 45 s" in line
    assert "5000" not in line and "bps" not in line
