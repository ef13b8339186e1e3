"""Reads of the hand history for players and auditors (seed 000, Glossary, Hand History).

Access rule: a player sees only the hands he played; staff holding ``tables.view_hand``
(croupiers, auditors) see every hand. Anyone else gets HandNotFoundError, exactly as for a
hand that does not exist.

Secrets rule: the server seed and the change keys appear only once the hand is terminal
(settled or cancelled), for every viewer, staff included (docs/provably-fair.md). While a
hand is running, a player sees his own entry and nobody else's; staff see every entry only
once the change phase has ended (security audit F2).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet
from django.utils import timezone

from handhistory.errors import HandNotFoundError, HandNotTerminalError
from tables.engine.widerpoker import (
    category_of_strength,
    combination_from_index,
    draw_positions,
    hold_code,
    hold_from_mask,
)
from tables.holdem.records import seed_is_public
from tables.models import Entry, Hand, HandStatus
from tables.services import beacon
from tables.widerpoker.labels import category_name
from tables.widerpoker.records import ENTRY_RECORD_FIELDS, spin_feed

VIEW_ALL_PERMISSION = "tables.view_hand"
EXPORT_FORMAT = "widerpoker-hand/2"
"""The export's schema version: ``handhistory/schemas/widerpoker-hand-2.json``, documented
in docs/export-format.md (version 1 numbered draws from 0 and lacked timestamps, ledger
references, the spin draw, players not dealt in and the algorithm version)."""

Viewer = User | AnonymousUser


def can_view_all_hands(viewer: Viewer) -> bool:
    """Whether the viewer is staff allowed to read every hand (the "view hand" permission)."""
    return bool(
        viewer.is_authenticated and viewer.is_active and viewer.is_staff and viewer.has_perm(VIEW_ALL_PERMISSION)
    )


def category_label(category: int | None) -> str:
    """The category's human label ("Two pair"), or an empty string when there is none."""
    return category_name(category)


@dataclass(frozen=True, slots=True)
class DrawView:
    """One of an entry's five draws (seed 001, C.1): bought or not, all are shown after the
    hand. ``number`` is 1..5 and uses change key ``number``."""

    number: int
    key: tuple[int, ...]
    cards: tuple[str, ...]
    strength: int
    category: int
    category_label: str
    bought: bool
    best: bool


@dataclass(frozen=True, slots=True)
class RedealView:
    """A redeal bought by the entry: the hand's redeal ``number`` (seed stream
    ``redeal:<number>``) and the new initial combination it gave."""

    number: int
    combination: tuple[int, ...]
    cards: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EntryView:
    """One entry of a hand as the history shows it. Draw results are empty until the hand is
    settled; ``net_minor`` is prize less paid (0 for a cancelled, refunded hand; None while
    the hand runs)."""

    id: int
    player: str
    join_order: int
    initial_combination: tuple[int, ...]
    initial_cards: tuple[str, ...]
    redeals: tuple[RedealView, ...]
    combination: tuple[int, ...]
    cards: tuple[str, ...]
    hold_chosen: str | None
    hold_used: str | None
    connected_at_end: bool | None
    draws_bought: int
    draws: tuple[DrawView, ...]
    best_draw: int | None
    final_cards: tuple[str, ...]
    strength: int | None
    category: int | None
    category_label: str
    place: int | None
    prize_minor: int
    paid_minor: int
    net_minor: int | None


