"""The wire contract: every frame the sockets send and every group and channel name.

A leaf module: it imports nothing of the project, so selectors (which build frames),
push helpers (which send them) and consumers (which answer with them) all depend on it and
never on each other. ``docs/protocol.md`` documents the same frames for clients; a change
here is a change of a public contract: add fields, never rename or remove one.

Audiences and their one path each (tables/realtime/push.py):

* everyone watching a table: ``table_state``, ``pool_updated``, ``table_restarted``, through
  the per-process hub (``table`` channel);
* one player's sockets, at one table or all of them: ``entry_state`` (his own cards, odds,
  result) and ``kicked``, through the per-process hub (``player`` channel); at a Hold'em
  table the public frame is ``holdem_state`` and the private one ``holdem_private``;
* the lobby: ``lobby_table``, through the Channels layer group ``lobby``;
* the sender of a frame: ``ack``, ``error``, ``pong``, the consumer's own answer.

Secrets (seeds, change keys, other players' cards) appear only in frames of a hand that is
over (DESIGN.md, *Provably fair*).
"""

from __future__ import annotations

import json
from typing import Any, Final, Literal, NotRequired, TypedDict

LOBBY_GROUP: Final = "lobby"
"""The Channels layer group of every lobby socket."""


def hub_channel(prefix: str, kind: Literal["table", "player"], key: int) -> str:
    """The Redis pub/sub channel of one hub delivery: ``<prefix>:table:<id>`` for a
    table's frames, ``<prefix>:table:player.<user id>`` for one player's private refresh.
    Every ASGI process subscribes once to the pattern ``<prefix>:table:*``."""
    return f"{prefix}:table:{key}" if kind == "table" else f"{prefix}:table:player.{key}"


class TableStateFrame(TypedDict):
    """Public state of a table; sent on every phase change (``version`` grows by one)."""

    type: Literal["table_state"]
    table_id: int
    version: int
    phase: str
    deadline: str | None
    server_time: str
    players: int
    hand: dict[str, Any] | None
    config: dict[str, Any]
    jackpots: list[dict[str, Any]]
    frozen: NotRequired[dict[str, Any] | None]
    """Algorithm 3: the next hand's inputs frozen, waiting for its deal round
    (docs/protocol.md, ``table_state``; docs/provably-fair.md, "Algorithm 3")."""


class EntryStateFrame(TypedDict):
    """One player's private view of a WiderPoker table (only ever sent to that player):
    seat, balance (minor units, what he may spend), and his entry in the current hand
    (cards, hold, purchases, probability panel, result)."""

    type: Literal["entry_state"]
    table_id: int
    version: int
    seat: dict[str, Any] | None
    balance_minor: int
    currency: str
    hand_id: int | None
    entry: dict[str, Any] | None
    powerups: dict[str, Any] | None


class PoolUpdatedFrame(TypedDict):
    """The live prize pool of the running hand (not a state change: same ``version``)."""

    type: Literal["pool_updated"]
    table_id: int
    version: int
    hand_id: int
    gross_minor: int
    pool_minor: int
    rake_minor: int
    entries: int


class TableRestartedFrame(TypedDict):
    """A staff configuration change restarted the table; players go back to the lobby."""

    type: Literal["table_restarted"]
    table_id: int
    version: int
    reason: str


class TournamentStandingsFrame(TypedDict):
    """A tournament's standings after one of its hands, pushed to its table's group between
    hands (tables/tournaments; docs/protocol.md): the best ``top`` entries (``rank``,
    ``player``, ``chips_minor``), the entries still in, the paid places, the prize pool (in
    ``currency``), the next hand's ante in chips, and the tournament's page (``url``),
    where each player reads his own rank. Public; not a state change: no ``version``."""

    type: Literal["tournament_standings"]
    tournament_id: int
    table_id: int
    hand: int
    players_left: int
    eliminated: int
    paid_places: int
    prize_pool_minor: int
    currency: str
    next_ante_minor: int
    top: list[dict[str, Any]]
    url: str


class KickedFrame(TypedDict):
    """The player may not stay at the tables (staff suspended the account, or he started a
    time-out or self-exclusion): sent to each of his game sockets just before the server
    closes it with ``CLOSE_KICKED``; the page does not reconnect."""

    type: Literal["kicked"]
    reason: str


CLOSE_KICKED: Final = 4403
"""The WebSocket close code of a socket whose player was removed from play (KickedFrame)."""


class LobbyTableFrame(TypedDict):
    """One table's line in the lobby."""

    type: Literal["lobby_table"]
    table: dict[str, Any]


class AckFrame(TypedDict):
    """The answer to an accepted action; ``ref`` echoes the frame's ``ref`` (or null). The
    changed private state follows as an ``entry_state`` frame (a purchase's, right after
    its ack on the socket that bought). ``duplicate`` (purchases only, when true): a
    purchase with this ``ref`` was committed before; nothing was charged again."""

    type: Literal["ack"]
    action: str
    ref: str | int | None
    duplicate: NotRequired[bool]


class PongFrame(TypedDict):
    """The answer to ``ping``: the server's clock, for the countdown."""

    type: Literal["pong"]
    server_time: str


