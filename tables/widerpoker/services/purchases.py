"""Purchases in batches: the purchase writer's queue and thread (docs/platform.md, "Purchase
writer"; issue 23, item 1).

A draw or redeal bought on a player's socket or over REST is checked against what this
process already knows (``precheck``) and queued in memory (``PurchaseWriter.submit``); one
writer thread per process commits the queued purchases of a table together, every
``PURCHASE_BATCH_MS`` milliseconds or every ``PURCHASE_BATCH_SIZE`` purchases: one
transaction of a fixed number of set-based statements whatever the number of purchases
(``purchase_batch.commit_batch``), then each buyer is confirmed with his new private state,
built from the rows the batch locked and wrote (no second read) and serialised by the
waiting caller (``Outcome.text``). Exactness is that of ``play.buy_draw`` and
``play.buy_redeal``, one purchase at a time (tables/widerpoker/services/purchase_batch.py).

A batch holds at most one purchase per player and table; a player's second purchase in the
queue goes to the next transaction of the same call. Free items (power-ups) are rare and
keep the one-at-a-time path (``play.buy_draw(free=True)``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import threading
import time
from collections import deque
from concurrent.futures import Future
from typing import Final

from django.conf import settings
from django.db import close_old_connections, connection

from tables.widerpoker.services.purchase_batch import commit_batch

# The orders and outcomes live in purchase_orders (the batch and its statements import them
# from there, not from this queue); named here too, as the writer's public vocabulary.
from tables.widerpoker.services.purchase_orders import (
    _FACTS,
    _FACTS_LOCK,
    ACTIONS,
    DRAW,
    REDEAL,
    HandFacts,
    Order,
    Outcome,
    PurchaseNotCommittedError,
    not_committed,
    precheck,
)

__all__ = [
    "ACTIONS",
    "DRAW",
    "IDLE_SECONDS",
    "MAX_REF_LENGTH",
    "REDEAL",
    "HandFacts",
    "Order",
    "Outcome",
    "PurchaseNotCommittedError",
    "PurchaseWriter",
    "clean_ref",
    "enabled",
    "get_writer",
    "is_widerpoker",
    "not_committed",
    "precheck",
    "wait",
]

logger = logging.getLogger(__name__)

MAX_REF_LENGTH: Final = 64
IDLE_SECONDS: Final = 1.0
"""A writer idle this long gives its database connection back to the pool."""


# --- the writer ------------------------------------------------------------------------------


class PurchaseWriter:
    """The process's purchase queue and its writer thread. ``submit`` queues an order and
    returns a Future of its Outcome (a REST view waits on it in its own worker thread);
    ``submit_async``, called on an event loop (the socket consumer, the REST fast path),
    an asyncio future resolved on that loop. The thread takes what is queued, waits until
    the oldest order has waited ``batch_ms`` (or ``batch_size`` are queued), commits it
    with ``purchase_batch.commit_batch`` and resolves the futures after the commit: the
    asyncio ones of one loop together, in one call handed to that loop.

    The thread is woken only by the order that finds the queue empty or fills a batch, not
    by each order (each wake-up took the GIL from the event loop). A process that dies with
    orders queued leaves them uncommitted: nothing charged, no confirmation sent
    (docs/platform.md, "Purchase writer")."""

    def __init__(self, *, batch_ms: float, batch_size: int) -> None:
        self.batch_seconds = batch_ms / 1000
        self.batch_size = batch_size
        self._queue: deque[tuple[Order, Waiter]] = deque()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self.batches = 0
        self.committed = 0
        self.busy_seconds = 0.0  # committing, over all batches
        self.queued_seconds = 0.0  # waiting in the queue, over all orders

    def submit(self, order: Order) -> Future[Outcome]:
        """Queue ``order``; the Future resolves after its batch commits (or is refused)."""
        future: Future[Outcome] = Future()
        self._put(order, future)
        return future

    def submit_async(self, order: Order) -> asyncio.Future[Outcome]:
        """Queue ``order`` from the running event loop; the asyncio future resolves on that
        loop after its batch commits (or is refused). Cancelled before its batch is taken
        (its socket closed), it is dropped: nothing is charged."""
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self._put(order, future)
        return future

    def _put(self, order: Order, waiter: Waiter) -> None:
        with self._wake:
            self._queue.append((order, waiter))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="purchase-writer", daemon=True)
                self._thread.start()
            if len(self._queue) == 1 or len(self._queue) == self.batch_size:
                self._wake.notify()

    def _take(self) -> list[tuple[Order, Waiter]]:
        with self._wake:
            if not self._queue and not self._wake.wait(IDLE_SECONDS):
                return []  # idle: the caller gives its connection back
            if not self._queue:
                return []
            # The window runs from the oldest order's arrival: orders that queued while the
            # last batch committed have waited already and go at once.
            due = time.monotonic() + self.batch_seconds - (time.perf_counter() - self._queue[0][0].received)
            while len(self._queue) < self.batch_size:
                left = due - time.monotonic()
                if left <= 0:
                    break
                self._wake.wait(left)
            count = min(len(self._queue), self.batch_size)
            taken = [self._queue.popleft() for _ in range(count)]
        # A future cancelled while queued (its socket closed and the consumer's wait was
        # cancelled) is dropped: nothing is charged, nobody is waiting for the answer.
        return [(order, waiter) for order, waiter in taken if _claim(waiter)]

    def _run(self) -> None:
        while True:
            batch = self._take()
            if not batch:
                if connection.connection is not None and not self._queue:
                    connection.close()  # idle: back to the pool until the next purchase
                continue
            began = time.perf_counter()
            try:
                outcomes = commit_batch([order for order, _waiter in batch])
            except Exception:  # a bug or a lost database: nothing committed, say so to each buyer
                logger.exception("purchase batch failed")
                outcomes = [Outcome(error=not_committed()) for _order in batch]
            if any(
                outcome.error is not None and outcome.error.code == PurchaseNotCommittedError.code
                for outcome in outcomes
            ):
                close_old_connections()  # the thread keeps its connection unless it failed
            self.batches += 1
            self.committed += sum(1 for outcome in outcomes if outcome.error is None)
            self.busy_seconds += time.perf_counter() - began
            self.queued_seconds += sum(began - order.received for order, _ in batch)
            if self.batches % 200 == 0:
                logger.info(
                    "purchase writer: %d batches, %d committed, %.1f per batch, %.1f ms per batch, %.1f ms queued",
                    self.batches,
                    self.committed,
                    self.committed / self.batches,
                    1000 * self.busy_seconds / self.batches,
                    1000 * self.queued_seconds / max(self.committed, 1),
                )
            _resolve(batch, outcomes)


Waiter = Future[Outcome] | asyncio.Future[Outcome]
"""What waits for an order's outcome: a thread's Future or an event loop's future."""