@dataclass(frozen=True, slots=True)
class HandHistory:
    """A hand as one viewer may see it. ``server_seed`` and ``change_keys`` are None until
    the hand is terminal; so are the settlement totals (rake, pool, carry, breakage)."""

    id: int
    table_id: int
    table_name: str
    number: int
    status: str
    status_label: str
    is_terminal: bool
    started_at: datetime
    change_deadline: datetime
    redeal_deadline: datetime
    settled_at: datetime | None
    config: dict[str, Any]
    currency: str
    commitment: str
    board: dict[str, Any]
    server_seed: str | None
    change_keys: list[list[int]] | None
    entry_count: int
    redeal_count: int
    antes_minor: int
    draws_minor: int
    redeals_minor: int
    gross_minor: int
    rake_minor: int | None
    carry_in_minor: int | None
    pool_minor: int | None
    breakage_minor: int | None
    prizes_minor: int | None
    leaderboard: list[dict[str, Any]]
    jackpots: list[dict[str, Any]]
    cancel_reason: str
    viewer_entry: EntryView | None
    viewer_sees_all: bool
    change_phase_over: bool

    @property
    def board_rows(self) -> list[tuple[str, ...]]:
        """The board read across: row p holds position p of each of the five columns."""
        return list(zip(*self.board["columns"], strict=True))

    @property
    def entries_visible(self) -> bool:
        """Whether the viewer may list every entry: players once the hand is terminal, staff
        once its change phase has ended (nobody sees another player's cards before)."""
        return self.is_terminal or (self.viewer_sees_all and self.change_phase_over)


@dataclass(frozen=True, slots=True)
class PlayerHandRow:
    """A line of a player's own hand list."""

    hand_id: int
    table_id: int
    table_name: str
    number: int
    status: str
    started_at: datetime
    currency: str
    category: int | None
    category_label: str
    place: int | None
    entry_count: int
    paid_minor: int
    prize_minor: int
    net_minor: int | None


def _load_hand(hand_id: int, viewer: Viewer) -> tuple[Hand, Entry | None, bool]:
    hand = Hand.objects.select_related("table").filter(pk=hand_id).first()
    if hand is None or not viewer.is_authenticated:
        raise HandNotFoundError(f"no hand {hand_id}", hand_id=hand_id)
    sees_all = can_view_all_hands(viewer)
    own = Entry.objects.select_related("user").filter(hand=hand, user_id=viewer.pk).first()
    if own is None and not sees_all:
        raise HandNotFoundError(f"no hand {hand_id}", hand_id=hand_id)
    return hand, own, sees_all


def _net_minor(hand: Hand, entry: Entry) -> int | None:
    if hand.status == HandStatus.SETTLED:
        return entry.prize_minor - entry.paid_minor
    if hand.status == HandStatus.CANCELLED:
        return 0
    return None


def _cards(board: dict[str, Any], positions: Iterable[int]) -> tuple[str, ...]:
    return tuple(str(board["columns"][c][p]) for c, p in enumerate(positions))


def describe_entry(hand: Hand, entry: Entry) -> EntryView:
    """Everything the history shows about one entry, computed from the stored board, keys
    and choices (seed 000, 3. Change procedure: a discarded card of column c becomes
    position (p_c + key[c]) mod 10)."""
    board = hand.board
    initial = combination_from_index(entry.initial_combination)
    current = combination_from_index(entry.combination)
    draws: list[DrawView] = []
    final: tuple[str, ...] = ()
    if hand.status == HandStatus.SETTLED and entry.hold_used is not None:
        hold = hold_from_mask(entry.hold_used)
        for index, (key, strength) in enumerate(zip(hand.change_keys or [], entry.draw_strengths or [], strict=True)):
            cards = _cards(board, draw_positions(current, hold, key))
            category = category_of_strength(int(strength))
            is_best = index == entry.best_draw
            draws.append(
                DrawView(
                    number=index + 1,
                    key=tuple(key),
                    cards=cards,
                    strength=int(strength),
                    category=int(category),
                    category_label=category_name(category),
                    bought=index < entry.draws_bought,
                    best=is_best,
                )
            )
            if is_best:
                final = cards
    return EntryView(
        id=entry.pk,
        player=entry.user.username,
        join_order=entry.join_order,
        initial_combination=initial,
        initial_cards=_cards(board, initial),
        redeals=tuple(
            RedealView(
                number=int(number),
                combination=combination_from_index(int(index)),
                cards=_cards(board, combination_from_index(int(index))),
            )
            for number, index in entry.redeals
        ),
        combination=current,
        cards=_cards(board, current),
        hold_chosen=None if entry.hold_mask is None else hold_code(hold_from_mask(entry.hold_mask)),
        hold_used=None if entry.hold_used is None else hold_code(hold_from_mask(entry.hold_used)),
        connected_at_end=entry.connected_at_end,
        draws_bought=entry.draws_bought,
        draws=tuple(draws),
        best_draw=None if entry.best_draw is None else entry.best_draw + 1,
        final_cards=final,
        strength=entry.strength,
        category=entry.category,
        category_label=category_label(entry.category),
        place=entry.place,
        prize_minor=entry.prize_minor,
        paid_minor=entry.paid_minor,
        net_minor=_net_minor(hand, entry),
    )


