"""Purchases in batches: the group-committing purchase writer (docs/platform.md, "Purchase
writer"; issue 23, item 1).

A draw or redeal bought on a player's socket or over REST is checked against what this
process already knows (``precheck``) and queued in memory (``PurchaseWriter.submit``); one
writer thread per process commits the queued purchases of a table together, every
``PURCHASE_BATCH_MS`` milliseconds or every ``PURCHASE_BATCH_SIZE`` purchases: one
transaction, a handful of set-based statements whatever the number of purchases
(``commit_batch``), then each buyer is confirmed with his new private state, built from the
rows the batch locked and wrote (no second read). Exactness is that of ``play.buy_draw`` and
``play.buy_redeal``, one purchase at a time:

- the hand is locked ``FOR KEY SHARE`` (settlement waits for the batch, or the batch sees the
  hand settled and refuses with ``phase_closed``); the buyers' entries ``FOR UPDATE`` in id
  order, so limits are read under lock;
- funds are held with ``balance - held >= price`` in one ``UPDATE ... FROM unnest``: a
  player who cannot pay is refused (``insufficient_funds``) while the others commit;
- a player with a protection row (suspension, break, loss or session limit) has his wallet
  locked and ``protection.barred_players`` asked with the stake before his hold, exactly as
  ``play._check_protection``: held cents count as lost;
- a purchase sent with a ``ref`` (the frame's ``ref``, REST's ``Idempotency-Key``) is
  recorded in ``PurchaseRef`` in the same transaction; the same ``ref`` again is answered
  as a duplicate and charged nothing;
- a purchase is confirmed only after its batch committed; a batch that fails rolls back
  whole and each of its purchases is refused (``purchase_not_committed``: nothing charged).

A batch holds at most one purchase per player and table; a player's second purchase in the
queue goes to the next transaction of the same call. Free items (power-ups) are rare and
keep the one-at-a-time path (``play.buy_draw(free=True)``).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import deque
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from django.conf import settings
from django.db import DatabaseError, OperationalError, close_old_connections, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from config.infra import metrics
from config.infra.errors import DomainError
from tables.engine import fairness
from tables.engine.widerpoker import COMBINATION_COUNT
from tables.errors import (
    LimitReachedError,
    NotInHandError,
    PhaseClosedError,
    RedealClosedError,
    RedealPendingError,
    TableNotFoundError,
)
from tables.models import (
    Entry,
    GamingSession,
    Hand,
    HandStatus,
    PowerUpRules,
    PurchaseRef,
    Redeal,
    RedealCounter,
    Seat,
    Table,
    TablePhase,
)
from tables.services import beacon
from tables.widerpoker.records import escrow_key
from tables.widerpoker.services import powerups
from wallet import protection
from wallet.errors import InsufficientFundsError
from wallet.models import (
    Account,
    AccountKind,
    Exclusion,
    FundsHold,
    LimitKind,
    PlayerLimit,
    Suspension,
    TransferKind,
)
from wallet.money import format_minor

logger = logging.getLogger(__name__)

DRAW: Final = "draw"
REDEAL: Final = "redeal"
ACTIONS: Final = {"buy_draw": DRAW, "redeal": REDEAL}
"""The purchase actions (tables/commands.py names) and the kind each buys."""

MAX_REF_LENGTH: Final = 64
DEADLOCK_RETRIES: Final = 3
IDLE_SECONDS: Final = 1.0
"""A writer idle this long gives its database connection back to the pool."""


class PurchaseNotCommittedError(DomainError):
    """The purchase's batch could not be committed (the database refused it, or the writer
    did not answer in time): nothing was charged; the client may send it again with the same
    ``ref``."""

    code = "purchase_not_committed"
    summary = _("The purchase was not made and nothing was charged: try again.")
    http_status = 503


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
    when not cached, is computed in the caller's thread, never in the writer's).
    ``duplicate``: its ``ref`` was committed before; nothing was charged now and ``frame``
    is None (the caller reads the state)."""

    error: DomainError | None = None
    duplicate: bool = False
    state: dict[str, Any] | None = None  # build_entry_state's arguments
    built: dict[str, Any] | None = None

    @property
    def frame(self) -> dict[str, Any] | None:
        if self.built is None and self.state is not None:
            from tables.selectors import build_entry_state

            self.built = dict(build_entry_state(**self.state))
        return self.built


