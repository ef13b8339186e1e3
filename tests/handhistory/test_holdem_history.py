"""Hold'em hands in the hand history: listed among my hands, readable by their players and
staff only once over, downloadable as PHH that replays, verified from the revealed seed."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from handhistory.holdem import verify_holdem_hand
from tables.engine.holdem import replay_phh
from tables.holdem.services import act_in_hand, replay, take_seat
from tables.models import HoldemHand, HoldemHandPlayer, HoldemHandStatus
from tests.helpers import logged_in
from tests.tables.holdem_helpers import holdem_table, passive_kind, tick

pytestmark = pytest.mark.django_db


def played_hand(alice: User, bob: User) -> HoldemHand:
    table = holdem_table()
    now = timezone.now()
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    take_seat(table_id=table.pk, user_id=bob.pk, position=1, buy_in_minor=1_000, now=now)
    tick(table, now + timedelta(milliseconds=1))
    hand = HoldemHand.objects.get(table=table)
    users = {0: alice, 1: bob}
    while hand.status == HoldemHandStatus.PLAYING:
        legal = replay(hand).legal_actions()
        kind = passive_kind(legal.kinds)
        act_in_hand(table_id=table.pk, user_id=users[legal.seat].pk, kind=kind, now=now)
        hand.refresh_from_db()
    return hand


def test_a_settled_hand_verifies_from_its_seed_and_its_phh_replays(alice: User, bob: User) -> None:
    hand = played_hand(alice, bob)
    checks = verify_holdem_hand(hand)
    # commitment; algorithm 3's freeze digest, first round after the freeze, the round's
    # value, the hand seed; board, finishing stacks, rake, PHH.
    assert hand.algorithm == 3
    assert len(checks) == 9 and all(check.ok for check in checks), checks
    rows = HoldemHandPlayer.objects.filter(hand=hand)
    assert sum(row.net_minor or 0 for row in rows) == -hand.rake_minor
    assert replay_phh(hand.phh)


def test_a_tampered_board_fails_verification(alice: User, bob: User) -> None:
    hand = played_hand(alice, bob)
    hand.board = list(reversed(hand.board))
    assert not all(check.ok for check in verify_holdem_hand(hand))


def test_players_see_the_hand_and_download_its_phh_watchers_read_only_its_public_replay(
    alice: User, bob: User, carol: User
) -> None:
    hand = played_hand(alice, bob)
    client = logged_in(alice)
    page = client.get(f"/history/holdem/{hand.pk}/")
    # The seeds give every card of the deck: the player sees them only after the delay
    # (docs/provably-fair.md, Card commitments; tests/tables/test_holdem_privacy.py).
    assert page.status_code == 200 and hand.server_seed not in page.content.decode()
    assert f"/history/holdem/{hand.pk}/" in client.get("/history/").content.decode()
    phh = client.get(f"/history/holdem/{hand.pk}/hand.phh")
    assert phh.status_code == 200 and "d dh" in phh.content.decode()
    # Anyone who could watch the table reads its public replay (issue 24: the link was a
    # 404) and its PHH with only the shown hands; never the JSON export.
    stranger: Any = logged_in(carol)
    public = stranger.get(f"/history/holdem/{hand.pk}/")
    assert public.status_code == 200 and public.context["public"]
    assert 'data-testid="watcher-note"' in public.content.decode()
    watched = stranger.get(f"/history/holdem/{hand.pk}/hand.phh")
    assert watched.status_code == 200
    shown = hand.results.get("shown", {})
    assert ("????" in watched.content.decode()) == (len(shown) < 2)
    assert stranger.get(f"/history/holdem/{hand.pk}/export.json").status_code == 404


def test_a_hand_in_play_opens_a_page_saying_it_is_still_played(alice: User, bob: User) -> None:
    table = holdem_table()
    now = timezone.now()
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    take_seat(table_id=table.pk, user_id=bob.pk, position=1, buy_in_minor=1_000, now=now)
    tick(table, now)
    hand = HoldemHand.objects.get(table=table)
    response = logged_in(alice).get(f"/history/holdem/{hand.pk}/")
    page = response.content.decode()
    # A page that says so (issue 24), with nothing of the hand's cards or seeds.
    assert response.status_code == 200 and 'data-testid="hand-running"' in page
    assert hand.server_seed not in page and hand.chain_seed not in page and ".svg" not in page
    assert logged_in(alice).get(f"/history/holdem/{hand.pk}/hand.phh").status_code == 404


def test_the_commitments_page_lists_holdem_hands_and_hides_a_running_hands_seed(alice: User, bob: User) -> None:
    table = holdem_table("Public")
    now = timezone.now()
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    take_seat(table_id=table.pk, user_id=bob.pk, position=1, buy_in_minor=1_000, now=now)
    tick(table, now)
    hand = HoldemHand.objects.get(table=table)
    page = logged_in(alice).get("/history/commitments/").content.decode()
    assert hand.commitment in page and hand.chain_seed not in page and hand.server_seed not in page