def get_hand_history(*, hand_id: int, viewer: Viewer) -> HandHistory:
    """The hand as ``viewer`` may see it; HandNotFoundError if it does not exist or the
    viewer neither played it nor may view every hand (access and secrets rules above)."""
    hand, own, sees_all = _load_hand(hand_id, viewer)
    terminal = hand.is_terminal
    settled = hand.status == HandStatus.SETTLED
    return HandHistory(
        id=hand.pk,
        table_id=hand.table_id,
        table_name=hand.table.name,
        number=hand.number,
        status=hand.status,
        status_label=str(HandStatus(hand.status).label),
        is_terminal=terminal,
        started_at=hand.started_at,
        change_deadline=hand.change_deadline,
        redeal_deadline=hand.redeal_deadline,
        settled_at=hand.settled_at,
        config=dict(hand.config),
        currency=hand.currency,
        commitment=hand.commitment,
        board=hand.board,
        server_seed=hand.server_seed if terminal else None,
        change_keys=hand.change_keys if terminal else None,
        entry_count=hand.entry_count,
        redeal_count=hand.redeal_count,
        antes_minor=hand.antes_minor,
        draws_minor=hand.draws_minor,
        redeals_minor=hand.redeals_minor,
        gross_minor=hand.gross_minor,
        rake_minor=hand.rake_minor if settled else None,
        carry_in_minor=hand.carry_in_minor if settled else None,
        pool_minor=hand.pool_minor if settled else None,
        breakage_minor=hand.breakage_minor if settled else None,
        prizes_minor=hand.pool_minor - hand.breakage_minor if settled else None,
        leaderboard=[
            {**row, "category_label": category_label(row.get("category"))}
            for row in (hand.leaderboard if terminal else [])
        ],
        jackpots=_jackpot_lines(hand, settled=settled),
        cancel_reason=hand.cancel_reason,
        viewer_entry=describe_entry(hand, own) if own is not None else None,
        viewer_sees_all=sees_all,
        change_phase_over=hand.change_phase_over(),
    )


def list_hand_entries(*, hand_id: int, viewer: Viewer) -> QuerySet[Entry]:
    """The entries of a hand the viewer may list, best place first once settled (join order
    before). Players get every entry of a terminal hand and only their own before."""
    hand, own, sees_all = _load_hand(hand_id, viewer)
    entries = Entry.objects.filter(hand=hand).select_related("user")
    if not (hand.is_terminal or (sees_all and hand.change_phase_over())):
        entries = entries.filter(pk=own.pk) if own is not None else entries.none()
    return entries.order_by("place", "join_order")


def find_hand_entry(*, hand_id: int, entry_id: int, viewer: Viewer) -> EntryView | None:
    """One entry of a hand as ``describe_entry`` tells it, if the viewer may list it
    (``list_hand_entries``: every entry once the hand is over, else his own); None if not.
    Raises HandNotFoundError as ``list_hand_entries``."""
    entry = list_hand_entries(hand_id=hand_id, viewer=viewer).filter(pk=entry_id).first()
    return None if entry is None else describe_entry(entry.hand, entry)


def describe_entries(*, hand_id: int, entries: Iterable[Entry]) -> list[EntryView]:
    """EntryView of each entry (one page of ``list_hand_entries``)."""
    hand = Hand.objects.get(pk=hand_id)
    return [describe_entry(hand, entry) for entry in entries]