@dataclass(slots=True)
class _HandFacts:
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


_FACTS: dict[int, _HandFacts] = {}  # table id -> its current hand's facts (last batch seen)
_FACTS_LOCK = threading.Lock()

_HAND_COLUMNS = (
    "id",
    "table_id",
    "number",
    "status",
    "board",
    "config",
    "change_deadline",
    "redeal_deadline",
    "entry_count",
    "server_seed",
    "algorithm",
    "change_keys",
    "cancel_reason",
)


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


def commit_batch(orders: Sequence[Order]) -> list[Outcome]:
    """Commit ``orders`` (PostgreSQL) and return one Outcome per order, in order.

    The orders are grouped by table; each group is one transaction (retried on a deadlock,
    which two writers buying for one player at two tables can cause). A player with several
    orders of one table has them committed in turn, one per transaction. A group whose
    transaction fails for any other reason gives each of its orders a
    PurchaseNotCommittedError (rolled back: nothing charged)."""
    outcomes: list[Outcome | None] = [None] * len(orders)
    pending = list(range(len(orders)))
    while pending:
        groups: dict[int, list[int]] = {}
        seen: set[tuple[int, int]] = set()
        later: list[int] = []
        for index in pending:
            order = orders[index]
            key = (order.table_id, order.user_id)
            if key in seen:
                later.append(index)
                continue
            seen.add(key)
            groups.setdefault(order.table_id, []).append(index)
        for table_id, indexes in groups.items():
            results = _commit_with_retries(table_id, [orders[i] for i in indexes])
            for index, outcome in zip(indexes, results, strict=True):
                outcomes[index] = outcome
        pending = later
    done = [outcome or Outcome(error=PurchaseNotCommittedError("not committed")) for outcome in outcomes]
    for order, outcome in zip(orders, done, strict=True):
        action = "buy_draw" if order.kind == DRAW else "redeal"
        if outcome.error is None:
            metrics.PLAYER_ACTIONS.labels("widerpoker", action, "confirmed", "").inc()
        else:
            metrics.PLAYER_ACTIONS.labels("widerpoker", action, "refused", outcome.error.code).inc()
    return done


def _commit_with_retries(table_id: int, orders: list[Order]) -> list[Outcome]:
    for attempt in range(DEADLOCK_RETRIES + 1):
        try:
            return _commit_table(table_id, orders)
        except OperationalError as error:
            cause = getattr(error, "__cause__", None)
            sqlstate = getattr(cause, "sqlstate", None)
            if sqlstate in ("40P01", "40001") and attempt < DEADLOCK_RETRIES:
                continue
            logger.exception("a purchase batch of table %s failed", table_id)
            return [Outcome(error=_not_committed()) for _ in orders]
        except DatabaseError:
            logger.exception("a purchase batch of table %s failed", table_id)
            return [Outcome(error=_not_committed()) for _ in orders]
    return [Outcome(error=_not_committed()) for _ in orders]  # pragma: no cover - loop returns


def _not_committed() -> PurchaseNotCommittedError:
    return PurchaseNotCommittedError("the purchase was not committed; nothing was charged: send it again")


@dataclass(slots=True)
class _Buy:
    """One order accepted so far in its batch: the buyer's locked entry (updated in place),
    the price and the hold's reference."""

    index: int
    order: Order
    entry: Entry
    price: int
    reference: str = ""
    redeal_number: int = -1
    pending: dict[str, Any] | None = None  # algorithm 3: the redeal waiting for its beacon round


