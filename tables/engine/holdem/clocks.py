"""The turn clock: time to act, the time-bank countdown, disconnection protection, timeouts.

Pure functions of a turn's start time and ``now``, all in integer milliseconds (no clock
is read here; the caller injects ``now_ms``). Seed 003 (``003_c848e011f7df0184.txt``), the
paragraph on playing "within a set time frame": about 30 seconds per turn, "initially
the player is given 10 seconds, after which there is a timer countdown ... for 20
seconds"; "the user goes all-in if he has contributed some chips to the pot; otherwise
his hand is folded"; a player who disconnects and reconnects while his turn still has
time "is given an additional 20 seconds", and one who does not reconnect in time "goes
All-in". Gaps and decisions are in ``docs/holdem.md``, "Rules as implemented".

>>> clock = TurnClock(started_ms=0)
>>> read_clock(clock, 9_000).stage.value, read_clock(clock, 12_000).remaining_ms
('acting', 18000)
>>> read_clock(TurnClock(0, disconnected_ms=5_000, reconnected_ms=25_000), 40_000).stage.value
'time_bank'
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from .state import Action, ActionKind, HandState, Phase

__all__ = [
    "ACT_MS",
    "RECONNECT_MS",
    "TIME_BANK_MS",
    "ClockReading",
    "ClockStage",
    "TurnClock",
    "apply_clock",
    "deadline_ms",
    "read_clock",
    "timeout_action",
]

ACT_MS: Final = 10_000
"""Time to act before the countdown starts (seed 003: "initially ... 10 seconds")."""

TIME_BANK_MS: Final = 20_000
"""The countdown shown on the table after ``ACT_MS`` (seed 003: "for 20 seconds")."""

RECONNECT_MS: Final = 20_000
"""Extra time for a player who reconnects while his turn still has time (seed 003)."""


class ClockStage(StrEnum):
    """Where a turn stands: in the first 10 s, in the countdown, or out of time."""

    ACTING = "acting"
    TIME_BANK = "time_bank"
    EXPIRED = "expired"


@dataclass(frozen=True, slots=True)
class TurnClock:
    """One player's turn: when it started and, if he dropped, when he left and came back (ms)."""

    started_ms: int
    disconnected_ms: int | None = None
    reconnected_ms: int | None = None

    @property
    def connected(self) -> bool:
        """False while disconnected (a disconnection not followed by a reconnection)."""
        return self.disconnected_ms is None or (
            self.reconnected_ms is not None and self.reconnected_ms >= self.disconnected_ms
        )


@dataclass(frozen=True, slots=True)
class ClockReading:
    """The stage of a turn at ``now`` and the milliseconds left in that stage (0 if expired)."""

    stage: ClockStage
    remaining_ms: int


def deadline_ms(clock: TurnClock) -> int:
    """When the turn times out, in ms: start + 30 s, plus 20 s once if the player reconnected
    before that (seed 003: "he is given an additional 20 seconds to play his turn")."""
    base = clock.started_ms + ACT_MS + TIME_BANK_MS
    if (
        clock.disconnected_ms is not None
        and clock.reconnected_ms is not None
        and clock.disconnected_ms <= clock.reconnected_ms < base
    ):
        return base + RECONNECT_MS
    return base


def read_clock(clock: TurnClock, now_ms: int) -> ClockReading:
    """The stage and time left of ``clock`` at ``now_ms`` (integer milliseconds)."""
    acting_until = clock.started_ms + ACT_MS
    deadline = deadline_ms(clock)
    if now_ms < acting_until:
        return ClockReading(ClockStage.ACTING, acting_until - now_ms)
    if now_ms < deadline:
        return ClockReading(ClockStage.TIME_BANK, deadline - now_ms)
    return ClockReading(ClockStage.EXPIRED, 0)


def timeout_action(state: HandState, *, connected: bool = True) -> Action:
    """The action taken for the player to act when his time runs out.

    Seed 003: all-in (``TIMEOUT_ALL_IN``: he stays in for the chips already in the pot and
    acts no more) if he has put chips in this hand (antes and blinds count), otherwise
    fold. Where the seed is silent: a connected player who may check for free checks (he
    loses nothing and keeps playing); a disconnected one goes all-in as the seed says even
    then. At showdown a timed-out player mucks when he may, else shows. A
    ``TIMEOUT_ALL_IN`` is not a player's action (``act`` refuses it): apply the result with
    ``apply_clock``, or ``HandState.timed_out_all_in()``. Raises ``HandOverError`` when the
    hand is over.
    """
    legal = state.legal_actions()
    if state.phase is Phase.SHOWDOWN:
        kind = ActionKind.MUCK if ActionKind.MUCK in legal.kinds else ActionKind.SHOW
        return Action(kind, legal.seat)
    actor = state.actor
    assert actor is not None
    if legal.kinds == (ActionKind.FOLD,):
        return Action(ActionKind.FOLD, legal.seat)  # seed 004: short of the bet, he may only fold
    contributed = state.committed[actor] + state.bets[actor] > 0
    if connected and ActionKind.CHECK in legal.kinds:
        return Action(ActionKind.CHECK, legal.seat)
    if contributed:
        return Action(ActionKind.TIMEOUT_ALL_IN, legal.seat)
    if ActionKind.CHECK in legal.kinds:
        return Action(ActionKind.CHECK, legal.seat)  # nothing in and nothing to call
    return Action(ActionKind.FOLD, legal.seat)


def apply_clock(state: HandState, clock: TurnClock, now_ms: int) -> HandState:
    """``state`` after the timeout rule if ``clock`` has expired at ``now_ms``, else ``state``."""
    if state.is_over or read_clock(clock, now_ms).stage is not ClockStage.EXPIRED:
        return state
    action = timeout_action(state, connected=clock.connected)
    if action.kind is ActionKind.TIMEOUT_ALL_IN:
        return state.timed_out_all_in()
    return state.act(action)
