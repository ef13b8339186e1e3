"""The purchase writer's orders and their outcomes (docs/platform.md, "Purchase writer"): the
kinds, ``Order``, ``Outcome``, the per-process facts of each table's hand and ``precheck``.
Shared by the queue (tables/widerpoker/services/purchases.py), the batch (purchase_batch.py)
and its statements (purchase_statements.py), which import it; it imports none of them."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from django.utils.translation import gettext_lazy as _

from config.infra.errors import DomainError
from tables.errors import LimitReachedError, RedealClosedError
from tables.models import Hand, PowerUpRules

DRAW: Final = "draw"
REDEAL: Final = "redeal"
ACTIONS: Final = {"buy_draw": DRAW, "redeal": REDEAL}
"""The purchase actions (tables/commands.py names) and the kind each buys."""


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
    that frame serialised as ``frames.dumps`` does, its panel's text spliced in from the
    panel cache (``selectors.render_entry_state``), built apart from ``frame``.
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
        if self.rendered is None and self.state is not None:
            from tables.widerpoker.selectors import render_entry_state

            self.rendered = render_entry_state(**self.state)
        return self.rendered


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
