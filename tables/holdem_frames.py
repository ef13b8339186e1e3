"""The Hold'em wire contract: every Hold'em frame's shape (a leaf module: it imports
nothing of the app). Documented in docs/protocol.md, "Texas Hold'em frames"; moves into
``tables/frames.py`` beside the WiderPoker frames once that module exists.

Chips are minor units of the table's currency. Seats are numbered 0 .. seats - 1
clockwise. Cards are two-character codes (``"As"``, ``"Td"``). Times are ISO 8601 UTC.

Audiences (STYLE.md, Realtime): ``HoldemTableFrame`` goes to the table's group (everyone
watching); ``HoldemPrivateFrame`` only to its owner's group (``player.<user id>``). Hole
cards appear in public frames only when shown at the showdown (seed 003, Showdown); the
server seed only once the hand is over.
"""

from __future__ import annotations

from typing import Literal, TypedDict


class HoldemConfig(TypedDict):
    """A Hold'em table's conditions."""

    betting: Literal["fixed-limit", "pot-limit", "no-limit"]
    small_blind_minor: int
    big_blind_minor: int
    big_bet_minor: int
    seats: int
    min_buy_in_minor: int
    max_buy_in_minor: int
    rake_bps: int
    rake_cap_minor: int | None
    time_bank_seconds: int
    bot_seats: int
    show_probabilities: bool
    currency: str
    mode: Literal["cash", "fun"]


class HoldemSeatView(TypedDict):
    """One occupied seat. ``stack_minor``: chips behind (during a hand: after what he has
    put in); ``bet_minor``: chips bet on this street; ``status``: ``active``,
    ``sitting_out``; ``in_hand``: dealt into the running hand and not folded;
    ``all_in``: no chips behind in the hand; ``waiting``: waits for the big blind;
    ``shown``: hole cards turned up at the showdown (else null)."""

    seat: int
    name: str
    bot: bool
    stack_minor: int
    bet_minor: int
    status: str
    in_hand: bool
    folded: bool
    all_in: bool
    waiting: bool
    leaving: bool
    connected: bool
    shown: list[str] | None


class HoldemPotView(TypedDict):
    """The main pot (first) or a side pot: its chips and the seats that contest it."""

    amount_minor: int
    seats: list[int]


class HoldemResultView(TypedDict):
    """A finished hand: chips won per seat (``"3": 240``), the rake, whether it went to a
    showdown, and the revealed seed (docs/provably-fair.md)."""

    won: dict[str, int]
    rake_minor: int
    showdown: bool
    server_seed: str
    chain_seed: str


class HoldemHandView(TypedDict):
    """The running (or last) hand. ``street``: preflop, flop, turn, river, showdown or
    complete; ``to_act``: the seat to act or null; ``act_deadline``: when his turn times
    out (the countdown starts ``time_bank_seconds`` before it, after 10 s to act);
    ``pots`` (collected chips, the main pot first) plus the seats' ``bet_minor`` make the
    whole ``total_pot_minor``."""

    id: int
    number: int
    commitment: str
    button: int
    small_blind_seat: int | None
    big_blind_seat: int | None
    street: str
    board: list[str]
    pots: list[HoldemPotView]
    total_pot_minor: int
    to_act: int | None
    turn_started_at: str | None
    act_deadline: str | None
    time_bank_from: str | None
    result: HoldemResultView | None


class HoldemTableFrame(TypedDict):
    """Public state of a Hold'em table, pushed to the table's group on every change
    (``version`` grows by one) and served by the snapshot URL."""

    type: Literal["holdem_state"]
    table_id: int
    name: str
    version: int
    phase: str
    deadline: str | None
    server_time: str
    config: HoldemConfig
    seats: list[HoldemSeatView]
    hand: HoldemHandView | None


class HoldemLegalView(TypedDict):
    """What the player may do now (only while it is his turn): ``kinds`` among fold,
    check, call, bet, raise, all_in; ``call_minor`` what a call adds; ``min_to_minor`` /
    ``max_to_minor`` the bet or raise-to range (null: no bet or raise); ``all_in_to_minor``
    his street total after all-in."""

    kinds: list[str]
    call_minor: int
    min_to_minor: int | None
    max_to_minor: int | None
    all_in_to_minor: int | None


class HoldemPrivateFrame(TypedDict):
    """One player's own view of a Hold'em table, to his group only: his seat (null when
    not seated), hole cards (null when not dealt in), legal actions when it is his turn,
    his wallet balance in the table's currency, and the probability of winning (null
    unless the table shows probabilities; equity against random hands of the players
    still in, ``docs/holdem.md``, Equity)."""

    type: Literal["holdem_private"]
    table_id: int
    version: int
    seat: int | None
    stack_minor: int
    status: str | None
    blind_choice: str
    hole: list[str] | None
    legal: HoldemLegalView | None
    equity: float | None
    wallet_minor: int


HOLDEM_ACTIONS = ("fold", "check", "call", "bet", "raise", "all_in")
"""The betting actions a player sends (``amount`` for bet and raise: the total to)."""

HOLDEM_SEAT_ACTIONS = ("take_seat", "add_chips", "sit_out", "sit_in", "leave")
"""The seat actions a player sends (``seat``, ``buy_in_minor``, ``blind``: wait or post)."""
