"""Algorithm 3 (issue 22, item 1; docs/provably-fair.md, "Algorithm 3"): a hand's inputs
freeze at a published point and the first beacon round released after it decides the deal;
a redeal waits for the first round after its purchase. The fairness audit's attacks, (A) a
database insider grinding a shill's client seed for a royal flush and (B) redeals foreseen
from the stored hand seed, are repeated from what the database holds and no longer work."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any

import jsonschema
import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.test.utils import override_settings
from django.utils import timezone

from handhistory.export import export_schema
from handhistory.verification import verify_hand
from tables import clock
from tables.clock import WAKE_MARGIN, WAKE_TASK, advance_table, recover_table
from tables.engine import fairness
from tables.engine.widerpoker import (
    combination_index,
    deal_board,
    initial_combination_indices,
    redeal_combination,
)
from tables.models import Entry, Hand, HandFreeze, HandStatus, Redeal, SeedChain, Table, TablePhase
from tables.services import beacon
from tables.services.seating import touch_presence
from tables.tasks import advance_table_at
from tables.widerpoker.selectors import get_entry_state, get_table_state
from tables.widerpoker.services.play import buy_redeal, resolve_pending_redeals, set_hold
from tables.widerpoker.services.seating import leave_table
from tests.helpers import logged_in, seat_players
from tests.tables.test_consumers import open_socket
from wallet.selectors import check_books

ALGORITHM_3 = override_settings(DEAL_ALGORITHM=3)


def _freeze(table: Table, players: list[User], now: datetime) -> HandFreeze:
    """Seat ``players`` and run the clock at ``now``: the next hand's inputs freeze."""
    seat_players(table, players, now)
    assert advance_table(table_id=table.pk, now=now)
    table.refresh_from_db()
    assert table.current_hand is None and table.phase == TablePhase.WAITING
    return HandFreeze.objects.get(table=table, abandoned_at__isnull=True)


def _deal_at_round(table: Table, freeze: HandFreeze, players: list[User]) -> Hand:
    """Run the clock when the freeze's deal round is out; return the hand it dealt."""
    at = beacon.time_of(int(freeze.deal_round))
    for user in players:
        touch_presence(table_id=table.pk, user_id=user.pk, now=at)
    assert advance_table(table_id=table.pk, now=at)
    table.refresh_from_db()
    assert table.current_hand is not None, f"no hand dealt (phase {table.phase})"
    return table.current_hand


