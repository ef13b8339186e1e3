"""Independent verification of a terminal hand from its revealed server seed.

``verify_hand`` recomputes the whole hand with the pure engine (``tables.engine.widerpoker.replay_hand``)
from the seed and the choices the platform recorded (the hold played, draws bought, the
redeal numbers each entry bought), then compares every stored fact with the recomputation:

* the commitment is SHA-256 of the seed (docs/provably-fair.md);
* the board and the change keys come from the seed;
* every entry's initial combination, redealt combinations and played combination;
* the hold played follows the default rules when no choice arrived (rules B.2: connected
  players change all cards; Notes 2: disconnected players keep all);
* each draw's strength, the best bought draw, the final strength, category and place;
* the money: what each entry paid, gross = antes + draws + redeals, rake =
  floor(gross x rate) (rules, Rake), pool = gross - rake + carry, the prizes of the
  table's allocation, and prizes + breakage = pool (DESIGN 11).

A cancelled hand is checked up to the combinations and what was paid (there is no result).
The same algorithm, step by step, is in docs/provably-fair.md for auditors who want to
recompute a hand with their own code from the JSON export.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from handhistory.errors import HandNotFoundError, HandNotTerminalError
from jackpots import services as jackpot_services
from tables import drand
from tables.engine import fairness
from tables.engine.widerpoker import (
    HOLD_ALL,
    EntryChoices,
    HandReplay,
    board_grid,
    card_code,
    combination_from_index,
    combination_index,
    conditions,
    hand_outcome,
    hold_from_mask,
    replay_hand,
    special_hand_draw,
    spin_jackpot_draw,
)
from tables.models import BeaconRound, Entry, Hand, HandStatus, Redeal
from tables.services import beacon
from tables.widerpoker.records import ENTRY_RECORD_FIELDS, hand_conditions, spin_feed

MAX_LISTED_MISMATCHES = 200
HOLD_NONE_CONNECTED = 0  # rules B.2: a connected player who chose nothing changes all cards
HOLD_NONE_DISCONNECTED = 31  # rules Notes 2: a disconnected player keeps all cards


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One stored fact that differs from the recomputation."""

    check: str
    subject: str
    expected: Any
    stored: Any

    def __str__(self) -> str:
        return f"{self.subject}: {self.check} is {self.stored!r}, recomputed {self.expected!r}"


