"""What an operator watches: readiness, the figures of the status page and of ``/metrics``.

One set of reads serves the load balancer (``/readyz``), Prometheus (``/metrics``, through
``FiguresCollector``) and staff (``/backoffice/status/``), so the three always agree:

* ``check_readiness``: can this process serve? The database (a ``SELECT 1`` through the
  pool), Redis (production), the table clock's last tick and the randomness beacon. Cached
  for ``READINESS_CACHE_SECONDS`` per process, so a balancer may poll every second.
* ``read_figures``: the clock's lateness per table, open hands and their ages, the ASGI
  processes and their heartbeats, the books check's last run, the beacon. A handful of
  small queries (tables, not hands, are scanned), cached for ``FIGURES_CACHE_SECONDS``.

Clock and beacon state come from the shared cache (config/infra/ops_state.py), written by the
process that ticks or settles.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypeVar

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from config.infra import metrics, ops_state
from tables import games
from tables.models import AsgiProcess, Table, TablePhase
from wallet.chain import oldest_unsealed_age, seal_lag_seconds
from wallet.selectors import BooksCheck, check_books

logger = logging.getLogger(__name__)

READINESS_CACHE_SECONDS = 1.0
STARTED_AT = time.time()
"""When this process loaded the module (Unix seconds): a clock that has not ticked yet is
not late while the process is younger than ``POKER_CLOCK_LATE_SECONDS``."""
FIGURES_CACHE_SECONDS = 1.0

CheckState = Literal["ok", "warn", "fail", "skipped"]


@dataclass(frozen=True)
class Check:
    """One readiness check: its state and a short human detail (never a secret)."""

    name: str
    state: CheckState
    detail: str
    seconds: float | None = None
    """A duration or an age that goes with it (the ``SELECT 1``'s time, the tick's age)."""


@dataclass(frozen=True)
class Readiness:
    """Whether the process can serve. ``status``: ``ok`` (every check passed), ``degraded``
    (it serves, but the clock or the beacon needs an operator: the balancer keeps it, the
    alerts fire), ``unavailable`` (the database or Redis cannot be reached: take it out)."""

    status: Literal["ok", "degraded", "unavailable"]
    checks: tuple[Check, ...]
    checked_at: float

    @property
    def http_status(self) -> int:
        """200 while the process can serve (ok or degraded), else 503."""
        return 503 if self.status == "unavailable" else 200

    def as_json(self) -> dict[str, Any]:
        """The detailed answer: staff (status page), loopback and token holders only."""
        return {
            "status": self.status,
            "checked_at": self.checked_at,
            "checks": {
                c.name: {"state": c.state, "detail": c.detail, **({} if c.seconds is None else {"seconds": c.seconds})}
                for c in self.checks
            },
        }


T = TypeVar("T")


class _Cached:
    """A value recomputed at most once per ``seconds`` in this process; concurrent callers
    wait for the one computing it (a burst of polls runs the checks once). ``clock`` is the
    process's monotonic clock (a test may stand it still)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.lock = threading.Lock()
        self.value: Any = None
        self.expires = 0.0
        self.clock: Callable[[], float] = time.monotonic

    def get(self, compute: Callable[[], T]) -> T:
        with self.lock:
            if self.value is None or self.clock() >= self.expires:
                self.value = compute()
                self.expires = self.clock() + self.seconds
            value: T = self.value
            return value

    def clear(self) -> None:
        with self.lock:
            self.value = None


_readiness = _Cached(READINESS_CACHE_SECONDS)
_figures = _Cached(FIGURES_CACHE_SECONDS)


def clear_caches() -> None:
    """Forget the cached readiness and figures (tests, and after a change an operator made)."""
    _readiness.clear()
    _figures.clear()


READINESS_DATABASE_TIMEOUT_SECONDS = 2.0
"""How long readiness waits for a pooled connection: a balancer's poll must not hang for the
requests' ``DB_POOL_TIMEOUT_SECONDS`` when the pool is exhausted (that is a failure too)."""


def _ping_database() -> str:
    """``SELECT 1`` through this process's pool (PostgreSQL: borrowed straight from the pool
    with a short timeout) or its connection (SQLite); returns the vendor. Raises on failure."""
    pool = getattr(connection, "pool", None) if connection.vendor == "postgresql" else None
    if pool is not None:
        pool.open()  # Django opens its pool at the first query; readiness may come first
        with pool.connection(timeout=READINESS_DATABASE_TIMEOUT_SECONDS) as raw:
            raw.execute("SELECT 1").fetchone()
        return "postgresql (pool)"
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return connection.vendor