def list_player_hands(*, user_id: int) -> QuerySet[Entry]:
    """The player's entries, most recent hand first, with their hands and tables.

    "Most recent" is the order of hand ids: a hand gets its id when it is dealt, so ids
    follow the deals (``started_at``) at every table. Ordering by the id lets PostgreSQL
    read one page straight from the ``entry_user_recent`` index (user, hand descending)
    instead of sorting all of a player's entries: 50,000 hands of one player, docs/benchmarks.md.
    """
    return Entry.objects.filter(user_id=user_id).select_related("hand", "hand__table").order_by("-hand_id")


def summarize_player_hand(entry: Entry) -> PlayerHandRow:
    """One line of the player's hand list (an entry from ``list_player_hands``)."""
    hand = entry.hand
    return PlayerHandRow(
        hand_id=hand.pk,
        table_id=hand.table_id,
        table_name=hand.table.name,
        number=hand.number,
        status=hand.status,
        started_at=hand.started_at,
        currency=hand.currency,
        category=entry.category,
        category_label=category_label(entry.category),
        place=entry.place,
        entry_count=hand.entry_count,
        paid_minor=entry.paid_minor,
        prize_minor=entry.prize_minor,
        net_minor=_net_minor(hand, entry),
    )


def _jackpot_lines(hand: Hand, *, settled: bool) -> list[dict[str, Any]]:
    """Each jackpot of the hand's conditions with what the hand did to it: the spin drawn
    (public from the deal), the contribution and any royal award (once settled)."""
    results = hand.jackpot_results or {}
    royal = {str(award["key"]): award for award in results.get("royal", [])}
    lines = []
    for feed in hand.config.get("jackpots", ()):
        lines.append(
            {
                "name": feed.get("name", feed["key"]),
                "kind": feed["kind"],
                "contribution_minor": results.get("contributions", {}).get(feed["key"]) if settled else None,
                "spin_award_minor": hand.spin_award_minor if feed["id"] == hand.spin_jackpot_id else None,
                "royal": royal.get(feed["key"]) if settled else None,
            }
        )
    return lines


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


def list_commitments(*, hands: int = 50) -> dict[str, Any]:
    """What the public commitments page shows: every seed chain (table, anchor, length, how
    many hands used it, when published), the latest hands' commitments with their chain
    position and beacon round (the seed and chain seed only once the hand is over), the
    latest Hold'em hands' commitments likewise, and the beacon values used. Nothing secret.
    Practice games are private (seed 004): their chains and hands are not listed."""
    from tables.models import BeaconRound, HoldemHand

    now = timezone.now()

    chains = list_anchors()
    latest = [
        {
            "table": hand.table.name,
            "number": hand.number,
            "id": hand.pk,
            "commitment": hand.commitment,
            "chain": hand.chain_id,
            "index": hand.chain_index,
            "beacon_round": hand.beacon_round,
            "chain_seed": hand.chain_seed if hand.is_terminal else None,
            "status": hand.status,
        }
        for hand in Hand.objects.select_related("table").filter(algorithm__gte=2).order_by("-started_at", "-pk")[:hands]
    ]
    rounds = list(
        BeaconRound.objects.order_by("-round").values("source", "round", "value", "signature", "fetched_at")[:hands]
    )
    holdem = [
        {
            "table": hand.table.name,
            "number": hand.number,
            "commitment": hand.commitment,
            "chain": hand.chain_id,
            "index": hand.chain_index,
            # Hold'em seeds follow the hand's release time (docs/provably-fair.md, Card
            # commitments); the next hand's commitment equals this chain seed all the same.
            "chain_seed": hand.chain_seed if seed_is_public(hand, now=now) else None,
        }
        for hand in HoldemHand.objects.select_related("table")
        .filter(table__practice__isnull=True)
        .order_by("-started_at", "-pk")[:hands]
    ]
    return {
        "chains": chains,
        "hands": latest,
        "rounds": rounds,
        "holdem_hands": holdem,
        "cancellations": list_beacon_cancellations(limit=hands),
        "cancellation_rates": list_cancellation_rates(),
    }


