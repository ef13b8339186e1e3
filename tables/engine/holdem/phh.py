"""Hand histories in PHH, the Poker Hand History format (TOML text).

PHH (``docs/holdem.md``, "Rules as implemented", Hand histories) numbers players ``p1 .. pn`` in dealing order
(p1 is the first seat left of the button; heads-up the big blind) and writes amounts in
chips: ``pK cbr X`` completes, bets or raises *to* X, ``pK cc`` checks or calls, ``pK f``
folds, ``pK sm CARDS`` shows and ``pK sm`` mucks; ``d dh pK CARDS`` and ``d db CARDS``
deal hole and board cards. Variants: ``FT`` (fixed-limit Texas Hold'em) and ``NT``
(no-limit). PHH has no pot-limit Texas Hold'em: pot-limit hands are written as ``NT``
with the user-defined field ``_betting_structure = 'pot-limit'`` (every pot-limit action
is also legal in no limit, so any PHH reader replays the same finishing stacks; this
module's reader honours the field and enforces the pot limit). Our fixed-limit caps go
in ``_raise_caps``; without it an ``FT`` text gets PHH's caps (``PHH_LIMIT_CAPS``).

No I/O: text in, text out. ``tomllib`` reads; a small writer emits the fields used here.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..cards import DECK_SIZE, card_code, card_id
from .dealing import deal_positions
from .errors import HoldemError, PhhError
from .start import play_showdown, start_hand
from .state import Action, ActionKind, HandSetup, HandState, Phase
from .structure import PHH_LIMIT_CAPS, Betting, Structure

__all__ = ["PhhHand", "hand_to_phh", "hide_holes", "read_phh", "replay_phh"]

_HOLE_DEAL = re.compile(r"'d dh p(\d+) ((?:[2-9TJQKA][cdhs]){2})'")


def _player(k: int) -> str:
    return f"p{k + 1}"


def _cards(cards: Sequence[int]) -> str:
    return "".join(card_code(c) for c in cards)


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        if "'" in value or "\n" in value or "\r" in value:
            return json.dumps(value)  # a TOML basic string
        return "'" + value + "'"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} as TOML here")


def _action_lines(state: HandState) -> list[str]:
    """PHH actions of a hand: hole cards, then the log; an all-in showdown precedes its run-out."""
    lines = [f"d dh {_player(k)} {_cards(hole)}" for k, hole in enumerate(state.holes)]
    log = list(state.log)
    if state.runout:
        # PHH (as pokerkit) turns the all-in hands up before dealing the rest of the board.
        last_bet = max((k for k, e in enumerate(log) if e.kind not in {"board", "show", "muck"}), default=-1)
        tail = log[last_bet + 1 :]
        log = log[: last_bet + 1] + [e for e in tail if e.kind != "board"] + [e for e in tail if e.kind == "board"]
    for event in log:
        who = _player(event.player)
        if event.kind == "board":
            lines.append(f"d db {_cards(event.cards)}")
        elif event.kind == ActionKind.FOLD.value:
            lines.append(f"{who} f")
        elif event.kind in {ActionKind.CHECK.value, ActionKind.CALL.value}:
            lines.append(f"{who} cc")
        elif event.kind in {"bet", "raise"}:
            lines.append(f"{who} cbr {event.amount}")
        elif event.kind == "show":
            lines.append(f"{who} sm {_cards(event.cards)}")
        elif event.kind == "muck":
            lines.append(f"{who} sm")
        else:
            raise PhhError(f"PHH has no action for {event.kind!r}")
    return lines


def hand_to_phh(state: HandState, *, hand: int | None = None, table: str | None = None) -> str:
    """The hand as PHH TOML text (variant ``FT`` or ``NT``; pot limit as documented above).

    Writes the required fields, ``ante_trimming_status = true`` (antes are ordinary
    contributions to the pots, as in this engine), ``seats`` (1-based table seats of p1 ..
    pn), ``seat_count``, ``finishing_stacks`` once the hand is over, and ``_``-prefixed
    extension fields for the raise caps, pot limit and rake. Raises ``PhhError`` for what
    PHH cannot express here: a big blind posted out of position, a timed-out all-in.
    """
    setup = state.setup
    structure = setup.structure
    n = state.player_count
    if setup.posting - set(state.seats[:2]):
        raise PhhError("PHH cannot express a big blind posted out of position")
    fields: dict[str, object] = {}
    fields["variant"] = "FT" if structure.betting is Betting.FIXED_LIMIT else "NT"
    fields["ante_trimming_status"] = True
    fields["antes"] = [structure.ante] * n
    fields["blinds_or_straddles"] = [structure.small_blind, structure.big_blind] + [0] * (n - 2)
    if structure.betting is Betting.FIXED_LIMIT:
        fields["small_bet"] = structure.small_bet
        fields["big_bet"] = structure.big_bet
    else:
        fields["min_bet"] = structure.small_bet
    fields["starting_stacks"] = list(state.starting_stacks)
    fields["actions"] = _action_lines(state)
    if hand is not None:
        fields["hand"] = hand
    if table is not None:
        fields["table"] = table
    fields["seats"] = [s + 1 for s in state.seats]
    fields["seat_count"] = len(setup.stacks)
    if state.is_over:
        fields["finishing_stacks"] = list(state.stacks)
    if structure.betting is Betting.FIXED_LIMIT:
        fields["_raise_caps"] = [c if c is not None else 0 for c in structure.raise_caps]
    if structure.betting is Betting.POT_LIMIT:
        fields["_betting_structure"] = Betting.POT_LIMIT.value
    if structure.rake_bps:
        fields["_rake_bps"] = structure.rake_bps
        if structure.rake_cap is not None:
            fields["_rake_cap"] = structure.rake_cap
    lines = []
    for key, value in fields.items():
        if key == "actions":
            assert isinstance(value, list)
            body = "".join(f"  {_toml_value(line)},\n" for line in value)
            lines.append(f"actions = [\n{body}]")
        else:
            lines.append(f"{key} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class PhhHand:
    """A PHH text read into this engine's terms: the setup (seats 0..n-1, button n-1) and
    the player actions as ``(player index, verb, argument)`` in text order."""

    setup: HandSetup
    actions: tuple[tuple[int, str, str], ...]
    unknown_positions: frozenset[int] = frozenset()


def _int_list(data: Mapping[str, Any], key: str, n: int | None = None) -> list[int]:
    value = data.get(key)
    if isinstance(value, int) and not isinstance(value, bool) and n is not None:
        return [value] * n
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise PhhError(f"{key} must be a list of integers")
    if n is not None and len(value) != n:
        raise PhhError(f"{key} must have {n} entries")
    return list(value)


def _split_cards(text: str) -> list[int | None]:
    if len(text) % 2:
        raise PhhError(f"bad cards {text!r}")
    out: list[int | None] = []
    for k in range(0, len(text), 2):
        code = text[k : k + 2]
        try:
            out.append(None if code == "??" else card_id(code))
        except ValueError:
            raise PhhError(f"bad card {code!r}") from None
    return out


def _player_index(word: str, n: int) -> int:
    """``"p3"`` -> 2, checked against the number of players."""
    if not word.startswith("p") or not word[1:].isdigit() or not 1 <= int(word[1:]) <= n:
        raise PhhError(f"unknown player {word!r}")
    return int(word[1:]) - 1


def _structure(data: Mapping[str, Any], n: int) -> Structure:
    variant = data.get("variant")
    antes = _int_list(data, "antes", n)
    if len(set(antes)) > 1:
        raise PhhError("only equal antes are supported")
    ante = antes[0]
    blinds = _int_list(data, "blinds_or_straddles", n)
    if any(blinds[2:]) or len(blinds) < 2:
        raise PhhError("straddles are not supported")
    small, big = blinds[0], blinds[1]
    rake_bps = int(data.get("_rake_bps", 0))
    rake_cap = data.get("_rake_cap")
    try:
        if variant == "FT":
            caps_raw = data.get("_raise_caps")
            caps = PHH_LIMIT_CAPS if caps_raw is None else tuple(c or None for c in caps_raw)
            if len(caps) != 4:
                raise PhhError("_raise_caps needs four entries")
            return Structure(
                Betting.FIXED_LIMIT,
                small,
                big,
                int(data["small_bet"]),
                int(data["big_bet"]),
                ante,
                (caps[0], caps[1], caps[2], caps[3]),
                rake_bps,
                rake_cap,
            )
        if variant == "NT":
            factory = Structure.pot_limit if data.get("_betting_structure") == "pot-limit" else Structure.no_limit
            return factory(small, big, ante=ante, min_bet=int(data["min_bet"]), rake_bps=rake_bps, rake_cap=rake_cap)
    except KeyError as missing:
        raise PhhError(f"missing field {missing}") from None
    except HoldemError as error:
        raise PhhError(str(error)) from None
    raise PhhError(f"unsupported variant {variant!r}: FT or NT")


def hide_holes(text: str, keep: Collection[int]) -> str:
    """``text`` (as ``hand_to_phh`` writes it) with the hole cards of every player not in
    ``keep`` (player indices, dealing order: p1 is 0) written ``????``, PHH's unknown
    cards. Cards shown at the showdown stay in their ``sm`` lines; a mucked hand is ``pK
    sm`` without cards. Used for the players' download: a hole card reaches nobody but its
    owner unless shown (docs/holdem.md, Hand histories).

    >>> hide_holes("actions = ['d dh p1 AsKs', 'd dh p2 7c2d', 'p1 f']", {1})
    "actions = ['d dh p1 ????', 'd dh p2 7c2d', 'p1 f']"
    """
    kept = {int(k) for k in keep}

    def hide(match: re.Match[str]) -> str:
        if int(match.group(1)) - 1 in kept:
            return match.group(0)
        return f"'d dh p{match.group(1)} ????'"

    return _HOLE_DEAL.sub(hide, text)


def read_phh(text: str) -> PhhHand:
    """Parse PHH text into a setup and actions. Raises ``PhhError`` when it cannot be read.

    Unknown cards (``??``) and undealt positions are filled with the unused cards in
    ascending order; ``replay_phh`` refuses a showdown that would depend on such a card.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PhhError(f"not TOML: {error}") from None
    stacks = _int_list(data, "starting_stacks")
    n = len(stacks)
    structure = _structure(data, n)
    if not data.get("ante_trimming_status", False) and any(s < structure.ante for s in stacks):
        raise PhhError("antes without trimming are supported only when every stack covers the ante")
    positions = deal_positions(n) if 2 <= n <= 10 else None
    if positions is None:
        raise PhhError(f"2..10 players, got {n}")
    deck: list[int | None] = [None] * DECK_SIZE
    board_slots = list(positions.board)
    actions: list[tuple[int, str, str]] = []
    raw_actions = data.get("actions")
    if not isinstance(raw_actions, list):
        raise PhhError("actions must be a list")
    for raw in raw_actions:
        words = str(raw).split("#")[0].split()
        if words[:2] == ["d", "dh"] and len(words) == 4:
            k = _player_index(words[2], n)
            for slot, card in zip(positions.holes[k], _split_cards(words[3]), strict=True):
                deck[slot] = card
        elif words[:2] == ["d", "db"] and len(words) == 3:
            for card in _split_cards(words[2]):
                if not board_slots:
                    raise PhhError("more than five board cards")
                deck[board_slots.pop(0)] = card
        elif len(words) >= 2 and words[0].startswith("p") and words[0][1:].isdigit():
            k = _player_index(words[0], n)
            if words[1] not in {"f", "cc", "cbr", "sm"}:
                raise PhhError(f"unsupported action {raw!r}")
            actions.append((k, words[1], " ".join(words[2:])))
        else:
            raise PhhError(f"unsupported action {raw!r}")
    known = [c for c in deck if c is not None]
    if len(set(known)) != len(known):
        raise PhhError("a card is dealt twice")
    spare = iter(sorted(set(range(DECK_SIZE)) - set(known)))
    full = tuple(c if c is not None else next(spare) for c in deck)
    unknown = frozenset(k for k, c in enumerate(deck) if c is None)
    setup = HandSetup(structure, tuple(stacks), n - 1, full)
    return PhhHand(setup, tuple(actions), unknown)