def _check_database() -> Check:
    started = time.perf_counter()
    try:
        vendor = _ping_database()
    except Exception as error:
        return Check("database", "fail", type(error).__name__, time.perf_counter() - started)
    return Check("database", "ok", vendor, time.perf_counter() - started)


def _check_redis() -> Check:
    if not settings.REDIS_URL:
        return Check("redis", "skipped", "embedded default: no Redis")
    started = time.perf_counter()
    try:
        cache.set("ops:ready-ping", 1, 10)
        if cache.get("ops:ready-ping") != 1:
            raise RuntimeError("the value written was not read back")
    except Exception as error:
        return Check("redis", "fail", type(error).__name__, time.perf_counter() - started)
    return Check("redis", "ok", "set and read back", time.perf_counter() - started)


def clock_late_seconds() -> float:
    """How old the clock's last tick may be before it counts as late (``POKER_CLOCK_LATE_SECONDS``)."""
    return float(settings.OPS_CLOCK_LATE_SECONDS)


def _check_clock(now: float) -> Check:
    mode = settings.TABLE_CLOCK
    if mode == "off":
        return Check("clock", "skipped", "TABLE_CLOCK=off")
    try:
        tick = ops_state.last_tick()
    except Exception as error:
        return Check("clock", "warn", f"cannot read the last tick: {type(error).__name__}")
    if tick is None:
        if now - STARTED_AT <= clock_late_seconds():  # the in-process clock starts with the first request
            return Check("clock", "ok", f"{mode}: no tick yet, this process started {now - STARTED_AT:.0f} s ago")
        return Check("clock", "warn", f"{mode}: no tick recorded yet")
    age = max(0.0, now - tick.at)
    if age > clock_late_seconds():
        return Check("clock", "warn", f"{mode}: last tick {age:.0f} s ago", age)
    return Check("clock", "ok", f"{mode}: last tick {age:.1f} s ago", age)


def _check_beacon(now: float) -> Check:
    try:
        state = ops_state.beacon_state()
    except Exception as error:
        return Check("beacon", "warn", f"cannot read its state: {type(error).__name__}")
    if state.failing_since is not None:
        silent = max(0.0, now - state.failing_since)
        return Check("beacon", "warn", f"{settings.BEACON}: silent for {silent:.0f} s", silent)
    if state.last_ok_at is None:
        return Check("beacon", "ok", f"{settings.BEACON}: not needed yet")
    return Check("beacon", "ok", f"{settings.BEACON}: answering", max(0.0, now - state.last_ok_at))


def _check_ledger() -> Check:
    """Sealing keeps up: no transfer unsealed for longer than ``POKER_LEDGER_SEAL_LAG_SECONDS``
    (wallet/chain.py); a lagging sealer warns, the process still serves."""
    started = time.perf_counter()
    try:
        age = oldest_unsealed_age()
    except Exception as error:
        return Check("ledger", "warn", f"cannot read the unsealed transfers: {type(error).__name__}")
    elapsed = time.perf_counter() - started
    if age > seal_lag_seconds():
        return Check("ledger", "warn", f"a transfer unsealed for {age:.0f} s: sealing lags", age)
    return Check("ledger", "ok", f"oldest unsealed transfer {age:.1f} s old", elapsed)


def _compute_readiness() -> Readiness:
    now = time.time()
    checks = (_check_database(), _check_redis(), _check_clock(now), _check_beacon(now), _check_ledger())
    if any(c.state == "fail" for c in checks):
        status: Literal["ok", "degraded", "unavailable"] = "unavailable"
    elif any(c.state == "warn" for c in checks):
        status = "degraded"
    else:
        status = "ok"
    return Readiness(status, checks, now)


def check_readiness() -> Readiness:
    """This process's readiness, at most ``READINESS_CACHE_SECONDS`` old (module docstring)."""
    return _readiness.get(_compute_readiness)


