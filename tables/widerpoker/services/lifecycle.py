"""WiderPoker's hand lifecycle as a state machine in the database, one clock step at a time.

WAITING --(>= 2 active, connected players who can pay the ante)--> CHANGE
CHANGE  --(deadline)--> settlement --> RESULTS --(a few seconds)--> WAITING --> next hand

The house's clock (tables/clock.py) claims a due table, holds its row lock and version, and
calls ``advance_widerpoker_table`` through the registry of games (``Game.advance``). Rules:
seed 001 B (phases), C (multidraw, redeal), Notes 2 (disconnection), Notes 3 (malfunction);
DESIGN.md "The game, as implemented".
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta
from functools import cache, partial
from typing import Any

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Q

from config.infra import metrics
from tables.engine import fairness
from tables.gamespec import MALFUNCTION_PAUSE, NO_STEP, Step
from tables.models import (
    Hand,
    HandFreeze,
    PlayerClientSeed,
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
from tables.services.seating import presence_expression, seat_presence_with
from tables.widerpoker import between_hands
from tables.widerpoker.services.deal import _deal, _Frozen, frozen_columns, names_and_seeds
from tables.widerpoker.services.sessions import count_hand_sessions
from tables.widerpoker.services.settlement import cancel_hand, settle_hand
from wallet import protection
from wallet import services as wallet_services
from wallet.lookups import IntArray

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
    # The frozen players (6 MB for 100,000) are read only when the round's value is out, not
    # at every tick of the wait.
    freeze = HandFreeze.objects.filter(table=table, abandoned_at__isnull=True).defer("players").first()
    if freeze is not None:
        _deal_frozen(table, freeze, now=now)
        return
    freezing = settings.DEAL_ALGORITHM >= fairness.ALGORITHM_DEAL_BEACON
    if freezing and table.is_open and connection.vendor == "postgresql" and _freeze_in_database(table, now=now):
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
    if freezing and len(active) >= 2 and _two_can_play(table, [user_id for _, user_id in active], now=now):
        # Algorithm 3: the inputs freeze with every active, connected player. Who can pay
        # the ante and whom player protection bars are the deal round's to decide (it locks
        # the wallets, checks both and takes the ante; a frozen player it leaves out is
        # listed with ``frozen: true``, docs/provably-fair.md 1.9): the freeze does not read
        # 100,000 wallets and protection's rows a first time (issue 23).
        _freeze(
            table,
            [user_id for _, user_id in active],
            _not_dealt(seats, gone_set, active, [True] * len(active), {}),
            players=players,
            now=now,
        )
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
        # again; the wallets are found, locked and read by one statement. Algorithm 3 takes
        # no ante here (the deal round locks, checks and takes it): its freeze reads who can
        # pay without writing a row lock into every wallet.
        accounts, locked = wallet_services.lock_and_read_players(
            user_ids=user_ids_all, currency=table.currency, lock=not freezing
        )
        barred = protection.barred_players(
            user_ids=user_ids_all, currency=table.currency, stake_minor=table.widerpoker.ante_minor, now=now
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
        can_pay = locked.available(account_ids) >= table.widerpoker.ante_minor
        if not can_pay.all():
            broke = [seat_id for (seat_id, _), ok in zip(active, can_pay.tolist(), strict=True) if not ok]
            _update_seats(broke, status=SeatStatus.SITTING_OUT, status_reason="insufficient funds")
            table.version += 1
        if int(can_pay.sum()) >= 2 and freezing:
            # Algorithm 3: the inputs freeze now; the deal waits for the next beacon round.
            _freeze(
                table,
                user_ids[can_pay].tolist(),
                _not_dealt(seats, gone_set, active, can_pay.tolist(), barred),
                players=players,
                now=now,
            )
        elif int(can_pay.sum()) >= 2:
            with metrics.timed(metrics.DEAL_DURATION, TableGame.WIDERPOKER):
                hand = _deal(table, user_ids[can_pay], account_ids[can_pay], locked=locked, players=players, now=now)
            metrics.count_on_commit(metrics.HANDS, TableGame.WIDERPOKER, "dealt")
            _record_not_dealt(hand, seats, gone_set, active, can_pay.tolist(), barred)


FREEZE_SAMPLE = 16


def _two_can_play(table: Table, user_ids: list[int], *, now: datetime) -> bool:
    """Algorithm 3's readiness at the freeze (rules A.3: two players who can pay the ante):
    whether two of the first ``FREEZE_SAMPLE`` of ``user_ids`` (the active players in seat
    order) can pay ``ante_minor`` now and are not barred by player protection. Reads those
    few wallets (no lock) and their protection rows only. False sends the caller to the full
    read of every wallet, which sits out who cannot play and freezes the others, or waits."""
    sample = user_ids[:FREEZE_SAMPLE]
    ante = table.widerpoker.ante_minor
    accounts, wallets = wallet_services.lock_and_read_players(user_ids=sample, currency=table.currency, lock=False)
    barred = protection.barred_players(user_ids=sample, currency=table.currency, stake_minor=ante, now=now)
    can_pay = wallets.available(np.array([accounts[user_id] for user_id in sample], dtype=np.int64)) >= ante
    return sum(1 for user_id, ok in zip(sample, can_pay.tolist(), strict=True) if ok and user_id not in barred) >= 2


def _update_seats(seat_ids: list[int], **values: Any) -> None:
    Seat.objects.filter(pk__any_of=IntArray(seat_ids)).update(**values)


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
    # Each list read only when it can have someone (a table of 100,000 seats, mostly all in).
    not_dealt = [(user_id, "disconnected") for seat_id, user_id, _, _ in seats if seat_id in gone] if gone else []
    not_dealt += [(user_id, refusal.code.replace("_", " ")) for user_id, refusal in barred.items()]
    if not all(can_pay):
        not_dealt += [(uid, "insufficient funds") for (_, uid), ok in zip(active, can_pay, strict=True) if not ok]
    sitting_out = str(SeatStatus.SITTING_OUT)
    sitting = [seat_id for seat_id, _, status, _ in seats if status == sitting_out and seat_id not in gone]
    if sitting:
        not_dealt += list(Seat.objects.filter(pk__in=sitting).values_list("user_id", "status_reason"))
    if not not_dealt:
        return []
    names = fairness_services.usernames([user_id for user_id, _ in not_dealt])
    return [{"player": names.get(uid, "?"), "reason": why or "sitting out"} for uid, why in not_dealt]


# --- algorithm 3: the inputs freeze, the deal round decides ----------------------------------


def _freeze(
    table: Table,
    user_ids: list[int],
    not_dealt: list[dict[str, str]],
    *,
    players: dict[int, tuple[str, str | None]],
    now: datetime,
) -> None:
    """Algorithm 3 (docs/provably-fair.md): fix the next hand's inputs at ``now``, the
    players ``user_ids`` dealt in with their client seeds (digest ``D``) and the chain
    element's index, and wait for the **deal round**, the first beacon round released
    strictly after ``now``, whose value decides the hand. No money moves yet; the public
    frame shows the freeze (``frozen``) and the table is due again at the round's time.
    ``players``: user id -> (name, client seed or None) as read with the seats in this
    transaction (issue 23: the players are not read a second time)."""
    chain, index = fairness_services.next_chain_index(table, now=now)
    names, seeds = names_and_seeds(user_ids, players, now=now)
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


def _freeze_in_database(table: Table, *, now: datetime) -> bool:
    """Algorithm 3's freeze on PostgreSQL with the players never brought into Python (issue
    23: reading 100,000 seats, names and client seeds into tuples, then dumping them again as
    the freeze's JSON, was most of a freeze's second). The same freeze as ``_freeze`` after
    the general path: the disconnected leave (rules Notes 2), and one ``INSERT … SELECT``
    writes every connected active player ``[user_id, name, client_seed]`` in seat order
    (``json_agg``) with the digest of their ``name:seed`` lines sorted by name
    (``client_seeds_digest``, computed by ``sha256``: UTF-8 byte order is code point order).

    Returns False when the general path must decide: fewer than two of the first
    ``FREEZE_SAMPLE`` connected active players can play (nothing written: it sits out who
    cannot, or waits), or fewer than two are left by the time of the insert (a race with
    players leaving: only the disconnected have been marked left). A player still without a
    client seed gets one (as ``names_and_seeds`` gives it); a name or seed
    ``client_seeds_digest`` refuses raises its ValueError."""
    connected = presence_expression(now)
    seats = Seat.objects.filter(table=table).exclude(status=SeatStatus.LEFT).alias(connected=connected)
    sample = list(
        seats.filter(connected=True, status=SeatStatus.ACTIVE)
        .order_by("joined_at", "pk")
        .values_list("user_id", flat=True)[:FREEZE_SAMPLE]
    )
    if len(sample) < 2 or not _two_can_play(table, sample, now=now):
        return False
    gone = list(seats.filter(connected=False).order_by("joined_at", "pk").values_list("pk", "user_id"))
    if gone:
        _update_seats(
            [seat_id for seat_id, _ in gone], status=SeatStatus.LEFT, status_reason="disconnected", left_at=now
        )
        table.version += 1
    # Now every seat neither left nor sitting out is a connected active player: the frozen ones.
    listed = [(user_id, "disconnected") for _, user_id in gone]
    listed += [
        (user_id, why or "sitting out")
        for user_id, why in Seat.objects.filter(table=table, status=SeatStatus.SITTING_OUT)
        .order_by("pk")
        .values_list("user_id", "status_reason")
    ]
    names = fairness_services.usernames([user_id for user_id, _ in listed]) if listed else {}
    not_dealt = [{"player": names.get(user_id, "?"), "reason": why} for user_id, why in listed]
    deal_round = beacon.round_after(now)
    try:
        # A savepoint: should no freeze be written after all, the chain index taken for it
        # (and any client seed given) goes back, so no chain element is skipped unseen.
        with transaction.atomic():
            chain, index = fairness_services.next_chain_index(table, now=now)
            params = {
                "table": table.pk,
                "active": SeatStatus.ACTIVE.value,
                "number": table.hands_dealt + 1,
                "chain": chain.pk,
                "index": index,
                "not_dealt": json.dumps(not_dealt),
                "round": deal_round,
                "now": now,
            }
            _insert_freeze(table, params, now=now)
    except _NotFrozenError:
        return False  # fewer than two left since the sample: the general path decides
    table.phase_deadline = beacon.time_of(deal_round)
    table.version += 1
    return True


class _NotFrozenError(Exception):
    """``_insert_freeze`` wrote no freeze: fewer than two connected active players."""


def _insert_freeze(table: Table, params: dict[str, Any], *, now: datetime) -> None:
    """Run the freeze's statement with ``params``; give the players still without a client
    seed one and run it again once. Raises _NotFrozenError when it inserted nothing for want of
    two players, ValueError for a name or seed the digest refuses."""
    for attempt in range(2):
        with connection.cursor() as cursor:
            cursor.execute(_freeze_sql(), params)
            row = cursor.fetchone()
        assert row is not None
        _players, unseeded, refused, inserted = row
        if inserted is not None:
            return
        if refused:
            raise ValueError("a name has no ':' or newline, a client seed no newline")
        if not unseeded or attempt:
            raise _NotFrozenError
        # Seats older than joining making client seeds: their players get one now, stored.
        missing = Seat.objects.filter(table=table, status=SeatStatus.ACTIVE, user__client_seed__isnull=True)
        fairness_services.client_seeds(list(missing.values_list("user_id", flat=True)), now=now)


@cache
def _freeze_sql() -> str:
    """The freeze's one statement (``_freeze_in_database``): the frozen players aggregated
    where they are; the row inserted only when every one has a client seed and the digest
    accepts every line; the counts returned either way. Made once the apps are loaded (the
    user model's table)."""
    return f"""
WITH live AS (
    SELECT s.id, s.user_id, s.joined_at, u.username AS name, c.seed
    FROM {Seat._meta.db_table} s
    JOIN {get_user_model()._meta.db_table} u ON u.id = s.user_id
    LEFT JOIN {PlayerClientSeed._meta.db_table} c ON c.user_id = s.user_id
    WHERE s.table_id = %(table)s AND s.status = %(active)s
), agg AS (
    SELECT count(*) AS players,
           count(*) FILTER (WHERE seed IS NULL) AS unseeded,
           coalesce(bool_or(strpos(name, ':') > 0 OR strpos(name, E'\\n') > 0 OR strpos(seed, E'\\n') > 0), false)
               AS refused,
           json_agg(json_build_array(user_id, name, seed) ORDER BY joined_at, id) AS frozen,
           encode(sha256(convert_to(string_agg(name || ':' || seed, E'\\n' ORDER BY name COLLATE "C"), 'UTF8')), 'hex')
               AS digest
    FROM live
), inserted AS (
    INSERT INTO {HandFreeze._meta.db_table}
        (table_id, number, chain_id, chain_index, players, digest, not_dealt, deal_round, frozen_at)
    SELECT %(table)s, %(number)s, %(chain)s, %(index)s, frozen, digest, %(not_dealt)s::jsonb, %(round)s, %(now)s
    FROM agg WHERE players >= 2 AND unseeded = 0 AND NOT refused
    RETURNING id
)
SELECT agg.players, agg.unseeded, agg.refused, (SELECT id FROM inserted) FROM agg
"""


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
    players = freeze.players  # read now (deferred until the round's value is out)
    frozen_ids, frozen_names, frozen_seeds = frozen_columns(players)
    user_ids = np.array(frozen_ids, dtype=np.int64)
    # The wallets found, locked and read by one statement (issue 23: once, not twice).
    accounts, locked = wallet_services.lock_and_read_players(user_ids=frozen_ids, currency=table.currency)
    account_ids = np.array([accounts[u] for u in frozen_ids], dtype=np.int64)
    barred = protection.barred_players(
        user_ids=frozen_ids, currency=table.currency, stake_minor=table.widerpoker.ante_minor, now=now
    )
    can_pay = locked.available(account_ids) >= table.widerpoker.ante_minor
    away = _away_since_freeze(table, freeze, frozen_ids)
    kept = can_pay
    if barred or away:
        kept = kept & np.array([u not in barred and u not in away for u in frozen_ids], dtype=bool)

    def why(user_id: int) -> str:
        if user_id in barred:
            return str(barred[user_id].code).replace("_", " ")
        if user_id in away:
            return "left" if away[user_id] == SeatStatus.LEFT else "sitting out"
        return "insufficient funds"

    left_out = np.flatnonzero(~kept).tolist()  # usually none of 100,000
    dropped: list[dict[str, Any]] = [
        {
            "player": frozen_names[at],
            "reason": why(frozen_ids[at]),
            "client_seed": frozen_seeds[at],
            "frozen": True,
        }
        for at in left_out
    ]
    for reason in sorted({str(row["reason"]) for row in dropped} - {"left", "sitting out"}):
        # Who cannot pay or is barred sits out (the freeze left that to this step).
        out = [frozen_ids[at] for at, row in zip(left_out, dropped, strict=True) if row["reason"] == reason]
        Seat.objects.filter(table=table, user_id__any_of=IntArray(out)).update(
            status=SeatStatus.SITTING_OUT, status_reason=reason
        )
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
            frozen=_Frozen(freeze, draw, answer, kept, (frozen_ids, frozen_names, frozen_seeds)),
        )
    metrics.count_on_commit(metrics.HANDS, TableGame.WIDERPOKER, "dealt")
    listed = [*freeze.not_dealt, *dropped]
    if listed:
        hand.not_dealt = listed
        hand.save(update_fields=["not_dealt"])
    freeze.delete()


