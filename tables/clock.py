"""The house's table clock: one tick advances every due table through its game's step
(``Game.advance``, the registry of games ``tables.games``), then runs each game's per-tick
work (``Game.on_tick``) and seals the ledger.

Celery beat sends ``tables.tasks.advance_due_tables`` every second in production; in the
embedded default (``TABLE_CLOCK=in-process``) the ASGI process that holds the sockets runs
the same ``tick`` (the in-memory channel layer lives in that process). Each table advances
in its own transaction, claimed with ``SELECT ... FOR UPDATE SKIP LOCKED`` and written back
with a version check, so a duplicated or late tick changes nothing. A failed step is a
malfunction (rules, Notes 3): the game cancels the running hand (``Game.cancel``).

Also here, because it asks each game too: ``remove_from_tables`` (``Game.leave``), what a
suspension or an exclusion does to a player's seats.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from functools import reduce
from operator import or_
from typing import Any

from asgiref.sync import sync_to_async
from celery import current_app
from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.db.models import Case, F, Value, When
from django.utils import timezone

from config.infra import metrics, ops_state
from config.infra.observability import bind
from config.infra.rows import RowReader
from tables.games import GAMES, NO_STEP, Step, game_of, get
from tables.gamespec import MALFUNCTION_PAUSE
from tables.models import Seat, SeatStatus, Table, TableMode, TablePhase
from tables.realtime.push import broadcast_table_on_commit, kick_player_on_commit
from tables.services import degradation
from tables.services.presence import reap_dead_processes
from wallet.services import seal_pending

logger = logging.getLogger(__name__)

TICK_SECONDS = 1.0

BACKGROUND_PRIORITY = 2
"""``advance_due_tables``' group of the tables that play for nothing (``Game.background``:
practice games); 0 is cash tables, 1 the other fun tables."""


def tick() -> int:
    """One clock tick: take the sockets of dead ASGI processes off their seats, advance due
    tables, run each game's per-tick work (``Game.on_tick``: WiderPoker's pending redeals,
    running purchases and prize pools), then seal the ledger's waiting transfers
    (wallet/chain.py). A completed tick is recorded for readiness and the metrics
    (config/infra/ops_state.py: one cache write). Returns how many tables advanced."""
    close_old_connections()
    started = time.perf_counter()
    try:
        now = timezone.now()
        try:
            reap_dead_processes(now=now)
        except Exception:
            logger.exception("reaping dead ASGI processes failed; the tables still advance")
        advanced = advance_due_tables(now=now)
        for game in GAMES.values():
            if game.on_tick is None:
                continue
            try:
                game.on_tick(now)
            except Exception:
                logger.exception("%s: the per-tick work failed; the next tick does it", game.key)
        try:
            seal_pending()
        except Exception:
            logger.exception("sealing the ledger failed; the next transfer or tick seals")
        elapsed = time.perf_counter() - started
        metrics.CLOCK_TICK_DURATION.observe(elapsed)
        ops_state.record_tick(duration_seconds=elapsed, advanced=advanced)
        return advanced
    finally:
        close_old_connections()


def advance_due_tables(
    *,
    now: datetime,
    limit: int = 100,
    practice_budget_seconds: float | None = None,
    timer: Callable[[], float] = time.monotonic,
) -> int:
    """Advance every table whose phase deadline has passed; return how many advanced.

    Safe to run from any number of workers at once. A table whose step fails is treated as a
    malfunction (rules, Notes 3): its running hand is cancelled and every wager refunded.

    Order (security audit M2): cash tables first, then the other fun tables, then the
    tables that play for nothing (each game's ``background``: practice games), each group
    by deadline, so bots playing for nothing never make a table with money on it wait. The
    background tables get at most ``practice_budget_seconds`` of the tick
    (``CLOCK_PRACTICE_BUDGET_SECONDS`` by default, measured with ``timer``); those left
    over are due at the next tick. A table whose deadline has passed by more than
    ``CLOCK_LATE_SECONDS`` tells the platform the clock ran late (``degradation``).
    """
    budget = settings.CLOCK_PRACTICE_BUDGET_SECONDS if practice_budget_seconds is None else practice_budget_seconds
    background = [game.background for game in GAMES.values() if game.background is not None]
    groups = [When(mode=TableMode.CASH, then=Value(0))]
    if background:
        groups.append(When(reduce(or_, background), then=Value(BACKGROUND_PRIORITY)))
    due = list(
        Table.objects.filter(phase_deadline__lte=now)
        .exclude(phase=TablePhase.CLOSED)
        .annotate(priority=Case(*groups, default=Value(1)))
        .order_by("priority", "phase_deadline", "id")
        .values_list("id", "priority", "phase_deadline")[:limit]
    )
    late = [deadline for _, priority, deadline in due if priority < BACKGROUND_PRIORITY and deadline is not None]
    if late and (now - min(late)).total_seconds() > settings.CLOCK_LATE_SECONDS:
        degradation.record_degradation(kind=degradation.CLOCK_LATE, now=now)
    advanced = 0
    background_started: float | None = None
    for table_id, priority, _ in due:
        if priority == BACKGROUND_PRIORITY:
            if background_started is None:
                background_started = timer()
            elif timer() - background_started > budget:
                break  # the rest of the background tables wait for the next tick
        advanced += advance_isolated(table_id, now=now)
    return advanced


def advance_isolated(table_id: int, *, now: datetime) -> bool:
    """``advance_table`` for the clock: whatever the step raises, even while the table is
    recovered, is logged and handled here (a malfunction: its hand cancelled, rules Notes 3),
    never raised, so the other tables of a tick still advance (security audit F13)."""
    try:
        with bind(table_id=table_id):
            return advance_table(table_id=table_id, now=now)
    except Exception:
        logger.exception("table %s failed to advance; cancelling its hand", table_id)
        try:
            recover_table(table_id=table_id, now=now, reason="malfunction while advancing the table")
        except Exception:
            logger.exception("table %s could not be recovered; retrying after a pause", table_id)
            _postpone(table_id, now=now)
        return False


WAKE_TASK = "tables.tasks.advance_table_at"
"""The Celery task a wake sends, by name (``tables.tasks`` imports this module)."""

WAKE_MARGIN = timedelta(milliseconds=20)
"""How long after the moment asked for a precise wake runs: a worker's clock a little ahead
of the one that set the deadline then still finds the table due."""


def wake_table_at(table_id: int, at: datetime) -> None:
    """Have table ``table_id`` stepped at ``at`` (a deadline its game asked to keep to the
    moment: ``Step.wake_at``) rather than at the first tick after it, up to ``TICK_SECONDS``
    late. With the clock in Celery (``TABLE_CLOCK=beat``): a task the worker holds until
    then (``WAKE_TASK``, sent by name: ETA ``at`` + ``WAKE_MARGIN``, expiring a few ticks
    later). A wake that comes with the tick's step changes nothing (SKIP LOCKED,
    version check); one lost (the broker unreachable: logged, never raised, never waited
    for) leaves the table to the tick. The in-process clock keeps to its ticks."""
    if settings.TABLE_CLOCK != "beat":
        return
    try:
        current_app.send_task(
            WAKE_TASK,
            args=(table_id,),
            eta=at + WAKE_MARGIN,
            expires=at + timedelta(seconds=5 * TICK_SECONDS),
            retry=False,
        )
    except Exception:
        logger.exception("table %s: its wake at %s could not be queued; the tick steps it", table_id, at)


def _postpone(table_id: int, *, now: datetime) -> None:
    """Push a failing table's deadline back by ``MALFUNCTION_PAUSE`` so the clock retries it
    later instead of every tick; never raises."""
    try:
        Table.objects.filter(pk=table_id).update(phase_deadline=now + MALFUNCTION_PAUSE)
    except Exception:
        logger.exception("table %s could not be postponed", table_id)


_collector_lock = threading.Lock()
_collector_pauses = 0
_collector_resume = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for the block (re-entrant, any thread; it
    resumes when the last block ends, unless it was off before the first began).

    A step of a table of 100,000 players makes hundreds of thousands of objects that live
    for the step (rows, tuples, arrays' lists): each time they pile up the collector runs a
    full collection, which walks every object of the process (the Django process's own, a
    socket process's every connection): two of them, 0.4-0.8 s of CPU, in a freeze of
    100,000 (docs/benchmarks.md, "s5-freeze"). The step's objects are freed by their
    reference counts when it ends; cycles it made, if any, are collected at the next
    collection after the block (the in-process clock's socket process keeps collecting
    between two tables' steps). Raises nothing of its own."""
    global _collector_pauses, _collector_resume
    with _collector_lock:
        _collector_pauses += 1
        if _collector_pauses == 1:
            _collector_resume = gc.isenabled()
            gc.disable()
    try:
        yield
    finally:
        with _collector_lock:
            _collector_pauses -= 1
            if _collector_pauses == 0 and _collector_resume:
                gc.enable()


