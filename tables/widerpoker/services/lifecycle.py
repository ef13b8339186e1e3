"""WiderPoker's hand lifecycle as a state machine in the database, one clock step at a time.

WAITING --(>= 2 active, connected players who can pay the ante)--> CHANGE
CHANGE  --(deadline)--> settlement --> RESULTS --(a few seconds)--> WAITING --> next hand

The house's clock (tables/clock.py) claims a due table, holds its row lock and version, and
calls ``advance_widerpoker_table`` through the registry of games (``Game.advance``). Rules:
seed 001 B (phases), C (multidraw, redeal), Notes 2 (disconnection), Notes 3 (malfunction);
DESIGN.md "The game, as implemented".
"""

from __future__ import annotations

import hashlib
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction

from config.infra import metrics
from jackpots import services as jackpot_services
from tables.bulk import PreparedRows, insert_rows, prepare_rows
from tables.engine import fairness
from tables.engine.widerpoker import (
    deal_board,
    initial_combination_indices,
    spin_jackpot_draw,
)
from tables.errors import InvalidTableConfigError
from tables.gamespec import MALFUNCTION_PAUSE, NO_STEP, Step
from tables.models import (
    Entry,
    Hand,
    HandFreeze,
    Redeal,
    Seat,
    SeatStatus,
    Table,
    TableConfigChange,
    TableGame,
    TablePhase,
)
from tables.realtime.bus import publish_table_frame
from tables.realtime.frames import TableRestartedFrame, dumps
from tables.services import beacon
from tables.services import fairness as fairness_services
from tables.services.seating import seat_presence_with
from tables.widerpoker import between_hands
from tables.widerpoker.records import board_to_json
from tables.widerpoker.services.conditions import apply_overrides
from tables.widerpoker.services.sessions import count_hand_sessions
from tables.widerpoker.services.settlement import cancel_hand, hand_escrow, settle_hand
from tables.widerpoker.services.special import merge_special, special_draws
from wallet import protection
from wallet import services as wallet_services
from wallet.lookups import IntArray
from wallet.models import TransferKind

logger = logging.getLogger(__name__)


# --- the clock's step ----------------------------------------------------------------------


def advance_widerpoker_table(table: Table, now: datetime) -> Step:
    """One clock step of a WiderPoker table whose deadline has passed (row locked by the
    caller, which saves it and bumps ``version`` when this changed it): settle the change
    phase, end the results, deal the next hand (a tournament's table deals its entrants) or
    wait (``Game.advance``). A deal's sessions are counted after its commit, off the deal's
    critical path (``Step.after_commit``: ``count_hand_sessions``); should that fail or
    never run, the hand's settlement or cancellation counts them first."""
    if table.phase == TablePhase.CHANGE:
        _settle_table(table, now=now)
        return NO_STEP
    if table.phase == TablePhase.RESULTS:
        _end_results(table, now=now)
    # A tournament's table deals its entrants, not its seats (docs/tournaments.md): its
    # step is registered in between_hands (tables/apps.py), asked first.
    if not between_hands.deal_between_hands(table, now=now):
        _start_hand_or_wait(table, now=now)
    if table.phase != TablePhase.CHANGE or table.current_hand_id is None:
        return NO_STEP
    return Step(after_commit=partial(count_hand_sessions, hand_id=table.current_hand_id))


def cancel_running_hand(table: Table, reason: str, now: datetime) -> bool:
    """A malfunction (``Game.cancel``, the table locked by the caller): cancel the hand in its
    change phase with every ante, draw and redeal refunded; whether one was cancelled."""
    if table.current_hand_id is None:
        return False
    return cancel_hand(hand_id=table.current_hand_id, reason=reason, now=now)


# --- WAITING -> CHANGE -----------------------------------------------------------------------