@transaction.atomic(durable=True)
def _commit_table(table_id: int, orders: list[Order]) -> list[Outcome]:
    """One transaction: the purchases of one table, at most one per player."""
    outcomes: list[Outcome] = [Outcome() for _ in orders]
    stamp = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT h.id, h.server_seed, h.status, t.phase, t.version, h.change_deadline, h.redeal_deadline "
            f"FROM {Table._meta.db_table} t JOIN {Hand._meta.db_table} h ON h.id = t.current_hand_id "
            "WHERE t.id = %s FOR KEY SHARE OF h",
            [table_id],
        )
        row = cursor.fetchone()
    if row is None or row[3] != TablePhase.CHANGE or row[2] != HandStatus.CHANGE:
        if row is None and not Table.objects.filter(pk=table_id).exists():
            error: DomainError = TableNotFoundError(f"no table {table_id}", table_id=table_id)
        else:
            error = PhaseClosedError("choices are accepted during the change phase only", table_id=table_id)
        return [Outcome(error=error) for _ in orders]
    hand_id, seed, version = int(row[0]), str(row[1]), int(row[4])
    facts = _facts_of(table_id, hand_id, seed)
    facts.change_deadline, facts.redeal_deadline = row[5], row[6]  # staff may move them; the row is the truth
    hand, config = facts.hand, facts.hand.config
    user_ids = [order.user_id for order in orders]
    entries, seats, guarded = _lock_entries(hand, table_id, user_ids, stamp)
    known = _known_refs(hand_id, [(order.user_id, order.ref) for order in orders if order.ref is not None])

    buys: list[_Buy] = []
    redeal_slots = _redeal_slots(hand, sum(1 for order in orders if order.kind == REDEAL))
    waiting = _pending_redeals(hand, [order.user_id for order in orders if order.kind == REDEAL])
    for index, order in enumerate(orders):
        entry = entries.get(order.user_id)
        if entry is None:
            outcomes[index].error = NotInHandError("you are not playing this hand", hand_id=hand_id)
        elif order.ref is not None and (order.user_id, order.ref) in known:
            outcomes[index].duplicate = True
        elif order.now >= facts.change_deadline:
            outcomes[index].error = PhaseClosedError("the change phase of this hand is over", hand_id=hand_id)
        elif order.kind == DRAW:
            if entry.draws_bought >= config["max_draws"]:
                outcomes[index].error = LimitReachedError(
                    f"at most {config['max_draws']} draws in this hand", max_draws=config["max_draws"]
                )
            else:
                number = entry.draws_bought + 1
                buys.append(
                    _Buy(
                        index,
                        order,
                        entry,
                        int(config["draw_price_minor"]),
                        reference=f"draw:{hand_id}:{order.user_id}:{number}",
                    )
                )
        elif order.now >= facts.redeal_deadline:
            outcomes[index].error = RedealClosedError("the redeal time of this hand is over", hand_id=hand_id)
        elif len(entry.redeals) >= config["max_redeals"]:
            outcomes[index].error = LimitReachedError(
                f"at most {config['max_redeals']} redeals in this hand", max_redeals=config["max_redeals"]
            )
        elif order.user_id in waiting:
            outcomes[index].error = RedealPendingError("your last redeal has not arrived yet", hand_id=hand_id)
        elif redeal_slots <= 0:
            outcomes[index].error = LimitReachedError("every combination of this hand is taken", hand_id=hand_id)
        else:
            redeal_slots -= 1
            buys.append(
                _Buy(
                    index,
                    order,
                    entry,
                    int(config["redeal_price_minor"]),
                    reference=f"redeal:{hand_id}:{order.user_id}:{len(entry.redeals) + 1}",
                )
            )

    buys = _check_protection(buys, outcomes, guarded, hand, stamp)
    balances = _hold_funds(buys, outcomes, hand, facts.escrow_id, stamp)
    buys = [buy for buy in buys if outcomes[buy.index].error is None]
    draws = [buy for buy in buys if buy.order.kind == DRAW]
    redeals = [buy for buy in buys if buy.order.kind == REDEAL]
    for buy in buys:
        buy.entry.paid_minor += buy.price
    _write_draws(hand, table_id, draws)
    if redeals:
        apply_redeals(hand, redeals, stamp)
    _record_refs(hand_id, [buy.order for buy in buys if buy.order.ref is not None], stamp)
    if buys and settings.PURCHASE_CAPTURE == "inline":
        from tables.widerpoker.services.settlement import capture_purchases

        capture_purchases(hand=hand, escrow_id=facts.escrow_id or 0)
    _frames(table_id, version, facts, buys, outcomes, seats, balances)
    transaction.on_commit(lambda: _remember(table_id, facts, buys))
    return outcomes


