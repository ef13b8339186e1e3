"""WiderPoker's hand lifecycle as a state machine in the database, one clock step at a time.

WAITING --(>= 2 active, connected players who can pay the ante)--> CHANGE
CHANGE  --(deadline)--> settlement --> RESULTS --(a few seconds)--> WAITING --> next hand

The house's clock (tables/clock.py) claims a due table, holds its row lock and version, and
calls ``advance_widerpoker_table`` through the registry of games (``Game.advance``). Rules:
seed 001 B (phases), C (multidraw, redeal), Notes 2 (disconnection), Notes 3 (malfunction);
DESIGN.md "The game, as implemented".
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction

from config.infra import metrics
from tables.engine import fairness
from tables.gamespec import NO_STEP, Step
from tables.models import (
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
from tables.services.seating import seat_presence_with
from tables.widerpoker import between_hands
from tables.widerpoker.services.deal import _deal
from tables.widerpoker.services.freezing import (
    _deal_frozen,
    _freeze,
    _freeze_in_database,
    _two_can_play,
    _update_seats,
    freeze_lead,
    named_not_dealt,
)
from tables.widerpoker.services.sessions import count_hand_sessions
from tables.widerpoker.services.settlement import cancel_hand, settle_hand
from wallet import protection
from wallet import services as wallet_services

# --- the clock's step ----------------------------------------------------------------------


def advance_widerpoker_table(table: Table, now: datetime) -> Step:
    """One clock step of a WiderPoker table whose deadline has passed (row locked by the
    caller, which saves it and bumps ``version`` when this changed it): settle the change
    phase, end the results, deal the next hand (a tournament's table deals its entrants) or
    wait (``Game.advance``). A deal's sessions are counted after its commit, off the deal's
    critical path (``Step.after_commit``: ``count_hand_sessions``); should that fail or
    never run, the hand's settlement or cancellation counts them first."""
    if table.phase == TablePhase.CHANGE:
        round_due = _settle_table(table, now=now)
        # Settled as the keys' round is released, not at the clock's next tick after it.
        return NO_STEP if round_due is None else Step(wake_at=round_due)
    results_end = None
    if table.phase == TablePhase.RESULTS:
        # The results' deadline came ``freeze_lead`` before their end (``_show_results``):
        # the next hand freezes now and is dealt when they end.
        results_end = (table.phase_deadline or now) + freeze_lead(table)
        _end_results(table, now=now)
    # A tournament's table deals its entrants, not its seats (docs/tournaments.md): its
    # step is registered in between_hands (tables/apps.py), asked first.
    if not between_hands.deal_between_hands(table, now=now):
        _start_hand_or_wait(table, now=now, not_before=results_end)
    if table.phase == TablePhase.WAITING and table.phase_deadline is not None:
        # A frozen hand waits for its deal (its round's time, or the results' end): dealt
        # then, not at the clock's next tick (issue 23: the results' end to the change frame).
        return Step(wake_at=table.phase_deadline)
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


def _start_hand_or_wait(table: Table, *, now: datetime, not_before: datetime | None = None) -> None:
    """Remove disconnected players (rules Notes 2), collect the ante from every active player
    (rules B.1) and deal, or wait when fewer than two can play (rules A.3). Algorithm 3
    freezes instead, its hand dealt at its deal round and not before ``not_before`` (the end
    of the previous hand's results, when this step runs ``freeze_lead`` before it).

    Seats are read as tuples with their presence computed by the database: a table of
    100,000 players makes no model object per seat."""
    # The frozen players (6 MB for 100,000) are read only when the round's value is out, not
    # at every tick of the wait.
    freeze = HandFreeze.objects.filter(table=table, abandoned_at__isnull=True).defer("players").first()
    if freeze is not None:
        _deal_frozen(table, freeze, now=now)
        return
    freezing = settings.DEAL_ALGORITHM >= fairness.ALGORITHM_DEAL_BEACON
    if (
        freezing
        and table.is_open
        and connection.vendor == "postgresql"
        and _freeze_in_database(table, now=now, not_before=not_before)
    ):
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
            not_before=not_before,
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
                not_before=not_before,
            )
        elif int(can_pay.sum()) >= 2:
            with metrics.timed(metrics.DEAL_DURATION, TableGame.WIDERPOKER):
                hand = _deal(table, user_ids[can_pay], account_ids[can_pay], locked=locked, players=players, now=now)
            metrics.count_on_commit(metrics.HANDS, TableGame.WIDERPOKER, "dealt")
            _record_not_dealt(hand, seats, gone_set, active, can_pay.tolist(), barred)


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
    return named_not_dealt(not_dealt)


def _settle_table(table: Table, *, now: datetime) -> datetime | None:
    """Settle at the deadline, once the hand's beacon round is released (algorithm 2): until
    then the table waits for the round's time, then a second at a time; after
    ``BEACON_MAX_WAIT_SECONDS`` without it the hand is cancelled and refunded like any
    malfunction (rules, Notes 3). Returns the round's time when the table now waits for it
    (its deadline, to be kept to the moment: ``Step.wake_at``), else None."""
    assert table.current_hand_id is not None
    hand = Hand.objects.only("id", "algorithm", "beacon_round", "change_deadline").get(pk=table.current_hand_id)
    chained = hand.algorithm >= fairness.ALGORITHM_CHAIN and hand.beacon_round is not None
    answer = beacon.fetch(int(hand.beacon_round or 0), now=now) if chained else None
    if answer is not None and answer.value is None:
        if now - hand.change_deadline < timedelta(seconds=settings.BEACON_MAX_WAIT_SECONDS):
            due = beacon.time_of(int(hand.beacon_round or 0))
            if due > now:  # the round's nominal time is still to come: due then
                table.phase_deadline = due
                return due
            table.phase_deadline = now + timedelta(seconds=1)  # late: asked again each second
            return None
        cancel_hand(hand_id=hand.pk, reason="the randomness beacon did not answer", now=now, beacon_answer=answer.error)
        _show_results(table, now=now)
        return None
    if hand.algorithm >= fairness.ALGORITHM_DEAL_BEACON:
        # Redeals bought before the deadline are dealt first, even after the redeal deadline;
        # their rounds precede the keys' round, so they are out by now.
        from tables.widerpoker.services.play import resolve_hand_redeals

        resolve_hand_redeals(hand_id=hand.pk, now=now)
        if Redeal.objects.filter(hand_id=hand.pk, combination__isnull=True).exists():
            if now - hand.change_deadline < timedelta(seconds=settings.BEACON_MAX_WAIT_SECONDS):
                table.phase_deadline = now + timedelta(seconds=1)
                return None
            cancel_hand(hand_id=hand.pk, reason="a redeal's beacon round did not answer", now=now)
            _show_results(table, now=now)
            return None
    with metrics.timed(metrics.SETTLEMENT_DURATION, TableGame.WIDERPOKER):
        settle_hand(hand_id=table.current_hand_id, now=now)
    _show_results(table, now=now)
    return None


def _show_results(table: Table, *, now: datetime) -> None:
    """The hand is over (settled or cancelled): its results show for ``results_seconds``
    (seed 001 B). The table is due ``freeze_lead`` before they end, when the next hand's
    inputs freeze (algorithm 3); the freeze deals it at their end."""
    table.phase = TablePhase.RESULTS
    table.phase_deadline = now + timedelta(seconds=table.widerpoker.results_seconds) - freeze_lead(table)
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
