"""The private states the hub sends (``render_entry_states``) splice each probability panel's
text, encoded once per (hand, combination) and process, into the frame instead of encoding
the panel again (issue 23: the panels' encoding was an eighth of a daphne's busy time). The
text sent must stay the one ``frames.dumps`` makes of the frame's dict form, to the byte."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User

from tables.engine.widerpoker import board_grid, panel
from tables.models import Entry, Hand, Redeal, Table
from tables.realtime.frames import dumps
from tables.widerpoker import panel_cache, panel_tables, selectors
from tables.widerpoker.records import board_from_json
from tables.widerpoker.services.play import buy_draw, set_hold
from tests.conftest import make_player
from tests.helpers import create_fun_table, deal_hand

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _empty_caches() -> Any:
    panel_cache.PANELS.clear()
    panel_tables.forget()
    yield
    panel_cache.PANELS.clear()
    panel_tables.forget()


def _digits(index: int) -> tuple[int, ...]:
    return tuple(int(d) for d in f"{index:05d}")


def _dict_form(table: Table, user_ids: set[int]) -> dict[int, str]:
    """The frames as they were serialised before the splice: ``dumps`` of the dict form."""
    return {
        user_id: dumps(state)
        for user_id, state in selectors.list_entry_states(table_id=table.pk, user_ids=user_ids).items()
    }


def _players_in_every_state(now: datetime) -> tuple[Table, Hand, dict[str, User]]:
    """A dealt hand where one player holds, one bought draws, one has a redeal waiting for its
    beacon round, one did nothing; and a watcher seated after the deal (no entry)."""
    table = create_fun_table()
    players = {name: make_player(f"splice-{name}") for name in ("holder", "buyer", "redealer", "idle")}
    hand = deal_hand(table, list(players.values()), now)
    set_hold(table_id=table.pk, user_id=players["holder"].pk, hold=[True, False, True, False, True], now=now)
    buy_draw(table_id=table.pk, user_id=players["buyer"].pk, now=now + timedelta(seconds=1))
    buy_draw(table_id=table.pk, user_id=players["buyer"].pk, now=now + timedelta(seconds=2))
    # Algorithm 3's redeal waiting for its round (tests/tables/test_deal_beacon.py buys one
    # through the real clock): the row the purchase writes, and the hand's deal round.
    Hand.objects.filter(pk=hand.pk).update(deal_round=1000)
    Redeal.objects.create(hand=hand, number=0, user=players["redealer"], created_at=now, beacon_round=1234)
    hand.refresh_from_db()
    return table, hand, players


def test_the_spliced_frames_are_the_dict_forms_text_to_the_byte(now: datetime) -> None:
    table, hand, players = _players_in_every_state(now)
    watcher = make_player("splice-watcher")
    user_ids = {user.pk for user in players.values()} | {watcher.pk}
    sent = selectors.render_entry_states(table_id=table.pk, user_ids=user_ids)
    assert sent == _dict_form(table, user_ids)  # panels cached: spliced from the cache
    panel_cache.PANELS.clear()
    assert selectors.render_entry_states(table_id=table.pk, user_ids=user_ids) == sent  # computed again
    # A socket's frames keep only the panels' texts (1.8 KiB each, not 11.6 with the dicts).
    assert len(panel_cache.PANELS) == 4 and all(kept._data is None for kept in panel_cache.PANELS.values())
    frames = {name: json.loads(sent[user.pk]) for name, user in players.items()}
    assert frames["holder"]["entry"]["hold"] == [True, False, True, False, True]
    assert frames["idle"]["entry"]["hold"] is None
    assert frames["buyer"]["entry"]["draws_bought"] == frames["idle"]["entry"]["draws_bought"] + 2
    assert frames["redealer"]["entry"]["redeal_pending"]["number"] == 0
    assert frames["redealer"]["entry"]["redeals_used"] == 1
    assert json.loads(sent[watcher.pk])["entry"] is None
    # Each panel is the engine's, for the player's own combination on the hand's board.
    grid = board_grid(board_from_json(hand.board))
    for name, user in players.items():
        combination = _digits(Entry.objects.get(hand=hand, user=user).combination)
        assert frames[name]["entry"]["panel"] == panel(grid, combination).as_dict()
        assert sent[user.pk].count('"panel":{"combination":') == 1


def test_a_hand_without_tips_sends_none_and_the_kept_panel_keeps_them(now: datetime) -> None:
    table, hand, players = _players_in_every_state(now)
    holder = players["holder"].pk
    with_tips = json.loads(selectors.render_entry_states(table_id=table.pk, user_ids={holder})[holder])
    assert with_tips["entry"]["panel"]["tip1"] is not None
    Hand.objects.filter(pk=hand.pk).update(config={**hand.config, "tips": False})
    sent = selectors.render_entry_states(table_id=table.pk, user_ids={holder})
    assert sent == _dict_form(table, {holder})
    panel_sent = json.loads(sent[holder])["entry"]["panel"]
    assert panel_sent["tip1"] is None and panel_sent["tip2"] is None
    assert panel_sent == {**with_tips["entry"]["panel"], "tip1": None, "tip2": None}
    kept = panel_cache.PANELS[(hand.pk, tuple(with_tips["entry"]["combination"]))]
    assert kept.data["tip1"] is not None and '"tip1":null' not in kept.text


def test_the_panel_cache_is_per_hand_a_combination_on_another_board_gets_its_own(now: datetime) -> None:
    """Two hands on two boards, one player with the same combination in both: each frame
    carries its own board's panel, not the first one cached."""
    first_table, second_table = create_fun_table("Splice one"), create_fun_table("Splice two")
    alice, bob, carol = make_player("splice-a"), make_player("splice-b"), make_player("splice-c")
    first = deal_hand(first_table, [alice, bob], now)
    second = deal_hand(second_table, [alice, carol], now)
    assert first.board != second.board
    combination = Entry.objects.get(hand=first, user=alice).combination
    Entry.objects.filter(hand=second, user=carol, combination=combination).update(combination=(combination + 1) % 10**5)
    Entry.objects.filter(hand=second, user=alice).update(combination=combination)
    sent = [
        json.loads(selectors.render_entry_states(table_id=table.pk, user_ids={alice.pk})[alice.pk])["entry"]["panel"]
        for table in (first_table, second_table)
    ]
    expected = [
        panel(board_grid(board_from_json(hand.board)), _digits(combination)).as_dict() for hand in (first, second)
    ]
    assert sent == expected
    assert sent[0] != sent[1]
    assert {(first.pk, _digits(combination)), (second.pk, _digits(combination))} <= set(panel_cache.PANELS)


def test_a_purchase_answers_text_is_its_frames_dict_form(now: datetime) -> None:
    """The purchase writer's answer (``Outcome.text``: ``render_entry_state``) is the text of
    its frame (``Outcome.frame``: ``build_entry_state``), for a hand with and without tips."""
    table, hand, players = _players_in_every_state(now)
    for tips in (True, False):
        Hand.objects.filter(pk=hand.pk).update(config={**hand.config, "tips": tips})
        hand.refresh_from_db()
        for name, user in players.items():
            arguments: dict[str, Any] = {
                "table_id": table.pk,
                "version": 7,
                "currency": "FUN",
                "hand": hand,
                "entry": Entry.objects.get(hand=hand, user=user),
                "seat": {"status": "active", "reason": ""},
                "balance_minor": 1234,
                "powerups": None,
                "redeal_pending": {"number": 0, "round": 1234, "round_at": None} if name == "redealer" else None,
            }
            text = selectors.render_entry_state(**arguments)
            assert text == dumps(selectors.build_entry_state(**arguments))
            assert (json.loads(text)["entry"]["panel"]["tip1"] is None) is not tips
