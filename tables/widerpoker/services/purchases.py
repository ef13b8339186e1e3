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

import hashlib
import logging
import threading
import time
from collections import OrderedDict, deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from django.conf import settings
from django.db import close_old_connections, connection
from django.utils.translation import gettext_lazy as _

from config.infra.errors import DomainError
from tables.errors import LimitReachedError, RedealClosedError
from tables.models import Hand, PowerUpRules
from tables.realtime.frames import dumps

logger = logging.getLogger(__name__)

DRAW: Final = "draw"
REDEAL: Final = "redeal"
ACTIONS: Final = {"buy_draw": DRAW, "redeal": REDEAL}
"""The purchase actions (tables/commands.py names) and the kind each buys."""

MAX_REF_LENGTH: Final = 64
IDLE_SECONDS: Final = 1.0
"""A writer idle this long gives its database connection back to the pool."""
PANEL_TEXTS: Final = 20_000
"""Probability panels kept serialised per process (one per buyer of a running hand, about
1 KiB each; as ``selectors.PANEL_CACHE_SIZE``)."""


class PurchaseNotCommittedError(DomainError):
    """The purchase's batch could not be committed (the database refused it, or the writer
    did not answer in time): nothing was charged; the client may send it again with the same
    ``ref``."""

    code = "purchase_not_committed"
    summary = _("The purchase was not made and nothing was charged: try again.")
    http_status = 503


def not_committed() -> PurchaseNotCommittedError:
    return PurchaseNotCommittedError("the purchase was not committed; nothing was charged: send it again")


@dataclass(slots=True)
class Order:
    """One purchase waiting for its batch: ``kind`` ``"draw"`` or ``"redeal"``, received at
    ``now`` (the deadlines are checked against it), ``ref`` the client's idempotency key
    (None: none sent)."""

    kind: str
    table_id: int
    user_id: int
    now: datetime
    ref: str | None = None
    received: float = field(default_factory=time.perf_counter)


@dataclass(slots=True)
class Outcome:
    """What a purchase came to. ``error``: refused (nothing charged), with its stable code.
    ``frame``: the buyer's new ``entry_state`` frame (tables/realtime/frames.py), built from
    the rows the batch wrote, on first access by the waiting caller (its probability panel,
    when not cached, is computed in the caller's thread, never in the writer's); ``text``:
    that frame serialised as ``frames.dumps`` does, its panel's text reused (``_render``).
    ``duplicate``: its ``ref`` was committed before; nothing was charged now and ``frame``
    is None (the caller reads the state)."""

    error: DomainError | None = None
    duplicate: bool = False
    state: dict[str, Any] | None = None  # build_entry_state's arguments
    built: dict[str, Any] | None = None
    rendered: str | None = None

    @property
    def frame(self) -> dict[str, Any] | None:
        if self.built is None and self.state is not None:
            from tables.widerpoker.selectors import build_entry_state

            self.built = dict(build_entry_state(**self.state))
        return self.built

    @property
    def text(self) -> str | None:
        if self.rendered is None:
            frame = self.frame
            if frame is not None:
                self.rendered = _render(frame)
        return self.rendered


_PANELS: OrderedDict[tuple[int, tuple[int, ...]], str] = OrderedDict()
_PANELS_LOCK = threading.Lock()
_PANEL_MARK = "\x00panel"  # a string no frame holds: dumps writes it "\u0000panel"
_PANEL_SLOT = dumps(_PANEL_MARK)


def _render(frame: dict[str, Any]) -> str:
    """``dumps(frame)`` of an ``entry_state`` frame, the same text, with its probability
    panel (most of the frame, the same for a player's every frame of the hand: a function of
    the board and his combination) serialised once per (hand, combination) and process."""
    entry = frame["entry"]
    panel = entry.get("panel")
    if not isinstance(panel, dict):
        return dumps(frame)
    key = (int(frame["hand_id"]), tuple(entry["combination"]))
    with _PANELS_LOCK:
        text = _PANELS.get(key)
        if text is not None:
            _PANELS.move_to_end(key)
    if text is None:
        text = dumps(panel)
        with _PANELS_LOCK:
            _PANELS[key] = text
            while len(_PANELS) > PANEL_TEXTS:
                _PANELS.popitem(last=False)
    return dumps({**frame, "entry": {**entry, "panel": _PANEL_MARK}}).replace(_PANEL_SLOT, text, 1)