def _apply(state: HandState, k: int, verb: str, argument: str) -> HandState:
    legal = state.legal_actions()
    seat = state.seats[k]
    if verb == "f":
        return state.act(Action(ActionKind.FOLD, seat))
    if verb == "cc":
        kind = ActionKind.CHECK if ActionKind.CHECK in legal.kinds else ActionKind.CALL
        return state.act(Action(kind, seat))
    kind = ActionKind.BET if ActionKind.BET in legal.kinds else ActionKind.RAISE
    try:
        amount = int(argument)
    except ValueError:
        raise PhhError(f"bad amount {argument!r}") from None
    return state.act(Action(kind, seat, amount))


def replay_phh(text: str) -> tuple[int, ...]:
    """Finishing stacks (chips, in PHH player order p1 .. pn) of a complete FT or NT hand.

    Replays every action through this engine, so an action this engine finds illegal
    raises its ``HoldemError`` (``code`` says why); a text it cannot express, or a hand that
    is not complete, raises ``PhhError``. Showdown decisions (``sm``) are applied in this
    engine's showdown order; a player not mentioned shows.
    """
    hand = read_phh(text)
    unknown = hand.unknown_positions
    state = start_hand(hand.setup)
    decisions: dict[int, bool] = {}
    for k, verb, argument in hand.actions:
        if verb == "sm":
            decisions[k] = bool(argument)
            continue
        if state.phase is not Phase.BETTING:
            raise PhhError(f"p{k + 1} {verb}: the betting is over")
        state = _apply(state, k, verb, argument)
    if state.phase is Phase.SHOWDOWN:
        positions = deal_positions(state.player_count)
        needed = [*positions.board] + [p for k in state.showdown_queue for p in positions.holes[k]]
        if unknown & set(needed):
            raise PhhError("the showdown needs cards the history does not give")
        while state.phase is Phase.SHOWDOWN:
            legal = state.legal_actions()
            k = state.seats.index(legal.seat)
            muck = decisions.get(k) is False
            if muck and ActionKind.MUCK not in legal.kinds:
                if state.winning_players()[k]:
                    raise PhhError(f"p{k + 1} mucks a winning hand: not supported")
                muck = False  # a losing hand shown instead of mucked pays the same
            state = state.act(Action(ActionKind.MUCK if muck else ActionKind.SHOW, legal.seat))
    if not state.is_over:
        raise PhhError("the hand is not complete")
    state = play_showdown(state)
    return state.stacks
