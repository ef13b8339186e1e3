"""Hand histories as a replay (issue 24, item 2), read through the pages as each viewer
reads them: a WiderPoker entry step by step with columns numbered 1-5, a Hold'em hand street
by street with only the cards each viewer may see, the verification said in words, the
fairness page for players, and a watched Hold'em hand's link that leads somewhere."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from handhistory.templatetags.handhistory_tags import card_name
from tables.engine.cards import card_code
from tables.holdem.services import act_in_hand, replay, take_seat
from tables.models import Entry, Hand, HoldemHand, HoldemHandStatus, Table
from tests.conftest import make_player
from tests.helpers import behind_the_apps_back, deal_hand, logged_in
from tests.tables.holdem_helpers import holdem_table, passive_kind, tick

pytestmark = pytest.mark.django_db

ITALIAN = {"Accept-Language": "it"}


def _steps(page: str) -> list[str]:
    return re.findall(r'data-testid="step-([a-z]+(?:-\d)?)"', page)


# --- WiderPoker ------------------------------------------------------------------------------


def test_the_player_reads_his_hand_step_by_step_with_columns_numbered_1_to_5(settled_hand: Hand, alice: User) -> None:
    entry = Entry.objects.get(hand=settled_hand, user=alice)
    page = logged_in(alice).get(f"/history/hands/{settled_hand.pk}/").content.decode()
    assert "Your hand, step by step" in page
    # The deal, the hold (columns 1 and 2), the five draws, the result: in that order.
    assert _steps(page) == ["deal", "hold", "draw-1", "draw-2", "draw-3", "draw-4", "draw-5", "result"]
    assert "Held: columns 1 and 2." in page
    assert "Changed: columns 3, 4 and 5." in page
    numbers = re.findall(r'data-testid="column-number">(?:Column )?(\d)<', page)
    assert set(numbers) == {"1", "2", "3", "4", "5"}
    assert "Column 0" not in page and "Position" not in page and ">Row<" in page
    # The initial combination on the payline of the reels: row 5 of each column.
    reels = re.findall(r'<div class="reel" role="group" aria-label="Column (\d)">(.*?)</div>', page)
    assert [column for column, _ in reels] == ["1", "2", "3", "4", "5"]
    for _, reel in reels:
        assert reel.count('role="img"') == 10
        assert len(re.findall(r'class="card(?: red)? mine" role="img"', reel)) == 1
    best = entry.best_draw
    assert best is not None
    assert f'data-testid="step-draw-{best + 1}"' in page and "★ final hand" in page
    place = f"Place <strong>{entry.place}</strong> of 2."
    assert place in page
    assert "This hand was dealt exactly as committed" in page


def test_the_payline_of_the_deal_holds_the_initial_combination(settled_hand: Hand, alice: User) -> None:
    from tables.engine.widerpoker import combination_from_index

    entry = Entry.objects.get(hand=settled_hand, user=alice)
    initial = combination_from_index(entry.initial_combination)
    page = logged_in(alice).get(f"/history/hands/{settled_hand.pk}/").content.decode()
    deal = page[page.index('data-testid="step-deal"') : page.index('data-testid="step-hold"')]
    on_payline = re.findall(r'class="card(?: red)? mine" role="img" aria-label="([^"]+)"', deal)
    assert on_payline == [card_name(settled_hand.board["columns"][c][p]) for c, p in enumerate(initial)]


def test_a_redeal_is_a_step_with_the_columns_it_changed(settled_hand: Hand, bob: User) -> None:
    page = logged_in(bob).get(f"/history/hands/{settled_hand.pk}/").content.decode()
    steps = _steps(page)
    assert steps[:2] == ["deal", "redeal-1"] and steps[-1] == "result"
    redeal = page[page.index('data-testid="step-redeal-1"') :]
    assert "A new initial combination: new cards in columns" in redeal[:2000]


def test_another_player_of_the_hand_replays_any_entry_once_it_is_over(settled_hand: Hand, bob: User) -> None:
    alice_entry = Entry.objects.get(hand=settled_hand, user__username="alice")
    page = logged_in(bob).get(f"/history/hands/{settled_hand.pk}/?entry={alice_entry.pk}").content.decode()
    assert "alice's hand, step by step" in page
    assert "Held: columns 1 and 2." in page
    assert f'href="?entry={alice_entry.pk}#replay"' in page


def test_staff_replay_an_entry_on_demand_and_strangers_get_404(settled_hand: Hand, auditor: User, carol: User) -> None:
    entry = Entry.objects.get(hand=settled_hand, user__username="alice")
    staff = logged_in(auditor)
    assert 'data-testid="replay"' not in staff.get(f"/history/hands/{settled_hand.pk}/").content.decode()
    page = staff.get(f"/history/hands/{settled_hand.pk}/?entry={entry.pk}").content.decode()
    assert "alice's hand, step by step" in page
    assert logged_in(carol).get(f"/history/hands/{settled_hand.pk}/?entry={entry.pk}").status_code == 404
    anonymous = Client().get(f"/history/hands/{settled_hand.pk}/")
    assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]


def test_a_running_hand_replays_only_the_players_own_deal(fun_table: Table, alice: User, bob: User) -> None:
    hand = deal_hand(fun_table, [alice, bob], timezone.now())
    bob_entry = Entry.objects.get(hand=hand, user=bob)
    client = logged_in(alice)
    page = client.get(f"/history/hands/{hand.pk}/?entry={bob_entry.pk}").content.decode()
    assert "Your hand, step by step" in page and "bob's hand" not in page
    assert _steps(page) == ["deal", "result"] and "Still being played" in page
    assert hand.server_seed not in page
    from tables.engine.widerpoker import combination_from_index

    bob_cards = [
        hand.board["columns"][c][p] for c, p in enumerate(combination_from_index(bob_entry.initial_combination))
    ]
    alice_cards = [
        hand.board["columns"][c][p]
        for c, p in enumerate(combination_from_index(Entry.objects.get(hand=hand, user=alice).initial_combination))
    ]
    deal = page[page.index('data-testid="step-deal"') :]
    on_payline = re.findall(r'class="card(?: red)? mine" role="img" aria-label="([^"]+)"', deal)
    assert on_payline == [card_name(code) for code in alice_cards]
    assert bob_cards != alice_cards


def test_a_tampered_hand_says_in_words_what_failed(settled_hand: Hand, alice: User) -> None:
    with behind_the_apps_back():
        Entry.objects.filter(hand=settled_hand, user=alice).update(place=99)
    page = logged_in(alice).get(f"/history/hands/{settled_hand.pk}/").content.decode()
    assert "This hand does not match its commitment:" in page
    assert "The final hands, places or stacks were not worked out as the rules say." in page
    assert "dealt exactly as committed" not in page


def test_the_replay_speaks_italian(settled_hand: Hand, alice: User) -> None:
    page = logged_in(alice).get(f"/history/hands/{settled_hand.pk}/", headers=ITALIAN).content.decode()
    assert "La tua mano, passo per passo" in page and "Tenute: colonne 1 e 2." in page
    assert "Questa mano è stata distribuita esattamente come impegnato" in page
    assert "Colonna 1" in page and "Column" not in page


# --- Hold'em ----------------------------------------------------------------------------------


def _three_handed(alice: User, bob: User, carol: User) -> HoldemHand:
    """A hand of alice, bob and carol: carol folds at her first turn, the others check and
    call to the end (a loser mucks at the showdown when he may)."""
    table = holdem_table()
    now = timezone.now()
    for position, user in enumerate((alice, bob, carol)):
        take_seat(table_id=table.pk, user_id=user.pk, position=position, buy_in_minor=1_000, now=now)
    tick(table, now + timedelta(milliseconds=1))
    hand = HoldemHand.objects.get(table=table)
    users = {0: alice, 1: bob, 2: carol}
    while hand.status == HoldemHandStatus.PLAYING:
        legal = replay(hand).legal_actions()
        kind = "fold" if legal.seat == 2 and "fold" in legal.kinds else passive_kind(legal.kinds)
        act_in_hand(table_id=table.pk, user_id=users[legal.seat].pk, kind=kind, now=now)
        hand.refresh_from_db()
    return hand


def _holes(hand: HoldemHand) -> dict[int, list[str]]:
    state = replay(hand)
    return {seat: [card_code(c) for c in state.holes[i]] for i, seat in enumerate(state.seats)}


def _shows(page: str, code: str) -> bool:
    return f"/static/cards/{code}.svg" in page or card_name(code) in page or f": {code} salt" in page


def test_a_holdem_hand_is_replayed_street_by_street_with_names_chips_and_pots(
    alice: User, bob: User, carol: User
) -> None:
    hand = _three_handed(alice, bob, carol)
    response = logged_in(alice).get(f"/history/holdem/{hand.pk}/")
    page = response.content.decode()
    streets = re.findall(r'data-street="([a-z]+)"', page)
    assert streets[:4] == ["preflop", "flop", "turn", "river"]
    assert "posts the small blind" in page and "posts the big blind" in page
    assert re.search(r"<strong>carol</strong>\s+folds", page)
    assert "Main pot" in page and "wins" in page and "seat 3:" not in page
    for code in hand.board:
        assert f"/static/cards/{code}.svg" in page
    replayed = response.context["replay"]
    assert sum(pot.amount_minor for pot in replayed.pots) == hand.pot_minor
    assert replayed.rake_minor == hand.rake_minor
    assert sum(share for pot in replayed.pots for _, share in pot.winners) == hand.pot_minor - hand.rake_minor


@pytest.mark.parametrize("viewer", ["alice", "bob", "dave", "carol", "auditor"])
def test_folded_cards_reach_only_their_owner_and_staff(
    viewer: str, alice: User, bob: User, carol: User, auditor: User
) -> None:
    hand = _three_handed(alice, bob, carol)
    make_player("dave")
    holes = _holes(hand)
    shown = {int(seat) for seat in hand.results.get("shown", {})}
    users: dict[str, Any] = {"alice": alice, "bob": bob, "carol": carol, "auditor": auditor}
    user = users.get(viewer) or User.objects.get(username=viewer)
    page = logged_in(user).get(f"/history/holdem/{hand.pk}/").content.decode()
    own = {"alice": 0, "bob": 1, "carol": 2}.get(viewer)
    for seat, codes in holes.items():
        visible = viewer == "auditor" or seat == own or seat in shown
        for code in codes:
            assert _shows(page, code) == visible, (viewer, seat, code)
    assert 2 not in shown  # carol folded: her cards are in nobody's page but hers and staff's
    phh = logged_in(user).get(f"/history/holdem/{hand.pk}/hand.phh").content.decode()
    assert all((code in phh) == (viewer in ("carol", "auditor")) for code in holes[2]), phh
    assert ('data-testid="watcher-note"' in page) == (viewer == "dave")


def test_a_watcher_of_a_running_hand_reads_that_it_is_running_and_anonymous_logs_in(alice: User, bob: User) -> None:
    table = holdem_table()
    now = timezone.now()
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    take_seat(table_id=table.pk, user_id=bob.pk, position=1, buy_in_minor=1_000, now=now)
    tick(table, now + timedelta(milliseconds=1))
    hand = HoldemHand.objects.get(table=table)
    watcher = make_player("dave")
    page = logged_in(watcher).get(f"/history/holdem/{hand.pk}/", headers=ITALIAN).content.decode()
    assert "Questa mano è ancora in gioco" in page
    for codes in _holes(hand).values():
        assert not any(_shows(page, code) for code in codes)
    anonymous = Client().get(f"/history/holdem/{hand.pk}/")
    assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]


def test_a_practice_games_hands_stay_private(alice: User, bob: User) -> None:
    from tables.holdem.practice.services import start_practice_game
    from tables.holdem.practice.setup import PracticeSetup

    game = start_practice_game(user_id=alice.pk, nickname="Alice", now=timezone.now(), setup=PracticeSetup(players=3))
    hand = HoldemHand.objects.filter(table_id=game.table_id).first()
    if hand is None:
        tick(game.table, timezone.now() + timedelta(seconds=1))
        hand = HoldemHand.objects.filter(table_id=game.table_id).first()
    assert hand is not None
    assert logged_in(bob).get(f"/history/holdem/{hand.pk}/").status_code == 404


# --- the fairness page ------------------------------------------------------------------------


def test_the_fairness_page_is_for_players_in_both_languages_with_the_algorithm_one_click_away() -> None:
    english = Client().get("/history/provably-fair/").content.decode()
    assert "Check a hand in three steps" in english and "/history/provably-fair/algorithm/" in english
    assert "/history/commitments/#client_seed" in english
    assert "tables/engine" not in english and ".py" not in english
    assert len(re.findall(r"<li>", english[english.index('data-testid="fair-steps"') :].split("</ol>")[0])) == 3
    italian = Client().get("/history/provably-fair/", headers=ITALIAN).content.decode()
    assert "Controlla una mano in tre passi" in italian and 'lang="it"' in italian
    assert "sono pubblicati 24 ore dopo la mano" in italian and "published 24 hours after the hand" in english
    assert Client().get("/history/provably-fair/algorithm/").status_code == 200


def test_a_spin_jackpot_drawn_at_the_deal_is_told_with_the_result(croupier: User, alice: User, bob: User) -> None:
    from jackpots import services as jackpot_services
    from jackpots.models import Jackpot, JackpotKind
    from tables.engine.widerpoker import SpinJackpot, spin_jackpot_draw
    from tests.helpers import create_fun_table, settle, steer_next_hand

    now = timezone.now() - timedelta(seconds=31)
    table = create_fun_table(name="Spin Rail")
    bronze = Jackpot.objects.create(
        name="Bronze FUN", kind=JackpotKind.BRONZE, currency="FUN", contribution_bps=50, reset_minor=200, one_in=2
    )
    table.jackpots.set([bronze])
    jackpot_services.fund_jackpot(jackpot_id=bronze.pk, amount_minor=5_000, reference="b", staff_user_id=croupier.pk)
    steer_next_hand(
        table, [alice, bob], lambda s: spin_jackpot_draw(s, {SpinJackpot.BRONZE: 2}) is SpinJackpot.BRONZE, now=now
    )
    deal_hand(table, [alice, bob], now)
    hand = settle(table)
    assert hand.spin_award_minor
    page = logged_in(alice).get(f"/history/hands/{hand.pk}/").content.decode()
    assert 'data-testid="replay-spin"' in page
    assert "Bronze FUN spin jackpot drawn at the deal:" in page and "added to this hand's prize pool" in page


def test_a_holdem_hand_whose_actions_do_not_replay_says_so_instead_of_failing(
    alice: User, bob: User, carol: User
) -> None:
    hand = _three_handed(alice, bob, carol)
    with behind_the_apps_back():
        HoldemHand.objects.filter(pk=hand.pk).update(actions=[*hand.actions[:1], {"kind": "raise", "seat": 9}])
    response = logged_in(alice).get(f"/history/holdem/{hand.pk}/")
    assert response.status_code == 200 and response.context["replay"] is None
    assert "This hand does not match its commitments:" in response.content.decode()
