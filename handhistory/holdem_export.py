"""The JSON export of a Hold'em hand, format ``widerpoker-holdem-hand/1`` (docs/holdem-export.md,
schema ``handhistory/schemas/widerpoker-holdem-hand-1.json``).

One document per terminal hand with everything an outsider needs to recompute it: the
fairness inputs (commitment, chain and its index, chain seed, server seed, every client
seed with its commitment, and for algorithm 3 the freeze and its beacon round; the seeds of a
player's document only once ``seed_is_public``), the conditions (blinds, ante, betting,
rake rate and cap), the seats with their
starting stacks, the forced bets (a big blind posted out of position included), every
stored action in order (the clock's ``timeout_all_in`` included: PHH cannot write either),
the board, the pots, the rake, the results, and hole cards by the privacy rule of
docs/holdem-export.md:

- ``audience="staff"`` (auditors, the back office): every seat's hole cards, and the hand is
  terminal (the only hands exported), so staff see them only once the hand is over;
- ``audience="player"``: the cards shown at the showdown and the viewer's own only.

Money is in integer minor units (chips of the table's currency). Reads only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from django.conf import settings
from django.utils import timezone

from tables.engine.cards import card_code
from tables.engine.holdem import HandState, HoldemError, client_seed_commitment
from tables.holdem.records import replay, seed_is_public, seed_public_at, start_state
from tables.models import BeaconRound, HoldemHand, HoldemHandPlayer, HoldemHandStatus
from tables.services.beacon import time_of

HOLDEM_EXPORT_FORMAT = "widerpoker-holdem-hand/1"
HOLDEM_SCHEMA_PATH = Path(__file__).resolve().parent / "schemas" / "widerpoker-holdem-hand-1.json"
Audience = Literal["staff", "player"]
CONDITION_FIELDS = (
    "betting",
    "small_blind_minor",
    "big_blind_minor",
    "big_bet_minor",
    "ante_minor",
    "max_raises",
    "rake_bps",
    "rake_cap_minor",
    "seats",
)


def holdem_export_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``widerpoker-holdem-hand/1``."""
    import json

    return dict(json.loads(HOLDEM_SCHEMA_PATH.read_text(encoding="utf-8")))


def _by_seat(state: HandState, values: Sequence[Any]) -> dict[int, Any]:
    return dict(zip(state.seats, values, strict=True))


def _forced_bets(hand: HoldemHand, start: HandState) -> list[dict[str, Any]]:
    """Antes and blinds as posted at the deal (seed 003, The First round: the first seat
    left of the button posts the small blind, the next the big blind; heads-up the button
    posts the small blind; a seat of ``setup["posting"]`` outside the blinds posts a live
    big blind out of position). A short stack posts what it has."""
    n = len(start.seats)
    small, big = (1, 0) if n == 2 else (0, 1)
    posting = {int(seat) for seat in hand.setup.get("posting", ())}
    rows = []
    for k, seat in enumerate(start.seats):
        ante, blind = int(start.committed[k]), int(start.bets[k])
        if not ante and not blind:
            continue
        kind = "small_blind" if k == small else "big_blind" if k == big else None
        if kind is None and seat in posting:
            kind = "big_blind_out_of_position"
        rows.append({"seat": seat, "kind": kind or "ante", "ante_minor": ante, "blind_minor": blind})
    return rows


def _pots(hand: HoldemHand, state: HandState) -> list[dict[str, Any]]:
    """Main pot first, then side pots, with the seats that could win each and those that won
    it. ``rake_minor`` per pot is what the settlement recorded per pot (``results["pots"]``:
    ``amount``, ``rake``, ``winners``; docs/holdem.md, every pot pays its own rake), else null
    (hands settled before per-pot rake): the hand's rake is ``rake_minor`` at the top."""
    engine_pots = state.pots()
    eligible = [[state.seats[j] for j in pot.eligible] for pot in engine_pots]
    recorded = hand.results.get("pots")
    if isinstance(recorded, list):
        return [
            {
                "amount_minor": int(pot["amount"]),
                "rake_minor": None if pot.get("rake") is None else int(pot["rake"]),
                "eligible_seats": eligible[i] if i < len(eligible) else [int(s) for s in pot["winners"]],
                "winners": [int(s) for s in pot["winners"]],
            }
            for i, pot in enumerate(recorded)
        ]
    strengths = state.hand_strengths
    pots = []
    for pot, seats in zip(engine_pots, eligible, strict=True):
        if len(pot.eligible) > 1 and strengths:
            best = max(strengths[j] for j in pot.eligible)
            winners = [state.seats[j] for j in pot.eligible if strengths[j] == best]
        else:
            winners = seats
        pots.append({"amount_minor": pot.amount, "rake_minor": None, "eligible_seats": seats, "winners": winners})
    return pots