@dataclass(slots=True)
class VerificationReport:
    """The result of ``verify_hand``: which checks ran and every mismatch found (the first
    ``MAX_LISTED_MISMATCHES`` are listed; ``mismatch_count`` counts them all)."""

    hand_id: int
    table_name: str
    number: int
    status: str
    entries_checked: int = 0
    checks: list[str] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)
    mismatch_count: int = 0

    @property
    def ok(self) -> bool:
        """True when every stored fact matches the recomputation."""
        return self.mismatch_count == 0

    def check(self, name: str) -> None:
        """Record that check ``name`` ran (once, in first-run order)."""
        if name not in self.checks:
            self.checks.append(name)

    def compare(self, name: str, subject: str, expected: Any, stored: Any) -> None:
        """Record check ``name``; a mismatch when ``stored != expected``."""
        self.check(name)
        if expected != stored:
            self.mismatch_count += 1
            if len(self.mismatches) < MAX_LISTED_MISMATCHES:
                self.mismatches.append(Mismatch(name, subject, expected, stored))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (for exports and the management command)."""
        return {
            "hand_id": self.hand_id,
            "table": self.table_name,
            "number": self.number,
            "status": self.status,
            "ok": self.ok,
            "entries_checked": self.entries_checked,
            "checks": list(self.checks),
            "mismatch_count": self.mismatch_count,
            "mismatches": [
                {
                    "check": m.check,
                    "subject": m.subject,
                    "expected": m.expected,
                    "stored": m.stored,
                }
                for m in self.mismatches
            ],
        }


def verify_hand(*, hand_id: int) -> VerificationReport:
    """Recompute a settled or cancelled hand from its seed and compare (module docstring).

    Raises HandNotFoundError for an unknown hand and HandNotTerminalError while the hand is
    running (its seed is secret). Access control is the caller's business.
    """
    hand = Hand.objects.select_related("table", "chain").filter(pk=hand_id).first()
    if hand is None:
        raise HandNotFoundError(f"no hand {hand_id}", hand_id=hand_id)
    if not hand.is_terminal:
        raise HandNotTerminalError("the hand is still being played", hand_id=hand_id)
    report = VerificationReport(hand_id=hand.pk, table_name=hand.table.name, number=hand.number, status=hand.status)
    entries = list(Entry.objects.filter(hand=hand).order_by("join_order").values(*ENTRY_RECORD_FIELDS))
    report.entries_checked = len(entries)
    try:
        seed = bytes.fromhex(hand.server_seed)
        keys_from = None
        if hand.algorithm >= fairness.ALGORITHM_CHAIN and hand.beacon_value:
            keys_from = fairness.keys_seed(seed, bytes.fromhex(hand.beacon_value))
        extra: dict[str, Any] = {}
        if hand.algorithm >= fairness.ALGORITHM_DEAL_BEACON:
            extra = _deal_beacon_replay(report, hand, entries, seed)
        replay = replay_hand(seed, [_choices(hand, entry) for entry in entries], keys_seed=keys_from, **extra)
        if hand.algorithm >= fairness.ALGORITHM_CHAIN:
            _verify_chain(report, hand, entries)
    except ValueError as error:
        report.compare("replay", "hand", "a hand the engine can replay", str(error))
        return report
    _verify_public(report, hand, replay, len(entries))
    settled = hand.status == HandStatus.SETTLED
    for index, entry in enumerate(entries):
        _verify_entry(report, hand, replay, index, entry, settled=settled)
    _verify_money(report, hand, replay, entries, settled=settled)
    return report


def _choices(hand: Hand, entry: dict[str, Any]) -> EntryChoices:
    """The recorded choices of an entry: the hold the settlement played (all held for a
    cancelled hand, which has no draw), draws bought, redeal numbers in purchase order."""
    hold = HOLD_ALL if entry["hold_used"] is None else hold_from_mask(entry["hold_used"])
    return EntryChoices(
        hold=hold,
        draws=entry["draws_bought"],
        redeals=tuple(int(number) for number, _combination in entry["redeals"]),
    )


def _round_value(report: VerificationReport, what: str, round_number: int, value: str, signature: str) -> None:
    """A beacon round's value as the hand used it: the local beacon's recomputed, drand's
    from its signature checked against the chain's key (docs/provably-fair.md, 1.6)."""
    if beacon.source() == "local" and not signature:
        report.compare(what, "hand", beacon.local_value(round_number).hex(), value)
        return
    raw = bytes.fromhex(signature or "")
    valid = bool(raw) and drand.verify_round(int(round_number), raw, settings.DRAND_PUBLIC_KEY)
    report.compare(what, "hand", drand.randomness(raw).hex() if valid else "no drand signature that verifies", value)


def _pending_redeals(hand: Hand) -> dict[str, int]:
    """Algorithm 3: the redeals of a cancelled hand still waiting for their round, by
    buyer's name: paid (and refunded with the hand) but never dealt."""
    if hand.algorithm < fairness.ALGORITHM_DEAL_BEACON:
        return {}
    counts: dict[str, int] = {}
    for name in Redeal.objects.filter(hand=hand, combination__isnull=True).values_list("user__username", flat=True):
        counts[str(name)] = counts.get(str(name), 0) + 1
    return counts


def _frozen_out(hand: Hand) -> list[dict[str, Any]]:
    """Algorithm 3: the players frozen into the hand and not dealt in (``not_dealt`` with
    ``frozen``), whose client seeds are in the digest and names in the entry order."""
    return [row for row in hand.not_dealt or [] if isinstance(row, dict) and row.get("frozen")]