@ALGORITHM_3
@pytest.mark.django_db(transaction=True)
def test_the_inputs_freeze_in_public_and_the_next_beacon_round_deals(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    freeze = _freeze(table, [alice, bob], now)
    # Published at the freeze: the digest, the element's index and the deal round.
    frame = get_table_state(table_id=table.pk)
    assert frame["hand"] is None
    frozen = frame["frozen"]
    assert frozen is not None
    assert frozen["inputs_digest"] == freeze.digest and frozen["players"] == 2
    assert frozen["deal_round"] == beacon.round_after(now) and frozen["frozen_at"] == now.isoformat()
    assert beacon.time_of(frozen["deal_round"]) > now
    assert frame["deadline"] == beacon.time_of(frozen["deal_round"]).isoformat()

    # Before the round the clock deals nothing, whoever asks.
    advance_table(table_id=table.pk, now=now)
    table.refresh_from_db()
    assert table.current_hand is None and HandFreeze.objects.filter(pk=freeze.pk).exists()

    hand = _deal_at_round(table, freeze, [alice, bob])
    assert hand.algorithm == fairness.ALGORITHM_DEAL_BEACON
    assert (hand.frozen_at, hand.deal_round, hand.inputs_digest) == (now, freeze.deal_round, freeze.digest)
    value = beacon.local_value(int(freeze.deal_round))
    assert hand.deal_beacon_value == value.hex()
    chain = SeedChain.objects.get(pk=freeze.chain_id)
    element = fairness.chain_seed(bytes.fromhex(chain.terminal_seed), chain.length, freeze.chain_index)
    expected = fairness.deal_seed(element, table.pk, hand.number, bytes.fromhex(freeze.digest), value)
    assert hand.server_seed == expected.hex() and hand.chain_index == freeze.chain_index
    assert not HandFreeze.objects.filter(table=table).exists()
    public = get_table_state(table_id=table.pk)
    assert public["hand"] is not None and public["hand"]["deal_round"] == freeze.deal_round


@ALGORITHM_3
@pytest.mark.django_db(transaction=True)
def test_attack_a_a_ground_client_seed_and_the_whole_database_do_not_give_the_hand(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    """The insider reads the chain element and every client seed at the freeze, as the audit
    did: without the deal round's value (not released yet) the hand seed is unknown, and
    each value of the round gives another board and other combinations."""
    freeze = _freeze(table, [alice, bob], now)
    chain = SeedChain.objects.get(pk=freeze.chain_id)
    element = fairness.chain_seed(bytes.fromhex(chain.terminal_seed), chain.length, freeze.chain_index)
    pairs = [(str(name), str(seed)) for _, name, seed in freeze.players]
    # What the insider computed under algorithm 2, and what two different round values give.
    insider = fairness.hand_seed(element, table.pk, freeze.number, pairs)
    digest = bytes.fromhex(freeze.digest)
    assert digest == fairness.client_seeds_digest(pairs)
    one = fairness.deal_seed(element, table.pk, freeze.number, digest, beacon.local_value(int(freeze.deal_round)))
    with override_settings(BEACON_KEY="another beacon key"):
        other = beacon.local_value(int(freeze.deal_round))
        hand = _deal_at_round(table, freeze, [alice, bob])
    dealt = bytes.fromhex(hand.server_seed)
    assert dealt == fairness.deal_seed(element, table.pk, hand.number, digest, other)
    assert len({insider, one, dealt}) == 3
    # The round's value changed the board and the combinations, not only the seed.
    assert hand.board != {"columns": [list(c) for c in _columns(one)], "out": _out(one)}
    assert sorted(Entry.objects.filter(hand=hand).values_list("initial_combination", flat=True)) == sorted(
        initial_combination_indices(dealt, 2).tolist()
    )
    assert initial_combination_indices(dealt, 2).tolist() != initial_combination_indices(one, 2).tolist()


def _columns(seed: bytes) -> list[list[str]]:
    from tables.widerpoker.records import board_to_json

    return list(board_to_json(deal_board(seed))["columns"])


def _out(seed: bytes) -> list[str]:
    from tables.widerpoker.records import board_to_json

    return list(board_to_json(deal_board(seed))["out"])


@ALGORITHM_3
@pytest.mark.django_db(transaction=True)
def test_a_client_seed_set_after_the_freeze_waits_for_the_next_hand(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    freeze = _freeze(table, [alice, bob], now)
    before = {str(name): str(seed) for _, name, seed in freeze.players}
    # The public form, between the freeze and the deal round.
    response = logged_in(alice).post("/history/commitments/", {"client_seed": "ground-after-the-freeze"})
    assert response.status_code in (200, 302)
    hand = _deal_at_round(table, freeze, [alice, bob])
    entry = Entry.objects.get(hand=hand, user=alice)
    assert entry.client_seed == before[alice.username] != "ground-after-the-freeze"
    assert hand.inputs_digest == fairness.client_seeds_digest(sorted(before.items())).hex()
    # The next freeze takes it.
    set_hold(table_id=table.pk, user_id=alice.pk, hold=[True] * 5, now=beacon.time_of(int(freeze.deal_round)))
    settle_at = hand.change_deadline + timedelta(seconds=2)
    assert advance_table(table_id=table.pk, now=settle_at)
    table.refresh_from_db()
    after = table.phase_deadline
    assert after is not None
    for user in (alice, bob):
        touch_presence(table_id=table.pk, user_id=user.pk, now=after)
    assert advance_table(table_id=table.pk, now=after)
    nxt = HandFreeze.objects.get(table=table, abandoned_at__isnull=True)
    assert [alice.pk, alice.username, "ground-after-the-freeze"] in nxt.players


@ALGORITHM_3
@pytest.mark.django_db(transaction=True)
def test_attack_b_a_redeal_waits_for_a_round_after_its_purchase_and_the_export_verifies(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    freeze = _freeze(table, [alice, bob], now)
    hand = _deal_at_round(table, freeze, [alice, bob])
    start = beacon.time_of(int(freeze.deal_round))
    client = logged_in(alice)
    old = Entry.objects.get(hand=hand, user=alice).combination

    # Through the player's door (REST, the real clock): paid, numbered, pending.
    bought = client.post(f"/api/tables/{table.pk}/redeals/")
    assert bought.status_code in (200, 201), bought.content
    assert bought.json()["entry"]["redeal_pending"]["number"] == 0
    redeal = Redeal.objects.get(hand=hand, user=alice)
    assert redeal.combination is None and redeal.number == 0
    assert redeal.beacon_round == beacon.round_after(redeal.created_at)
    assert beacon.time_of(int(redeal.beacon_round)) > redeal.created_at
    state = get_entry_state(table_id=table.pk, user_id=alice.pk)
    assert state["entry"] is not None
    assert state["entry"]["redeal_pending"] == {
        "number": 0,
        "round": redeal.beacon_round,
        "round_at": beacon.time_of(int(redeal.beacon_round)).isoformat(),
    }
    assert state["entry"]["combination"] == [int(d) for d in f"{old:05d}"]
    # A second redeal and a hold are refused while it is pending, with a stable code.
    again = client.post(f"/api/tables/{table.pk}/redeals/")
    assert again.status_code == 409 and again.json()["code"] == "redeal_pending"
    hold = client.post(f"/api/tables/{table.pk}/hold/", {"hold": [True] * 5}, content_type="application/json")
    assert hold.status_code == 409 and hold.json()["code"] == "redeal_pending"

    # (B) Everything in the database at the purchase: the insider's algorithm-2 prediction
    # is not the redeal; the round after the purchase decides it.
    hand.refresh_from_db()
    taken = set(Entry.objects.filter(hand=hand).values_list("combination", flat=True))
    insider = combination_index(redeal_combination(bytes.fromhex(hand.server_seed), taken, 0))
    released = beacon.time_of(int(redeal.beacon_round))
    assert resolve_pending_redeals(now=released - timedelta(seconds=1)) == 0  # not out yet
    assert resolve_pending_redeals(now=released) == 1
    redeal = Redeal.objects.get(pk=redeal.pk)
    assert redeal.beacon_round is not None
    value = beacon.local_value(redeal.beacon_round)
    stream = fairness.redeal_seed(bytes.fromhex(hand.server_seed), 0, value)
    assert redeal.combination == combination_index(redeal_combination(stream, taken, 0)) != insider
    entry = Entry.objects.get(hand=hand, user=alice)
    assert entry.combination == redeal.combination and entry.redeals == [[0, redeal.combination]]
    resolved = get_entry_state(table_id=table.pk, user_id=alice.pk)["entry"]
    assert resolved is not None and resolved["redeal_pending"] is None

    # A redeal bought just before the redeal deadline is dealt after it, at settlement.
    last = hand.redeal_deadline - timedelta(milliseconds=300)
    buy_redeal(table_id=table.pk, user_id=bob.pk, now=last)
    pending = Redeal.objects.get(hand=hand, user=bob)
    assert pending.combination is None and pending.beacon_round is not None
    assert beacon.time_of(pending.beacon_round) > last
    settle_at = hand.change_deadline + timedelta(seconds=2)
    assert start < settle_at
    assert advance_table(table_id=table.pk, now=settle_at)
    hand.refresh_from_db()
    pending = Redeal.objects.get(pk=pending.pk)
    assert hand.status == HandStatus.SETTLED and pending.combination is not None
    assert Entry.objects.get(hand=hand, user=bob).redeals == [[1, pending.combination]]
    assert check_books().ok

    report = verify_hand(hand_id=hand.pk)
    assert report.ok, report.mismatches
    export = client.get(f"/history/hands/{hand.pk}/export.json")
    assert export.status_code == 200
    data = export.json()
    jsonschema.validate(data, export_schema(), format_checker=jsonschema.FormatChecker())
    record = data["hand"]
    assert record["algorithm"] == 3 and record["inputs_digest"] == freeze.digest
    assert record["deal_beacon"]["round"] == freeze.deal_round
    assert record["deal_beacon"]["value"] == beacon.local_value(int(freeze.deal_round)).hex()
    assert [(r["number"], r["round"], r["value"]) for r in record["redeal_rounds"]] == [
        (0, redeal.beacon_round, value.hex()),
        (1, pending.beacon_round, beacon.local_value(pending.beacon_round or 0).hex()),
    ]


def _tamper(hand: Hand, **values: Any) -> None:
    from tests.helpers import behind_the_apps_back

    with behind_the_apps_back():
        Hand.objects.filter(pk=hand.pk).update(**values)


@ALGORITHM_3
@pytest.mark.django_db(transaction=True)
def test_a_frozen_player_barred_before_the_deal_is_left_out_and_nobody_elses_cards_change(
    table: Table, alice: User, bob: User, carol: User, now: datetime
) -> None:
    from wallet import protection

    freeze = _freeze(table, [alice, bob, carol], now)
    everyone = [str(name) for _, name, _ in freeze.players]
    # Carol takes a time-out between the freeze and the deal round: she is not dealt in.
    protection.take_break(user_id=carol.pk, kind="time_out", days=1, now=now)
    hand = _deal_at_round(table, freeze, [alice, bob, carol])
    seed = bytes.fromhex(hand.server_seed)
    assert hand.entry_count == 2 and hand.antes_minor == 200
    # The seed, the order and the combinations are those of all three frozen players.
    order = fairness.entry_order(seed, everyone)
    combos = initial_combination_indices(seed, 3).tolist()
    full = {everyone[i]: combos[at] for at, i in enumerate(order)}
    entries = list(Entry.objects.filter(hand=hand).order_by("join_order").select_related("user"))
    assert [e.user.username for e in entries] == [everyone[i] for i in order if everyone[i] != carol.username]
    assert {e.user.username: e.initial_combination for e in entries} == {
        name: combo for name, combo in full.items() if name != carol.username
    }
    (left_out,) = [row for row in hand.not_dealt if row.get("frozen")]
    assert (
        left_out["player"] == carol.username
        and left_out["client_seed"] == {str(n): str(s) for _, n, s in freeze.players}[carol.username]
    )
    assert advance_table(table_id=table.pk, now=hand.change_deadline + timedelta(seconds=2))
    hand.refresh_from_db()
    assert hand.status == HandStatus.SETTLED and check_books().ok
    report = verify_hand(hand_id=hand.pk)
    assert report.ok, report.mismatches
    # The verifier can fail: a left-out player's client seed rewritten is caught.
    _tamper(hand, not_dealt=[{**left_out, "client_seed": "rewritten"}])
    assert not verify_hand(hand_id=hand.pk).ok


@ALGORITHM_3
@pytest.mark.django_db(transaction=True)
def test_a_hand_cancelled_with_a_redeal_pending_refunds_it_and_still_verifies(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    freeze = _freeze(table, [alice, bob], now)
    hand = _deal_at_round(table, freeze, [alice, bob])
    buy_redeal(table_id=table.pk, user_id=alice.pk, now=hand.started_at)
    recover_table(table_id=table.pk, now=hand.started_at, reason="a malfunction")
    hand.refresh_from_db()
    assert hand.status == HandStatus.CANCELLED and check_books().ok
    assert Redeal.objects.get(hand=hand).combination is None
    report = verify_hand(hand_id=hand.pk)
    assert report.ok, report.mismatches
    data = logged_in(alice).get(f"/history/hands/{hand.pk}/export.json").json()
    jsonschema.validate(data, export_schema(), format_checker=jsonschema.FormatChecker())
    (pending,) = data["hand"]["redeal_rounds"]
    assert pending["player"] == alice.username and pending["dealt_at"] is None


@ALGORITHM_3
@pytest.mark.django_db(transaction=True)
def test_a_player_who_leaves_while_the_hand_is_frozen_pays_nothing_and_changes_no_card(
    table: Table, alice: User, bob: User, carol: User, now: datetime
) -> None:
    from wallet.selectors import get_balance_minor

    freeze = _freeze(table, [alice, bob, carol], now)
    before = get_balance_minor(user_id=carol.pk, currency="FUN")
    leave_table(table_id=table.pk, user_id=carol.pk, now=now)
    hand = _deal_at_round(table, freeze, [alice, bob])
    assert get_balance_minor(user_id=carol.pk, currency="FUN") == before
    assert not Entry.objects.filter(hand=hand, user=carol).exists()
    (left,) = [row for row in hand.not_dealt if row.get("frozen")]
    assert (left["player"], left["reason"]) == (carol.username, "left")
    seed = bytes.fromhex(hand.server_seed)
    everyone = [str(name) for _, name, _ in freeze.players]
    order = fairness.entry_order(seed, everyone)
    combos = initial_combination_indices(seed, 3).tolist()
    full = {everyone[i]: combos[at] for at, i in enumerate(order)}
    assert {e.user.username: e.initial_combination for e in Entry.objects.filter(hand=hand).select_related("user")} == {
        alice.username: full[alice.username],
        bob.username: full[bob.username],
    }


def _record_wakes(monkeypatch: pytest.MonkeyPatch, record: Any) -> None:
    """Hand the wakes the clock sends to Celery (``clock.wake_table_at``) to ``record(args,
    eta, expires)`` instead of the broker; each must name the task that steps the table."""

    def send_task(name: str, *, args: tuple[int, ...], eta: datetime, expires: datetime, retry: bool) -> None:
        assert name == WAKE_TASK == advance_table_at.name and retry is False
        record(args, eta, expires)

    monkeypatch.setattr(clock, "current_app", SimpleNamespace(send_task=send_task))


async def _table_state_over_a_socket(user: User, table_id: int) -> dict[str, Any]:
    """The ``table_state`` frame a game socket opened now by ``user`` gets first."""
    communicator = await open_socket(user, table_id)
    try:
        frame: dict[str, Any] = json.loads(await communicator.receive_from(timeout=10))
    finally:
        await communicator.disconnect()
    assert frame["type"] == "table_state"
    return frame


@ALGORITHM_3
@override_settings(BEACON_PERIOD_SECONDS=3)
@pytest.mark.django_db(transaction=True)
def test_the_next_hand_freezes_before_the_results_end_and_is_dealt_as_they_end(
    table: Table,
    alice: User,
    bob: User,
    carol: User,
    now: datetime,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 23, item 2 (docs/provably-fair.md 1.9): the next hand's inputs freeze one beacon
    period before the results end, so its deal round is out when they end and the hand is
    dealt then, with no freeze or beacon wait between the results and the change phase; the
    first hand of a waiting table is dealt at its round, with no lead. With the clock in
    Celery, each freeze's step queues the table's wake at its deal time (an ETA task), so
    the deal does not wait for the next tick; that task deals nothing a moment early."""
    settings.TABLE_CLOCK = "beat"
    wakes: list[tuple[tuple[int, ...], datetime, datetime]] = []
    _record_wakes(monkeypatch, lambda args, eta, expires: wakes.append((args, eta, expires)))
    first = _freeze(table, [alice, bob], now)
    assert first.deal_at == beacon.time_of(int(first.deal_round))
    assert [(args, eta) for args, eta, _ in wakes] == [((table.pk,), first.deal_at + WAKE_MARGIN)]
    assert wakes[0][2] > wakes[0][1]  # it expires after its time, not before
    hand = _deal_at_round(table, first, [alice, bob])
    results = timedelta(seconds=table.widerpoker.results_seconds)
    # Settled at a second that puts the next deal round strictly inside the results, so the
    # test sees its value out and the hand still not dealt.
    settle_at = next(
        at
        for at in (hand.change_deadline + timedelta(seconds=4 + k) for k in range(3))
        if beacon.time_of(beacon.round_after(at + results - timedelta(seconds=3))) < at + results
    )
    for user in (alice, bob):
        touch_presence(table_id=table.pk, user_id=user.pk, now=settle_at)
    assert advance_table(table_id=table.pk, now=settle_at)
    table.refresh_from_db()
    assert results > timedelta(seconds=3)
    results_end = settle_at + results
    assert table.phase == TablePhase.RESULTS
    assert table.phase_deadline == results_end - timedelta(seconds=3)

    # At that deadline the inputs freeze; the round is out before the results end.
    frozen_at = results_end - timedelta(seconds=3)
    for user in (alice, bob):
        touch_presence(table_id=table.pk, user_id=user.pk, now=frozen_at)
    assert advance_table(table_id=table.pk, now=frozen_at)
    freeze = HandFreeze.objects.get(table=table, abandoned_at__isnull=True)
    table.refresh_from_db()
    assert freeze.frozen_at == frozen_at and freeze.deal_at == results_end
    assert wakes[-1][:2] == ((table.pk,), results_end + WAKE_MARGIN)
    released = beacon.time_of(int(freeze.deal_round))
    assert frozen_at < released < results_end
    assert table.phase_deadline == results_end
    public = get_table_state(table_id=table.pk)
    assert public["frozen"] is not None and public["frozen"]["deal_at"] == results_end.isoformat()
    assert public["deadline"] == results_end.isoformat()
    # A player's socket opened now is told the same (docs/protocol.md, ``frozen.deal_at``).
    over_socket = async_to_sync(_table_state_over_a_socket)(bob, table.pk)
    assert over_socket["frozen"]["deal_at"] == results_end.isoformat()
    assert over_socket["deadline"] == results_end.isoformat()

    # The round's value is out, but the results are not over: nothing is dealt before they
    # end, even when a player joining (for the hand after) wakes the waiting table.
    seat_players(table, [carol], released)
    table.refresh_from_db()
    assert table.phase_deadline == released
    advance_table(table_id=table.pk, now=released)
    table.refresh_from_db()
    assert table.current_hand is None and table.phase_deadline == results_end
    assert wakes[-1][:2] == ((table.pk,), results_end + WAKE_MARGIN)  # asked again by that step
    # The queued wake, run by the worker (its clock, ``timezone.now``, set to the moment):
    # nothing a moment before the results end; the deal as they end.
    monkeypatch.setattr(timezone, "now", lambda: results_end - timedelta(milliseconds=1))
    assert not advance_table_at(table.pk)
    table.refresh_from_db()
    assert table.current_hand is None and table.phase_deadline == results_end
    monkeypatch.setattr(timezone, "now", lambda: results_end + WAKE_MARGIN)
    assert advance_table_at(table.pk)
    dealt = Table.objects.get(pk=table.pk).current_hand
    assert dealt is not None and dealt.number == 2
    assert dealt.deal_round == freeze.deal_round and dealt.frozen_at == frozen_at
    assert not Entry.objects.filter(hand=dealt, user=carol).exists()
    assert check_books().ok


@ALGORITHM_3
@pytest.mark.django_db(transaction=True)
def test_a_wake_the_broker_cannot_take_leaves_the_table_to_the_tick(
    table: Table, alice: User, bob: User, now: datetime, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The broker unreachable when a freeze's step asks for its wake: the freeze is kept
    (logged, not raised), and the next tick deals the hand at its round all the same."""
    settings.TABLE_CLOCK = "beat"

    def unreachable(args: tuple[int, ...], eta: datetime, expires: datetime) -> None:
        raise ConnectionError("broker unreachable")

    _record_wakes(monkeypatch, unreachable)
    freeze = _freeze(table, [alice, bob], now)
    assert _deal_at_round(table, freeze, [alice, bob]).number == 1


@ALGORITHM_3
@pytest.mark.django_db(transaction=True)
def test_the_hand_settles_as_its_keys_round_is_released_not_at_the_next_tick(
    table: Table, alice: User, bob: User, now: datetime, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the change deadline the keys' beacon round (the first after it) is not out yet: the
    table is due at the round's time, and with the clock in Celery its wake is queued for
    then; run by the worker at that moment, it settles the hand."""
    settings.TABLE_CLOCK = "beat"
    wakes: list[tuple[tuple[int, ...], datetime]] = []
    _record_wakes(monkeypatch, lambda args, eta, expires: wakes.append((args, eta)))
    freeze = _freeze(table, [alice, bob], now)
    hand = _deal_at_round(table, freeze, [alice, bob])
    wakes.clear()  # the freeze's wake at its deal round (the test above)
    keys_round = beacon.time_of(int(hand.beacon_round or 0))
    assert keys_round > hand.change_deadline
    for user in (alice, bob):
        touch_presence(table_id=table.pk, user_id=user.pk, now=hand.change_deadline)
    advance_table(table_id=table.pk, now=hand.change_deadline)
    table.refresh_from_db()
    assert table.phase == TablePhase.CHANGE and table.phase_deadline == keys_round
    assert wakes == [((table.pk,), keys_round + WAKE_MARGIN)]
    monkeypatch.setattr(timezone, "now", lambda: keys_round + WAKE_MARGIN)
    assert advance_table_at(table.pk)
    table.refresh_from_db()
    assert table.phase == TablePhase.RESULTS
    assert Hand.objects.get(pk=hand.pk).status == HandStatus.SETTLED
    assert check_books().ok
