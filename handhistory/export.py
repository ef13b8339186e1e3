"""The export of a terminal WiderPoker hand for independent verification (format
``widerpoker-hand/2``, docs/export-format.md) and the ids of the hands an outside verifier
checks. The access rule is handhistory.widerpoker's: HandNotFoundError for a hand the viewer
may not read."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from django.db.models import QuerySet

from handhistory.errors import HandNotTerminalError
from handhistory.selectors import Viewer
from handhistory.widerpoker import _load_hand
from tables.models import Entry, Hand, HandStatus
from tables.services import beacon
from tables.widerpoker.records import ENTRY_RECORD_FIELDS, spin_feed

EXPORT_FORMAT = "widerpoker-hand/2"
"""The export's schema version: ``handhistory/schemas/widerpoker-hand-2.json``, documented
in docs/export-format.md (version 1 numbered draws from 0 and lacked timestamps, ledger
references, the spin draw, players not dealt in and the algorithm version)."""


def _hand_transfers(hand: Hand) -> list[Any]:
    """Every ledger transfer that moved money into or out of the hand's escrow, in order:
    ante, spin award, captured purchases (``capture:<escrow>:<hold>``, or a purchase's own
    reference), free items (``promotion``), settlement or refund."""
    from wallet.models import LedgerEntry, Transfer

    escrow = f"escrow:hand:{hand.pk}"
    ids = LedgerEntry.objects.filter(account__key=escrow).values("transfer_id")
    return list(
        Transfer.objects.filter(pk__in=ids).order_by("created_at", "pk").only("reference", "kind", "created_at")
    )


def _purchases(hand: Hand, transfers: list[Any]) -> dict[int, list[dict[str, Any]]]:
    """Each player's draws and redeals, by user id: bought ones from their funds holds (the
    purchase's time and reference, and the transfer that captured it into the escrow), free
    ones from their promotion transfers. References are ``draw:<hand>:<user>:<n>`` and
    ``redeal:<hand>:<user>:<k>`` (his k-th redeal; the hand's redeal number is in ``redeals``)."""
    from tables.models import Entry as EntryModel
    from wallet.models import FundsHold

    redeal_numbers = {
        user_id: [int(number) for number, _combination in redeals]
        for user_id, redeals in EntryModel.objects.filter(hand=hand).values_list("user_id", "redeals")
    }
    rows: list[tuple[str, Any, str | None, bool]] = [
        (reference, at, captured, False)
        for reference, at, captured in FundsHold.objects.filter(destination__key=f"escrow:hand:{hand.pk}").values_list(
            "reference", "created_at", "transfer__reference"
        )
    ]
    rows += [(t.reference, t.created_at, t.reference, True) for t in transfers if t.kind == "promotion"]
    result: dict[int, list[dict[str, Any]]] = {}
    for reference, at, captured, free in sorted(rows, key=lambda row: (row[1], row[0])):
        parts = reference.split(":")
        if parts[0] not in ("draw", "redeal") or len(parts) != 4:
            continue
        user_id, n = int(parts[2]), int(parts[3])
        if parts[0] == "redeal":
            numbers = redeal_numbers.get(user_id, [])
            n = numbers[n - 1] if 0 < n <= len(numbers) else n
        item = {"kind": parts[0], "number": n, "at": at.isoformat(), "reference": reference, "free": free}
        item["captured_in"] = captured
        result.setdefault(user_id, []).append(item)
    return result


def _export_entry(row: dict[str, Any], purchases: dict[int, list[dict[str, Any]]]) -> dict[str, Any]:
    """One entry as format 2 writes it: draws numbered from 1 (as the API and the docs)."""
    data = {("player" if key == "user__username" else key): value for key, value in row.items()}
    user_id = data.pop("user_id")
    hold_at = data.pop("hold_at")
    # A redeal resets the hold (hold_mask NULL) and leaves the old time in the row: the
    # export gives both as null then, as docs/export-format.md says.
    data["hold_at"] = hold_at.isoformat() if hold_at and data.get("hold_mask") is not None else None
    data["best_draw"] = None if data["best_draw"] is None else int(data["best_draw"]) + 1
    data["purchases"] = purchases.get(user_id, [])
    return data


def _chain(hand: Hand) -> dict[str, Any] | None:
    """The seed chain a hand was dealt from (algorithm 2), as the commitments page lists it."""
    if hand.chain_id is None or hand.chain is None:
        return None
    return {"id": hand.chain_id, "anchor": hand.chain.anchor, "length": hand.chain.length, "index": hand.chain_index}


def _beacon(hand: Hand) -> dict[str, Any] | None:
    """The hand's beacon round as the export writes it; a drand round also carries its BLS
    signature (optional, 2026-11-26), so the value can be checked without asking drand."""
    if hand.beacon_round is None:
        return None
    data: dict[str, Any] = {"source": beacon.source(), "round": hand.beacon_round, "value": hand.beacon_value or None}
    if hand.beacon_value:
        from tables.models import BeaconRound

        signature = (
            BeaconRound.objects.filter(round=hand.beacon_round, value=hand.beacon_value)
            .values_list("signature", flat=True)
            .first()
        )
        if signature:
            data["signature"] = signature
    return data


def _deal_beacon(hand: Hand) -> dict[str, Any]:
    """Algorithm 3's export fields (optional, 2026-11-26; docs/export-format.md): when the
    inputs froze, their digest, the deal round with its value (and drand signature), and each
    redeal's round in number order with its value."""
    if hand.deal_round is None:
        return {}
    from tables.models import BeaconRound, Redeal

    redeals = list(
        Redeal.objects.filter(hand=hand)
        .order_by("number")
        .values_list("number", "beacon_round", "created_at", "resolved_at", "user__username")
    )
    values = dict(
        BeaconRound.objects.filter(
            source=beacon.source(), round__in=[r for _, r, _, _, _ in redeals if r is not None]
        ).values_list("round", "value")
    )
    signatures = dict(
        BeaconRound.objects.filter(source=beacon.source(), round__in=[r for _, r, _, _, _ in redeals if r is not None])
        .exclude(signature="")
        .values_list("round", "signature")
    )
    return {
        "frozen_at": hand.frozen_at.isoformat() if hand.frozen_at else None,
        "inputs_digest": hand.inputs_digest,
        "deal_beacon": {
            "source": beacon.source(),
            "round": hand.deal_round,
            "round_at": beacon.time_of(int(hand.deal_round)).isoformat(),
            "value": hand.deal_beacon_value or None,
            **({"signature": hand.deal_beacon_signature} if hand.deal_beacon_signature else {}),
        },
        "redeal_rounds": [
            {
                "number": number,
                "player": player,
                "round": round_number,
                "bought_at": bought.isoformat(),
                "dealt_at": dealt.isoformat() if dealt else None,
                "value": values.get(int(round_number or 0)),
                **({"signature": signatures[round_number]} if round_number in signatures else {}),
            }
            for number, round_number, bought, dealt, player in redeals
        ],
    }


def _spin_kind(hand: Hand) -> str | None:
    """The kind of the spin jackpot drawn in the hand, as its frozen conditions name it."""
    feed = spin_feed(hand.config, hand.spin_jackpot_id)
    return None if feed is None else str(feed["kind"])


def get_hand_export(*, hand_id: int, viewer: Viewer) -> dict[str, Any]:
    """The full record of a terminal hand for independent verification: configuration,
    commitment, revealed seed, board, change keys, totals and every entry's stored choices
    and results, raw (combination indices, hold masks, strengths).

    Raises HandNotFoundError (access rule) and HandNotTerminalError while the hand runs.
    """
    hand, _own, _sees_all = _load_hand(hand_id, viewer)
    if not hand.is_terminal:
        raise HandNotTerminalError("the hand is still being played", hand_id=hand_id)
    entries = Entry.objects.filter(hand=hand).order_by("join_order").values(*ENTRY_RECORD_FIELDS, "user_id", "hold_at")
    transfers = _hand_transfers(hand)
    purchases = _purchases(hand, transfers)
    return {
        "format": EXPORT_FORMAT,
        "hand": {
            "id": hand.pk,
            "table_id": hand.table_id,
            "table_name": hand.table.name,
            "number": hand.number,
            "status": hand.status,
            "started_at": hand.started_at.isoformat(),
            "change_deadline": hand.change_deadline.isoformat(),
            "redeal_deadline": hand.redeal_deadline.isoformat(),
            "settled_at": hand.settled_at.isoformat() if hand.settled_at else None,
            "config": hand.config,
            "algorithm": hand.algorithm,
            "commitment": hand.commitment,
            "chain": _chain(hand),
            "chain_seed": hand.chain_seed or None,
            "beacon": _beacon(hand),
            "server_seed": hand.server_seed,
            "board": hand.board,
            "change_keys": hand.change_keys,
            "entry_count": hand.entry_count,
            "redeal_count": hand.redeal_count,
            "antes_minor": hand.antes_minor,
            "draws_minor": hand.draws_minor,
            "redeals_minor": hand.redeals_minor,
            "gross_minor": hand.gross_minor,
            "rake_minor": hand.rake_minor,
            "carry_in_minor": hand.carry_in_minor,
            "pool_minor": hand.pool_minor,
            "breakage_minor": hand.breakage_minor,
            "spin_jackpot": _spin_kind(hand),
            "spin_award_minor": hand.spin_award_minor,
            "jackpot_results": hand.jackpot_results or {},
            "not_dealt": hand.not_dealt or [],
            "transfers": [
                {"reference": t.reference, "kind": t.kind, "at": t.created_at.isoformat()} for t in transfers
            ],
            "cancel_reason": hand.cancel_reason,
            # Optional (format 2, 2026-11-26; docs/export-format.md): only a hand cancelled
            # once its beacon round was due has it.
            **({"beacon_evidence": hand.beacon_evidence} if hand.beacon_evidence else {}),
            # Optional (algorithm 3, 2026-11-26): the freeze, the deal round, the redeals' rounds.
            **_deal_beacon(hand),
        },
        "entries": [_export_entry(row, purchases) for row in entries.iterator(chunk_size=2000)],
    }


def list_verifiable_hand_ids(*, table_id: int | None = None, since: datetime | None = None) -> QuerySet[Hand, int]:
    """Ids of the terminal hands (seed revealed), oldest first, optionally of one table and
    dealt at or after ``since``."""
    hands = Hand.objects.filter(status__in=[HandStatus.SETTLED, HandStatus.CANCELLED])
    if table_id is not None:
        hands = hands.filter(table_id=table_id)
    if since is not None:
        hands = hands.filter(started_at__gte=since)
    return hands.order_by("started_at", "pk").values_list("pk", flat=True)


EXPORT_SCHEMA_PATH = Path(__file__).resolve().parent / "schemas" / "widerpoker-hand-2.json"


def export_schema() -> dict[str, Any]:
    """The JSON Schema of the current export format (draft 2020-12)."""
    import json

    return dict(json.loads(EXPORT_SCHEMA_PATH.read_text(encoding="utf-8")))