def _start_hand_or_wait(table: Table, *, now: datetime) -> None:
    """Remove disconnected players (rules Notes 2), collect the ante from every active player
    (rules B.1) and deal, or wait when fewer than two can play (rules A.3).

    Seats are read as tuples with their presence computed by the database: a table of
    100,000 players makes no model object per seat."""
    freeze = HandFreeze.objects.filter(table=table, abandoned_at__isnull=True).first()
    if freeze is not None:
        _deal_frozen(table, freeze, now=now)
        return
    # The players read once with their seats (issue 23): presence, name and client seed (by
    # each player's primary key and unique seed row: a sound plan whatever the statistics).
    # Their wallets are read by id array (``lock_and_read_players``): a join on the wallets
    # of a table filled since PostgreSQL's last ANALYZE was planned as a nested loop over
    # every wallet for every seat.
    rows = seat_presence_with(
        Seat.objects.filter(table=table).exclude(status=SeatStatus.LEFT).order_by("joined_at", "pk"),
        now=now,
        extra=("user__username", "user__client_seed__seed"),
    )
    seats = [presence for presence, _ in rows]
    players: dict[int, tuple[str, str | None]] = {presence[1]: (more[0], more[1]) for presence, more in rows}
    gone = [seat[0] for seat in seats if not seat[3]]
    if gone:
        _update_seats(gone, status=SeatStatus.LEFT, status_reason="disconnected", left_at=now)
        table.version += 1
    gone_set = set(gone)
    active = [(seat[0], seat[1]) for seat in seats if seat[0] not in gone_set and seat[2] == SeatStatus.ACTIVE]
    table.phase = TablePhase.WAITING
    table.current_hand = None
    table.phase_deadline = None  # join and sit-in wake the table
    if not table.is_open:
        table.phase = TablePhase.CLOSED
        table.version += 1
        return
    barred: dict[int, Any] = {}
    locked: wallet_services.LockedAccounts | None = None
    accounts: dict[int, int] = {}
    if len(active) >= 2:
        user_ids_all = [user_id for _, user_id in active]
        # Locked before the protection reads the players' losses, and until the ante is
        # taken: a purchase of theirs at another table (which locks the wallet too) is
        # counted before or after this deal, never beside it. What holds promised is not
        # spendable. The ante's transfer takes the rows read here instead of reading them
        # again; the wallets are found, locked and read by one statement.
        accounts, locked = wallet_services.lock_and_read_players(user_ids=user_ids_all, currency=table.currency)
        barred = protection.barred_players(
            user_ids=user_ids_all, currency=table.currency, stake_minor=table.ante_minor, now=now
        )
        for code in sorted({refusal.code for refusal in barred.values()}):
            # Suspended, excluded, or past a limit of his own (wallet/protection.py): sat out.
            _update_seats(
                [seat_id for seat_id, user_id in active if user_id in barred and barred[user_id].code == code],
                status=SeatStatus.SITTING_OUT,
                status_reason=code.replace("_", " "),
            )
            table.version += 1
        active = [(seat_id, user_id) for seat_id, user_id in active if user_id not in barred]
    if len(active) >= 2 and locked is not None:
        user_ids = np.array([user_id for _, user_id in active], dtype=np.int64)
        account_ids = np.array([accounts[user_id] for user_id in user_ids.tolist()], dtype=np.int64)
        can_pay = locked.available(account_ids) >= table.ante_minor
        if not can_pay.all():
            broke = [seat_id for (seat_id, _), ok in zip(active, can_pay.tolist(), strict=True) if not ok]
            _update_seats(broke, status=SeatStatus.SITTING_OUT, status_reason="insufficient funds")
            table.version += 1
        if int(can_pay.sum()) >= 2 and settings.DEAL_ALGORITHM >= fairness.ALGORITHM_DEAL_BEACON:
            # Algorithm 3: the inputs freeze now; the deal waits for the next beacon round.
            _freeze(
                table,
                user_ids[can_pay].tolist(),
                _not_dealt(seats, gone_set, active, can_pay.tolist(), barred),
                now=now,
            )
        elif int(can_pay.sum()) >= 2:
            with metrics.timed(metrics.DEAL_DURATION, TableGame.WIDERPOKER):
                hand = _deal(table, user_ids[can_pay], account_ids[can_pay], locked=locked, players=players, now=now)
            metrics.count_on_commit(metrics.HANDS, TableGame.WIDERPOKER, "dealt")
            _record_not_dealt(hand, seats, gone_set, active, can_pay.tolist(), barred)