def _deal_beacon_replay(
    report: VerificationReport, hand: Hand, entries: list[dict[str, Any]], seed: bytes
) -> dict[str, Any]:
    """Algorithm 3's replay inputs: each redeal's stream seed from its round's value (each
    round checked), and the frozen positions when frozen players were left out."""
    extra: dict[str, Any] = {}
    # Dealt redeals only: one still waiting for its round when the hand was cancelled was
    # never dealt (it is counted in the money and the redeal count, ``_pending_redeals``).
    redeals = list(
        Redeal.objects.filter(hand=hand, combination__isnull=False)
        .order_by("number")
        .values_list("number", "beacon_round")
    )
    if redeals:
        rounds = {int(r) for _, r in redeals if r is not None}
        stored = {
            int(r): (v, sig)
            for r, v, sig in BeaconRound.objects.filter(source=beacon.source(), round__in=rounds).values_list(
                "round", "value", "signature"
            )
        }
        seeds = []
        for number, round_number in redeals:
            value, signature = stored.get(int(round_number or 0), ("", ""))
            _round_value(
                report, f"redeal {number}'s beacon round {round_number}", int(round_number or 0), value, signature
            )
            seeds.append(fairness.redeal_seed(seed, int(number), bytes.fromhex(value or "00" * 32)))
        extra["redeal_seeds"] = seeds
    out = _frozen_out(hand)
    if out:
        names = [str(entry["user__username"]) for entry in entries] + [str(row["player"]) for row in out]
        order = fairness.entry_order(seed, names)
        extra["frozen_count"] = len(names)
        extra["frozen_positions"] = [order.index(i) for i in range(len(entries))]
    return extra


def _verify_chain(report: VerificationReport, hand: Hand, entries: list[dict[str, Any]]) -> None:
    """Algorithm 2: the chain element links to the table's published anchor, the hand seed
    comes from it and the players' client seeds, the entry order from the hand seed, and the
    beacon value is the round's (the local beacon's recomputed; drand's from its signature)."""
    chain_seed = bytes.fromhex(hand.chain_seed)
    report.compare("commitment", "hand", hashlib.sha256(chain_seed).hexdigest(), hand.commitment)
    assert hand.chain is not None and hand.chain_index is not None
    linked = chain_seed
    for _ in range(hand.chain_index):
        linked = hashlib.sha256(linked).digest()
    report.compare("chain seed links to the published anchor", "hand", hand.chain.anchor, linked.hex())
    names = [str(entry["user__username"]) for entry in entries]
    pairs = [(name, str(entry["client_seed"])) for name, entry in zip(names, entries, strict=True)]
    if hand.algorithm >= fairness.ALGORITHM_DEAL_BEACON:
        # Algorithm 3: the digest of everyone frozen, and the deal round's value.
        out = _frozen_out(hand)
        pairs += [(str(row["player"]), str(row.get("client_seed", ""))) for row in out]
        digest = fairness.client_seeds_digest(pairs)
        report.compare("digest of the frozen client seeds", "hand", digest.hex(), hand.inputs_digest)
        _round_value(
            report,
            "deal round's beacon value",
            int(hand.deal_round or 0),
            hand.deal_beacon_value,
            hand.deal_beacon_signature,
        )
        expected = fairness.deal_seed(
            chain_seed, hand.table_id, hand.number, digest, bytes.fromhex(hand.deal_beacon_value or "00" * 32)
        )
        report.compare(
            "hand seed from chain seed, client seeds and deal round", "hand", expected.hex(), hand.server_seed
        )
        everyone = names + [str(row["player"]) for row in out]
        dealt = set(range(len(entries)))
        order = [i for i in fairness.entry_order(bytes.fromhex(hand.server_seed), everyone) if i in dealt]
        report.compare("entry order from the hand seed", "hand", list(range(len(entries))), order)
        if hand.frozen_at is not None and hand.deal_round is not None:
            report.compare(
                "deal round is the first after the freeze",
                "hand",
                beacon.round_after(hand.frozen_at),
                hand.deal_round,
            )
    else:
        expected = fairness.hand_seed(chain_seed, hand.table_id, hand.number, pairs)
        report.compare("hand seed from chain seed and client seeds", "hand", expected.hex(), hand.server_seed)
        order = fairness.entry_order(bytes.fromhex(hand.server_seed), names)
        report.compare("entry order from the hand seed", "hand", list(range(len(entries))), order)
    if hand.beacon_value and hand.beacon_round is not None and beacon.source() == "local":
        report.compare(
            "beacon value of its round", "hand", beacon.local_value(hand.beacon_round).hex(), hand.beacon_value
        )
    elif hand.beacon_value and hand.beacon_round is not None:
        # drand: the stored signature must verify against the chain's key, and the value
        # be its SHA-256 (docs/provably-fair.md, section 1.6).
        signature = (
            BeaconRound.objects.filter(source="drand", round=hand.beacon_round)
            .values_list("signature", flat=True)
            .first()
        )
        raw = bytes.fromhex(signature or "")
        valid = bool(raw) and drand.verify_round(int(hand.beacon_round), raw, settings.DRAND_PUBLIC_KEY)
        drand_value = drand.randomness(raw).hex() if valid else "no drand signature that verifies"
        report.compare("beacon value of its round", "hand", drand_value, hand.beacon_value)


