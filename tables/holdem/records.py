"""Stored Hold'em hands read back through the engine: the Structure of a conditions
snapshot, the engine state of a stored hand (``replay``), the deadline of the turn in
play. Pure reads of model rows (no writes, no pushes), shared by the Hold'em services,
selectors and the hand history, as ``tables/widerpoker/records.py`` is for WiderPoker."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings

from tables.engine.cards import card_code
from tables.engine.holdem import (
    ACT_MS,
    TIME_BANK_MS,
    Action,
    ActionKind,
    Betting,
    HandSetup,
    HandState,
    Structure,
    TurnClock,
    card_commitment,
    card_salts,
    deadline_ms,
    deal_positions,
    dealt_positions,
    holdem_deck,
    play_showdown,
    start_hand,
)
from tables.models import HoldemHand, HoldemHandStatus


def structure_of(config: Mapping[str, Any]) -> Structure:
    """The engine's Structure of a conditions snapshot (``HoldemConditions.snapshot()``):
    limit ``big_blind/big_bet`` (seed 003: the lower and upper stakes), pot limit or no
    limit with the blinds; rake in basis points with its cap, no flop no drop. An ante
    (``ante_minor``, seed 004 *PRE-FLOP*) and a cap of raises per betting round
    (``max_raises``, seed 004 *Rilancio*: N raises, i.e. N raises over the big blind
    pre-flop and a bet and N raises after the flop) apply when set; snapshots older than
    those fields have neither. ``call_all_in_for_less`` false (a BigHoldem practice hand,
    seed 004 *Rilancio*) lets a player short of a bet only fold (``Structure.call_all_in``)."""
    betting = Betting(config["betting"])
    small, big = int(config["small_blind_minor"]), int(config["big_blind_minor"])
    rake_bps = int(config["rake_bps"])
    cap = config.get("rake_cap_minor")
    rake_cap = None if cap is None else int(cap)
    ante = int(config.get("ante_minor") or 0)
    if betting is Betting.FIXED_LIMIT:
        structure = Structure.fixed_limit(
            big, int(config["big_bet_minor"]), small_blind=small, ante=ante, rake_bps=rake_bps, rake_cap=rake_cap
        )
    elif betting is Betting.POT_LIMIT:
        structure = Structure.pot_limit(small, big, ante=ante, rake_bps=rake_bps, rake_cap=rake_cap)
    else:
        structure = Structure.no_limit(small, big, ante=ante, rake_bps=rake_bps, rake_cap=rake_cap)
    raises = config.get("max_raises")
    if raises is not None:
        n = int(raises)
        structure = replace(structure, raise_caps=(n, n + 1, n + 1, n + 1))
    if config.get("call_all_in_for_less") is False:
        structure = replace(structure, call_all_in=False)
    return structure


def replay(hand: HoldemHand) -> HandState:
    """The engine state of ``hand`` after its stored actions: its setup and the deck of its
    server seed (docs/provably-fair.md, 12), each action re-applied (the clock's
    ``timeout_all_in`` too). A hand dealt with the players' showdown choice
    (``setup["showdown_choice"]``, seed 003 Showdown) stores every show and muck, so it
    stops where a player still has to choose; an older hand had its showdown played by the
    house policy (``play_showdown``: losers muck when allowed), which is replayed. Raises
    HoldemError if the stored actions are not legal (never for a hand this module wrote)."""
    moves = tuple((str(a["kind"]), int(a["seat"]), a.get("amount")) for a in hand.actions)
    state = _replayed(hand, moves)
    if hand.setup.get("showdown_choice"):
        return state
    return play_showdown(state)


REPLAYED_KEPT = 4096
"""How many replayed states this process keeps (a few kB each): every running hand's last
step of a room of hundreds of tables."""

_replayed_states: dict[tuple[Any, ...], HandState] = {}
_replayed_lock = threading.Lock()


def _replayed(hand: HoldemHand, moves: tuple[tuple[str, int, Any], ...]) -> HandState:
    """The engine state after ``moves`` (the stored actions), before any showdown the house
    policy plays: from this process's states of earlier steps when it holds the one after
    the same moves, or after all but the last (one action applied: a clock step replays the
    hand it played last step), else from the deal. A state is kept under everything it was
    computed from (the hand's id, server seed, setup, conditions and the moves), so a
    changed hand never matches a kept state; ``HandState`` is immutable, so sharing one is
    safe. An unsaved hand (no id) is replayed from the deal and not kept."""
    if hand._state.adding:  # not saved yet (the deal replays it before saving it)
        state = start_state(hand)
        for kind, seat, amount in moves:
            state = apply_action(state, kind, seat, amount)
        return state
    base = (hand.pk, hand.server_seed, json.dumps(hand.setup, sort_keys=True), json.dumps(hand.config, sort_keys=True))
    with _replayed_lock:
        kept = _replayed_states.get((*base, moves))
        previous = None if kept is not None or not moves else _replayed_states.get((*base, moves[:-1]))
    if kept is not None:
        return kept
    if previous is not None:
        state = apply_action(previous, *moves[-1])
    else:
        state = start_state(hand)
        for kind, seat, amount in moves:
            state = apply_action(state, kind, seat, amount)
    with _replayed_lock:
        if len(_replayed_states) >= REPLAYED_KEPT:
            del _replayed_states[next(iter(_replayed_states))]  # the oldest kept
        _replayed_states[(*base, moves)] = state
    return state


def showdown_deadline(hand: HoldemHand) -> datetime:
    """When a player's choice to show or muck at the showdown times out: the seed's 10 s to
    act (``ACT_MS``) from the start of his turn, without the time bank (the hand is decided;
    the others wait only for his cards). At the deadline he mucks when he may, else shows
    (``clocks.timeout_action``)."""
    assert hand.turn_started_at is not None
    return hand.turn_started_at + timedelta(milliseconds=ACT_MS)


def start_state(hand: HoldemHand) -> HandState:
    """The engine state of ``hand`` when it is dealt, before any stored action: antes and
    blinds posted (a big blind posted out of position by a seat of ``setup["posting"]``
    too, seed 003 The First round), hole cards dealt from the deck of its server seed
    (docs/provably-fair.md, 12). Raises HoldemError (``SetupError``) for an invalid setup."""
    setup = hand.setup
    return start_hand(
        HandSetup(
            structure_of(hand.config),
            tuple(None if stack is None else int(stack) for stack in setup["stacks"]),
            int(setup["button"]),
            holdem_deck(bytes.fromhex(hand.server_seed)),
            frozenset(setup.get("waiting", ())),
            frozenset(setup.get("posting", ())),
        )
    )


def apply_action(state: HandState, kind: str, seat: int, amount: int | None) -> HandState:
    """``state`` after a stored action (``timeout_all_in`` is the clock's: the engine's
    ``timed_out_all_in``). Raises HoldemError."""
    if kind == ActionKind.TIMEOUT_ALL_IN:
        return state.timed_out_all_in()
    return state.act(Action(ActionKind(kind), seat, amount))


def turn_deadline(hand: HoldemHand, config: dict[str, Any], *, grace: bool = True) -> datetime:
    """When the turn that started at ``hand.turn_started_at`` times out: 10 s to act, then
    the table's time bank (seed 003: 20 s), plus the reconnection time once if granted
    (``clocks.deadline_ms``, with the table's time bank in place of the seed's 20 s); with
    ``grace``, moved to ``hand.turn_grace_until`` when the platform gave the turn more time
    because it was degraded (docs/deployment.md, "When Redis is down")."""
    assert hand.turn_started_at is not None
    bank_ms = int(config["time_bank_seconds"]) * 1000
    clock = TurnClock(0, 0, 0) if hand.turn_extended else TurnClock(0)
    extra = deadline_ms(clock) - ACT_MS - TIME_BANK_MS
    deadline = hand.turn_started_at + timedelta(milliseconds=ACT_MS + bank_ms + extra)
    if grace and hand.turn_grace_until is not None and hand.turn_grace_until > deadline:
        return hand.turn_grace_until
    return deadline


def seats_in_hand(hand: HoldemHand) -> set[int]:
    """The seat numbers dealt into ``hand``."""
    return {int(player["seat"]) for player in hand.players}


# --- secrecy and card commitments (docs/provably-fair.md, "Card commitments") --------------


def seed_public_at(hand: HoldemHand) -> datetime | None:
    """When the hand's seeds become public (to its players and everyone): its end plus
    ``settings.HOLDEM_SEED_DELAY_HOURS``; None while it is played. Derived from the time,
    so nothing is written to the finished hand when it passes."""
    if not hand.is_terminal or hand.settled_at is None:
        return None
    return hand.settled_at + timedelta(hours=settings.HOLDEM_SEED_DELAY_HOURS)


def seed_is_public(hand: HoldemHand, *, now: datetime) -> bool:
    """Whether the hand's ``server_seed`` and ``chain_seed`` may reach anyone (see
    ``seed_public_at``); staff who may view every hand see them once the hand is over."""
    public_at = seed_public_at(hand)
    return public_at is not None and now >= public_at


def card_commitments(hand: HoldemHand, state: HandState) -> list[str]:
    """The public commitment of every deck position the hand deals (``2n + 8``, burns
    included), in position order: ``SHA-256(card code || salt)``, salts from the seed and
    the cards from ``state``'s deck (the seed's, ``replay``)."""
    salts = card_salts(bytes.fromhex(hand.server_seed), dealt_positions(state.player_count))
    return [card_commitment(state.setup.deck[i], salt) for i, salt in enumerate(salts)]


def hole_openings(hand: HoldemHand, state: HandState, k: int) -> list[dict[str, Any]]:
    """Player ``k``'s (dealing order) two hole positions opened: ``position``, ``card``,
    ``salt`` (hex). For him alone, or for everyone once the hand shows them."""
    n = state.player_count
    salts = card_salts(bytes.fromhex(hand.server_seed), dealt_positions(n))
    deck = state.setup.deck
    return [{"position": p, "card": card_code(deck[p]), "salt": salts[p].hex()} for p in deal_positions(n).holes[k]]


def shown_openings(hand: HoldemHand, state: HandState) -> list[dict[str, Any]]:
    """The positions everyone may check once the hand is over: the board cards dealt and
    the hole cards shown at the showdown (``results["shown"]``), each with its card and
    salt; folded and mucked hands and the burns stay closed. Empty while the hand runs
    and for a cancelled hand."""
    if not hand.is_terminal or hand.status == HoldemHandStatus.CANCELLED:
        return []
    n = state.player_count
    deck = state.setup.deck
    salts = card_salts(bytes.fromhex(hand.server_seed), dealt_positions(n))
    positions = deal_positions(n)
    opened = list(positions.board[: len(state.board)])
    shown = hand.results.get("shown", {})
    for k, seat in enumerate(state.seats):
        if str(seat) in shown:
            opened.extend(positions.holes[k])
    return [{"position": p, "card": card_code(deck[p]), "salt": salts[p].hex()} for p in sorted(opened)]