def _update_seats(seat_ids: list[int], **values: Any) -> None:
    Seat.objects.filter(pk__any_of=IntArray(seat_ids)).update(**values)


def hand_config(table: Table, seed: bytes, *, now: datetime) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The conditions of the hand about to be dealt with ``seed``, and the spin jackpot it
    wins (its feed), if any: the table's configuration, the jackpots it feeds (frozen with
    the hand), the rules a special hand changes (seed 001, D) and those the spin jackpot
    drawn from the hand's stream changes (seed 001, Jackpots 2; docs/provably-fair.md)."""
    config = table.config_snapshot()
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


def _record_not_dealt(
    hand: Hand,
    seats: list[tuple[int, int, str, bool]],
    gone: set[int],
    active: list[tuple[int, int]],
    can_pay: list[bool],
    barred: dict[int, Any],
) -> None:
    """Write down who was seated and not dealt in, and why (the export's ``not_dealt``)."""
    listed = _not_dealt(seats, gone, active, can_pay, barred)
    if listed:
        hand.not_dealt = listed
        hand.save(update_fields=["not_dealt"])


def _not_dealt(
    seats: list[tuple[int, int, str, bool]],
    gone: set[int],
    active: list[tuple[int, int]],
    can_pay: list[bool],
    barred: dict[int, Any],
) -> list[dict[str, str]]:
    """Who was seated and not dealt in, and why: ``[{player, reason}]``."""
    not_dealt = [(user_id, "disconnected") for seat_id, user_id, _, _ in seats if seat_id in gone]
    not_dealt += [(user_id, refusal.code.replace("_", " ")) for user_id, refusal in barred.items()]
    not_dealt += [(user_id, "insufficient funds") for (_, user_id), ok in zip(active, can_pay, strict=True) if not ok]
    sitting = [
        seat_id for seat_id, user_id, status, _ in seats if seat_id not in gone and status == SeatStatus.SITTING_OUT
    ]
    if sitting:
        not_dealt += list(Seat.objects.filter(pk__in=sitting).values_list("user_id", "status_reason"))
    if not not_dealt:
        return []
    names = fairness_services.usernames([user_id for user_id, _ in not_dealt])
    return [{"player": names.get(uid, "?"), "reason": why or "sitting out"} for uid, why in not_dealt]


# --- algorithm 3: the inputs freeze, the deal round decides ----------------------------------


@dataclass(frozen=True)
class _Frozen:
    """A freeze being dealt: its row, the chain element released for it, the deal round's
    beacon answer, and which frozen players are dealt in (bool per ``freeze.players``)."""

    freeze: HandFreeze
    draw: fairness_services.ChainDraw
    answer: beacon.Answer
    kept: np.ndarray


def _freeze(table: Table, user_ids: list[int], not_dealt: list[dict[str, str]], *, now: datetime) -> None:
    """Algorithm 3 (docs/provably-fair.md): fix the next hand's inputs at ``now``, the
    players ``user_ids`` dealt in with their client seeds (digest ``D``) and the chain
    element's index, and wait for the **deal round**, the first beacon round released
    strictly after ``now``, whose value decides the hand. No money moves yet; the public
    frame shows the freeze (``frozen``) and the table is due again at the round's time."""
    chain, index = fairness_services.next_chain_index(table, now=now)
    names, seeds = fairness_services.names_and_client_seeds(user_ids, now=now)
    digest = fairness.client_seeds_digest([(names[u], seeds[u]) for u in user_ids])
    deal_round = beacon.round_after(now)
    HandFreeze.objects.create(
        table=table,
        number=table.hands_dealt + 1,
        chain=chain,
        chain_index=index,
        players=[[u, names[u], seeds[u]] for u in user_ids],
        digest=digest.hex(),
        not_dealt=not_dealt,
        deal_round=deal_round,
        frozen_at=now,
    )
    table.phase_deadline = beacon.time_of(deal_round)
    table.version += 1