def _verify_public(report: VerificationReport, hand: Hand, replay: HandReplay, count: int) -> None:
    if hand.algorithm < fairness.ALGORITHM_CHAIN:
        report.compare("commitment", "hand", replay.commitment, hand.commitment)
    one_in = jackpot_services.spin_one_in(list(hand.config.get("jackpots", ())))
    drawn = spin_jackpot_draw(bytes.fromhex(hand.server_seed), one_in)
    stored = spin_feed(hand.config, hand.spin_jackpot_id)
    report.compare(
        "spin jackpot", "hand", drawn.value if drawn is not None else None, None if stored is None else stored["kind"]
    )
    board = {
        "columns": [[card_code(card) for card in column] for column in replay.board.columns],
        "out": [card_code(card) for card in replay.board.out],
    }
    report.compare("board", "hand", board, hand.board)
    for schedule in hand.config.get("special_schedules", ()):
        if schedule.get("kind") == "chance" and schedule.get("one_in"):
            # "1 in N" (docs/provably-fair.md, section 2, stream special-hand).
            fired = special_hand_draw(bytes.fromhex(hand.server_seed), int(schedule["one_in"]))
            report.compare(f"special hand {schedule.get('name')!r} drawn", "hand", fired, schedule.get("fired"))
    report.compare("entry count", "hand", count, hand.entry_count)
    pending = sum(_pending_redeals(hand).values())
    report.compare("redeal count", "hand", len(replay.redeal_combinations) + pending, hand.redeal_count)
    if hand.status == HandStatus.SETTLED:
        keys = [list(key) for key in replay.change_keys]
        report.compare("change keys", "hand", keys, hand.change_keys)


def _verify_entry(
    report: VerificationReport,
    hand: Hand,
    replay: HandReplay,
    index: int,
    entry: dict[str, Any],
    *,
    settled: bool,
) -> None:
    subject = f"entry {entry['join_order']} ({entry['user__username']})"
    report.compare("join order", subject, index, entry["join_order"])
    report.compare(
        "initial combination",
        subject,
        _digits(combination_index(replay.initial_combinations[index])),
        _digits(entry["initial_combination"]),
    )
    for number, stored in entry["redeals"]:
        expected = _digits(combination_index(replay.redeal_combinations[number]))
        report.compare(f"redeal {number} combination", subject, expected, _digits(stored))
    played = "".join(str(int(d)) for d in replay.combinations[index])
    report.compare("played combination", subject, played, _digits(entry["combination"]))
    if not settled:
        return
    if entry["hold_mask"] is not None:
        expected_hold = entry["hold_mask"]
    elif entry["connected_at_end"]:
        expected_hold = HOLD_NONE_CONNECTED
    else:
        expected_hold = HOLD_NONE_DISCONNECTED
    report.compare("hold played", subject, expected_hold, entry["hold_used"])
    report.compare("draw strengths", subject, replay.strengths[index].tolist(), entry["draw_strengths"])
    report.compare("best draw", subject, int(replay.best_draw[index]), entry["best_draw"])
    report.compare("final strength", subject, int(replay.best_strength[index]), entry["strength"])
    report.compare("final category", subject, int(replay.categories[index]), entry["category"])
    report.compare("place", subject, int(replay.places[index]), entry["place"])


def _digits(index: int) -> str:
    """A combination index as its five digits p0..p4 ("03141"), as players read it."""
    return "".join(str(d) for d in combination_from_index(int(index)))