# --- the figures ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TableClock:
    """One open table as the clock sees it: its phase deadline and how late it is (seconds
    past the deadline, 0 when not due yet), and the running hand's start (if any)."""

    table_id: int
    name: str
    game: str
    phase: str
    deadline: datetime | None
    late_seconds: float
    hand_started_at: datetime | None
    hand_age_seconds: float | None


@dataclass(frozen=True)
class ProcessBeat:
    """An ASGI process and the age of its heartbeat (seconds)."""

    label: str
    started_at: datetime
    beat_age_seconds: float
    alive: bool


@dataclass(frozen=True)
class Figures:
    """Everything the status page and the scrape-time metrics show, read at ``now``."""

    now: datetime
    tables: tuple[TableClock, ...]
    processes: tuple[ProcessBeat, ...]
    tick: ops_state.ClockTick | None
    beacon: ops_state.BeaconState
    books: ops_state.BooksRun | None
    clock_mode: str
    beacon_source: str
    errors: tuple[str, ...] = field(default_factory=tuple)
    unsealed_age_seconds: float = 0.0

    @property
    def open_hands(self) -> tuple[TableClock, ...]:
        """The tables with a hand running, oldest hand first."""
        running = [t for t in self.tables if t.hand_age_seconds is not None]
        return tuple(sorted(running, key=lambda t: -(t.hand_age_seconds or 0.0)))

    @property
    def max_late_seconds(self) -> float:
        """The latest table's lateness (0 with no table due)."""
        return max((t.late_seconds for t in self.tables), default=0.0)


def _list_table_clocks(now: datetime) -> list[TableClock]:
    rows = list(
        Table.objects.exclude(phase=TablePhase.CLOSED)
        .select_related("current_hand")
        .only("pk", "name", "game", "phase", "phase_deadline", "current_hand__status", "current_hand__started_at")
        .order_by("pk")
    )
    started_at: dict[int, datetime] = {}
    for key, game in games.GAMES.items():
        of_game = [table for table in rows if table.game == key]
        if of_game and game.running_hands_started is not None:
            started_at.update(game.running_hands_started(of_game))
    tables = []
    for table in rows:
        pk, name, game_key, phase, deadline = table.pk, table.name, table.game, table.phase, table.phase_deadline
        started = started_at.get(pk)
        late = max(0.0, (now - deadline).total_seconds()) if deadline is not None else 0.0
        age = None if started is None else max(0.0, (now - started).total_seconds())
        tables.append(TableClock(pk, name, game_key, phase, deadline, late, started, age))
    return tables


def _list_processes(now: datetime) -> list[ProcessBeat]:
    timeout = settings.PRESENCE_PROCESS_TIMEOUT_SECONDS
    processes = []
    for process in AsgiProcess.objects.order_by("started_at"):
        age = max(0.0, (now - process.beat_at).total_seconds())
        processes.append(ProcessBeat(str(process), process.started_at, age, age <= timeout))
    return processes


def _compute_figures() -> Figures:
    now = timezone.now()
    errors = []
    try:
        tick = ops_state.last_tick()
        beacon = ops_state.beacon_state()
        books = ops_state.last_books_check()
    except Exception as error:  # the cache is down: the database figures still show
        errors.append(f"shared cache: {type(error).__name__}")
        tick, beacon, books = None, ops_state.BeaconState(None, None), None
    return Figures(
        now=now,
        tables=tuple(_list_table_clocks(now)),
        processes=tuple(_list_processes(now)),
        tick=tick,
        beacon=beacon,
        books=books,
        clock_mode=settings.TABLE_CLOCK,
        beacon_source=settings.BEACON,
        errors=tuple(errors),
        unsealed_age_seconds=oldest_unsealed_age(now=now),
    )


def read_figures() -> Figures:
    """The operator's figures, at most ``FIGURES_CACHE_SECONDS`` old (module docstring)."""
    return _figures.get(_compute_figures)