def _deal_frozen(table: Table, freeze: HandFreeze, *, now: datetime) -> None:
    """Deal the frozen hand once its deal round's value is available (until then the table
    is due again a second later). Every frozen player is dealt in except one who can no
    longer pay the ante or whom player protection now bars: his entry is left out, but he
    stays in the hand seed and the entry order, so nobody's cards change (the export lists
    him in ``not_dealt`` with his client seed). A round that does not come within
    ``BEACON_MAX_WAIT_SECONDS``, or fewer than two players left, abandons the freeze, which
    stays in the database with its evidence; no money had moved."""
    due = beacon.time_of(int(freeze.deal_round))
    answer = beacon.fetch(int(freeze.deal_round), now=now)
    if answer.value is None:
        if now - due < timedelta(seconds=settings.BEACON_MAX_WAIT_SECONDS):
            table.phase_deadline = max(due, now + timedelta(seconds=1))
            return
        _abandon(table, freeze, now=now, answer=answer.error or "no value")
        return
    players = freeze.players
    user_ids = np.array([int(row[0]) for row in players], dtype=np.int64)
    accounts = wallet_services.ensure_player_accounts(user_ids=user_ids.tolist(), currency=table.currency)
    account_ids = np.array([accounts[u] for u in user_ids.tolist()], dtype=np.int64)
    locked = wallet_services.lock_and_read(account_ids)
    barred = protection.barred_players(
        user_ids=user_ids.tolist(), currency=table.currency, stake_minor=table.ante_minor, now=now
    )
    can_pay = locked.available(account_ids) >= table.ante_minor
    # A player who left or sat out during the wait is not dealt in either (he pays nothing).
    away = dict(
        Seat.objects.filter(table=table, user_id__in=user_ids.tolist())
        .exclude(status=SeatStatus.ACTIVE)
        .values_list("user_id", "status")
    )
    kept = can_pay & np.array([u not in barred and u not in away for u in user_ids.tolist()], dtype=bool)

    def why(user_id: int) -> str:
        if user_id in barred:
            return str(barred[user_id].code).replace("_", " ")
        if user_id in away:
            return "left" if away[user_id] == SeatStatus.LEFT else "sitting out"
        return "insufficient funds"

    dropped: list[dict[str, Any]] = [
        {
            "player": str(row[1]),
            "reason": why(int(row[0])),
            "client_seed": str(row[2]),
            "frozen": True,
        }
        for row, ok in zip(players, kept.tolist(), strict=True)
        if not ok
    ]
    names = {str(row[1]): int(row[0]) for row in players}
    for reason in sorted({str(row["reason"]) for row in dropped} - {"left", "sitting out"}):
        out = [names[str(row["player"])] for row in dropped if row["reason"] == reason]
        seats = list(Seat.objects.filter(table=table, user_id__in=out).values_list("pk", flat=True))
        _update_seats(seats, status=SeatStatus.SITTING_OUT, status_reason=reason)
    if int(kept.sum()) < 2:
        _abandon(table, freeze, now=now, answer="fewer than two frozen players could still play")
        return
    draw = fairness_services.ChainDraw(
        freeze.chain, int(freeze.chain_index), fairness_services.chain_element(freeze.chain, int(freeze.chain_index))
    )
    with metrics.timed(metrics.DEAL_DURATION, TableGame.WIDERPOKER):
        hand = _deal(
            table,
            user_ids[kept],
            account_ids[kept],
            locked=locked,
            now=now,
            frozen=_Frozen(freeze, draw, answer, kept),
        )
    metrics.count_on_commit(metrics.HANDS, TableGame.WIDERPOKER, "dealt")
    listed = [*freeze.not_dealt, *dropped]
    if listed:
        hand.not_dealt = listed
        hand.save(update_fields=["not_dealt"])
    freeze.delete()