def _facts_of(table_id: int, hand_id: int, seed: str) -> _HandFacts:
    with _FACTS_LOCK:
        facts = _FACTS.get(table_id)
    if facts is not None and facts.hand.pk == hand_id and facts.seed == seed:
        return facts
    hand = Hand.objects.only(*_HAND_COLUMNS).get(pk=hand_id)
    escrow = Account.objects.filter(key=escrow_key(hand_id)).values_list("pk", flat=True).first()
    facts = _HandFacts(
        hand=hand,
        seed=seed,
        escrow_id=escrow,
        change_deadline=hand.change_deadline,
        redeal_deadline=hand.redeal_deadline,
        max_draws=int(hand.config["max_draws"]),
        max_redeals=int(hand.config["max_redeals"]),
        rules=powerups.rules(),  # power-up rules apply from the next hand: read once per hand
    )
    with _FACTS_LOCK:
        _FACTS[table_id] = facts
    return facts


def _remember(table_id: int, facts: _HandFacts, buys: list[_Buy]) -> None:
    """After commit: the buyers' counts, for ``precheck``."""
    with _FACTS_LOCK:
        for buy in buys:
            facts.counts[buy.order.user_id] = (buy.entry.draws_bought, len(buy.entry.redeals))


_ENTRY_COLUMNS = (
    "id",
    "hand_id",
    "user_id",
    "combination",
    "initial_combination",
    "redeals",
    "hold_mask",
    "draws_bought",
    "paid_minor",
    "promo_minor",
    "hold_used",
    "draw_strengths",
    "connected_at_end",
    "best_draw",
    "category",
    "place",
    "prize_minor",
)


def _lock_entries(
    hand: Hand, table_id: int, user_ids: list[int], now: datetime
) -> tuple[dict[int, Entry], dict[int, dict[str, Any]], set[int]]:
    """One statement: the buyers' entries locked in id order, their seats marked seen (and
    read for the frame), and which buyers have a row player protection could refuse them on.
    Returns (entries by user, seats by user, guarded user ids)."""
    # In the model's field order: ``Model.from_db`` places the values of a partial row by
    # the model's concrete fields, not by the names it is given (a row read in another order
    # gave the entry its initial combination as its combination after a redeal).
    wanted = set(_ENTRY_COLUMNS)
    columns = [field for field in Entry._meta.concrete_fields if field.attname in wanted]
    names = [field.attname for field in columns]
    select = ", ".join(f"e.{field.column}" for field in columns)
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH seen AS (UPDATE {Seat._meta.db_table} SET last_seen_at = %(now)s "
            "WHERE table_id = %(table)s AND user_id = ANY(%(users)s) RETURNING user_id, status, status_reason) "
            f"SELECT {select}, s.status, s.status_reason, "
            f"(EXISTS (SELECT FROM {Suspension._meta.db_table} x WHERE x.user_id = e.user_id AND x.lifted_at IS NULL) "
            f"OR EXISTS (SELECT FROM {Exclusion._meta.db_table} x WHERE x.user_id = e.user_id "
            "AND x.starts_at <= %(now)s AND x.ends_at > %(now)s) "
            f"OR EXISTS (SELECT FROM {PlayerLimit._meta.db_table} x WHERE x.user_id = e.user_id "
            "AND x.kind IN (%(loss)s, %(session)s))) AS guarded "
            f"FROM {Entry._meta.db_table} e LEFT JOIN seen s ON s.user_id = e.user_id "
            "WHERE e.hand_id = %(hand)s AND e.user_id = ANY(%(users)s) ORDER BY e.id FOR UPDATE OF e",
            {
                "now": now,
                "table": table_id,
                "users": list(user_ids),
                "hand": hand.pk,
                "loss": LimitKind.LOSS.value,
                "session": LimitKind.SESSION.value,
            },
        )
        rows = cursor.fetchall()
    entries: dict[int, Entry] = {}
    seats: dict[int, dict[str, Any]] = {}
    guarded: set[int] = set()
    count = len(columns)
    converters = [
        (position, field.from_db_value) for position, field in enumerate(columns) if hasattr(field, "from_db_value")
    ]
    for row in rows:
        values = list(row[:count])
        for position, convert in converters:
            values[position] = convert(values[position], None, connection)
        entry = Entry.from_db(connection.alias, names, values)
        entries[entry.user_id] = entry
        if row[count] is not None:
            seats[entry.user_id] = {"status": row[count], "reason": row[count + 1]}
        if row[count + 2]:
            guarded.add(entry.user_id)
    return entries, seats, guarded