def _claim(waiter: Waiter) -> bool:
    """Whether the order of ``waiter`` is still wanted (then a thread's Future can no longer
    be cancelled; an event loop's future cancelled from now on simply drops the answer)."""
    if isinstance(waiter, Future):
        return waiter.set_running_or_notify_cancel()
    return not waiter.cancelled()


def _resolve(batch: list[tuple[Order, Waiter]], outcomes: list[Outcome]) -> None:
    """Hand each waiter its outcome: thread Futures at once, event loop futures in one
    callback per loop (one wake-up of each loop per batch, not one per purchase)."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Outcome], Outcome]]] = {}
    for (_order, waiter), outcome in zip(batch, outcomes, strict=True):
        if isinstance(waiter, Future):
            waiter.set_result(outcome)
        else:
            by_loop.setdefault(waiter.get_loop(), []).append((waiter, outcome))
    for loop, pairs in by_loop.items():
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting there any more
            loop.call_soon_threadsafe(_set_results, pairs)


def _set_results(pairs: list[tuple[asyncio.Future[Outcome], Outcome]]) -> None:
    for future, outcome in pairs:
        if not future.done():
            future.set_result(outcome)


_WRITER: PurchaseWriter | None = None
_WRITER_LOCK = threading.Lock()


def enabled() -> bool:
    """Whether purchases go through the writer: ``PURCHASE_WRITER`` is ``"batch"`` and the
    database is PostgreSQL (elsewhere, and with ``"inline"``, one transaction per purchase)."""
    engine = str(settings.DATABASES["default"]["ENGINE"])
    return settings.PURCHASE_WRITER == "batch" and engine.endswith("postgresql")


def get_writer() -> PurchaseWriter:
    """The process's writer (created on first use)."""
    global _WRITER
    with _WRITER_LOCK:
        if _WRITER is None:
            _WRITER = PurchaseWriter(batch_ms=settings.PURCHASE_BATCH_MS, batch_size=settings.PURCHASE_BATCH_SIZE)
        return _WRITER


def is_widerpoker(table_id: int) -> bool:
    """Whether this process's writer has committed purchases at ``table_id`` (then it is a
    WiderPoker table: a table's game never changes), so a request need not read its game."""
    with _FACTS_LOCK:
        return table_id in _FACTS


def wait(order: Order) -> Outcome:
    """Submit ``order`` and wait for its outcome in this (sync) thread: a REST request's
    worker. The thread's database connection goes back to the pool first (outside a
    transaction), so that requests waiting for the writer never hold the connections the
    writer needs."""
    if not connection.in_atomic_block:
        connection.close()
    return get_writer().submit(order).result()


def clean_ref(ref: object) -> str | None:
    """A client's ``ref`` as the writer keys it: a string or an integer (a frame's ``ref``,
    REST's ``Idempotency-Key``) as text, a longer one as its SHA-256 (64 hex digits); None
    for none."""
    if ref is None or isinstance(ref, bool):
        return None
    text = str(ref)
    if len(text) > MAX_REF_LENGTH:  # a longer key is kept whole, as its digest
        return hashlib.sha256(text.encode()).hexdigest()
    return text or None