def advance_table(*, table_id: int, now: datetime) -> bool:
    """Move one table a step if its deadline has passed; False if it was not due or another
    worker holds it (SKIP LOCKED: that worker is advancing it right now).

    The step (``Game.advance``) commits with its frames; the work it leaves for after the
    commit (``Step.after_commit``: a WiderPoker deal counts its players' sessions there, off
    the deal's critical path) runs in a transaction of its own. Should that fail or never
    run (the process dies between the two), the game does it later (a WiderPoker hand's
    settlement or cancellation counts it first): a failure is logged, not raised. The cyclic
    garbage collector is paused meanwhile (``collector_paused``)."""
    with collector_paused():
        saved, step = _advance_table_step(table_id=table_id, now=now)
        if step.wake_at is not None:
            wake_table_at(table_id, step.wake_at)
        if saved and step.after_commit is not None:
            try:
                with transaction.atomic(durable=True):
                    step.after_commit()
            except Exception:
                logger.exception("table %s: the work after its step's commit failed; the game does it later", table_id)
    return saved


@transaction.atomic(durable=True)
def _advance_table_step(*, table_id: int, now: datetime) -> tuple[bool, Step]:
    """``advance_table``'s transaction: one step of one table, its frames sent after commit;
    whether the table advanced and what its game's step asked for."""
    table = _lock_due_table(table_id, now=now)
    if table is None:
        return False, NO_STEP
    expected_version = table.version
    step = game_of(table).advance(table, now)
    if table.version != expected_version:
        # One step, one broadcast, one version: clients read a gap as a missed frame.
        table.version = expected_version + 1
    saved = _save_table(table, expected_version=expected_version)
    if saved and step.broadcast is not None:
        step.broadcast(table)  # e.g. a Hold'em betting action: the frame from the rows it holds
    elif saved:
        # Every phase change is public, and every seated player's screen must follow it.
        broadcast_table_on_commit(table.pk, refresh_private=True)
    return saved, step