def _fairness(hand: HoldemHand, audience: Audience) -> dict[str, Any]:
    """The fairness block: the chain, the seeds (staff: always, the hand being over; a
    player: once ``seed_is_public``, else null: they give every folded card), every client
    seed's commitment (bots' included) and, for an algorithm-3 hand, the freeze and its
    beacon round (docs/provably-fair.md, 12)."""
    public = audience == "staff" or seed_is_public(hand, now=timezone.now())
    public_at = seed_public_at(hand)
    seats = {str(p["name"]): p for p in hand.players}
    signature = None
    source = None
    if hand.deal_round is not None:
        row = BeaconRound.objects.filter(round=hand.deal_round, value=hand.deal_beacon_value).first()
        if row is not None:
            source, signature = row.source, row.signature or None
    return {
        "algorithm": hand.algorithm,
        "commitment": hand.commitment,
        "chain_id": hand.chain_id,
        "chain_index": hand.chain_index,
        "chain_seed": (hand.chain_seed or None) if public else None,
        "server_seed": hand.server_seed if public else None,
        "seeds_public": public,
        "seed_public_at": public_at.isoformat() if public_at else None,
        "client_seeds": [
            {
                "name": str(name),
                "seed": str(seed) if public else None,
                "seat": int(seats[str(name)]["seat"]) if str(name) in seats else None,
                "bot": bool(seats.get(str(name), {}).get("bot", False)),
                "commitment": client_seed_commitment(str(name), str(seed)),
            }
            for name, seed in hand.client_seeds
        ],
        "frozen_at": hand.frozen_at.isoformat() if hand.frozen_at else None,
        "deal_round": hand.deal_round,
        "deal_round_at": time_of(int(hand.deal_round)).isoformat() if hand.deal_round is not None else None,
        "beacon_period_seconds": settings.BEACON_PERIOD_SECONDS,
        "beacon_source": source,
        "deal_beacon_value": hand.deal_beacon_value or None,
        "deal_beacon_signature": signature,
        "freeze_digest": hand.freeze_digest or None,
    }


def _int_map(values: Mapping[str, Any]) -> dict[str, int]:
    return {str(key): int(value) for key, value in values.items()}


def build_holdem_export(hand: HoldemHand, *, audience: Audience, viewer_id: int | None = None) -> dict[str, Any]:
    """The ``widerpoker-holdem-hand/1`` document of a terminal hand (module docstring).

    ``audience="staff"`` carries every hole card; ``"player"`` only the cards shown at the
    showdown and those of the seat of ``viewer_id``. The caller checks who may read the hand
    (``handhistory.holdem.get_holdem_hand``).

    Raises:
        ValueError: the hand is still being played (its seed and cards are secret), or
            ``audience`` is unknown.
    """
    if not hand.is_terminal:
        raise ValueError(f"hand {hand.pk} is still being played")
    if audience not in ("staff", "player"):
        raise ValueError(f"unknown audience {audience!r}")
    settled = hand.status == HoldemHandStatus.SETTLED
    start = start_state(hand)
    final: HandState | None = None
    replay_error = ""
    if settled:
        try:
            final = replay(hand)
        except HoldemError as error:
            replay_error = str(error)
    results = hand.results or {}
    shown: dict[str, list[str]] = {str(k): list(v) for k, v in results.get("shown", {}).items()}
    won = _int_map(results.get("won", {}))
    holes = _by_seat(start, [[card_code(c) for c in pair] for pair in start.holes])
    contributed = _by_seat(final, final.committed) if final is not None else {}
    rows = {row.seat: row for row in HoldemHandPlayer.objects.filter(hand=hand).select_related("user").order_by("seat")}
    seats = []
    for player in sorted(hand.players, key=lambda p: int(p["seat"])):
        seat = int(player["seat"])
        row = rows.get(seat)
        starting = int(row.starting_minor) if row else int(hand.setup["stacks"][seat] or 0)
        finishing = starting if row is None or row.finishing_minor is None else int(row.finishing_minor)
        own = viewer_id is not None and row is not None and row.user_id == viewer_id
        if str(seat) in shown:
            cards: list[str] | None = shown[str(seat)]
        elif audience == "staff" or own:
            cards = holes.get(seat)
        else:
            cards = None
        entry: dict[str, Any] = {
            "seat": seat,
            "name": str(player.get("name") or (row.user.username if row else "")),
            "bot": bool(player.get("bot", row.is_bot if row else False)),
            "starting_minor": starting,
            "finishing_minor": finishing,
            "net_minor": finishing - starting,
            "contributed_minor": int(contributed[seat]) if seat in contributed else 0,
            "won_minor": won.get(str(seat), 0),
            "shown": str(seat) in shown,
            "hole_cards": cards,
        }
        if audience == "staff":
            entry["user_id"] = int(player["user_id"]) if player.get("user_id") is not None else None
        seats.append(entry)
    config = hand.config
    return {
        "format": HOLDEM_EXPORT_FORMAT,
        "audience": audience,
        "hand": {
            "id": hand.pk,
            "table_id": hand.table_id,
            "table_name": hand.table.name,
            "number": hand.number,
            "status": hand.status,
            "currency": str(config.get("currency", hand.table.currency)),
            "started_at": hand.started_at.isoformat(),
            "settled_at": hand.settled_at.isoformat() if hand.settled_at else None,
            "cancel_reason": hand.cancel_reason or None,
        },
        "fairness": _fairness(hand, audience),
        "conditions": {name: config.get(name) for name in CONDITION_FIELDS},
        "button": int(hand.setup["button"]),
        "waiting_seats": sorted(int(s) for s in hand.setup.get("waiting", ())),
        "seats": seats,
        "forced_bets": _forced_bets(hand, start),
        "actions": [
            {
                "kind": str(action["kind"]),
                "seat": int(action["seat"]),
                "amount_minor": None if action.get("amount") is None else int(action["amount"]),
                "at": action.get("at"),
            }
            for action in hand.actions
        ],
        "board": list(hand.board),
        "pot_minor": int(hand.pot_minor),
        "rake_minor": int(hand.rake_minor),
        "pots": _pots(hand, final) if final is not None else [],
        "result": {
            "showdown": bool(results.get("showdown", False)),
            "won": won,
            "finishing_stacks": _int_map(results.get("finishing_stacks", {})),
            "replay_error": replay_error or None,
        },
        "phh": {"available": bool(hand.phh), "error": hand.phh_error or None},
    }
