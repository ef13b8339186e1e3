"""Dealing a WiderPoker hand: the hand's seed and configuration, its row, the antes, the
entries' rows and cards (seed 001 B, C; DESIGN.md "The game, as implemented"). The phases that
call it are in ``tables.widerpoker.services.lifecycle``.
"""

from __future__ import annotations

import hashlib
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.db import connection

from jackpots import services as jackpot_services
from tables.bulk import PreparedRows, insert_rows, prepare_rows
from tables.engine import fairness
from tables.engine.widerpoker import (
    deal_board,
    initial_combination_indices,
    spin_jackpot_draw,
)
from tables.errors import InvalidTableConfigError
from tables.models import (
    Entry,
    Hand,
    HandFreeze,
    Table,
    TablePhase,
)
from tables.services import beacon
from tables.services import fairness as fairness_services
from tables.widerpoker.records import board_to_json
from tables.widerpoker.services.conditions import apply_overrides
from tables.widerpoker.services.settlement import hand_escrow
from tables.widerpoker.services.special import merge_special, special_draws
from wallet import services as wallet_services
from wallet.models import TransferKind

logger = logging.getLogger(__name__)


def hand_config(table: Table, seed: bytes, *, now: datetime) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The conditions of the hand about to be dealt with ``seed``, and the spin jackpot it
    wins (its feed), if any: the table's configuration, the jackpots it feeds (frozen with
    the hand), the rules a special hand changes (seed 001, D) and those the spin jackpot
    drawn from the hand's stream changes (seed 001, Jackpots 2; docs/provably-fair.md)."""
    config = table.widerpoker.snapshot()
    previous = Hand.objects.filter(table=table).order_by("-number").values_list("started_at", flat=True).first()
    draws = special_draws(table, number=table.hands_dealt + 1, seed=seed, now=now, previous_start=previous)
    overrides, names = merge_special(draws)
    if draws:  # the schedules checked and their rule ("1 in N": N), for auditors
        config["special_schedules"] = draws
    if overrides:
        try:
            config = apply_overrides(config, overrides, source="special")
            config["special"] = names
        except InvalidTableConfigError:
            logger.exception("table %s: special hand overrides the table refuses; dealt as a standard hand", table.pk)
    feeds = jackpot_services.table_feeds(table_id=table.pk, currency=table.currency)
    config["jackpots"] = feeds
    drawn = spin_jackpot_draw(seed, jackpot_services.spin_one_in(feeds))
    spin = next((feed for feed in feeds if drawn is not None and feed["kind"] == drawn.value), None)
    if spin is not None and spin["spin_overrides"]:
        try:
            config = apply_overrides(config, spin["spin_overrides"], source=f"spin:{spin['kind']}")
        except InvalidTableConfigError:
            logger.exception("spin jackpot %s has overrides the table refuses; ignored", spin["id"])
    return config, spin


derive_hand_seed = fairness.hand_seed
"""The hand seed (tables.engine.fairness.hand_seed); a module attribute so tests can choose one."""


@dataclass(frozen=True)
class _Frozen:
    """A freeze being dealt: its row, the chain element released for it, the deal round's
    beacon answer, which frozen players are dealt in (bool per ``freeze.players``), and
    ``freeze.players`` as the deal round read it (``frozen_columns``: user ids, names,
    client seeds), so that the deal does not take 100,000 rows apart a second time."""

    freeze: HandFreeze
    draw: fairness_services.ChainDraw
    answer: beacon.Answer
    kept: np.ndarray
    columns: tuple[list[int], list[str], list[str]]


derive_deal_seed = fairness.deal_seed
"""Algorithm 3's hand seed (tables.engine.fairness.deal_seed); a module attribute so tests
can choose one."""