_TABLES = RowReader(Table)
_T = Table._meta.db_table
_DUE = f'"{_T}"."id" = %s AND "{_T}"."phase_deadline" <= %s AND NOT ("{_T}"."phase" = %s)'


def _lock_due_table(table_id: int, *, now: datetime) -> Table | None:
    """Table ``table_id`` if due at ``now`` and not closed, locked (``FOR UPDATE SKIP
    LOCKED``: None when another worker holds it); one statement without the ORM's compiler
    (``config.infra.rows``: every step reads it). SQLite has no row locks (its writes are
    serialised)."""
    where = _DUE
    if connection.features.has_select_for_update_skip_locked:
        where += " FOR UPDATE SKIP LOCKED"
    found = _TABLES.read(where, [table_id, connection.ops.adapt_datetimefield_value(now), TablePhase.CLOSED.value])
    return found[0] if found else None


def _save_table(table: Table, *, expected_version: int) -> bool:
    """Write the table's state back only if nobody advanced it meanwhile (version check)."""
    if table.version == expected_version:
        Table.objects.filter(pk=table.pk).update(phase_deadline=table.phase_deadline)
        return False
    updated = Table.objects.filter(pk=table.pk, version=expected_version).update(
        phase=table.phase,
        phase_deadline=table.phase_deadline,
        version=table.version,
        current_hand=table.current_hand,
        hands_dealt=table.hands_dealt,
        pending_changes=table.pending_changes,
        is_open=table.is_open,
    )
    if updated != 1:
        transaction.set_rollback(True)
        return False
    return True


@transaction.atomic(durable=True)
def recover_table(*, table_id: int, now: datetime, reason: str) -> None:
    """After a failed step (or a croupier's malfunction cancel): the game cancels the running
    hand with every wager back (``Game.cancel``), and the table waits ``MALFUNCTION_PAUSE``
    before dealing again. No such table: nothing happens."""
    table = Table.objects.select_for_update().filter(pk=table_id).first()
    if table is None:
        return
    game_of(table).cancel(table, reason, now)
    Table.objects.filter(pk=table_id).update(
        phase=TablePhase.WAITING,
        current_hand=None,
        phase_deadline=now + MALFUNCTION_PAUSE,
        version=F("version") + 1,
    )
    broadcast_table_on_commit(table_id, refresh_private=True)


def remove_from_tables(*, user_id: int, reason: str, now: datetime) -> list[int]:
    """Take the player away from every table: each seat he holds is left as his table's game
    leaves it (``Game.leave``: at a WiderPoker table his entry in the running hand stays in
    play and is paid any prize it wins, rules A.5; at a Hold'em table his chips return to his
    wallet after the hand he is in), and each of his open game sockets gets ``reason`` and
    is closed (tables/realtime/frames.py, KickedFrame). For a suspension (seed 001, Notes 4)
    or the start of a time-out or self-exclusion (wallet/protection.py). Returns the ids of
    the tables left; seats already left are not touched. Not atomic as a whole: each seat is
    its own transaction, so one table's lock is never held while another's is taken. Raises
    nothing of its own."""
    left = []
    seats = Seat.objects.filter(user_id=user_id).exclude(status=SeatStatus.LEFT)
    for table_id, game in sorted(seats.values_list("table_id", "table__game")):
        get(game).leave(table_id, user_id, now)
        left.append(table_id)
    kick_player_on_commit(user_id, reason)
    return left


async def run_clock(stop: asyncio.Event | None = None) -> None:
    """Tick every second until ``stop`` is set; a failed tick is logged and the next one runs."""
    while stop is None or not stop.is_set():
        try:
            await sync_to_async(tick, thread_sensitive=True)()
        except Exception:
            logger.exception("table clock tick failed")
        await asyncio.sleep(TICK_SECONDS)


class ClockStarter:
    """ASGI middleware that starts the in-process clock once, on the first connection."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.task: asyncio.Task[None] | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        if self.task is None and settings.TABLE_CLOCK == "in-process":
            self.task = asyncio.get_running_loop().create_task(run_clock())
            logger.info("table clock started in this process")
        return await self.app(scope, receive, send)
