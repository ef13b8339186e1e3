"""Hold'em algorithm 3 (docs/provably-fair.md, section 12; issue 22, attack 3): the next
hand's inputs (players dealt in, their client seeds, house bots' included, the chain
element, the button) freeze and are published before the beacon round that completes the
hand seed, so nobody (the house, the bots' owner, a database insider) can choose or foresee
the deck. Driven on the real clock (``advance_table``), through the doors people use: the
table's snapshot and socket, the commitments form, the export an outsider downloads."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import jsonschema
import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.test import override_settings
from django.utils import timezone

from handhistory.holdem import hand_seed_checks, verify_holdem_hand
from handhistory.holdem_export import holdem_export_schema
from tables.clock import advance_table
from tables.engine import fairness
from tables.engine.holdem import card_salts, deal_positions, deal_seed, holdem_deck
from tables.holdem.records import replay
from tables.holdem.services import act_in_hand, cancel_holdem_hand, hands, take_seat
from tables.models import (
    HoldemFreeze,
    HoldemFreezeStatus,
    HoldemHand,
    HoldemHandStatus,
    PlayerClientSeed,
    Seat,
    Table,
)
from tables.services import beacon
from tables.services.seating import touch_presence
from tests.conftest import make_player
from tests.handhistory.test_holdem_export import outsider_check
from tests.helpers import behind_the_apps_back, logged_in
from tests.tables.holdem_helpers import holdem_table
from tests.tables.test_consumers import open_socket, receive


def _freeze_at_a_bot_table(alice: User, now: Any) -> tuple[Table, HoldemFreeze]:
    """Alice sits at a fun table that seats two house bots; the clock's first step freezes
    the hand (the bots seated with it)."""
    table = holdem_table(bot_seats=2)
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    assert advance_table(table_id=table.pk, now=now)
    return table, HoldemFreeze.objects.get(table=table)


@pytest.mark.django_db(transaction=True)
def test_the_inputs_freeze_before_the_round_and_nothing_changed_after_moves_the_deck(alice: User, carol: User) -> None:
    now = timezone.now()
    table, freeze = _freeze_at_a_bot_table(alice, now)
    assert not HoldemHand.objects.filter(table=table).exists()  # nothing dealt at the freeze
    assert freeze.status == HoldemFreezeStatus.PENDING
    assert freeze.deal_round == beacon.round_after(now) and beacon.time_of(freeze.deal_round) > now
    table.refresh_from_db()
    assert table.phase_deadline == freeze.deal_at >= beacon.time_of(freeze.deal_round)
    bots = [p for p in freeze.inputs["players"] if p["bot"]]
    assert len(bots) == 2 and len({p["client_seed"] for p in bots}) == 2  # fresh, one each

    # What everyone sees before the round: the frozen inputs, each client seed as its commitment.
    snapshot = logged_in(carol).get(f"/tables/{table.pk}/snapshot.json")
    published = snapshot.json()["table"]["next_hand"]
    assert published["digest"] == freeze.digest and published["deal_round"] == freeze.deal_round
    assert [(s["seat"], s["bot"]) for s in published["seats"]] == sorted(
        (p["seat"], p["bot"]) for p in freeze.inputs["players"]
    )
    for player in freeze.inputs["players"]:
        assert player["client_seed"].encode() not in snapshot.content

    # The round is not out: the clock does not deal before it.
    assert not advance_table(table_id=table.pk, now=freeze.deal_at - timedelta(milliseconds=1))
    # After the freeze Alice changes her client seed on the commitments form, and an insider
    # writes the bots' stored seeds: neither reaches this hand (Alice's counts from the next).
    assert logged_in(alice).post("/history/commitments/", {"client_seed": "changed-after-freeze"}).status_code in (
        200,
        302,
    )
    assert PlayerClientSeed.objects.get(user=alice).seed == "changed-after-freeze"
    for bot in bots:
        PlayerClientSeed.objects.update_or_create(
            user_id=bot["user_id"], defaults={"seed": "qq-vs-kk", "updated_at": now}
        )

    assert advance_table(table_id=table.pk, now=freeze.deal_at)
    hand = HoldemHand.objects.get(table=table)
    assert hand.algorithm == 3 and hand.started_at == freeze.deal_at
    assert hand.client_seeds == [[p["name"], p["client_seed"]] for p in freeze.inputs["players"]]
    assert "changed-after-freeze" not in json.dumps(hand.client_seeds)
    assert hand.freeze_digest == published["digest"] and hand.deal_round == published["deal_round"]
    assert hand.deal_round is not None
    value = beacon.local_value(hand.deal_round)
    assert hand.deal_beacon_value == value.hex()
    v2 = fairness.hand_seed(
        bytes.fromhex(hand.chain_seed), table.pk, hand.number, [(n, s) for n, s in hand.client_seeds]
    )
    assert hand.server_seed == deal_seed(v2, bytes.fromhex(hand.freeze_digest), value).hex()
    # The deck depends on the round's value: the next round's would deal another deck.
    other = deal_seed(v2, bytes.fromhex(hand.freeze_digest), beacon.local_value(hand.deal_round + 1))
    assert holdem_deck(other) != holdem_deck(bytes.fromhex(hand.server_seed))
    checks = hand_seed_checks(hand)  # the hand runs: its seed checks (the rest needs its end)
    assert len(checks) == 4 and all(check.ok for check in checks), checks


@pytest.mark.django_db(transaction=True)
def test_a_bot_seed_written_into_the_frozen_record_after_the_freeze_is_caught(alice: User) -> None:
    now = timezone.now()
    table, freeze = _freeze_at_a_bot_table(alice, now)
    inputs = freeze.inputs
    bot = next(p for p in inputs["players"] if p["bot"])
    bot["client_seed"] = "ground-for-a-cooler"
    with behind_the_apps_back():
        HoldemFreeze.objects.filter(pk=freeze.pk).update(inputs=inputs)
    assert advance_table(table_id=table.pk, now=freeze.deal_at)
    hand = HoldemHand.objects.get(table=table)
    failed = {check.name for check in verify_holdem_hand(hand) if not check.ok}
    assert "frozen inputs = the freeze digest published before the deal" in failed


@pytest.mark.django_db(transaction=True)
def test_a_silent_beacon_voids_the_frozen_hand_with_its_evidence_and_the_next_one_freezes(alice: User) -> None:
    now = timezone.now()
    with override_settings(BEACON="drand", DRAND_URL="http://127.0.0.1:9"):
        table, freeze = _freeze_at_a_bot_table(alice, now)
        advance_table(table_id=table.pk, now=freeze.deal_at)  # no value yet: it waits
        assert not HoldemHand.objects.filter(table=table).exists()
        due = beacon.time_of(freeze.deal_round)
        assert advance_table(table_id=table.pk, now=due + timedelta(seconds=61))
    freeze.refresh_from_db()
    assert freeze.status == HoldemFreezeStatus.VOID and freeze.hand is None
    assert freeze.evidence is not None and freeze.evidence["round"] == freeze.deal_round
    assert "did not answer" in freeze.evidence["reason"] and freeze.evidence["answer"]
    fresh = HoldemFreeze.objects.get(table=table, status=HoldemFreezeStatus.PENDING)
    assert fresh.number == freeze.number and fresh.chain_index == (freeze.chain_index or 0) + 1
    assert Seat.objects.get(table=table, user=alice).stack_minor == 1_000  # nothing was staked


def _unshown_secrets(hand: HoldemHand) -> list[str]:
    """What a watcher must never get while the seeds are held back: the seeds, every client
    seed (the bots' included) and the salt of every hole card not shown."""
    state = replay(hand)
    n = state.player_count
    salts = card_salts(bytes.fromhex(hand.server_seed), 2 * n + 8)
    shown = hand.results.get("shown", {})
    holes = [
        salts[p].hex()
        for k, pair in enumerate(deal_positions(n).holes)
        if str(state.seats[k]) not in shown
        for p in pair
    ]
    return [hand.server_seed, hand.chain_seed, *(seed for _n, seed in hand.client_seeds), *holes]


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_watchers_socket_gets_the_freeze_but_no_unshown_card_and_the_export_verifies() -> None:
    alice = await sync_to_async(make_player)("alice")
    carol = await sync_to_async(make_player)("carol")
    table = await sync_to_async(holdem_table)(bot_seats=2)
    watcher = await open_socket(carol, table.pk)
    await receive(watcher, "holdem_state")
    now = timezone.now()
    await sync_to_async(take_seat)(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    await sync_to_async(advance_table)(table_id=table.pk, now=now)
    freeze = await sync_to_async(HoldemFreeze.objects.get)(table=table)
    await sync_to_async(advance_table)(table_id=table.pk, now=freeze.deal_at)
    hand = await sync_to_async(HoldemHand.objects.get)(table=table)

    def play_out() -> HoldemHand:
        """Alice folds when her turn comes; the bots play on the clock to the end."""
        moment = freeze.deal_at
        for _ in range(60):
            hand.refresh_from_db()
            if hand.status != HoldemHandStatus.PLAYING:
                return hand
            legal = replay(hand).legal_actions()
            if legal.seat == 0:
                act_in_hand(table_id=table.pk, user_id=alice.pk, kind="fold", now=moment)
                continue
            table.refresh_from_db()
            moment = max(moment, table.phase_deadline or moment)
            touch_presence(table_id=table.pk, user_id=alice.pk, now=moment)
            advance_table(table_id=table.pk, now=moment)
        raise AssertionError("the hand did not end")

    hand = await sync_to_async(play_out)()
    frames: list[dict[str, Any]] = []
    for _ in range(80):  # until the hand's result reaches the watcher
        frames.append(json.loads(await watcher.receive_from(timeout=10)))
        if frames[-1]["type"] == "holdem_state" and ((frames[-1]["hand"] or {}).get("result")):
            break
    await watcher.disconnect()
    states = [f for f in frames if f["type"] == "holdem_state"]
    assert any((f.get("next_hand") or {}).get("digest") == hand.freeze_digest for f in states)
    assert any(((f.get("hand") or {}).get("freeze") or {}).get("round_value") == hand.deal_beacon_value for f in states)
    assert all(f["hole"] is None and f["seat"] is None for f in frames if f["type"] == "holdem_private")
    texts = json.dumps(frames)
    secrets_ = await sync_to_async(_unshown_secrets)(hand)
    assert [secret for secret in secrets_ if secret in texts] == []
    # Alice's export (a player's) holds the seeds back; the auditor's verifies from the document alone.
    mine = await sync_to_async(lambda: logged_in(alice).get(f"/history/holdem/{hand.pk}/export.json").json())()
    assert mine["fairness"]["server_seed"] is None and all(r["seed"] is None for r in mine["fairness"]["client_seeds"])
    assert all(secret not in json.dumps(mine) for secret in secrets_[:2])

    def staff_document() -> dict[str, Any]:
        from django.contrib.auth.models import Group

        from backoffice.management.commands.create_staff_groups import ensure_staff_groups

        ensure_staff_groups()
        auditor = User.objects.create_user(username="auditor", password="auditor pass 1", is_staff=True)
        auditor.groups.add(Group.objects.get(name="Auditors"))
        return dict(logged_in(auditor).get(f"/history/holdem/{hand.pk}/export.json").json())

    document = await sync_to_async(staff_document)()
    jsonschema.Draft202012Validator(holdem_export_schema()).validate(document)
    assert document["fairness"]["algorithm"] == 3
    assert sum(1 for r in document["fairness"]["client_seeds"] if r["bot"]) == 2
    assert outsider_check(document) == []
    document["fairness"]["client_seeds"][1]["seed"] = "another"
    assert outsider_check(document) != []


@pytest.mark.django_db(transaction=True)
def test_the_next_hand_freezes_within_the_pause_and_is_dealt_when_the_pause_ends(alice: User, bob: User) -> None:
    """The beacon adds no wait between hands (docs/holdem-screen.md, Timing): the inputs of
    the next hand freeze one beacon period before the 4 s pause ends, and the hand is dealt
    at the pause's end, its round out by then."""
    table = holdem_table()
    now = timezone.now()
    for user, position in ((alice, 0), (bob, 1)):
        take_seat(table_id=table.pk, user_id=user.pk, position=position, buy_in_minor=1_000, now=now)
    assert advance_table(table_id=table.pk, now=now)
    first = HoldemFreeze.objects.get(table=table)
    assert advance_table(table_id=table.pk, now=first.deal_at)
    hand = HoldemHand.objects.get(table=table)
    end = first.deal_at + timedelta(seconds=2)
    actor = alice if replay(hand).to_act == 0 else bob
    act_in_hand(table_id=table.pk, user_id=actor.pk, kind="fold", now=end)
    hand.refresh_from_db()
    assert hand.status == HoldemHandStatus.SETTLED and hand.settled_at == end
    table.refresh_from_db()
    pause = hands.RESULTS_PAUSE
    assert table.phase_deadline == end + pause - hands.freeze_lead()
    for user in (alice, bob):
        touch_presence(table_id=table.pk, user_id=user.pk, now=table.phase_deadline)
    assert advance_table(table_id=table.pk, now=table.phase_deadline)
    second = HoldemFreeze.objects.get(table=table, status=HoldemFreezeStatus.PENDING)
    assert second.deal_at == end + pause and beacon.time_of(second.deal_round) <= end + pause
    assert second.chain_index == (first.chain_index or 0) + 1 and second.commitment == hand.chain_seed
    assert advance_table(table_id=table.pk, now=second.deal_at)
    dealt = HoldemHand.objects.get(table=table, number=2)
    assert dealt.started_at - end == pause  # the same pause as before the freeze


@pytest.mark.django_db(transaction=True)
def test_verify_hands_names_a_deal_round_value_that_is_not_the_beacons(alice: User) -> None:
    """The auditor's ``verify_hands`` checks of algorithm 3: a round value written over the
    hand's after the deal is neither the beacon's nor the one the seed mixed in."""
    from handhistory.holdem_verification import verify_holdem_hand_records

    now = timezone.now()
    table, freeze = _freeze_at_a_bot_table(alice, now)
    assert advance_table(table_id=table.pk, now=freeze.deal_at)
    hand = HoldemHand.objects.get(table=table)
    with behind_the_apps_back():
        HoldemHand.objects.filter(pk=hand.pk).update(deal_beacon_value="ab" * 32)
    hand.refresh_from_db()
    failed = {check.name for check in hand_seed_checks(hand) if not check.ok}
    assert failed == {
        "the deal round's value is the beacon's",
        "hand seed from the chain seed, client seeds, freeze and round",
    }
    cancel_holdem_hand(table=table, reason="a malfunction", now=now)  # terminal: the auditor's check runs
    hand.refresh_from_db()
    report = verify_holdem_hand_records(hand)
    assert "the deal round's value is the beacon's" in {check.name for check in report.mismatches}
