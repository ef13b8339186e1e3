"""Algorithm 2 on the platform (docs/provably-fair.md): chains published when a table opens,
client seeds in every hand, entry order derived, change keys fixed by a beacon round after
the change deadline, and settlement waiting for it."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User

from tables.clock import advance_table
from tables.engine import fairness
from tables.engine.widerpoker import change_keys
from tables.models import BeaconRound, Entry, HandStatus, PlayerClientSeed, SeedChain, Table, TablePhase
from tables.services import beacon
from tables.services.fairness import InvalidClientSeedError, set_client_seed
from tables.services.seating import touch_presence
from tests.helpers import create_fun_table, deal_hand, settle
from wallet.selectors import check_books

pytestmark = pytest.mark.django_db


def test_a_table_publishes_its_chain_when_it_opens(db: Any) -> None:
    table = create_fun_table(name="Chain Rail")
    chain = SeedChain.objects.get(table=table)
    assert chain.next_index == 1 and chain.length >= 10
    terminal = bytes.fromhex(chain.terminal_seed)
    assert fairness.chain_anchor(terminal, chain.length).hex() == chain.anchor


def test_hands_take_consecutive_chain_elements_and_commit_to_the_previous_one(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    first = deal_hand(table, [alice, bob], now)
    settle(table)
    table.refresh_from_db()
    assert table.phase_deadline is not None
    for user in (alice, bob):
        touch_presence(table_id=table.pk, user_id=user.pk, now=table.phase_deadline)
    assert advance_table(table_id=table.pk, now=table.phase_deadline)
    table.refresh_from_db()
    second = table.current_hand
    assert second is not None and (first.chain_index, second.chain_index) == (1, 2)
    # Hand 2's commitment is hand 1's chain seed: public since hand 1 was revealed.
    assert second.commitment == first.chain_seed
    assert first.chain is not None
    assert hashlib.sha256(bytes.fromhex(first.chain_seed)).hexdigest() == first.commitment == first.chain.anchor


def test_the_entry_order_comes_from_the_hand_seed_and_client_seeds(
    table: Table, alice: User, bob: User, carol: User, now: datetime
) -> None:
    hand = deal_hand(table, [alice, bob, carol], now)
    entries = list(Entry.objects.filter(hand=hand).order_by("join_order").select_related("user"))
    names = [e.user.username for e in entries]
    assert fairness.entry_order(bytes.fromhex(hand.server_seed), names) == [0, 1, 2]
    seeds = dict(PlayerClientSeed.objects.values_list("user__username", "seed"))
    assert {e.user.username: e.client_seed for e in entries} == seeds
    expected = fairness.hand_seed(bytes.fromhex(hand.chain_seed), table.pk, hand.number, list(seeds.items()))
    assert expected.hex() == hand.server_seed


def test_the_change_keys_wait_for_the_beacon_round_after_the_deadline(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    hand = deal_hand(table, [alice, bob], now)
    assert hand.beacon_round is not None
    released = beacon.time_of(hand.beacon_round)
    assert hand.change_deadline < released <= hand.change_deadline + timedelta(seconds=1)
    # Before the round nothing stored determines the keys: no beacon value exists yet.
    assert beacon.value(hand.beacon_round, now=released - timedelta(milliseconds=1)) is None
    assert not BeaconRound.objects.filter(round=hand.beacon_round).exists()
    assert advance_table(table_id=table.pk, now=released - timedelta(milliseconds=1)) is False
    table.refresh_from_db()
    assert table.phase == TablePhase.CHANGE  # waiting a second at a time for the round
    assert table.phase_deadline is not None and table.phase_deadline >= released
    assert advance_table(table_id=table.pk, now=table.phase_deadline)
    hand.refresh_from_db()
    assert hand.status == HandStatus.SETTLED and hand.beacon_value
    keys = change_keys(fairness.keys_seed(bytes.fromhex(hand.server_seed), bytes.fromhex(hand.beacon_value)))
    assert hand.change_keys == [list(k) for k in keys]
    assert hand.change_keys != [list(k) for k in change_keys(bytes.fromhex(hand.server_seed))]


def test_a_silent_beacon_cancels_the_hand_and_refunds_in_full(
    table: Table, alice: User, bob: User, now: datetime, monkeypatch: Any
) -> None:
    hand = deal_hand(table, [alice, bob], now)
    monkeypatch.setattr(
        "tables.widerpoker.services.lifecycle.beacon.fetch", lambda *args, **kwargs: beacon.Answer(None, error="silent")
    )
    late = hand.change_deadline + timedelta(seconds=61)
    assert advance_table(table_id=table.pk, now=late)
    hand.refresh_from_db()
    assert hand.status == HandStatus.CANCELLED and "beacon" in hand.cancel_reason
    assert check_books().ok


def test_players_set_their_client_seed_and_bad_ones_are_refused(alice: User, now: datetime) -> None:
    assert set_client_seed(user_id=alice.pk, seed="lucky-7", now=now) == "lucky-7"
    assert PlayerClientSeed.objects.get(user=alice).seed == "lucky-7"
    for bad in ("with space", "x" * 65, "semi;colon"):
        with pytest.raises(InvalidClientSeedError):
            set_client_seed(user_id=alice.pk, seed=bad, now=now)
    assert PlayerClientSeed.objects.get(user=alice).seed == "lucky-7"
    assert len(set_client_seed(user_id=alice.pk, seed="", now=now)) == 32  # a new random one


def test_the_commitments_page_publishes_chains_and_hides_running_hands_seeds(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    from django.test import Client

    from tests.helpers import logged_in

    hand = deal_hand(table, [alice, bob], now)
    page = Client().get("/history/commitments/").content.decode()
    chain = SeedChain.objects.get(table=table)
    assert chain.anchor in page and hand.commitment in page
    assert hand.chain_seed not in page and hand.server_seed not in page and chain.terminal_seed not in page
    settle(table)
    page = Client().get("/history/commitments/").content.decode()
    assert hand.chain_seed in page and chain.terminal_seed not in page
    client = logged_in(alice)
    answer = client.post("/history/commitments/", {"client_seed": "my-own-seed"}).content.decode()
    assert "counts from your next hand" in answer and 'value="my-own-seed"' in answer
    assert "is 1 to 64" in client.post("/history/commitments/", {"client_seed": "no spaces"}).content.decode()
