"""Reads of WiderPoker tables, hands and entries shaped for the game screen, the API and the
pushes: the public ``table_state`` frame, each player's private ``entry_state`` frame and the
live pool frames. The house's reads (the table, the lobby lines, recall) are in ``tables.selectors``.

Public state never contains a secret of a running hand: the server seed and the change keys
appear only once the hand is settled or cancelled.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from django.db.models import F, Func, IntegerField
from django.utils import timezone

from tables.engine.widerpoker import (
    PoolSplit,
    category_of,
    change_keys,
    combination_from_index,
    final_hand,
    hold_from_mask,
    pool_split,
)
from tables.models import Entry, Hand, HandFreeze, HandStatus, Redeal, Seat, Table, TablePhase
from tables.realtime.frames import EntryStateFrame, PoolUpdatedFrame, TableStateFrame
from tables.selectors import _iso, count_players, get_table, speed_label, table_jackpots
from tables.services import beacon
from tables.widerpoker.panel_cache import panel_of, render_spliced
from tables.widerpoker.records import board_from_json, carry_key, hand_conditions, spin_feed
from tables.widerpoker.services import powerups
from tables.widerpoker.services.special import next_special
from wallet.models import Account
from wallet.services import player_account_key

HAND_CONDITION_KEYS = (
    "rake_bps",
    "paid_fraction_bps",
    "min_prize_minor",
    "draw_price_minor",
    "max_draws",
    "redeal_price_minor",
    "max_redeals",
    "tips",
    "panel",
)
"""The conditions of the running hand every watcher sees (a special hand or a spin jackpot
may have changed them from the table's)."""


def _carry_minor(table: Table) -> int:
    account = Account.objects.filter(key=carry_key(table.pk, table.currency)).only("balance_minor").first()
    return account.balance_minor if account is not None else 0


def live_split(hand: Hand, table: Table) -> PoolSplit:
    """The running hand's money as shown during it: jackpot contributions, rake and the pool
    net of both, plus carried cents and any spin jackpot drawn (rules, Rake: the pool shown is
    already net of the rake). The same engine arithmetic as settlement (``pool_split``)."""
    return pool_split(
        hand.gross_minor,
        hand_conditions(hand.config),
        carry_in_minor=_carry_minor(table),
        spin_award_minor=hand.spin_award_minor,
    )


def lobby_row(table: Table) -> dict[str, Any]:
    """WiderPoker's side of a table's lobby line (``Game.lobby_row``, read through
    ``tables.selectors``' registered reader): the table's conditions (money in minor units,
    shares in bps, times in seconds, ``speed`` from the change phase), ``next_special``
    (str or None) and ``pool_minor`` (minor units: the running hand's pool, live and net of
    rake and jackpot contributions during the change phase; None without a hand).
    ``table.current_hand`` preferably select_related; the conditions row is one read."""
    conditions = table.widerpoker
    hand = table.current_hand
    pool = None
    if hand is not None:
        pool = hand.pool_minor if hand.status != HandStatus.CHANGE else live_split(hand, table).pool_minor
    return {
        "ante_minor": conditions.ante_minor,
        "change_seconds": conditions.change_seconds,
        "speed": speed_label(conditions.change_seconds),
        "rake_bps": conditions.rake_bps,
        "draw_price_minor": conditions.draw_price_minor,
        "draw_price_bps": conditions.draw_price_bps,
        "redeal_price_minor": conditions.redeal_price_minor,
        "max_draws": conditions.max_draws,
        "max_redeals": conditions.max_redeals,
        "redeal_seconds": conditions.redeal_seconds,
        "paid_fraction_bps": conditions.paid_fraction_bps,
        "min_prize_minor": conditions.min_prize_minor,
        "next_special": next_special(table, now=timezone.now()),
        "pool_minor": pool,
    }


def _spin_public(hand: Hand) -> dict[str, Any] | None:
    """The spin jackpot drawn at the start of the hand, announced to everyone."""
    if hand.spin_jackpot_id is None:
        return None
    feed = spin_feed(hand.config, hand.spin_jackpot_id) or {}
    return {
        "kind": feed.get("kind"),
        "name": feed.get("name", ""),
        "award_minor": hand.spin_award_minor,
    }


def _hand_public(hand: Hand, table: Table) -> dict[str, Any]:
    grid_board = board_from_json(hand.board)
    data: dict[str, Any] = {
        "id": hand.pk,
        "number": hand.number,
        "status": hand.status,
        "commitment": hand.commitment,
        "board": hand.board,
        "achievable": sorted(int(category) for category in grid_board.achievable()),
        "started_at": _iso(hand.started_at),
        "change_deadline": _iso(hand.change_deadline),
        "redeal_deadline": _iso(hand.redeal_deadline),
        "entries": hand.entry_count,
        "gross_minor": hand.gross_minor,
        "conditions": {key: hand.config.get(key) for key in HAND_CONDITION_KEYS},
        "overrides": hand.config.get("overrides", {}),
        "special": hand.config.get("special", []),
        "spin": _spin_public(hand),
    }
    if hand.deal_round is not None:
        # Algorithm 3: the frozen inputs and the round whose value decided the deal.
        data["frozen_at"] = _iso(hand.frozen_at)
        data["inputs_digest"] = hand.inputs_digest
        data["deal_round"] = hand.deal_round
        data["deal_beacon_value"] = hand.deal_beacon_value
    if hand.status == HandStatus.CHANGE:
        split = live_split(hand, table)
        data["rake_minor"] = split.rake_minor
        data["pool_minor"] = split.pool_minor
    else:
        data.update(
            rake_minor=hand.rake_minor,
            pool_minor=hand.pool_minor,
            carry_in_minor=hand.carry_in_minor,
            breakage_minor=hand.breakage_minor,
            server_seed=hand.server_seed,
            change_keys=hand.change_keys,
            leaderboard=hand.leaderboard,
            cancel_reason=hand.cancel_reason,
        )
    return data


def _table_config(table: Table) -> dict[str, Any]:
    return {
        "name": table.name,
        "is_open": table.is_open,
        **table.widerpoker.snapshot(),
        "next_special": next_special(table, now=timezone.now()),
    }


def get_table_state(*, table_id: int) -> TableStateFrame:
    """The public state of a WiderPoker table: what every watcher may see, with its version."""
    table = get_table(table_id, rows=Table.objects.select_related("current_hand", "widerpoker"))
    hand = table.current_hand
    return TableStateFrame(
        type="table_state",
        table_id=table.pk,
        version=table.version,
        phase=table.phase,
        deadline=_iso(table.phase_deadline),
        server_time=timezone.now().isoformat(),
        players=count_players(table_id=table.pk),
        hand=_hand_public(hand, table) if hand is not None else None,
        config=_table_config(table),
        jackpots=table_jackpots([table])[table.pk],
        frozen=_frozen_public(table) if hand is None else None,
    )


class _ArrayLength(Func):
    """The length of a JSON array column (an int), counted by the database: a freeze of
    100,000 players is 6 MB of ``players`` that a public frame only counts."""

    function = "jsonb_array_length"
    output_field = IntegerField()

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(compiler, connection, function="json_array_length", **extra)


def _frozen_public(table: Table) -> dict[str, Any] | None:
    """Algorithm 3: the next hand's frozen inputs, public from the freeze until the deal
    (docs/provably-fair.md, "Algorithm 3"): its number, the chain and element it is bound to,
    the digest ``D`` of the frozen players' client seeds and how many they are, when it froze,
    the deal round with the time it is released, and when the clock deals the hand
    (``deal_at``: the end of the previous hand's results, or the round's time at a table that
    was waiting; since 2026-11-27). None when no hand is frozen."""
    freeze = (
        HandFreeze.objects.filter(table_id=table.pk, abandoned_at__isnull=True)
        .annotate(player_count=_ArrayLength("players"))
        .values("number", "chain_id", "chain_index", "digest", "deal_round", "frozen_at", "deal_at", "player_count")
        .first()
    )
    if freeze is None:
        return None
    return {
        "hand_number": freeze["number"],
        "chain_id": freeze["chain_id"],
        "chain_index": freeze["chain_index"],
        "inputs_digest": freeze["digest"],
        "players": freeze["player_count"],
        "frozen_at": _iso(freeze["frozen_at"]),
        "deal_round": freeze["deal_round"],
        "deal_round_at": _iso(beacon.time_of(int(freeze["deal_round"]))),
        "deal_at": _iso(freeze["deal_at"] or beacon.time_of(int(freeze["deal_round"]))),
    }


def get_entry_state(*, table_id: int, user_id: int) -> EntryStateFrame:
    """A player's private view of the table: seat, balance and, when playing the current
    hand, the cards, choices, purchases, probability panel (during the change phase) and the
    result of every draw (once the hand is settled)."""
    return list_entry_states(table_id=table_id, user_ids={user_id})[user_id]


PRIVATE_TABLE_FIELDS = ("id", "game", "version", "currency", "current_hand")
PRIVATE_HAND_FIELDS = (
    "id",
    "status",
    "board",
    "config",
    "redeal_deadline",
    "entry_count",
    "server_seed",
    "change_keys",
    "cancel_reason",
    "deal_round",
)
"""The columns of the table and of its running hand a private frame reads (``_entry_private``):
not the hand's ``not_dealt`` (every seated player not dealt in, 10^5 ids in a big hand), its
leaderboard or jackpot results, which a private frame never shows."""

PRIVATE_ENTRY_FIELDS = (
    "id",
    "hand_id",
    "user_id",
    "combination",
    "redeals",
    "hold_mask",
    "draws_bought",
    "paid_minor",
    "promo_minor",
    "hold_used",
    "draw_strengths",
    "connected_at_end",
    "best_draw",
    "category",
    "place",
    "prize_minor",
)
"""The columns of an entry a private frame reads (``_entry_private``)."""


def _private_table(table_id: int) -> Table:
    """The table with its running hand, only the columns a private frame reads (one query).
    Raises TableNotFoundError."""
    return get_table(
        table_id,
        rows=Table.objects.select_related("current_hand").only(
            *PRIVATE_TABLE_FIELDS, *(f"current_hand__{name}" for name in PRIVATE_HAND_FIELDS)
        ),
    )


def list_entry_states(*, table_id: int, user_ids: set[int]) -> dict[int, EntryStateFrame]:
    """``get_entry_state`` for many players of one table in a handful of queries (the hub
    refreshes every socket of a process at once). Raises TableNotFoundError."""
    return _entry_states(_private_table(table_id), user_ids)


def _entry_states(table: Table, user_ids: set[int], *, spliced: bool = False) -> dict[int, EntryStateFrame]:
    """The private frames of ``user_ids`` at ``table`` (as read by ``_private_table``):
    seats, balances, entries in the running hand and power-up sessions, one query each.
    ``spliced``: each panel left a ``CachedPanel`` (``_entry_private``)."""
    hand = table.current_hand
    seats = {
        user_id: {"status": status, "reason": reason}
        for user_id, status, reason in Seat.objects.filter(table_id=table.pk, user_id__in=user_ids).values_list(
            "user_id", "status", "status_reason"
        )
    }
    # What the player may spend: the balance less purchases confirmed and not yet captured
    # into a hand's escrow (wallet.selectors.get_balance_minor), so a draw shows at once.
    balances = dict(
        Account.objects.filter(key__in=[player_account_key(user_id, table.currency) for user_id in user_ids])
        .annotate(available=F("balance_minor") - F("held_minor"))
        .values_list("user_id", "available")
    )
    entries = (
        {
            entry.user_id: entry
            for entry in Entry.objects.filter(hand=hand, user_id__in=user_ids).only(*PRIVATE_ENTRY_FIELDS)
        }
        if hand is not None
        else {}
    )
    sessions = powerups.session_states(table_id=table.pk, user_ids=user_ids)
    pending = (
        {
            user_id: {"number": number, "round": round_number, "round_at": _iso(beacon.time_of(int(round_number or 0)))}
            for user_id, number, round_number in Redeal.objects.filter(
                hand=hand, user_id__in=user_ids, combination__isnull=True
            ).values_list("user_id", "number", "beacon_round")
        }
        if hand is not None and hand.deal_round is not None
        else {}
    )
    states = {}
    for user_id in user_ids:
        entry = entries.get(user_id)
        states[user_id] = EntryStateFrame(
            type="entry_state",
            table_id=table.pk,
            version=table.version,
            seat=seats.get(user_id),
            balance_minor=balances.get(user_id, 0),
            currency=table.currency,
            hand_id=hand.pk if hand is not None else None,
            entry=(
                _entry_private(hand, entry, pending.get(user_id), spliced=spliced)
                if hand is not None and entry is not None
                else None
            ),
            powerups=sessions.get(user_id),
        )
    return states


def build_entry_state(
    *,
    table_id: int,
    version: int,
    currency: str,
    hand: Hand,
    entry: Entry,
    seat: dict[str, Any] | None,
    balance_minor: int,
    powerups: dict[str, Any] | None,
    redeal_pending: dict[str, Any] | None = None,
    spliced: bool = False,
) -> EntryStateFrame:
    """The ``entry_state`` frame of a player of ``hand`` from values the caller already
    holds (the purchase writer's rows: tables/widerpoker/services/purchases.py), with no query: the
    same frame ``get_entry_state`` reads. ``hand`` needs the columns of
    ``PRIVATE_HAND_FIELDS``, ``entry`` those of ``PRIVATE_ENTRY_FIELDS``; ``balance_minor``
    is what the player may spend (balance less held); ``redeal_pending`` the player's redeal
    waiting for its beacon round (algorithm 3: ``number``, ``round``, ``round_at``), else None.
    ``spliced``: the panel is left a ``CachedPanel``, for ``render_spliced`` only."""
    return EntryStateFrame(
        type="entry_state",
        table_id=table_id,
        version=version,
        seat=seat,
        balance_minor=balance_minor,
        currency=currency,
        hand_id=hand.pk,
        entry=_entry_private(hand, entry, redeal_pending, spliced=spliced),
        powerups=powerups,
    )


def render_entry_state(**arguments: Any) -> str:
    """``frames.dumps(build_entry_state(**arguments))``, the same text (the same keyword
    arguments), its probability panel's text spliced in from the panel cache
    (``render_entry_states``). Raises TypeError for arguments ``build_entry_state`` refuses."""
    return render_spliced(build_entry_state(spliced=True, **arguments))


def render_entry_states(*, table_id: int, user_ids: set[int]) -> dict[int, str]:
    """``list_entry_states`` serialised, ready to send (WiderPoker's ``Game.private_frames``):
    the text ``frames.dumps`` makes of each frame, its probability panel's text spliced in
    from the panel cache (``panel_cache``), not encoded again. Raises TableNotFoundError."""
    states = _entry_states(_private_table(table_id), user_ids, spliced=True)
    return {user_id: render_spliced(state) for user_id, state in states.items()}


def _entry_private(
    hand: Hand, entry: Entry, pending: dict[str, Any] | None = None, *, spliced: bool = False
) -> dict[str, Any]:
    """``entry`` of the private frame; ``redeal_pending``: algorithm 3's redeal waiting for
    its beacon round (``number``, ``round``, ``round_at``), else None. ``spliced``: its
    ``panel`` is the ``CachedPanel`` itself, for ``render_spliced`` (not JSON as it is)."""
    config = hand.config
    combination = combination_from_index(int(entry.combination))
    columns = hand.board["columns"]
    data: dict[str, Any] = {
        "combination": list(combination),
        "cards": [columns[c][p] for c, p in enumerate(combination)],
        "hold": list(hold_from_mask(entry.hold_mask)) if entry.hold_mask is not None else None,
        "draws_bought": entry.draws_bought,
        "max_draws": config["max_draws"],
        "draw_price_minor": config["draw_price_minor"],
        "redeals_used": len(entry.redeals) + (1 if pending else 0),
        "redeal_pending": pending,
        "max_redeals": config["max_redeals"],
        "redeal_price_minor": config["redeal_price_minor"],
        "redeal_deadline": _iso(hand.redeal_deadline),
        "paid_minor": entry.paid_minor,
        "promo_minor": entry.promo_minor,
        "panel": None,
        "result": None,
    }
    if hand.status == HandStatus.CHANGE and config.get("panel", True):
        cached = panel_of(hand, combination, keep_data=not spliced)
        if not config.get("tips", True):
            cached = cached.untipped()
        data["panel"] = cached if spliced else dict(cached.data)
    elif hand.status == HandStatus.SETTLED and entry.hold_used is not None:
        board = board_from_json(hand.board)
        keys = hand.change_keys or [list(key) for key in change_keys(bytes.fromhex(hand.server_seed))]
        hold = hold_from_mask(entry.hold_used)
        strengths = entry.draw_strengths or []
        categories = category_of(np.array(strengths, dtype=np.int64)).tolist() if strengths else []
        data["result"] = {
            "hold_used": list(hold_from_mask(entry.hold_used)),
            "connected_at_end": entry.connected_at_end,
            "draws": [
                {
                    "number": d + 1,
                    "key": keys[d],
                    "cards": list(final_hand(board, combination, hold, keys[d])),
                    "category": int(categories[d]),
                    "strength": int(strengths[d]),
                    "bought": d < entry.draws_bought,
                }
                for d in range(len(keys))
            ],
            "best_draw": entry.best_draw,
            "category": entry.category,
            "place": entry.place,
            "prize_minor": entry.prize_minor,
            "entries": hand.entry_count,
        }
    elif hand.status == HandStatus.CANCELLED:
        data["result"] = {
            "cancelled": True,
            "reason": hand.cancel_reason,
            "refunded_minor": entry.paid_minor - entry.promo_minor,  # free items went back to promotions
        }
    return data


def live_pool_frames() -> Iterator[tuple[int, int, PoolUpdatedFrame]]:
    """(hand id, gross, frame) for every hand in its change phase."""
    tables = Table.objects.filter(phase=TablePhase.CHANGE, current_hand__status=HandStatus.CHANGE).select_related(
        "current_hand"
    )
    for table in tables:
        hand = table.current_hand
        assert hand is not None
        yield (
            hand.pk,
            hand.gross_minor,
            PoolUpdatedFrame(
                type="pool_updated",
                table_id=table.pk,
                version=table.version,
                hand_id=hand.pk,
                gross_minor=hand.gross_minor,
                pool_minor=(split := live_split(hand, table)).pool_minor,
                rake_minor=split.rake_minor,
                entries=hand.entry_count,
            ),
        )