class FiguresCollector(Collector):
    """Prometheus gauges read at scrape time from ``read_figures`` and ``check_readiness``
    (docs/deployment.md, "Operating it", lists them)."""

    def describe(self) -> Iterator[GaugeMetricFamily]:
        """Nothing: registering must not read the database (prometheus_client would collect)."""
        return iter(())

    def collect(self) -> Iterator[GaugeMetricFamily]:
        readiness = check_readiness()
        yield from self._readiness(readiness)
        try:
            figures = read_figures()
        except Exception:  # the database is down: readiness above says so
            return
        now = figures.now.timestamp()
        late = GaugeMetricFamily(
            "widerpoker_table_clock_late_seconds",
            "Seconds the table is past its phase deadline (0 when not due), per open table.",
            labels=["table", "game"],
        )
        for table in figures.tables:
            late.add_metric([str(table.table_id), table.game], table.late_seconds)
        yield late
        yield GaugeMetricFamily(
            "widerpoker_table_clock_max_late_seconds",
            "The latest open table's lateness (seconds).",
            value=figures.max_late_seconds,
        )
        tick_age = GaugeMetricFamily(
            "widerpoker_clock_last_tick_age_seconds",
            "Seconds since the table clock last completed a tick (absent: never ticked, or TABLE_CLOCK=off).",
        )
        if figures.tick is not None:
            tick_age.add_metric([], max(0.0, now - figures.tick.at))
        yield tick_age
        hands = figures.open_hands
        yield GaugeMetricFamily("widerpoker_open_hands", "Hands running now.", value=len(hands))
        yield GaugeMetricFamily(
            "widerpoker_oldest_open_hand_age_seconds",
            "Age of the oldest running hand (0 with none).",
            value=max((t.hand_age_seconds or 0.0 for t in hands), default=0.0),
        )
        yield GaugeMetricFamily(
            "widerpoker_asgi_processes_alive",
            "ASGI processes whose presence heartbeat is recent.",
            value=sum(1 for p in figures.processes if p.alive),
        )
        books_ok = GaugeMetricFamily(
            "widerpoker_books_intact", "1 when the last books check found the books intact, 0 when not."
        )
        books_at = GaugeMetricFamily(
            "widerpoker_books_last_check_timestamp_seconds", "When the last books check finished (Unix time)."
        )
        if figures.books is not None:
            books_ok.add_metric([], 1.0 if figures.books.ok else 0.0)
            books_at.add_metric([], figures.books.at)
        yield books_ok
        yield books_at
        yield GaugeMetricFamily(
            "widerpoker_ledger_unsealed_age_seconds",
            "Age of the oldest transfer committed and not yet sealed into the ledger's chain (0 with none).",
            value=figures.unsealed_age_seconds,
        )
        silent = GaugeMetricFamily(
            "widerpoker_beacon_silent_seconds",
            "Seconds the randomness beacon has failed to answer (0 while it answers).",
        )
        silent.add_metric([], 0.0 if figures.beacon.failing_since is None else now - figures.beacon.failing_since)
        yield silent

    @staticmethod
    def _readiness(readiness: Readiness) -> Iterator[GaugeMetricFamily]:
        ready = GaugeMetricFamily(
            "widerpoker_readiness_check_ok",
            "1 when a readiness check of the scraped process passes (ok or skipped), 0 when not.",
            labels=["check"],
        )
        for check in readiness.checks:
            ready.add_metric([check.name], 1.0 if check.state in ("ok", "skipped") else 0.0)
        yield ready
        yield GaugeMetricFamily(
            "widerpoker_ready",
            "1 when the scraped process is ready (ok or degraded), 0 when unavailable.",
            value=0.0 if readiness.status == "unavailable" else 1.0,
        )


def run_books_check() -> BooksCheck:
    """Run ``wallet.selectors.check_books`` (what ``manage.py verify_books`` runs) and record
    when it ran, its result and its number of findings (config/infra/ops_state.py) for the
    metrics, the alerts and the status page. Returns the check; a failure is logged as an
    error naming the counts, never the accounts."""
    started = time.perf_counter()
    books = check_books()
    elapsed = time.perf_counter() - started
    findings = (
        len(books.unbalanced_transfers)
        + len(books.drifted_accounts)
        + len(books.negative_accounts)
        + sum(1 for total in books.currency_totals.values() if total)
        + len(books.chain_problems)
        + len(books.unmatched_holds)
        + len(books.broken_references)
    )
    ops_state.record_books_check(ok=books.ok, findings=findings, duration_seconds=elapsed)
    metrics.BOOKS_CHECKS.labels("intact" if books.ok else "failed").inc()
    if books.ok:
        logger.info("books check: intact (%.1f s)", elapsed)
    else:
        logger.error("books check FAILED: %d finding(s); run manage.py verify_books", findings)
    return books
