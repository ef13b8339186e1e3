"""The platform's Prometheus metrics (prometheus_client), defined once for every process.

Which processes: several daphne processes, one Celery worker (with its pool of children) and
one beat. Counters and histograms are written where the event happens (a hand settles in the
worker, a purchase in a daphne), so they are kept in prometheus_client's **multiprocess
mode** when ``PROMETHEUS_MULTIPROC_DIR`` is set (the systemd units set it; docs/deployment.md,
"Operating it"): every process writes its samples to memory-mapped files in that directory
and any one daphne's ``/metrics`` adds them up. One scrape target per host, the worker
included, without a port of its own. Without the variable (the embedded default: one
process) the process's own registry is used.

Figures that live in the database or the shared cache (the clock's lateness per table, open
hands, the books check, the beacon, readiness) are not counted here: they are read when
``/metrics`` is scraped (backoffice/operations.py), so they stay true when the process that
would have counted them is dead, which is what an alert needs.

Costs: a counter increment is a few hundred nanoseconds (a memory-mapped write in
multiprocess mode); no metric reads the database on a request or a purchase.
"""

from __future__ import annotations

import atexit
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.db import transaction
from prometheus_client import Counter, Gauge, Histogram, multiprocess

MULTIPROCESS = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
"""Whether samples go to the shared multiprocess directory (read when this module loads,
as prometheus_client does)."""


def _mark_dead() -> None:
    """Drop this process's live gauges (its open sockets, its pool) when it exits, so a
    restarted daphne does not leave its last values behind (Celery's forked children, which
    skip ``atexit``, are marked by config/celery.py)."""
    multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]  # untyped in prometheus_client


if MULTIPROCESS:
    atexit.register(_mark_dead)

HTTP_REQUESTS = Counter(
    "widerpoker_http_requests",
    "HTTP requests answered, by route pattern, method and status code.",
    ["route", "method", "status"],
)
HTTP_DURATION = Histogram(
    "widerpoker_http_request_duration_seconds",
    "Time to answer an HTTP request, by route pattern.",
    ["route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
SOCKETS_OPEN = Gauge(
    "widerpoker_websockets_open",
    "Game sockets open in each ASGI process (label pid in multiprocess mode).",
    multiprocess_mode="liveall",
)
HANDS = Counter(
    "widerpoker_hands",
    "Hands dealt, settled and cancelled (counted when their transaction commits), by game.",
    ["game", "event"],
)
PLAYER_ACTIONS = Counter(
    "widerpoker_player_actions",
    "Players' actions (purchases: action draw or redeal) confirmed or refused, with the refusal's code.",
    ["game", "action", "outcome", "reason"],
)
DEAL_DURATION = Histogram(
    "widerpoker_deal_duration_seconds",
    "Time to deal a hand (the clock's step that deals it, inside its transaction), by game.",
    ["game"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0),
)
SETTLEMENT_DURATION = Histogram(
    "widerpoker_settlement_duration_seconds",
    "Time to settle a hand (inside its transaction), by game.",
    ["game"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0),
)
CLOCK_TICK_DURATION = Histogram(
    "widerpoker_clock_tick_duration_seconds",
    "Time one clock tick takes (reap, advance every due table, capture purchases, pools).",
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0),
)
BOOKS_CHECKS = Counter(
    "widerpoker_books_checks",
    "Books checks run (wallet.selectors.check_books), by result (intact or failed).",
    ["result"],
)
DB_POOL_SIZE = Gauge(
    "widerpoker_db_pool_connections",
    "Connections in this process's database pool, by state (open, idle, waiting requests).",
    ["state"],
    multiprocess_mode="liveall",
)
DB_POOL_WAIT = Counter(
    "widerpoker_db_pool_wait_seconds",
    "Time requests spent waiting for a pooled database connection.",
)
DB_POOL_WAITS = Counter(
    "widerpoker_db_pool_requests_queued",
    "Requests for a database connection that had to wait for one.",
)
DB_POOL_TIMEOUTS = Counter(
    "widerpoker_db_pool_timeouts",
    "Requests for a database connection that gave up (answered 503 busy).",
)


def count_on_commit(counter: Counter, *labels: str) -> None:
    """Increment ``counter`` (with ``labels``) once the current transaction commits, so a
    rolled-back hand is never counted; at once outside a transaction."""
    transaction.on_commit(lambda: counter.labels(*labels).inc())


@contextmanager
def timed(histogram: Histogram, *labels: str) -> Iterator[None]:
    """Observe the wall time of the block in ``histogram`` (seconds), after commit when the
    block runs in a transaction and did not raise."""
    started = time.perf_counter()
    yield
    elapsed = time.perf_counter() - started
    target = histogram.labels(*labels) if labels else histogram
    observe: Callable[[], None] = lambda: target.observe(elapsed)  # noqa: E731
    transaction.on_commit(observe)
