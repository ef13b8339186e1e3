"""The Hold'em hand's JSON export (``widerpoker-holdem-hand/1``, docs/holdem-export.md): valid
against its published schema, complete enough for an outsider to recompute the chips (a
timed-out all-in included, which PHH cannot write), every hole card for the auditor once
the hand is over, and only shown cards and his own for a player."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import datetime, timedelta
from typing import Any

import jsonschema
import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from handhistory.holdem_export import build_holdem_export, holdem_export_schema
from tables.engine.cards import card_code
from tables.engine.holdem import build_pots
from tables.holdem.services import act_in_hand, replay, take_seat
from tables.models import HoldemHand, HoldemHandStatus
from tests.handhistory.test_holdem_history import played_hand
from tests.helpers import logged_in
from tests.tables.holdem_helpers import holdem_table, passive_kind, tick

pytestmark = pytest.mark.django_db


def timed_out_hand(alice: User, bob: User) -> HoldemHand:
    """A heads-up hand whose first player to act runs out of time with chips in: the clock
    puts him all in (seed 003), then the other calls or checks to the end."""
    table = holdem_table("Clock Rail")
    now = timezone.now()
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    take_seat(table_id=table.pk, user_id=bob.pk, position=1, buy_in_minor=1_000, now=now)
    tick(table, now)
    table.refresh_from_db()
    assert table.phase_deadline is not None
    tick(table, table.phase_deadline)
    hand = HoldemHand.objects.get(table=table)
    assert hand.actions[0]["kind"] == "timeout_all_in"
    users = {0: alice, 1: bob}
    while hand.status == HoldemHandStatus.PLAYING:
        legal = replay(hand).legal_actions()
        kind = passive_kind(legal.kinds)
        act_in_hand(table_id=table.pk, user_id=users[legal.seat].pk, kind=kind, now=now)
        hand.refresh_from_db()
    return hand


def outsider_seed_check(document: dict[str, Any]) -> list[str]:
    """The hand seed recomputed as docs/provably-fair.md section 12 says, from the export
    alone (its seeds public): the commitment, each client seed's commitment, and for
    algorithm 3 the frozen lines' digest, the deal round (the first released strictly after
    the freeze) and ``HMAC(hand_seed_v2, "holdem-deal" 0x00 digest value)``. Returns the
    faults."""
    faults = []
    fair = document["fairness"]
    hand = document["hand"]
    if hashlib.sha256(bytes.fromhex(fair["chain_seed"])).hexdigest() != fair["commitment"]:
        faults.append("commitment")
    rows = fair["client_seeds"]
    for row in rows:
        if hashlib.sha256(f"{row['name']}:{row['seed']}".encode()).hexdigest() != row["commitment"]:
            faults.append(f"client seed commitment of {row['name']}")
    lines = "\n".join(sorted(f"{row['name']}:{row['seed']}" for row in rows))
    message = f"hand\x00{hand['table_id']}\x00{hand['number']}\x00".encode() + hashlib.sha256(lines.encode()).digest()
    v2 = hmac.digest(bytes.fromhex(fair["chain_seed"]), message, "sha256")
    if fair["algorithm"] != 3:
        return [*faults, "hand seed"] if v2.hex() != fair["server_seed"] else faults
    frozen = [
        "holdem-freeze/1",
        f"table:{hand['table_id']}",
        f"hand:{hand['number']}",
        f"chain:{fair['chain_id']}:{fair['chain_index']}",
        f"commitment:{fair['commitment']}",
        f"button:{document['button']}",
        f"round:{fair['deal_round']}",
        *(f"seat:{row['seat']}:{row['name']}:{row['commitment']}" for row in sorted(rows, key=lambda r: r["seat"])),
    ]
    digest = hashlib.sha256("\n".join(frozen).encode()).digest()
    if digest.hex() != fair["freeze_digest"]:
        faults.append("freeze digest")
    frozen_at = datetime.fromisoformat(fair["frozen_at"])
    round_at = datetime.fromisoformat(fair["deal_round_at"])
    period = timedelta(seconds=fair["beacon_period_seconds"])
    if not round_at - period <= frozen_at < round_at:
        faults.append("deal round is not the first after the freeze")
    value = bytes.fromhex(fair["deal_beacon_value"])
    seed = hmac.digest(v2, b"holdem-deal\x00" + digest + value, "sha256")
    if seed.hex() != fair["server_seed"]:
        faults.append("hand seed")
    return faults


def outsider_check(document: dict[str, Any]) -> list[str]:
    """What an outsider recomputes from the export alone (docs/holdem-export.md, "Checking a
    hand"): the commitment, the chips conserved, the pots from the contributions, the
    winnings from the pots less the rake, each seat's finishing stack. Returns the faults."""
    faults = [] if document["fairness"]["server_seed"] is None else outsider_seed_check(document)
    seats = document["seats"]
    start = sum(s["starting_minor"] for s in seats)
    end = sum(s["finishing_minor"] for s in seats)
    if start - end != document["rake_minor"]:
        faults.append("chips not conserved")
    if sum(s["contributed_minor"] for s in seats) != document["pot_minor"]:
        faults.append("contributions != pot")
    if sum(p["amount_minor"] for p in document["pots"]) != document["pot_minor"]:
        faults.append("pots != pot")
    contributions = [s["contributed_minor"] for s in seats]
    live = [s["seat"] in {seat for p in document["pots"] for seat in p["eligible_seats"]} for s in seats]
    rebuilt = [p.amount for p in build_pots(contributions, live)]
    if rebuilt != [p["amount_minor"] for p in document["pots"]]:
        faults.append("pots not rebuilt from the contributions")
    if sum(s["won_minor"] for s in seats) != document["pot_minor"] - document["rake_minor"]:
        faults.append("winnings != pot - rake")
    for s in seats:
        if s["starting_minor"] - s["contributed_minor"] + s["won_minor"] != s["finishing_minor"]:
            faults.append(f"seat {s['seat']} finishing stack")
        recorded = document["result"]["finishing_stacks"].get(str(s["seat"]))
        if recorded is not None and recorded != s["finishing_minor"]:
            faults.append(f"seat {s['seat']} result")
    if any(s["won_minor"] and not any(s["seat"] in p["winners"] for p in document["pots"]) for s in seats):
        faults.append("a winner of no pot")
    pot_rakes = [p["rake_minor"] for p in document["pots"]]
    if None in pot_rakes or sum(pot_rakes) != document["rake_minor"]:
        faults.append("the pots' rakes are not the hand's rake")
    return faults


def test_the_auditors_export_validates_against_its_schema_with_every_hole_card(
    alice: User, bob: User, auditor: User
) -> None:
    hand = played_hand(alice, bob)
    response = logged_in(auditor).get(f"/history/holdem/{hand.pk}/export.json")
    assert response.status_code == 200
    assert f"holdem-{hand.table_id}-{hand.number}.json" in response["Content-Disposition"]
    document = json.loads(response.content)
    jsonschema.Draft202012Validator(holdem_export_schema()).validate(document)
    assert document["format"] == "widerpoker-holdem-hand/1" and document["audience"] == "staff"
    assert (document["hand"]["id"], document["hand"]["table_id"]) == (hand.pk, hand.table_id)
    assert document["fairness"]["chain_index"] == hand.chain_index
    assert [row["seed"] for row in document["fairness"]["client_seeds"]] == [s for _n, s in hand.client_seeds]
    state = replay(hand)
    for seat in document["seats"]:
        expected = [card_code(c) for c in state.holes[state.seats.index(seat["seat"])]]
        assert seat["hole_cards"] == expected
    assert document["conditions"]["big_blind_minor"] == 10
    assert {bet["kind"] for bet in document["forced_bets"]} == {"small_blind", "big_blind"}
    assert document["rake_minor"] == hand.rake_minor and document["board"] == hand.board
    assert outsider_check(document) == []


def test_a_timed_out_all_in_is_exported_and_an_outsider_recomputes_its_chips(
    alice: User, bob: User, auditor: User
) -> None:
    hand = timed_out_hand(alice, bob)
    document = logged_in(auditor).get(f"/history/holdem/{hand.pk}/export.json").json()
    jsonschema.Draft202012Validator(holdem_export_schema()).validate(document)
    assert document["actions"][0]["kind"] == "timeout_all_in"
    assert outsider_check(document) == []
    # The check finds a changed figure.
    document["seats"][0]["won_minor"] += 1
    assert outsider_check(document) != []


def test_a_player_gets_only_the_shown_cards_and_his_own(alice: User, bob: User) -> None:
    hand = played_hand(alice, bob)
    state = replay(hand)
    holes = {seat: [card_code(c) for c in state.holes[k]] for k, seat in enumerate(state.seats)}
    shown = hand.results.get("shown", {})
    for user in (alice, bob):
        document = logged_in(user).get(f"/history/holdem/{hand.pk}/export.json").json()
        jsonschema.Draft202012Validator(holdem_export_schema()).validate(document)
        assert document["audience"] == "player"
        for seat in document["seats"]:
            own = seat["name"] == user.username
            if own or str(seat["seat"]) in shown:
                assert seat["hole_cards"] == holes[seat["seat"]]
            else:
                assert seat["hole_cards"] is None
            assert "user_id" not in seat


def test_a_folded_hand_keeps_the_losers_cards_from_the_other_player(alice: User, bob: User) -> None:
    table = holdem_table("Fold Rail")
    now = timezone.now()
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    take_seat(table_id=table.pk, user_id=bob.pk, position=1, buy_in_minor=1_000, now=now)
    tick(table, now)
    hand = HoldemHand.objects.get(table=table)
    state = replay(hand)
    folder = alice if state.to_act == 0 else bob
    other = bob if folder is alice else alice
    act_in_hand(table_id=table.pk, user_id=folder.pk, kind="fold", now=now)
    hand.refresh_from_db()
    folder_cards = [card_code(c) for c in state.holes[state.seats.index(state.to_act)]]
    body = logged_in(other).get(f"/history/holdem/{hand.pk}/export.json").content.decode()
    document = json.loads(body)
    [folded] = [s for s in document["seats"] if s["name"] == folder.username]
    assert folded["hole_cards"] is None and not folded["shown"]
    assert f'"{folder_cards[0]}", "{folder_cards[1]}"' not in body.replace("\n", " ").replace("  ", " ")
    assert outsider_check(document) == []


def test_strangers_and_running_hands_have_no_export(alice: User, bob: User, carol: User, auditor: User) -> None:
    hand = played_hand(alice, bob)
    assert logged_in(carol).get(f"/history/holdem/{hand.pk}/export.json").status_code == 404
    table = holdem_table("Running")
    now = timezone.now()
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    take_seat(table_id=table.pk, user_id=bob.pk, position=1, buy_in_minor=1_000, now=now + timedelta(seconds=1))
    tick(table, now + timedelta(seconds=1))
    running = HoldemHand.objects.get(table=table)
    assert running.status == HoldemHandStatus.PLAYING
    assert logged_in(auditor).get(f"/history/holdem/{running.pk}/export.json").status_code == 404
    with pytest.raises(ValueError):
        build_holdem_export(running, audience="staff")


def test_a_big_blind_posted_out_of_position_has_no_phh_but_a_json_export(
    alice: User, bob: User, carol: User, auditor: User
) -> None:
    from tests.conftest import make_player

    dave = make_player("dave")
    table = holdem_table("Posting Rail")
    now = timezone.now()
    users = {0: alice, 2: bob, 4: carol}
    for position, user in users.items():
        take_seat(table_id=table.pk, user_id=user.pk, position=position, buy_in_minor=1_000, now=now)
    tick(table, now)
    first = HoldemHand.objects.get(table=table)
    take_seat(table_id=table.pk, user_id=dave.pk, position=1, buy_in_minor=1_000, blind="post", now=now)
    users[1] = dave
    while first.status == HoldemHandStatus.PLAYING:
        legal = replay(first).legal_actions()
        act_in_hand(
            table_id=table.pk,
            user_id=users[legal.seat].pk,
            kind="fold" if "check" not in legal.kinds else "check",
            now=now,
        )
        first.refresh_from_db()
    table.refresh_from_db()
    later = max(now, table.phase_deadline or now) + timedelta(milliseconds=1)
    tick(table, later)
    second = HoldemHand.objects.get(table=table, number=2)
    assert 1 in second.setup.get("posting", [])
    while second.status == HoldemHandStatus.PLAYING:
        legal = replay(second).legal_actions()
        kind = passive_kind(legal.kinds)
        act_in_hand(table_id=table.pk, user_id=users[legal.seat].pk, kind=kind, now=later)
        second.refresh_from_db()
    assert not second.phh and second.phh_error
    document = logged_in(auditor).get(f"/history/holdem/{second.pk}/export.json").json()
    jsonschema.Draft202012Validator(holdem_export_schema()).validate(document)
    posted = [bet for bet in document["forced_bets"] if bet["seat"] == 1]
    assert posted == [{"seat": 1, "kind": "big_blind_out_of_position", "ante_minor": 0, "blind_minor": 10}]
    assert outsider_check(document) == []