def list_anchors() -> list[dict[str, Any]]:
    """Every public seed chain (practice games' excepted), by table then publication: table,
    chain id, anchor, length, hands used, ``created_at`` (aware, UTC) and the beacon round it
    was published with (``published_round``, its release time and value; docs/provably-fair.md,
    "Anchors")."""
    from tables.models import SeedChain

    return [
        {
            "table": chain.table.name,
            "table_id": chain.table_id,
            "id": chain.pk,
            "anchor": chain.anchor,
            "length": chain.length,
            "used": chain.next_index - 1,
            "created_at": chain.created_at.astimezone(UTC),
            "published_round": chain.published_round,
            "published_round_at": None
            if chain.published_round is None
            else beacon.time_of(chain.published_round).astimezone(UTC),
            "published_round_value": chain.published_round_value or None,
        }
        for chain in SeedChain.objects.select_related("table")
        .filter(table__practice__isnull=True)
        .order_by("table__name", "created_at", "pk")
    ]


ANCHORS_FORMAT = "widerpoker-anchors/1"


def get_anchors_feed() -> dict[str, Any]:
    """The anchors feed (``/history/commitments/anchors.json``) an outsider archives: the
    beacon (source; for drand the chain hash, public key, genesis and period) and every
    chain of ``list_anchors`` with times as ISO 8601 in UTC. Nothing secret."""
    from tables import drand

    return {
        "format": ANCHORS_FORMAT,
        "generated_at": timezone.now().astimezone(UTC).isoformat(),
        "beacon": {
            "source": beacon.source(),
            "chain_hash": drand.QUICKNET_CHAIN_HASH,
            "scheme": drand.SCHEME,
            "genesis_time": settings.BEACON_GENESIS_UNIX,
            "period_seconds": settings.BEACON_PERIOD_SECONDS,
        },
        "chains": [
            {
                **chain,
                "created_at": chain["created_at"].isoformat(),
                "published_round_at": None
                if chain["published_round_at"] is None
                else chain["published_round_at"].isoformat(),
            }
            for chain in list_anchors()
        ],
    }


def list_beacon_cancellations(*, limit: int = 50) -> list[dict[str, Any]]:
    """The latest WiderPoker hands cancelled once their beacon round was due, newest first,
    each with its table, number, reason and the evidence kept at cancellation
    (``tables.services.beacon.outage_evidence``). Public: such a cancellation may be an
    operator walking away from an outcome it disliked, so it is never hidden. Algorithm 3's
    freezes given up before their deal (``HandFreeze.abandoned_at``: the deal round never
    came, or too few frozen players could still play) are listed with them, ``hand_id`` None."""
    from tables.models import HandFreeze

    freezes = [
        {
            "table": freeze.table.name,
            "table_id": freeze.table_id,
            "hand_id": None,
            "number": freeze.number,
            "cancelled_at": freeze.abandoned_at,
            "reason": "inputs frozen, not dealt: " + str((freeze.evidence or {}).get("answer", "")),
            "evidence": freeze.evidence,
        }
        for freeze in HandFreeze.objects.select_related("table")
        .filter(abandoned_at__isnull=False, table__practice__isnull=True)
        .order_by("-abandoned_at", "-pk")[:limit]
    ]
    hands = [
        {
            "table": hand.table.name,
            "table_id": hand.table_id,
            "hand_id": hand.pk,
            "number": hand.number,
            "cancelled_at": hand.settled_at,
            "reason": hand.cancel_reason,
            "evidence": hand.beacon_evidence,
        }
        for hand in Hand.objects.select_related("table")
        .filter(status=HandStatus.CANCELLED, beacon_evidence__isnull=False, table__practice__isnull=True)
        .order_by("-settled_at", "-pk")[:limit]
    ]
    rows: list[dict[str, Any]] = hands + freezes
    return sorted(rows, key=lambda row: str(row["cancelled_at"].isoformat()), reverse=True)[:limit]