def _deal(
    table: Table,
    user_ids: np.ndarray,
    account_ids: np.ndarray,
    *,
    locked: wallet_services.LockedAccounts | None = None,
    players: dict[int, tuple[str, str | None]] | None = None,
    now: datetime,
    frozen: _Frozen | None = None,
) -> Hand:
    """Deal a hand (algorithm 2, docs/provably-fair.md) to the players ``user_ids`` whose
    wallets ``account_ids`` are locked and hold the ante: the next element of the table's
    published seed chain, mixed with the client seed of every player dealt in, gives the hand
    seed; the entry order comes from it, never from the server; the change keys wait for the
    first beacon round after the change deadline. ``frozen``: algorithm 3's freeze and deal
    round (the frozen players and client seeds, the round's value mixed in).

    Writes only what a deal must (issue 23): the hand, one ante transfer (its legs by
    ``COPY``, the balances by one ``UPDATE``) and one entry each (``COPY`` on PostgreSQL).
    The players' gaming and play sessions count the hand after the commit
    (``tables.widerpoker.services.sessions``). The work falls in two parts: ``_collect_antes`` needs
    only the hand's row and who is dealt in, not the seed; ``_deal_cards`` (entry order,
    initial combinations, the entries, the spin jackpot) needs the seed. ``players``: user id
    -> (name, client seed or None) as the deal read them with the seats; read here when None."""
    number = table.hands_dealt + 1
    if frozen is None:
        draw = fairness_services.next_chain_seed(table, now=now)
        ids = user_ids.tolist()
        names, client_seeds = names_and_seeds(ids, players, now=now)
        seed = derive_hand_seed(draw.seed, table.pk, number, [(names[u], client_seeds[u]) for u in ids])
        everyone = ids
        everyone_names = [names[u] for u in everyone]
        seeds = [client_seeds[u] for u in ids]
    else:
        # Algorithm 3: the frozen players and seeds, and the deal round's value.
        draw = frozen.draw
        everyone, everyone_names, frozen_seeds = frozen.columns
        assert frozen.answer.value is not None
        seed = derive_deal_seed(draw.seed, table.pk, number, bytes.fromhex(frozen.freeze.digest), frozen.answer.value)
        ids = user_ids.tolist()
        if ids == everyone:  # nobody left out: the frozen order is the dealt one
            seeds = frozen_seeds
        else:
            client_seeds = dict(zip(everyone, frozen_seeds, strict=True))
            seeds = [client_seeds[u] for u in ids]
    count = len(ids)
    # The entry order, the initial combinations and the entries' COPY text are pure CPU (a
    # hand of 100,000: ~1.2 million HMAC blocks, then 100,000 rows of text); a thread makes
    # them while this one waits on the database for the ante, which needs none of them.
    # One worker: the rows are made after the randomness they need.
    vendor = connection.vendor
    ante_minor = table.widerpoker.ante_minor  # read here: the worker thread has no connection of its own
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="deal") as pool:
        randomness = pool.submit(_order_and_combinations, seed, everyone_names, len(everyone), ids, everyone)
        hand, spin = _create_hand(table, seed, draw, number=number, count=count, now=now, frozen=frozen)
        rows = pool.submit(
            lambda: _entry_rows(hand.pk, ante_minor, user_ids, seeds, *randomness.result(), vendor=vendor)
        )
        _collect_antes(table, hand, account_ids=account_ids, locked=locked)
        _deal_cards(table, hand, spin, rows.result(), now=now)
    table.phase = TablePhase.CHANGE
    table.phase_deadline = hand.change_deadline
    table.current_hand = hand
    table.hands_dealt += 1
    table.version += 1
    return hand


def frozen_columns(players: list[list[Any]]) -> tuple[list[int], list[str], list[str]]:
    """An algorithm 3 freeze's ``players`` (``[[user_id, name, client_seed], ...]``, as
    ``HandFreeze.players``) as three aligned columns: user ids, names, client seeds. Each
    column is made in one pass (a hand of 100,000 builds no dictionary here)."""
    if not players:
        return [], [], []
    ids, names, seeds = zip(*players, strict=True)
    return [int(u) for u in ids], [str(name) for name in names], [str(seed) for seed in seeds]