def _known_refs(hand_id: int, refs: list[tuple[int, str]]) -> set[tuple[int, str]]:
    """The (user, ref) pairs among ``refs`` already committed in the hand (read under the
    entries' locks: a concurrent batch of the same player committed before this read)."""
    if not refs:
        return set()
    rows = PurchaseRef.objects.filter(
        hand_id=hand_id, user_id__in={user for user, _ in refs}, ref__in={ref for _, ref in refs}
    ).values_list("user_id", "ref")
    wanted = set(refs)
    return {(int(user), str(ref)) for user, ref in rows if (user, ref) in wanted}


def _record_refs(hand_id: int, orders: list[Order], now: datetime) -> None:
    if not orders:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {PurchaseRef._meta.db_table} (hand_id, user_id, ref, kind, created_at) "
            "SELECT %s, u, r, k, %s FROM unnest(%s::bigint[], %s::text[], %s::text[]) AS v(u, r, k)",
            [
                hand_id,
                now,
                [order.user_id for order in orders],
                [order.ref for order in orders],
                [order.kind for order in orders],
            ],
        )


def _redeal_slots(hand: Hand, wanted: int) -> int:
    """How many of ``wanted`` redeals the hand can still give a combination to (the hand's
    redeal counter, locked by this read when it exists: redeals are ordered per hand)."""
    if not wanted:
        return 0
    row = RedealCounter.objects.select_for_update().filter(hand_id=hand.pk).values_list("count", flat=True).first()
    return max(0, COMBINATION_COUNT - hand.entry_count - int(row or 0))