RATES_CACHE_KEY = "commitments:cancellation-rates"
RATES_CACHE_SECONDS = 300


def list_cancellation_rates(*, months: int = 12) -> list[dict[str, Any]]:
    """Cancellations per table and per calendar month (UTC, by the month the hand ended) of
    the last ``months`` months, newest month first: ``dealt`` terminal WiderPoker hands,
    ``cancelled`` of them, ``after_beacon`` those cancelled once their beacon round was due,
    ``abandoned`` algorithm 3's freezes given up before their deal (``HandFreeze.abandoned_at``,
    by the month they were given up: a hand walked away from before any money moved), and
    ``rate`` the share in percent (one decimal) of cancelled hands and abandoned freezes among
    the hands and abandoned freezes (docs/provably-fair.md 1.7). An aggregate over every hand
    of the period on a public page: computed at most every ``RATES_CACHE_SECONDS``."""
    from zoneinfo import ZoneInfo

    from django.core.cache import cache
    from django.db.models import Count, Q
    from django.db.models.functions import TruncMonth

    from tables.models import HandFreeze

    key = f"{RATES_CACHE_KEY}:{months}"
    cached = cache.get(key)
    if cached is not None:
        return list(cached)
    since = timezone.now() - timedelta(days=31 * months)
    rows = (
        Hand.objects.filter(
            status__in=[HandStatus.SETTLED, HandStatus.CANCELLED], settled_at__gte=since, table__practice__isnull=True
        )
        .annotate(month=TruncMonth("settled_at", tzinfo=ZoneInfo("UTC")))
        .values("month", "table_id", "table__name")
        .annotate(
            dealt=Count("id"),
            cancelled=Count("id", filter=Q(status=HandStatus.CANCELLED)),
            after_beacon=Count("id", filter=Q(status=HandStatus.CANCELLED, beacon_evidence__isnull=False)),
        )
        .order_by("-month", "table__name")
    )
    counts: dict[tuple[str, int], dict[str, Any]] = {}
    for row in rows:
        month = row["month"].strftime("%Y-%m")
        counts[(month, row["table_id"])] = {
            "month": month,
            "table": row["table__name"],
            "table_id": row["table_id"],
            "dealt": row["dealt"],
            "cancelled": row["cancelled"],
            "after_beacon": row["after_beacon"],
            "abandoned": 0,
        }
    freezes = (
        HandFreeze.objects.filter(abandoned_at__gte=since, table__practice__isnull=True)
        .annotate(month=TruncMonth("abandoned_at", tzinfo=ZoneInfo("UTC")))
        .values("month", "table_id", "table__name")
        .annotate(abandoned=Count("id"))
    )
    for row in freezes:
        month = row["month"].strftime("%Y-%m")
        empty = {"month": month, "table": row["table__name"], "table_id": row["table_id"]}
        counts.setdefault((month, row["table_id"]), {**empty, "dealt": 0, "cancelled": 0, "after_beacon": 0})
        counts[(month, row["table_id"])]["abandoned"] = row["abandoned"]
    rates = sorted(counts.values(), key=lambda rate: (rate["table"], rate["table_id"]))
    rates.sort(key=lambda rate: str(rate["month"]), reverse=True)
    for rate in rates:
        given_up = rate["cancelled"] + rate["abandoned"]
        rate["rate"] = f"{100 * given_up / (rate['dealt'] + rate['abandoned']):.1f}"
    cache.set(key, rates, RATES_CACHE_SECONDS)
    return rates


EXPORT_SCHEMA_PATH = Path(__file__).resolve().parent / "schemas" / "widerpoker-hand-2.json"


def export_schema() -> dict[str, Any]:
    """The JSON Schema of the current export format (draft 2020-12)."""
    import json

    return dict(json.loads(EXPORT_SCHEMA_PATH.read_text(encoding="utf-8")))