def names_and_seeds(
    user_ids: list[int], players: dict[int, tuple[str, str | None]] | None, *, now: datetime
) -> tuple[dict[int, str], dict[int, str]]:
    """The names and client seeds of ``user_ids`` (``{user id: name}``, ``{user id: seed}``):
    from ``players`` (user id -> (name, client seed or None), as the deal read them with the
    seats) when given, else read (``names_and_client_seeds``). A player without a client
    seed (a seat older than joining making one) gets a random one, stored now."""
    if players is None:
        return fairness_services.names_and_client_seeds(user_ids, now=now)
    names = {user_id: players[user_id][0] for user_id in user_ids}
    seeds = {user_id: known for user_id in user_ids if (known := players[user_id][1]) is not None}
    if len(seeds) < len(user_ids):  # joining makes them: only seats older than that lack one
        seeds.update(fairness_services.client_seeds([u for u in user_ids if u not in seeds], now=now))
    return names, seeds


def _order_and_combinations(
    seed: bytes, names: list[str], count: int, dealt: list[int] | None = None, everyone: list[int] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The entry order (indices into ``names``, int64 array of shape ``(count,)``) and the
    hand's ``count`` initial combinations (indices, int64, in entry order) from the hand seed
    (docs/provably-fair.md). No database: safe in another thread.

    Algorithm 3: ``names`` are those of ``everyone`` frozen into the hand; when some of them
    are not ``dealt`` (user ids), the order and combinations are computed for everyone and
    the others' are left out: the order then indexes ``dealt``, and each entry keeps the
    combination of its frozen position."""
    order = np.array(fairness.entry_order(seed, names), dtype=np.int64)
    combinations = initial_combination_indices(seed, count)
    if dealt is None or everyone is None or len(dealt) == len(everyone):
        return order, combinations
    position = {user_id: at for at, user_id in enumerate(dealt)}
    into_dealt = np.array([position.get(user_id, -1) for user_id in everyone], dtype=np.int64)[order]
    keep = into_dealt >= 0
    return into_dealt[keep], combinations[keep]


def _entry_rows(
    hand_id: int,
    ante: int,
    user_ids: np.ndarray,
    client_seeds: list[str],
    order: np.ndarray,
    combinations: np.ndarray,
    *,
    vendor: str,
) -> PreparedRows:
    """The hand's entries ready to insert: ``user_ids`` (int64) and ``client_seeds`` aligned
    as dealt, ``order`` and ``combinations`` from ``_order_and_combinations``. Rows go in by
    initial combination (their join order is a column): the hand's index by combination then
    grows at its right edge page after page, instead of at 100,000 random places of the new
    hand's range. No database: safe in another thread."""
    count = len(user_ids)
    seeds = np.asarray(client_seeds, dtype=object)[order]
    user_ids = user_ids[order]
    by_combination = np.argsort(combinations, kind="stable")
    return prepare_rows(
        {
            "hand_id": np.full(count, hand_id, dtype=np.int64),
            "user_id": user_ids[by_combination],
            "join_order": np.arange(count)[by_combination],
            "initial_combination": combinations[by_combination],
            "combination": combinations[by_combination],
            "redeals": ["[]"] * count,
            "client_seed": seeds[by_combination].tolist(),
            "draws_bought": np.ones(count, dtype=np.int64),
            "paid_minor": np.full(count, ante, dtype=np.int64),
            "prize_minor": np.zeros(count, dtype=np.int64),
            "promo_minor": np.zeros(count, dtype=np.int64),
            "jackpot_minor": np.zeros(count, dtype=np.int64),
        },
        vendor=vendor,
    )


def _create_hand(
    table: Table,
    seed: bytes,
    draw: fairness_services.ChainDraw,
    *,
    number: int,
    count: int,
    now: datetime,
    frozen: _Frozen | None = None,
) -> tuple[Hand, dict[str, Any] | None]:
    """Create the hand row for ``seed`` (the chain ``draw`` it came from) and ``count``
    players; return it with the spin jackpot it won (``hand_config``), if any. ``frozen``:
    algorithm 3's freeze and deal round, stored with the hand. The hand is not counted in
    its players' sessions yet (``sessions_counted`` False: ``tables.widerpoker.services.sessions``)."""
    board = deal_board(seed)
    config, spin = hand_config(table, seed, now=now)
    change_end = now + timedelta(seconds=int(config["change_seconds"]))
    ante = table.widerpoker.ante_minor
    hand = Hand.objects.create(
        table=table,
        number=number,
        server_seed=seed.hex(),
        commitment=hashlib.sha256(draw.seed).hexdigest(),
        algorithm=fairness.ALGORITHM_CHAIN if frozen is None else fairness.ALGORITHM_DEAL_BEACON,
        chain=draw.chain,
        chain_index=draw.index,
        chain_seed=draw.seed.hex(),
        beacon_round=beacon.round_after(change_end),
        board=board_to_json(board),
        config=config,
        started_at=now,
        change_deadline=change_end,
        redeal_deadline=min(change_end, now + timedelta(seconds=int(config["redeal_seconds"]))),
        entry_count=count,
        antes_minor=ante * count,
        gross_minor=ante * count,
        sessions_counted=False,
        **(
            {}
            if frozen is None
            else {
                "frozen_at": frozen.freeze.frozen_at,
                "inputs_digest": frozen.freeze.digest,
                "deal_round": frozen.freeze.deal_round,
                "deal_beacon_value": (frozen.answer.value or b"").hex(),
                "deal_beacon_signature": frozen.answer.signature,
            }
        ),
    )
    return hand, spin


def _collect_antes(
    table: Table,
    hand: Hand,
    *,
    account_ids: np.ndarray,
    locked: wallet_services.LockedAccounts | None,
) -> None:
    """Take the ante from ``account_ids`` (int64, any order) into the hand's escrow: one
    transfer, reference ``ante:<hand>``, one ledger leg per player plus the escrow's, the
    balances by one statement. ``locked``: the players' wallets as the deal locked and read
    them. Seed-independent: it needs the hand's id and who is dealt in, nothing the seed
    decides, so it may run before the seed is known."""
    count = len(account_ids)
    ante = table.widerpoker.ante_minor
    if not ante:
        return
    escrow = hand_escrow(hand_id=hand.pk, currency=table.currency)
    wallet_services.post_transfer_arrays(
        reference=f"ante:{hand.pk}",
        kind=TransferKind.ANTE,
        currency=table.currency,
        account_ids=np.append(account_ids, escrow.pk),
        deltas=np.append(np.full(count, -ante, dtype=np.int64), ante * count),
        memo=f"Ante of hand {table.name} #{hand.number}",
        locked=locked,
    )


def _deal_cards(table: Table, hand: Hand, spin: dict[str, Any] | None, entries: PreparedRows, *, now: datetime) -> None:
    """The seed-dependent part of the deal: write the ``entries`` (their order and initial
    combinations come from the seed: ``_entry_rows``) and award the spin jackpot ``spin``
    the seed drew (``hand_config``), if any, into the hand's escrow."""
    insert_rows(Entry._meta.db_table, entries)
    if spin is not None:
        escrow = hand_escrow(hand_id=hand.pk, currency=table.currency)
        hand.spin_jackpot_id = int(spin["id"])
        hand.spin_award_minor = jackpot_services.award_spin(
            jackpot_id=int(spin["id"]), hand_id=hand.pk, escrow_account_id=escrow.pk, now=now
        )
        hand.save(update_fields=["spin_jackpot", "spin_award_minor"])


# --- CHANGE -> RESULTS: settlement -------------------------------------------------------------