def _verify_money(
    report: VerificationReport,
    hand: Hand,
    replay: HandReplay,
    entries: list[dict[str, Any]],
    *,
    settled: bool,
) -> None:
    config = hand.config
    prices = {
        "ante_minor": int(config["ante_minor"]),
        "draw_price_minor": int(config["draw_price_minor"]),
        "redeal_price_minor": int(config["redeal_price_minor"]),
    }
    pending = _pending_redeals(hand)
    for entry in entries:
        bought = len(entry["redeals"]) + pending.get(str(entry["user__username"]), 0)
        expected_paid = conditions.paid_minor(**prices, draws_bought=entry["draws_bought"], redeals=bought)
        subject = f"entry {entry['join_order']} ({entry['user__username']})"
        report.compare("amount paid", subject, expected_paid, entry["paid_minor"])
    totals = conditions.hand_totals(
        antes_minor=prices["ante_minor"] * len(entries),
        draw_price_minor=prices["draw_price_minor"],
        redeal_price_minor=prices["redeal_price_minor"],
        extra_draws=sum(entry["draws_bought"] - 1 for entry in entries),
        redeals=sum(len(entry["redeals"]) for entry in entries) + sum(pending.values()),
    )
    report.compare("antes", "hand", totals.antes_minor, hand.antes_minor)
    report.compare("draws", "hand", totals.draws_minor, hand.draws_minor)
    report.compare("redeals", "hand", totals.redeals_minor, hand.redeals_minor)
    gross = conditions.gross_minor(hand.antes_minor, hand.draws_minor, hand.redeals_minor)
    report.compare("gross = antes + draws + redeals", "hand", gross, hand.gross_minor)
    report.compare("gross = sum paid", "hand", sum(entry["paid_minor"] for entry in entries), hand.gross_minor)
    if not settled:
        return
    results = hand.jackpot_results or {}
    contributions = results.get("contributions", {})
    # A royal jackpot's balance before the hand is what it paid less this hand's contribution.
    balances = {
        str(award["key"]): int(award["amount_minor"]) - int(contributions.get(award["key"], 0))
        for award in results.get("royal", [])
    }
    outcome = hand_outcome(
        board_grid(replay.board),
        replay.change_keys,
        combinations=replay.combinations,
        hold_masks=[entry["hold_used"] for entry in entries],
        connected=[True] * len(entries),
        draws_bought=[entry["draws_bought"] for entry in entries],
        paid_minor=[entry["paid_minor"] for entry in entries],
        conditions=hand_conditions(config, balances),
        carry_in_minor=hand.carry_in_minor,
        spin_award_minor=hand.spin_award_minor,
    )
    split = outcome.split
    report.compare("jackpot contributions", "hand", dict(split.contributions), dict(contributions))
    expected_royal = [
        {
            "key": award.key,
            "amount_minor": award.amount_minor,
            "winners": list(award.winners),
            "share_minor": award.share_minor,
            "remainder_minor": award.remainder_minor,
        }
        for award in outcome.royal_awards
    ]
    stored_royal = [{k: v for k, v in award.items() if k != "reset_paid_minor"} for award in results.get("royal", [])]
    report.compare("royal jackpot awards", "hand", expected_royal, stored_royal)
    for entry, expected in zip(entries, outcome.royal_prizes_minor.tolist(), strict=True):
        subject = f"entry {entry['join_order']} ({entry['user__username']})"
        report.compare("royal jackpot share", subject, expected, entry["jackpot_minor"])
    report.compare("rake = floor(gross x rate)", "hand", split.rake_minor, hand.rake_minor)
    report.compare(
        "pool = gross - contributions - rake + carry + spin award",
        "hand",
        split.pool_minor,
        hand.pool_minor,
    )
    prizes = [entry["prize_minor"] for entry in entries]
    report.compare("prizes + breakage = pool", "hand", hand.pool_minor, sum(prizes) + hand.breakage_minor)
    report.compare("breakage", "hand", outcome.breakage_minor, hand.breakage_minor)
    for entry, expected in zip(entries, outcome.prizes_minor.tolist(), strict=True):
        subject = f"entry {entry['join_order']} ({entry['user__username']})"
        report.compare("prize", subject, expected, entry["prize_minor"])