@dataclass(slots=True)
class HandFacts:
    """What does not change during a hand's change phase, read once per hand and process:
    the hand (the columns a private frame and a redeal need), its escrow's id, the power-up
    rules (a change applies from the next hand), and lower bounds of each buyer's draws and
    redeals (counts only grow in a hand), for ``precheck``. The deadlines are refreshed from
    the hand's row at every batch."""

    hand: Hand
    seed: str
    escrow_id: int | None
    change_deadline: datetime
    redeal_deadline: datetime
    max_draws: int
    max_redeals: int
    rules: PowerUpRules
    counts: dict[int, tuple[int, int]] = field(default_factory=dict)


_FACTS: dict[int, HandFacts] = {}  # table id -> its current hand's facts (last batch seen)
_FACTS_LOCK = threading.Lock()


def precheck(order: Order) -> None:
    """Refuse at once, without the database, what this process knows would be refused: a
    redeal after the redeal time, a draw or redeal past the table's maximum (the counts this
    process committed for the player in the running hand, lower bounds of the true ones).
    Used only while the known hand's change phase runs; otherwise the batch decides."""
    with _FACTS_LOCK:
        facts = _FACTS.get(order.table_id)
        if facts is None or order.now >= facts.change_deadline:
            return
        draws, redeals = facts.counts.get(order.user_id, (0, 0))
    if order.kind == REDEAL and order.now >= facts.redeal_deadline:
        raise RedealClosedError("the redeal time of this hand is over", hand_id=facts.hand.pk)
    if order.kind == DRAW and draws >= facts.max_draws:
        raise LimitReachedError(f"at most {facts.max_draws} draws in this hand", max_draws=facts.max_draws)
    if order.kind == REDEAL and redeals >= facts.max_redeals:
        raise LimitReachedError(f"at most {facts.max_redeals} redeals in this hand", max_redeals=facts.max_redeals)


# --- the writer ------------------------------------------------------------------------------


class PurchaseWriter:
    """The process's purchase queue and its writer thread. ``submit`` queues an order and
    returns a Future of its Outcome (the socket consumer awaits it with
    ``asyncio.wrap_future``, a REST view waits on it in its own worker thread); the thread
    takes what is queued, waits up to ``batch_ms`` for more (up to ``batch_size``), commits
    it with ``purchase_batch.commit_batch`` and resolves the futures after the commit.

    A process that dies with orders queued leaves them uncommitted: nothing charged, no
    confirmation sent (docs/platform.md, "Purchase writer")."""

    def __init__(self, *, batch_ms: float, batch_size: int) -> None:
        self.batch_seconds = batch_ms / 1000
        self.batch_size = batch_size
        self._queue: deque[tuple[Order, Future[Outcome]]] = deque()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self.batches = 0
        self.committed = 0
        self.busy_seconds = 0.0  # committing, over all batches
        self.queued_seconds = 0.0  # waiting in the queue, over all orders

    def submit(self, order: Order) -> Future[Outcome]:
        """Queue ``order``; the Future resolves after its batch commits (or is refused)."""
        future: Future[Outcome] = Future()
        with self._wake:
            self._queue.append((order, future))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="purchase-writer", daemon=True)
                self._thread.start()
            self._wake.notify()
        return future

    def _take(self) -> list[tuple[Order, Future[Outcome]]]:
        with self._wake:
            if not self._queue and not self._wake.wait(IDLE_SECONDS):
                return []  # idle: the caller gives its connection back
            if not self._queue:
                return []
            first = time.monotonic()
            while len(self._queue) < self.batch_size:
                left = first + self.batch_seconds - time.monotonic()
                if left <= 0:
                    break
                self._wake.wait(left)
            count = min(len(self._queue), self.batch_size)
            taken = [self._queue.popleft() for _ in range(count)]
        # A future cancelled while queued (its socket closed and the consumer's wait was
        # cancelled) is dropped: nothing is charged, nobody is waiting for the answer.
        return [(order, future) for order, future in taken if future.set_running_or_notify_cancel()]

    def _run(self) -> None:
        from tables.widerpoker.services.purchase_batch import commit_batch

        while True:
            batch = self._take()
            if not batch:
                if connection.connection is not None and not self._queue:
                    connection.close()  # idle: back to the pool until the next purchase
                continue
            began = time.perf_counter()
            try:
                outcomes = commit_batch([order for order, _future in batch])
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
            for (_order, future), outcome in zip(batch, outcomes, strict=True):
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