class ErrorFrame(TypedDict):
    """The answer to a bad or refused inbound message; ``code`` is stable."""

    type: Literal["error"]
    code: str
    message: str
    ref: NotRequired[Any]
    extra: NotRequired[dict[str, Any]]  # a domain error's details, as REST's ``extra`` (when any)


# --- Texas Hold'em (docs/protocol.md, "Texas Hold'em") ------------------------------------


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


class HoldemCardOpening(TypedDict):
    """One dealt deck position opened: its ``card`` code and 32-byte ``salt`` (hex), which
    must hash to the position's commitment: ``SHA-256(card || salt)`` (docs/provably-fair.md,
    Card commitments)."""

    position: int
    card: str
    salt: str


class HoldemPotResultView(TypedDict):
    """One settled pot, main pot first: its chips before rake, its own rake, the seats that
    shared the rest (docs/holdem.md, rake)."""

    amount_minor: int
    rake_minor: int
    winners: list[int]


class HoldemResultView(TypedDict):
    """A finished hand: chips won per seat (``"3": 240``), the rake, whether it went to a
    showdown, each pot's rake (``pots``), the board and shown cards opened against their
    commitments (``revealed``), and the seeds: null until ``seed_public_at`` (the hand's
    end plus the operator's delay, docs/provably-fair.md, Card commitments); from then on
    they reproduce every commitment."""

    won: dict[str, int]
    rake_minor: int
    showdown: bool
    pots: list[HoldemPotResultView]
    revealed: list[HoldemCardOpening]
    seed_public_at: str | None
    server_seed: str | None
    chain_seed: str | None


class HoldemSeedCommitment(TypedDict):
    """A player dealt into a frozen hand: his seat, name, whether he is a house bot, and
    the commitment to his client seed, ``SHA-256(UTF-8(name ":" client_seed))`` (a bot's
    seed is fresh for every hand); the seed itself is public with the hand's seeds."""

    seat: int
    name: str
    bot: bool
    client_seed_commitment: str


class HoldemFreezeView(TypedDict):
    """A hand's inputs, frozen and published before the beacon round that completes its
    seed (algorithm 3, docs/provably-fair.md section 12): ``frozen_at``; ``deal_round``
    (the first beacon round released strictly after it) and ``deal_round_at`` (its release
    time); ``deal_at`` when the clock deals it (null once dealt); the chain element
    (``chain_id``, ``chain_index``, ``commitment``), the ``button``, every seat dealt in
    (``seats``) and ``digest`` (SHA-256 of the frozen lines, hex). ``round_value``: the
    round's value (hex) once the hand is dealt, else null."""

    number: int
    frozen_at: str
    deal_round: int
    deal_round_at: str
    deal_at: str | None
    chain_id: int | None
    chain_index: int | None
    commitment: str
    button: int
    seats: list[HoldemSeedCommitment]
    digest: str
    round_value: str | None


class HoldemHandView(TypedDict):
    """The running (or last) hand. ``street``: preflop, flop, turn, river, showdown or
    complete; ``to_act``: the seat to act or null; ``act_deadline``: when his turn times
    out (the countdown starts ``time_bank_seconds`` before it, after 10 s to act);
    ``pots`` (collected chips, the main pot first) plus the seats' ``bet_minor`` make the
    whole ``total_pot_minor``; ``card_commitments``: from the deal, one SHA-256 per dealt
    deck position ``0 .. 2n+7`` (docs/provably-fair.md, Card commitments)."""

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
    card_commitments: list[str]
    to_act: int | None
    turn_started_at: str | None
    act_deadline: str | None
    time_bank_from: str | None
    result: HoldemResultView | None
    freeze: NotRequired[HoldemFreezeView | None]


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
    next_hand: NotRequired[HoldemFreezeView | None]


class HoldemLegalView(TypedDict):
    """What the player may do now (only while it is his turn): ``kinds`` among fold,
    check, call, bet, raise, all_in, or at the showdown ``show`` and (when his hand wins
    nothing and he is not the first to show) ``muck``; ``call_minor`` what a call adds; ``min_to_minor`` /
    ``max_to_minor`` the bet or raise-to range (null: no bet or raise); ``all_in_to_minor``
    his street total after all-in."""

    kinds: list[str]
    call_minor: int
    min_to_minor: int | None
    max_to_minor: int | None
    all_in_to_minor: int | None


class HoldemPrivateFrame(TypedDict):
    """One player's own view of a Hold'em table, to his group only: his seat (null when
    not seated), hole cards (null when not dealt in) with their ``hole_openings`` (deck
    position, card and salt of each, to check against the hand's commitments), legal actions when it is his turn,
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
    hole_openings: list[HoldemCardOpening] | None
    legal: HoldemLegalView | None
    equity: float | None
    wallet_minor: int


HOLDEM_ACTIONS = ("fold", "check", "call", "bet", "raise", "all_in", "show", "muck")
"""The hand actions a player sends (``amount`` for bet and raise: the total to; show and
muck at the showdown, seed 003)."""

HOLDEM_SEAT_ACTIONS = ("take_seat", "add_chips", "sit_out", "sit_in", "leave")
"""The seat actions a player sends (``seat``, ``buy_in_minor``, ``blind``: wait or post)."""


def dumps(frame: Any) -> str:
    """Serialise a frame compactly (once per broadcast, whatever the number of sockets)."""
    return json.dumps(frame, separators=(",", ":"), sort_keys=False)
