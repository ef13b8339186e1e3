"""Hold'em tables on the platform: seats and buy-ins, hands on the clock, actions and their
error codes, timeouts, leaving mid-hand, bots, rake, PHH, and the secret rule."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from config.infra.errors import DomainError
from tables.clock import advance_table, recover_table
from tables.engine.cards import card_code
from tables.engine.holdem import holdem_deck
from tables.errors import (
    AlreadySeatedError,
    BuyInOutOfRangeError,
    HandInProgressError,
    HoldemActionError,
    InvalidActionError,
    InvalidSeatError,
    InvalidTableConfigError,
    SeatTakenError,
    WrongGameError,
)
from tables.games import change_table_config
from tables.holdem.selectors import (
    HoldemTableRows,
    build_holdem_table_frame,
    get_holdem_private_frame,
    get_holdem_table_frame,
    read_holdem_conditions,
    read_holdem_seats,
)
from tables.holdem.services import (
    act_in_hand,
    add_chips,
    leave_holdem_table,
    replay,
    sit_out_holdem,
    take_seat,
)
from tables.models import HoldemConditions, HoldemHand, HoldemHandStatus, Seat, SeatStatus, Table, TableConfigChange
from tables.services.seating import touch_presence
from tables.widerpoker.services.seating import join_table
from tests.helpers import create_fun_table
from tests.tables.holdem_helpers import (
    assert_books,
    assert_phh_replays,
    escrow_balance,
    holdem_table,
    passive_kind,
    run_until,
    tick,
)
from wallet import protection
from wallet.errors import InsufficientFundsError, SuspendedError
from wallet.selectors import get_balance_minor

pytestmark = pytest.mark.django_db


@pytest.fixture
def table(db: Any) -> Table:
    return holdem_table()


def seat_two(table: Table, alice: User, bob: User, now: Any) -> None:
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    take_seat(table_id=table.pk, user_id=bob.pk, position=3, buy_in_minor=1_000, now=now)


def test_a_buy_in_moves_chips_from_the_wallet_into_the_table_escrow(table: Table, alice: User) -> None:
    before = get_balance_minor(user_id=alice.pk, currency="FUN")
    seat = take_seat(table_id=table.pk, user_id=alice.pk, position=2, buy_in_minor=500, now=timezone.now())
    assert seat.stack_minor == 500
    assert get_balance_minor(user_id=alice.pk, currency="FUN") == before - 500
    assert escrow_balance(table) == 500
    assert_books(table)


def test_seat_and_buy_in_errors_have_stable_codes(table: Table, alice: User, bob: User) -> None:
    now = timezone.now()
    cases: list[tuple[dict[str, Any], type[DomainError], str]] = [
        ({"position": 6, "buy_in_minor": 500}, InvalidSeatError, "invalid_seat"),
        ({"position": 0, "buy_in_minor": 100}, BuyInOutOfRangeError, "buy_in_out_of_range"),
        ({"position": 0, "buy_in_minor": 2_001}, BuyInOutOfRangeError, "buy_in_out_of_range"),
        ({"position": 0, "buy_in_minor": 500, "blind": "maybe"}, InvalidActionError, "invalid_action"),
    ]
    for kwargs, error, code in cases:
        with pytest.raises(error) as caught:
            take_seat(table_id=table.pk, user_id=alice.pk, now=now, **kwargs)
        assert caught.value.code == code
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=500, now=now)
    with pytest.raises(AlreadySeatedError):
        take_seat(table_id=table.pk, user_id=alice.pk, position=1, buy_in_minor=500, now=now)
    with pytest.raises(SeatTakenError):
        take_seat(table_id=table.pk, user_id=bob.pk, position=0, buy_in_minor=500, now=now)
    wider = create_fun_table()
    with pytest.raises(WrongGameError):
        take_seat(table_id=wider.pk, user_id=bob.pk, position=0, buy_in_minor=500, now=now)
    assert_books(table)


def test_a_buy_in_beyond_the_wallet_changes_nothing(alice: User) -> None:
    rich = holdem_table("Deep", min_buy_in_minor=200, max_buy_in_minor=10_000_000)
    balance = get_balance_minor(user_id=alice.pk, currency="FUN")
    with pytest.raises(InsufficientFundsError):
        take_seat(table_id=rich.pk, user_id=alice.pk, position=0, buy_in_minor=balance + 1, now=timezone.now())
    assert not Seat.objects.filter(table=rich, position__isnull=False).exists()
    assert get_balance_minor(user_id=alice.pk, currency="FUN") == balance


def test_a_suspended_player_cannot_buy_in(table: Table, alice: User, croupier: User) -> None:
    now = timezone.now()
    protection.suspend_player(user_id=alice.pk, reason="review", staff_user_id=croupier.pk, now=now)
    with pytest.raises(SuspendedError):
        take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=500, now=now)


def test_two_players_are_dealt_a_hand_from_the_table_seed_chain(table: Table, alice: User, bob: User) -> None:
    now = timezone.now()
    seat_two(table, alice, bob, now)
    assert tick(table, now + timedelta(milliseconds=1))
    hand = HoldemHand.objects.get(table=table)
    assert table.phase == "playing" and hand.status == HoldemHandStatus.PLAYING
    state = replay(hand)
    assert state.seats in ((0, 3), (3, 0)) and state.to_act is not None
    assert hand.chain_seed and hand.commitment != hand.server_seed
    deck = holdem_deck(bytes.fromhex(hand.server_seed))
    assert [c for pair in state.holes for c in pair] == [deck[k] for k in (0, 2, 1, 3)]


def test_actions_are_validated_by_the_engine_with_its_codes(table: Table, alice: User, bob: User) -> None:
    now = timezone.now()
    seat_two(table, alice, bob, now)
    tick(table, now)
    state = replay(HoldemHand.objects.get(table=table))
    actor, other = (alice, bob) if state.to_act == 0 else (bob, alice)
    with pytest.raises(HoldemActionError) as caught:
        act_in_hand(table_id=table.pk, user_id=other.pk, kind="call", now=now)
    assert caught.value.code == "not_your_turn"
    with pytest.raises(HoldemActionError) as caught:
        act_in_hand(table_id=table.pk, user_id=actor.pk, kind="raise", amount=11, now=now)
    assert caught.value.code == "amount_too_small"
    with pytest.raises(HoldemActionError) as caught:
        act_in_hand(table_id=table.pk, user_id=actor.pk, kind="raise", amount=5_000, now=now)
    assert caught.value.code == "amount_too_large"
    with pytest.raises(InvalidActionError):
        act_in_hand(table_id=table.pk, user_id=actor.pk, kind="dance", now=now)
    with pytest.raises(InvalidActionError):
        act_in_hand(table_id=table.pk, user_id=actor.pk, kind="raise", amount="lots", now=now)
    assert HoldemHand.objects.get(table=table).actions == []


def test_a_hand_played_to_the_end_pays_the_pot_and_the_rake(table: Table, alice: User, bob: User) -> None:
    now = timezone.now()
    seat_two(table, alice, bob, now)
    tick(table, now)
    hand = HoldemHand.objects.get(table=table)
    by_seat = {0: alice, 3: bob}
    rake_before = _rake_balance()
    for _ in range(40):
        state = replay(hand)
        if state.is_over or hand.status != HoldemHandStatus.PLAYING:
            break
        legal = state.legal_actions()
        kind = passive_kind(legal.kinds)
        if state.street == 0 and "raise" in legal.kinds and not hand.actions:
            act_in_hand(table_id=table.pk, user_id=by_seat[legal.seat].pk, kind="raise", amount=100, now=now)
        else:
            act_in_hand(table_id=table.pk, user_id=by_seat[legal.seat].pk, kind=kind, now=now)
        hand.refresh_from_db()
    hand.refresh_from_db()
    assert hand.status == HoldemHandStatus.SETTLED
    assert hand.pot_minor == 200 and hand.rake_minor == 10  # 5% of 200, flop dealt
    assert _rake_balance() - rake_before == 10
    assert sum(hand.results["finishing_stacks"].values()) == 2_000 - 10
    # The record says what each pot paid (docs/holdem.md, rake): one pot here, its rake 10.
    [pot] = hand.results["pots"]
    assert pot["amount"] == 200 and pot["rake"] == 10 and set(pot["winners"]) <= {0, 3}
    assert len(hand.board) == 5
    table.refresh_from_db()
    assert table.phase == "results"
    assert_books(table)
    assert assert_phh_replays(table) == 1


def _rake_balance() -> int:
    from wallet.models import Account

    account = Account.objects.filter(key="rake:FUN").first()
    return 0 if account is None else int(account.balance_minor)


def test_no_flop_no_drop(table: Table, alice: User, bob: User) -> None:
    now = timezone.now()
    seat_two(table, alice, bob, now)
    tick(table, now)
    hand = HoldemHand.objects.get(table=table)
    state = replay(hand)
    user = alice if state.to_act == 0 else bob
    act_in_hand(table_id=table.pk, user_id=user.pk, kind="fold", now=now)
    hand.refresh_from_db()
    assert hand.status == HoldemHandStatus.SETTLED and hand.rake_minor == 0
    assert hand.results["shown"] == {} and hand.board == []
    assert_books(table)


def test_the_clock_folds_or_checks_for_a_player_out_of_time(table: Table, alice: User, bob: User) -> None:
    now = timezone.now()
    seat_two(table, alice, bob, now)
    tick(table, now)
    table.refresh_from_db()
    assert table.phase_deadline is not None
    assert table.phase_deadline - now == timedelta(seconds=30)  # 10 s + the 20 s time bank
    assert not tick(table, table.phase_deadline - timedelta(milliseconds=1))
    tick(table, table.phase_deadline)
    hand = HoldemHand.objects.get(table=table)
    assert hand.actions[0]["timeout"] is True
    # The small blind (heads-up: the button) has chips in: a connected player facing the
    # big blind times out all-in (seed 003), staying in for what is already in.
    assert hand.actions[0]["kind"] == "timeout_all_in"
    assert_books(table)


def test_a_disconnected_player_is_sat_out_before_the_next_hand(table: Table, alice: User, bob: User) -> None:
    now = timezone.now()
    seat_two(table, alice, bob, now)
    later = now + timedelta(minutes=5)
    touch_presence(table_id=table.pk, user_id=alice.pk, now=later)
    advance_table(table_id=table.pk, now=later)
    bob_seat = Seat.objects.get(table=table, user=bob)
    assert bob_seat.status == SeatStatus.SITTING_OUT and bob_seat.status_reason == "disconnected"
    assert not HoldemHand.objects.filter(table=table).exists()


def test_leaving_mid_hand_folds_and_returns_the_chips_after_the_hand(table: Table, alice: User, bob: User) -> None:
    now = timezone.now()
    seat_two(table, alice, bob, now)
    tick(table, now)
    hand = HoldemHand.objects.get(table=table)
    state = replay(hand)
    leaver = alice if state.to_act == 0 else bob
    before = get_balance_minor(user_id=leaver.pk, currency="FUN")
    assert leave_holdem_table(table_id=table.pk, user_id=leaver.pk, now=now) == 0
    assert get_balance_minor(user_id=leaver.pk, currency="FUN") == before  # chips still in play
    assert_books(table)
    tick(table, now + timedelta(milliseconds=1))
    hand.refresh_from_db()
    assert hand.status == HoldemHandStatus.SETTLED and hand.actions[0]["kind"] == "fold"
    seat = Seat.objects.get(table=table, user=leaver)
    assert seat.status == SeatStatus.LEFT and seat.position is None and seat.stack_minor == 0
    assert get_balance_minor(user_id=leaver.pk, currency="FUN") == before + 995  # lost the small blind
    assert_books(table)


def test_no_chips_are_bought_during_a_hand(table: Table, alice: User, bob: User) -> None:
    now = timezone.now()
    seat_two(table, alice, bob, now)
    tick(table, now)
    with pytest.raises(HandInProgressError):
        add_chips(table_id=table.pk, user_id=alice.pk, amount_minor=100, now=now)
    assert_books(table)


def test_hole_cards_never_reach_public_frames_or_other_players(table: Table, alice: User, bob: User) -> None:
    now = timezone.now()
    seat_two(table, alice, bob, now)
    tick(table, now)
    hand = HoldemHand.objects.get(table=table)
    state = replay(hand)
    public = json.dumps(get_holdem_table_frame(table_id=table.pk, now=now))
    alice_view = get_holdem_private_frame(table_id=table.pk, user_id=alice.pk, now=now)
    alice_cards = [card_code(c) for c in state.holes[state.seats.index(0)]]
    bob_cards = [card_code(c) for c in state.holes[state.seats.index(3)]]
    assert alice_view["hole"] == alice_cards
    assert not any(f'"{code}"' in json.dumps(alice_view) for code in bob_cards)
    for code in alice_cards + bob_cards:
        assert f'"{code}"' not in public
    assert hand.server_seed not in public and hand.chain_seed not in public
    assert hand.commitment in public


def _folded_first_hand(table: Table, alice: User, bob: User, now: datetime) -> HoldemHand:
    """Seat two, deal, and let the first to act fold: the hand settled, read afresh."""
    seat_two(table, alice, bob, now)
    tick(table, now)
    hand = HoldemHand.objects.get(table=table)
    user = alice if replay(hand).to_act == 0 else bob
    act_in_hand(table_id=table.pk, user_id=user.pk, kind="fold", now=now)
    hand.refresh_from_db()
    return hand


def test_the_seed_is_public_the_delay_after_the_hand_is_over(table: Table, alice: User, bob: User) -> None:
    # The seeds give every hole card, folded ones included: public only after the delay
    # (docs/provably-fair.md, Card commitments; tests/tables/test_holdem_privacy.py).
    now = timezone.now()
    hand = _folded_first_hand(table, alice, bob, now)
    frame = get_holdem_table_frame(table_id=table.pk, now=now)
    assert frame["hand"] is not None and frame["hand"]["result"] is not None
    assert frame["hand"]["result"]["server_seed"] is None
    assert hand.settled_at is not None
    later = get_holdem_table_frame(table_id=table.pk, now=hand.settled_at + timedelta(hours=24))
    assert later["hand"] is not None and later["hand"]["result"] is not None
    assert later["hand"]["result"]["server_seed"] == hand.server_seed


def test_the_frame_lists_the_winnings_by_seat_in_whatever_order_they_were_recorded(
    table: Table, alice: User, bob: User
) -> None:
    # The step pushes a frame built from the results it just computed (in the engine's seat
    # order, from the button); a fresh read gets them back from PostgreSQL's jsonb, which
    # orders keys its own way. Both give the same bytes: winnings by seat (CI, 2026-11-27).
    now = timezone.now()
    hand = _folded_first_hand(table, alice, bob, now)
    table.refresh_from_db()
    hand.results = {**hand.results, "won": {"3": 57, "0": 19}}
    rows = HoldemTableRows(read_holdem_conditions(table), hand, replay(hand), read_holdem_seats(table), None)
    frame = build_holdem_table_frame(table, rows, now=now)
    assert frame["hand"] is not None and frame["hand"]["result"] is not None
    assert json.dumps(frame["hand"]["result"]["won"]) == '{"0": 19, "3": 57}'


def test_the_button_moves_clockwise(table: Table, alice: User, bob: User, carol: User) -> None:
    now = timezone.now()
    for user, position in ((alice, 0), (bob, 2), (carol, 4)):
        take_seat(table_id=table.pk, user_id=user.pk, position=position, buy_in_minor=1_000, now=now)
    now = run_until(table, now, hands=3)
    buttons = [h.setup["button"] for h in HoldemHand.objects.filter(table=table).order_by("number")[:3]]
    assert buttons == [0, 2, 4]
    assert_books(table)


def test_a_new_player_waits_for_the_big_blind(table: Table, alice: User, bob: User, carol: User) -> None:
    now = timezone.now()
    seat_two(table, alice, bob, now)
    now = run_until(table, now, hands=1)
    take_seat(table_id=table.pk, user_id=carol.pk, position=1, buy_in_minor=1_000, blind="wait", now=now)
    now = run_until(table, now, hands=4)
    for hand in HoldemHand.objects.filter(table=table, number__gt=1).order_by("number"):
        state = replay(hand)
        if 1 in state.seats:
            # Dealt in for the first time as the big blind (seed 003, The First round).
            assert state.seats[0 if state.player_count == 2 else 1] == 1
            break
        assert 1 in hand.setup["waiting"]
    else:
        raise AssertionError("carol was never dealt in")
    assert_books(table)


def test_house_bots_fill_a_fun_table_and_play_on_the_clock(alice: User) -> None:
    table = holdem_table("Bots", bot_seats=3)
    now = timezone.now()
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    now = run_until(table, now, hands=5)
    bots = Seat.objects.filter(table=table, is_bot=True).exclude(status=SeatStatus.LEFT)
    assert 1 <= bots.count() <= 3
    assert all(not seat.user.is_active for seat in bots)
    assert_books(table)
    assert assert_phh_replays(table) >= 1


def test_house_bots_leave_with_the_last_person(alice: User) -> None:
    table = holdem_table("Bots leave", bot_seats=2)
    now = timezone.now()
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    sit_out_holdem(table_id=table.pk, user_id=alice.pk, now=now)
    tick(table, now)
    assert Seat.objects.filter(table=table, is_bot=True, position__isnull=False).count() == 2
    now = run_until(table, now, hands=1)
    while HoldemHand.objects.filter(table=table, status=HoldemHandStatus.PLAYING).exists():
        now = run_until(table, now, hands=HoldemHand.objects.filter(table=table).count())
    leave_holdem_table(table_id=table.pk, user_id=alice.pk, now=now)
    now = run_until(table, now, hands=HoldemHand.objects.filter(table=table).count())
    tick(table, now + timedelta(seconds=10))
    assert not Seat.objects.filter(table=table, position__isnull=False).exists()
    assert escrow_balance(table) == 0
    assert_books(table)


def test_bots_never_sit_at_cash_tables(alice: User) -> None:
    with pytest.raises(InvalidTableConfigError):
        holdem_table("Cash bots", mode="cash", currency="EUR", bot_seats=2)


def test_staff_changes_are_audited_and_apply_between_hands(
    table: Table, alice: User, bob: User, croupier: User
) -> None:
    now = timezone.now()
    seat_two(table, alice, bob, now)
    tick(table, now)
    change_table_config(
        table_id=table.pk, changes={"rake_bps": 200}, staff_user_id=croupier.pk, reason="promo", now=now
    )
    assert HoldemConditions.objects.get(table=table).rake_bps == 500  # the hand in play keeps its rake
    change = TableConfigChange.objects.get(table=table, field="rake_bps")
    assert (change.old_value, change.new_value, change.applied_at) == (500, 200, None)
    now = run_until(table, now, hands=2)
    assert HoldemConditions.objects.get(table=table).rake_bps == 200
    hands = list(HoldemHand.objects.filter(table=table).order_by("number"))
    assert hands[0].config["rake_bps"] == 500 and hands[1].config["rake_bps"] == 200
    with pytest.raises(InvalidTableConfigError):
        change_table_config(
            table_id=table.pk, changes={"rake_bps": 1_001}, staff_user_id=croupier.pk, reason="x", now=now
        )
    assert_books(table)


def test_sitting_out_keeps_the_chips_and_stops_the_deal(table: Table, alice: User, bob: User) -> None:
    now = timezone.now()
    seat_two(table, alice, bob, now)
    sit_out_holdem(table_id=table.pk, user_id=bob.pk, now=now)
    tick(table, now)
    assert not HoldemHand.objects.filter(table=table).exists()
    assert Seat.objects.get(table=table, user=bob).stack_minor == 1_000
    returned = leave_holdem_table(table_id=table.pk, user_id=bob.pk, now=now)
    assert returned == 1_000
    assert_books(table)


def test_a_widerpoker_join_at_a_holdem_table_is_refused(table: Table, alice: User) -> None:
    with pytest.raises(WrongGameError):
        join_table(table_id=table.pk, user_id=alice.pk, now=timezone.now())


def test_the_snapshot_shows_the_callers_cards_only(table: Table, alice: User, bob: User, carol: User) -> None:
    from tests.helpers import logged_in

    now = timezone.now()
    seat_two(table, alice, bob, now)
    tick(table, now)
    state = replay(HoldemHand.objects.get(table=table))
    body = logged_in(alice).get(f"/tables/{table.pk}/snapshot.json").json()
    assert body["table"]["type"] == "holdem_state" and body["private"]["seat"] == 0
    assert body["private"]["hole"] == [card_code(c) for c in state.holes[state.seats.index(0)]]
    watcher = logged_in(carol).get(f"/tables/{table.pk}/snapshot.json").json()
    assert watcher["private"]["hole"] is None and watcher["private"]["seat"] is None


def test_a_malfunction_cancels_the_hand_and_every_stack_is_back(table: Table, alice: User, bob: User) -> None:
    now = timezone.now()
    seat_two(table, alice, bob, now)
    tick(table, now)
    hand = HoldemHand.objects.get(table=table)
    user = alice if replay(hand).to_act == 0 else bob
    act_in_hand(table_id=table.pk, user_id=user.pk, kind="raise", amount=300, now=now)
    recover_table(table_id=table.pk, now=now, reason="test malfunction")
    hand.refresh_from_db()
    assert hand.status == HoldemHandStatus.CANCELLED
    assert sorted(Seat.objects.filter(table=table).values_list("stack_minor", flat=True)) == [1_000, 1_000]
    assert_books(table)
    frame = get_holdem_table_frame(table_id=table.pk, now=now)
    assert frame["hand"] is not None and frame["hand"]["pots"] == [] and frame["hand"]["board"] == []


def test_a_suspended_player_leaves_and_his_chips_go_back_to_his_wallet(
    table: Table, alice: User, bob: User, croupier: User
) -> None:
    now = timezone.now()
    seat_two(table, alice, bob, now)
    before = get_balance_minor(user_id=alice.pk, currency="FUN")
    protection.suspend_player(user_id=alice.pk, reason="review", staff_user_id=croupier.pk, now=now)
    from lobby.services import end_player_sessions

    assert end_player_sessions(user_id=alice.pk, reason="suspended", now=now).tables == [table.pk]
    seat = Seat.objects.get(table=table, user=alice)
    assert seat.status == SeatStatus.LEFT and seat.position is None and seat.stack_minor == 0
    assert get_balance_minor(user_id=alice.pk, currency="FUN") == before + 1_000
    assert_books(table)