def _check_protection(
    buys: list[_Buy], outcomes: list[Outcome], guarded: set[int], hand: Hand, now: datetime
) -> list[_Buy]:
    """Player protection for the buyers who have a protection row (``guarded``), as
    ``play._check_protection`` does for one: their wallets locked (id order), then
    ``protection.barred_players`` with the price as the stake (losses count purchases still
    on hold). Refused buys get their error; returns the others."""
    asked = [buy for buy in buys if buy.order.user_id in guarded]
    if not asked:
        return buys
    paying = sorted({buy.order.user_id for buy in asked if buy.price > 0})
    if paying:
        list(
            Account.objects.select_for_update()
            .filter(kind=AccountKind.PLAYER, currency=hand.currency, user_id__in=paying)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
    refused: dict[int, DomainError] = {}
    for price in sorted({buy.price for buy in asked}):
        users = [buy.order.user_id for buy in asked if buy.price == price]
        refused.update(protection.barred_players(user_ids=users, currency=hand.currency, stake_minor=price, now=now))
    kept = []
    for buy in buys:
        error = refused.get(buy.order.user_id)
        if error is not None:
            outcomes[buy.index].error = error
        else:
            kept.append(buy)
    return kept


def _hold_funds(
    buys: list[_Buy], outcomes: list[Outcome], hand: Hand, escrow_id: int | None, now: datetime
) -> dict[int, int]:
    """Hold the price of every paid buy in one ``UPDATE ... FROM unnest`` with the balance
    check (``balance - held >= price``; wallets locked in id order) and record the holds in
    one ``INSERT`` (wallet.services.hold_funds, set-based). A buyer who cannot pay gets
    InsufficientFundsError. Returns every buyer's spendable balance after his hold."""
    paid = [buy for buy in buys if buy.price > 0]
    balances: dict[int, int] = {}
    accounts, holds = Account._meta.db_table, FundsHold._meta.db_table
    held: dict[int, int] = {}
    if paid:
        with connection.cursor() as cursor:
            # Each wallet found by its own index probe (LATERAL) and locked by primary key in
            # id order: plans that stay index lookups even before the statistics know the
            # 100,000 rows a first deal wrote (a join on ``user_id = ANY`` scanned them all).
            cursor.execute(
                "WITH v AS (SELECT * FROM unnest(%(users)s::bigint[], %(amounts)s::bigint[]) AS v(user_id, amount)), "
                "found AS MATERIALIZED (SELECT w.id, v.amount FROM v CROSS JOIN LATERAL "
                f"(SELECT id FROM {accounts} WHERE user_id = v.user_id AND kind = %(kind)s "
                "AND currency = %(currency)s) w), "
                f"locked AS MATERIALIZED (SELECT id FROM {accounts} WHERE id = ANY(ARRAY(SELECT id FROM found)) "
                "ORDER BY id FOR UPDATE) "
                f"UPDATE {accounts} a SET held_minor = a.held_minor + f.amount FROM found f "
                "WHERE a.id = ANY(ARRAY(SELECT id FROM locked)) AND a.id = f.id "
                "AND a.balance_minor - a.held_minor >= f.amount "
                "RETURNING a.user_id, a.id, a.balance_minor - a.held_minor",
                {
                    "users": [buy.order.user_id for buy in paid],
                    "amounts": [buy.price for buy in paid],
                    "kind": AccountKind.PLAYER.value,
                    "currency": hand.currency,
                },
            )
            for user_id, account_id, available in cursor.fetchall():
                held[int(user_id)] = int(account_id)
                balances[int(user_id)] = int(available)
        short = [buy for buy in paid if buy.order.user_id not in held]
        if short:
            _refuse_short(short, outcomes, hand.currency)
        taken = [buy for buy in paid if buy.order.user_id in held]
        if taken:
            if escrow_id is None:
                from tables.widerpoker.services.settlement import hand_escrow

                escrow_id = hand_escrow(hand_id=hand.pk, currency=hand.currency).pk
            with connection.cursor() as cursor:
                cursor.execute(
                    f"INSERT INTO {holds} (reference, kind, account_id, destination_id, amount_minor, created_at) "
                    "SELECT r, k, a, %s, m, %s FROM unnest(%s::text[], %s::text[], %s::bigint[], %s::bigint[]) "
                    "AS v(r, k, a, m)",
                    [
                        escrow_id,
                        now,
                        [buy.reference for buy in taken],
                        [TransferKind.DRAW if buy.order.kind == DRAW else TransferKind.REDEAL for buy in taken],
                        [held[buy.order.user_id] for buy in taken],
                        [buy.price for buy in taken],
                    ],
                )
    free = [buy.order.user_id for buy in buys if buy.price <= 0]
    if free:
        balances.update(
            Account.objects.filter(kind=AccountKind.PLAYER, currency=hand.currency, user_id__in=free).values_list(
                "user_id", "balance_minor"
            )
        )
    return balances


def _refuse_short(short: list[_Buy], outcomes: list[Outcome], currency: str) -> None:
    """InsufficientFundsError for each buyer whose hold the balance check refused, with what
    he may spend (as ``wallet.services.hold_funds`` says it)."""
    rows = Account.objects.filter(
        kind=AccountKind.PLAYER, currency=currency, user_id__in=[buy.order.user_id for buy in short]
    ).values_list("user_id", "balance_minor", "held_minor", "key")
    available = {user: (balance - held, key) for user, balance, held, key in rows}
    for buy in short:
        balance, key = available.get(buy.order.user_id, (0, f"player:{buy.order.user_id}:{currency}"))
        outcomes[buy.index].error = InsufficientFundsError(
            f"{key} holds {format_minor(balance, currency)}, needs {format_minor(buy.price, currency)}",
            key=key,
            balance_minor=balance,
            shortfall_minor=buy.price - balance,
        )


def _write_draws(hand: Hand, table_id: int, draws: list[_Buy]) -> None:
    """The draw buyers' entries (draws bought, paid) and their open sessions' counts of
    draws bought (``play._save_entry``), two statements for the batch."""
    if not draws:
        return
    for buy in draws:
        buy.entry.draws_bought += 1
    sessions = GamingSession._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH v AS (SELECT * FROM unnest(%(ids)s::bigint[], %(draws)s::integer[], %(paid)s::bigint[]) "
            "AS v(id, draws, paid)), "
            f"entries AS (UPDATE {Entry._meta.db_table} e SET draws_bought = v.draws, paid_minor = v.paid FROM v "
            "WHERE e.hand_id = %(hand)s AND e.id = v.id) "
            f"UPDATE {sessions} SET draws_bought = draws_bought + 1 WHERE id = ANY(ARRAY("
            f"SELECT s.id FROM unnest(%(users)s::bigint[]) AS u(user_id) CROSS JOIN LATERAL (SELECT id FROM {sessions} "
            "WHERE table_id = %(table)s AND user_id = u.user_id AND ended_at IS NULL) s))",
            {
                "ids": [buy.entry.pk for buy in draws],
                "draws": [buy.entry.draws_bought for buy in draws],
                "paid": [buy.entry.paid_minor for buy in draws],
                "hand": hand.pk,
                "table": table_id,
                "users": [buy.order.user_id for buy in draws],
            },
        )


def _pending_redeals(hand: Hand, user_ids: list[int]) -> set[int]:
    """Which of ``user_ids`` have a redeal waiting for its beacon round in ``hand`` (algorithm
    3; docs/provably-fair.md 1.9): their next redeal is refused with ``redeal_pending``."""
    if not user_ids or hand.algorithm < fairness.ALGORITHM_DEAL_BEACON:
        return set()
    return set(
        Redeal.objects.filter(hand_id=hand.pk, user_id__in=user_ids, combination__isnull=True).values_list(
            "user_id", flat=True
        )
    )


def apply_redeals(hand: Hand, redeals: Iterable[_Buy], now: datetime) -> None:
    """Give each paid redeal of the batch its number and new combination (rules C.2;
    docs/provably-fair.md, ``redeal:<n>``), in the order of the batch: the hand's redeal
    counter, then ``play._redeal_at_once`` (the ``Redeal`` row, the entry's combination,
    redeals and reset hold, the session's count). Kept apart from paying
    (``_hold_funds``): what a redeal costs and which combination it brings are separate
    steps, so the combination's source can change without touching the payment."""
    from tables.widerpoker.services.play import _defer_redeal, _next_redeal_number, _redeal_at_once

    if hand.algorithm >= fairness.ALGORITHM_DEAL_BEACON:
        # Algorithm 3: paid and numbered now; the combination waits for the first beacon
        # round after the purchase (play.resolve_pending_redeals, at the clock's tick).
        for buy in redeals:
            number = _next_redeal_number(hand)
            _defer_redeal(hand, buy.entry, number=number, now=now, free=False)
            buy.redeal_number = number
            round_number = beacon.round_after(now)
            buy.pending = {
                "number": number,
                "round": round_number,
                "round_at": beacon.time_of(round_number).isoformat(),
            }
        return
    for buy in redeals:
        number = _next_redeal_number(hand)
        entry = buy.entry
        entry.combination = _redeal_at_once(hand, entry, number=number, now=now)
        entry.redeals = [*entry.redeals, [number, entry.combination]]
        entry.hold_mask = None
        buy.redeal_number = number


def _frames(
    table_id: int,
    version: int,
    facts: _HandFacts,
    buys: list[_Buy],
    outcomes: list[Outcome],
    seats: dict[int, dict[str, Any]],
    balances: dict[int, int],
) -> None:
    """What each confirmed buyer's ``entry_state`` frame is built from (``Outcome.frame``):
    the rows the batch holds, and one read of the open power-up sessions for the levels the
    purchases raised."""
    if not buys:
        return
    hand = facts.hand

    sessions = powerups.session_states(
        table_id=table_id, user_ids={buy.order.user_id for buy in buys}, config=facts.rules
    )
    for buy in buys:
        user_id = buy.order.user_id
        outcomes[buy.index].state = {
            "table_id": table_id,
            "version": version,
            "currency": hand.currency,
            "hand": hand,
            "entry": buy.entry,
            "seat": seats.get(user_id),
            "balance_minor": balances.get(user_id, 0),
            "powerups": sessions.get(user_id),
            "redeal_pending": buy.pending,
        }


# --- the writer ------------------------------------------------------------------------------


class PurchaseWriter:
    """The process's purchase queue and its writer thread. ``submit`` queues an order and
    returns a Future of its Outcome (the socket consumer awaits it with
    ``asyncio.wrap_future``, a REST view waits on it in its own worker thread); the thread
    takes what is queued, waits up to ``batch_ms`` for more (up to ``batch_size``), commits
    it with ``commit_batch`` and resolves the futures after the commit.

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
                outcomes = [Outcome(error=_not_committed()) for _order in batch]
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