# How far another process's clock may lag the clock's: a seat left that long before the
# freeze is read too (and dropped, as it was not frozen).
AWAY_CLOCK_MARGIN = timedelta(minutes=5)


def _away_since_freeze(table: Table, freeze: HandFreeze, frozen_ids: list[int]) -> dict[int, str]:
    """The frozen players ``frozen_ids`` who left or sat out during the wait for the deal
    round (user id -> seat status): they are not dealt in and pay nothing. Only active
    players were frozen, so these are among the table's seats sitting out now and those that
    left since the freeze (``left_at``, set by every way out of a WiderPoker table; index
    ``seat_left_recent``): a handful of rows, where asking for the 100,000 frozen players'
    seats cost 0.2 s (issue 23)."""
    since = freeze.frozen_at - AWAY_CLOCK_MARGIN
    changed = list(
        Seat.objects.filter(table=table)
        .filter(Q(status=SeatStatus.SITTING_OUT) | Q(status=SeatStatus.LEFT, left_at__gte=since))
        .values_list("user_id", "status")
    )
    if not changed:
        return {}
    frozen = set(frozen_ids)
    return {user_id: status for user_id, status in changed if user_id in frozen}


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
        table.phase_deadline = now + timedelta(seconds=table.widerpoker.results_seconds)
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
            table.phase_deadline = now + timedelta(seconds=table.widerpoker.results_seconds)
            table.version += 1
            return
    with metrics.timed(metrics.SETTLEMENT_DURATION, TableGame.WIDERPOKER):
        settle_hand(hand_id=table.current_hand_id, now=now)
    table.phase = TablePhase.RESULTS
    table.phase_deadline = now + timedelta(seconds=table.widerpoker.results_seconds)
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
    """Apply the table's pending configuration to its conditions row and restart it: every
    seat is released and the players are told to return to the lobby."""
    conditions = table.widerpoker
    for field, value in table.pending_changes.items():
        setattr(conditions, field, value)
    conditions.save()
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
    from tables.widerpoker.selectors import live_pool_frames

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
