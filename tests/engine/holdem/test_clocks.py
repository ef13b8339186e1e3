"""The turn clock and the timeout rule (seed 003, time limits and disconnection)."""

from __future__ import annotations

from tables.engine.holdem import (
    ActionKind,
    ClockStage,
    Phase,
    Street,
    Structure,
    TurnClock,
    apply_clock,
    deadline_ms,
    play_showdown,
    read_clock,
    timeout_action,
)

from .helpers import act, check_down, new_hand


def test_a_turn_has_10_seconds_then_a_20_second_countdown() -> None:
    clock = TurnClock(started_ms=1_000)
    assert read_clock(clock, 1_000).stage is ClockStage.ACTING
    assert read_clock(clock, 10_999).remaining_ms == 1
    assert read_clock(clock, 11_000).stage is ClockStage.TIME_BANK
    assert read_clock(clock, 30_999).remaining_ms == 1
    assert read_clock(clock, 31_000).stage is ClockStage.EXPIRED


def test_reconnecting_with_time_left_adds_20_seconds() -> None:
    clock = TurnClock(started_ms=0, disconnected_ms=3_000, reconnected_ms=29_000)
    assert deadline_ms(clock) == 50_000
    assert clock.connected


def test_reconnecting_after_the_deadline_adds_nothing() -> None:
    clock = TurnClock(started_ms=0, disconnected_ms=3_000, reconnected_ms=31_000)
    assert deadline_ms(clock) == 30_000
    assert not TurnClock(0, disconnected_ms=3_000).connected


def test_a_player_with_no_chips_in_folds_on_timeout() -> None:
    state = new_hand(Structure.no_limit(1, 2), [100] * 3, button=2)
    assert timeout_action(state).kind is ActionKind.FOLD  # the button has nothing in


def test_a_player_with_chips_in_goes_all_in_for_what_is_in_on_timeout() -> None:
    state = new_hand(Structure.no_limit(1, 2), [100] * 3, button=2)
    state = act(state, ActionKind.RAISE, 10)
    assert timeout_action(state).kind is ActionKind.TIMEOUT_ALL_IN  # small blind, 1 in
    state = apply_clock(state, TurnClock(0), 30_000)
    assert state.protected == (True, False, False)
    state = act(state, ActionKind.CALL)  # the big blind calls: heads-up for the side pot
    assert state.street is Street.FLOP and 0 not in state.actors
    # The protected player keeps his 99 chips and can win only the 3-chip main pot.
    state = play_showdown(check_down(state))
    assert state.stacks[0] in (99, 102)
    assert sum(state.stacks) == 300


def test_a_connected_player_checks_on_timeout_when_checking_is_free() -> None:
    state = check_down(new_hand(Structure.no_limit(1, 2), [100] * 2, button=0))
    state = new_hand(Structure.no_limit(1, 2), [100] * 2, button=0)
    state = act(act(state, ActionKind.CALL), ActionKind.CHECK)
    assert timeout_action(state).kind is ActionKind.CHECK
    assert timeout_action(state, connected=False).kind is ActionKind.TIMEOUT_ALL_IN


def test_the_clock_changes_nothing_before_the_deadline() -> None:
    state = new_hand(Structure.no_limit(1, 2), [100] * 2, button=0)
    assert apply_clock(state, TurnClock(0), 29_999) is state


def test_at_showdown_a_timed_out_loser_mucks() -> None:
    state = check_down(new_hand(Structure.no_limit(1, 2), [100] * 2, button=0))
    assert state.phase is Phase.SHOWDOWN
    assert timeout_action(state).kind is ActionKind.SHOW  # the first to show must show


def test_a_player_cannot_play_the_timeout_all_in_himself() -> None:
    import pytest

    from tables.engine.holdem import Action, IllegalActionError

    state = new_hand(Structure.no_limit(1, 2), [100] * 3, button=2)
    state = act(state, ActionKind.RAISE, 10)
    with pytest.raises(IllegalActionError):
        state.act(Action(ActionKind.TIMEOUT_ALL_IN, state.to_act or 0))
    assert state.timed_out_all_in().protected == (True, False, False)
