"""Hold'em is private at the table and fair against the house (docs/provably-fair.md, Card
commitments): a hole card reaches nobody but its owner unless shown at the showdown, staff
see it once the hand is over, and the seeds, which give the whole deck, reach the players
and the public only ``HOLDEM_SEED_DELAY_HOURS`` after the hand. Meanwhile each player checks
his own and the shown cards against the per-card commitments published at the deal; after
the delay the seed reproduces every commitment.

Until 2026-11-26 every ``holdem_state`` carried the seeds at the end of each hand, so a
stranger watching the table recomputed every hole card, folded hands included (security
audit H1); the PHH download listed every hole card too."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.utils import timezone

from tables.engine.cards import card_code
from tables.engine.holdem import card_salts, deal_positions
from tables.holdem.records import replay
from tables.holdem.selectors import get_holdem_table_frame
from tables.holdem.services import act_in_hand, take_seat
from tables.models import HoldemHand, HoldemHandStatus, Table
from tests.conftest import make_player
from tests.helpers import logged_in
from tests.tables.holdem_helpers import holdem_table, passive_kind, tick
from tests.tables.test_consumers import open_socket, receive


def _deal(table: Table, alice: User, bob: User) -> HoldemHand:
    now = timezone.now()
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    take_seat(table_id=table.pk, user_id=bob.pk, position=1, buy_in_minor=1_000, now=now)
    tick(table, now + timedelta(milliseconds=1))
    return HoldemHand.objects.get(table=table)


def _fold_at_once(table: Table, hand: HoldemHand, users: dict[int, User]) -> HoldemHand:
    legal = replay(hand).legal_actions()
    act_in_hand(table_id=table.pk, user_id=users[legal.seat].pk, kind="fold", now=timezone.now())
    hand.refresh_from_db()
    assert hand.status == HoldemHandStatus.SETTLED and not hand.results["shown"]
    return hand


def _check_down(table: Table, hand: HoldemHand, users: dict[int, User]) -> HoldemHand:
    while hand.status == HoldemHandStatus.PLAYING:
        legal = replay(hand).legal_actions()
        kind = passive_kind(legal.kinds)
        act_in_hand(table_id=table.pk, user_id=users[legal.seat].pk, kind=kind, now=timezone.now())
        hand.refresh_from_db()
    return hand


def _secrets(hand: HoldemHand) -> list[str]:
    """What must not reach a stranger after a hand folded pre-flop: the seeds and the salts
    of every hole card."""
    state = replay(hand)
    n = state.player_count
    salts = card_salts(bytes.fromhex(hand.server_seed), 2 * n + 8)
    holes = [salts[p].hex() for pair in deal_positions(n).holes for p in pair]
    return [hand.server_seed, hand.chain_seed, *holes]


def _opens(commitment: str, card: str, salt: str) -> bool:
    return hashlib.sha256(card.encode() + bytes.fromhex(salt)).hexdigest() == commitment


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_stranger_watching_the_table_learns_no_folded_card_and_no_seed() -> None:
    alice = await sync_to_async(make_player)("alice")
    bob = await sync_to_async(make_player)("bob")
    carol = await sync_to_async(make_player)("carol")
    table = await sync_to_async(holdem_table)()
    hand = await sync_to_async(_deal)(table, alice, bob)
    watcher = await open_socket(carol, table.pk)
    await receive(watcher, "holdem_state")
    hand = await sync_to_async(_fold_at_once)(table, hand, {0: alice, 1: bob})
    frames: list[dict[str, Any]] = []
    for _ in range(10):
        frames.append(json.loads(await watcher.receive_from(timeout=10)))
        if frames[-1]["type"] == "holdem_state" and (frames[-1]["hand"] or {}).get("result"):
            break
    await watcher.disconnect()
    result = frames[-1]["hand"]["result"]
    assert result["server_seed"] is None and result["chain_seed"] is None
    assert result["revealed"] == [] and result["seed_public_at"]
    assert all(seat["shown"] is None for seat in frames[-1]["seats"])
    texts = json.dumps(frames)
    for secret in await sync_to_async(_secrets)(hand):
        assert secret not in texts
    # The snapshot URL, the other door to the same frame, keeps them too.
    snapshot = await sync_to_async(lambda: logged_in(carol).get(f"/tables/{table.pk}/snapshot.json").content)()
    for secret in await sync_to_async(_secrets)(hand):
        assert secret.encode() not in snapshot


@pytest.mark.django_db
def test_a_player_checks_his_own_and_the_shown_cards_at_once_and_every_card_after_the_delay(
    alice: User, bob: User
) -> None:
    table = holdem_table()
    hand = _deal(table, alice, bob)
    client = logged_in(alice)
    snapshot = client.get(f"/tables/{table.pk}/snapshot.json").json()
    dealt, private = snapshot["table"], snapshot["private"]
    commitments = dealt["hand"]["card_commitments"]
    assert len(commitments) == 2 * 2 + 8 and dealt["hand"]["result"] is None
    mine = private.get("hole_openings") or []
    assert len(mine) == 2
    assert [o["card"] for o in mine] == private["hole"]
    assert all(_opens(commitments[o["position"]], o["card"], o["salt"]) for o in mine)
    hand = _check_down(table, hand, {0: alice, 1: bob})
    over = client.get(f"/tables/{table.pk}/snapshot.json").json()["table"]["hand"]
    assert over["card_commitments"] == commitments  # what was published at the deal
    result = over["result"]
    assert result["server_seed"] is None
    board = [o for o in result["revealed"] if o["position"] in deal_positions(2).board]
    assert [o["card"] for o in board] == hand.board
    assert all(_opens(commitments[o["position"]], o["card"], o["salt"]) for o in result["revealed"])
    # After the delay the seed is public and reproduces every commitment published at the deal.
    assert hand.settled_at is not None
    later = get_holdem_table_frame(table_id=table.pk, now=hand.settled_at + timedelta(hours=24))
    assert later["hand"] is not None and later["hand"]["result"] is not None
    seed = later["hand"]["result"]["server_seed"]
    assert seed == hand.server_seed and later["hand"]["result"]["chain_seed"] == hand.chain_seed
    deck = replay(hand).setup.deck
    salts = card_salts(bytes.fromhex(seed), len(commitments))
    assert all(_opens(c, card_code(deck[p]), salts[p].hex()) for p, c in enumerate(commitments))
    earlier = get_holdem_table_frame(table_id=table.pk, now=hand.settled_at + timedelta(hours=23))
    assert earlier["hand"] is not None and earlier["hand"]["result"] is not None
    assert earlier["hand"]["result"]["server_seed"] is None


@pytest.mark.django_db
def test_a_players_phh_and_history_show_only_his_and_the_shown_cards_staff_see_all_once_over(
    alice: User, bob: User, auditor: User
) -> None:
    table = holdem_table()
    hand = _fold_at_once(table, _deal(table, alice, bob), {0: alice, 1: bob})
    state = replay(hand)
    k_alice, k_bob = state.seats.index(0), state.seats.index(1)
    alice_cards = "".join(card_code(c) for c in state.holes[k_alice])
    bob_cards = "".join(card_code(c) for c in state.holes[k_bob])
    phh = logged_in(alice).get(f"/history/holdem/{hand.pk}/hand.phh").content.decode()
    assert f"d dh p{k_alice + 1} {alice_cards}" in phh
    assert f"d dh p{k_bob + 1} ????" in phh and bob_cards not in phh
    page = logged_in(alice).get(f"/history/holdem/{hand.pk}/").content.decode()
    assert hand.server_seed not in page and hand.chain_seed not in page and 'data-testid="seed-later"' in page
    assert " ".join(card_code(c) for c in state.holes[k_bob]) not in page
    assert "✘" not in page  # her own cards check against the commitments at once
    staff_phh = logged_in(auditor).get(f"/history/holdem/{hand.pk}/hand.phh").content.decode()
    assert staff_phh == hand.phh and bob_cards in staff_phh
    staff_page = logged_in(auditor).get(f"/history/holdem/{hand.pk}/").content.decode()
    assert hand.server_seed in staff_page and "✘" not in staff_page


@pytest.mark.django_db
def test_a_players_phh_with_hidden_holes_is_still_valid_phh(alice: User, bob: User) -> None:
    import pokerkit

    table = holdem_table()
    hand = _check_down(table, _deal(table, alice, bob), {0: alice, 1: bob})
    shown = hand.results["shown"]
    viewer = alice if "0" in shown else bob  # he sees the other's hand only if it was shown
    text = logged_in(viewer).get(f"/history/holdem/{hand.pk}/hand.phh").content.decode()
    assert ("????" in text) == (len(shown) < 2)
    history = pokerkit.HandHistory.loads(text)
    states = list(history)
    assert states[-1].status is False  # pokerkit plays the hand to its end
    ours = [hand.results["finishing_stacks"][str(s)] for s in replay(hand).seats]
    # pokerkit does not read the _rake_bps extension: it pays the winner the rake too.
    assert sum(states[-1].stacks) - sum(ours) == hand.rake_minor
    assert all(theirs >= mine for theirs, mine in zip(states[-1].stacks, ours, strict=True))