def _abandon(table: Table, freeze: HandFreeze, *, now: datetime, answer: str) -> None:
    """Give up a freeze (its round never came, or too few players were left), keeping it
    with the evidence (``beacon.outage_evidence``); the table tries a new freeze after
    ``MALFUNCTION_PAUSE``. The freeze's chain element is released and never used, so the
    signer, which releases no element ahead, serves the next freeze's."""
    try:
        fairness_services.chain_element(freeze.chain, int(freeze.chain_index))
    except Exception:
        logger.exception("table %s: the abandoned freeze's chain element was not released", table.pk)
    freeze.abandoned_at = now
    freeze.evidence = beacon.outage_evidence(
        int(freeze.deal_round), waited_since=freeze.frozen_at, now=now, answer=answer
    )
    freeze.save(update_fields=["abandoned_at", "evidence"])
    table.phase_deadline = now + MALFUNCTION_PAUSE
    table.version += 1


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
        if players is None:
            names, client_seeds = fairness_services.names_and_client_seeds(ids, now=now)
        else:
            names = {user_id: players[user_id][0] for user_id in ids}
            client_seeds = {user_id: known for user_id in ids if (known := players[user_id][1]) is not None}
            if len(client_seeds) < len(ids):  # joining makes them: only seats older than that lack one
                client_seeds.update(fairness_services.client_seeds([u for u in ids if u not in client_seeds], now=now))
        seed = derive_hand_seed(draw.seed, table.pk, number, [(names[u], client_seeds[u]) for u in ids])
        everyone = ids
    else:
        # Algorithm 3: the frozen players and seeds, and the deal round's value.
        draw = frozen.draw
        everyone = [int(row[0]) for row in frozen.freeze.players]
        names = {int(row[0]): str(row[1]) for row in frozen.freeze.players}
        client_seeds = {int(row[0]): str(row[2]) for row in frozen.freeze.players}
        assert frozen.answer.value is not None
        seed = derive_deal_seed(draw.seed, table.pk, number, bytes.fromhex(frozen.freeze.digest), frozen.answer.value)
        ids = user_ids.tolist()
    count = len(ids)
    # The entry order, the initial combinations and the entries' COPY text are pure CPU (a
    # hand of 100,000: ~1.2 million HMAC blocks, then 100,000 rows of text); a thread makes
    # them while this one waits on the database for the ante, which needs none of them.
    # One worker: the rows are made after the randomness they need.
    vendor = connection.vendor
    seeds = [client_seeds[u] for u in ids]
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="deal") as pool:
        randomness = pool.submit(
            _order_and_combinations, seed, [names[u] for u in everyone], len(everyone), ids, everyone
        )
        hand, spin = _create_hand(table, seed, draw, number=number, count=count, now=now, frozen=frozen)
        rows = pool.submit(
            lambda: _entry_rows(hand.pk, table.ante_minor, user_ids, seeds, *randomness.result(), vendor=vendor)
        )
        _collect_antes(table, hand, account_ids=account_ids, locked=locked)
        _deal_cards(table, hand, spin, rows.result(), now=now)
    table.phase = TablePhase.CHANGE
    table.phase_deadline = hand.change_deadline
    table.current_hand = hand
    table.hands_dealt += 1
    table.version += 1
    return hand


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
    player id (their join order is a column): each index then takes them in key order, page
    after page, instead of at 100,000 random places. No database: safe in another thread."""
    count = len(user_ids)
    seeds = np.asarray(client_seeds, dtype=object)[order]
    user_ids = user_ids[order]
    by_user = np.argsort(user_ids, kind="stable")
    return prepare_rows(
        {
            "hand_id": np.full(count, hand_id, dtype=np.int64),
            "user_id": user_ids[by_user],
            "join_order": np.arange(count)[by_user],
            "initial_combination": combinations[by_user],
            "combination": combinations[by_user],
            "redeals": ["[]"] * count,
            "client_seed": seeds[by_user].tolist(),
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
    ante = table.ante_minor
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
    ante = table.ante_minor
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


def _settle_table(table: Table, *, now: datetime) -> None:
    """Settle at the deadline, once the hand's beacon round is released (algorithm 2): until
    then the table waits a second at a time; after ``BEACON_MAX_WAIT_SECONDS`` without it the
    hand is cancelled and refunded like any malfunction (rules, Notes 3)."""
    assert table.current_hand_id is not None
    hand = Hand.objects.only("id", "algorithm", "beacon_round", "change_deadline").get(pk=table.current_hand_id)
    chained = hand.algorithm >= fairness.ALGORITHM_CHAIN and hand.beacon_round is not None
    answer = beacon.fetch(int(hand.beacon_round or 0), now=now) if chained else None
    if answer is not None and answer.value is None:
        if now - hand.change_deadline < timedelta(seconds=settings.BEACON_MAX_WAIT_SECONDS):
            table.phase_deadline = now + timedelta(seconds=1)
            return
        cancel_hand(hand_id=hand.pk, reason="the randomness beacon did not answer", now=now, beacon_answer=answer.error)
        table.phase = TablePhase.RESULTS
        table.phase_deadline = now + timedelta(seconds=table.results_seconds)
        table.version += 1
        return
    if hand.algorithm >= fairness.ALGORITHM_DEAL_BEACON:
        # Redeals bought before the deadline are dealt first, even after the redeal deadline;
        # their rounds precede the keys' round, so they are out by now.
        from tables.widerpoker.services.play import resolve_hand_redeals

        resolve_hand_redeals(hand_id=hand.pk, now=now)
        if Redeal.objects.filter(hand_id=hand.pk, combination__isnull=True).exists():
            if now - hand.change_deadline < timedelta(seconds=settings.BEACON_MAX_WAIT_SECONDS):
                table.phase_deadline = now + timedelta(seconds=1)
                return
            cancel_hand(hand_id=hand.pk, reason="a redeal's beacon round did not answer", now=now)
            table.phase = TablePhase.RESULTS
            table.phase_deadline = now + timedelta(seconds=table.results_seconds)
            table.version += 1
            return
    with metrics.timed(metrics.SETTLEMENT_DURATION, TableGame.WIDERPOKER):
        settle_hand(hand_id=table.current_hand_id, now=now)
    table.phase = TablePhase.RESULTS
    table.phase_deadline = now + timedelta(seconds=table.results_seconds)
    table.version += 1


# --- RESULTS -> WAITING -------------------------------------------------------------------------


def _end_results(table: Table, *, now: datetime) -> None:
    """Apply staff changes waiting for the hand to end (DESIGN 14): the table restarts and its
    players go back to the lobby, where they see the new conditions."""
    table.current_hand = None
    table.phase = TablePhase.WAITING
    table.version += 1
    if table.pending_changes:
        apply_pending_changes(table, now=now)


def apply_pending_changes(table: Table, *, now: datetime) -> None:
    """Apply the table's pending configuration and restart it: every seat is released and the
    players are told to return to the lobby."""
    for field, value in table.pending_changes.items():
        setattr(table, field, value)
    TableConfigChange.objects.filter(table=table, applied_at__isnull=True).update(applied_at=now)
    table.pending_changes = {}
    Seat.objects.filter(table=table).exclude(status=SeatStatus.LEFT).update(
        status=SeatStatus.LEFT, status_reason="table restarted", left_at=now
    )
    table.version += 1
    frame = TableRestartedFrame(
        type="table_restarted",
        table_id=table.pk,
        version=table.version,
        reason="The table's conditions changed; see them in the lobby.",
    )
    transaction.on_commit(lambda: publish_table_frame(table.pk, dumps(frame)), robust=True)


# --- live prize pools --------------------------------------------------------------------------

_published_pools: dict[int, int] = {}


def publish_live_pools() -> int:
    """Push the prize pool of every running hand whose gross changed since the last push
    (at most once per clock tick, however many draws and redeals were bought)."""
    from tables.selectors import live_pool_frames

    sent = 0
    live = set()
    for hand_id, gross, frame in live_pool_frames():
        live.add(hand_id)
        if _published_pools.get(hand_id) != gross:
            _published_pools[hand_id] = gross
            publish_table_frame(frame["table_id"], dumps(frame))
            sent += 1
    for hand_id in set(_published_pools) - live:
        del _published_pools[hand_id]
    return sent
