"""One batch of the purchase writer: the queued purchases of a table committed in one
transaction of a fixed number of set-based statements (docs/platform.md, "Purchase writer";
the queue and its thread are tables/widerpoker/services/purchases.py).

Exactness is that of ``play.buy_draw`` and ``play.buy_redeal``, one purchase at a time:

- the hand is locked ``FOR KEY SHARE`` (settlement waits for the batch, or the batch sees the
  hand settled and refuses with ``phase_closed``); the buyers' entries ``FOR UPDATE`` in id
  order, so limits, refs already used and pending redeals are read under lock;
- funds are held with ``balance - held >= price`` in one ``UPDATE ... FROM unnest``: a
  player who cannot pay is refused (``insufficient_funds``) while the others commit;
- a player with a protection row (suspension, break, loss or session limit) has his wallet
  locked and ``protection.barred_players`` asked with the stake before his hold, exactly as
  ``play._check_protection``: held cents count as lost;
- a purchase sent with a ``ref`` is recorded in ``PurchaseRef`` in the same transaction;
  the same ``ref`` again is answered as a duplicate and charged nothing;
- a batch that fails rolls back whole and each of its purchases is refused
  (``purchase_not_committed``: nothing charged).

A batch is three statements on its connection whatever its size (the hand, the entries, the
payment with every write, which returns the power-up sessions' counts for the answers; the
redeal counter too when it has redeals), prepared once per connection (tables/widerpoker/services/
purchase_statements.py); algorithm 2's redeals add their own, one each.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import DatabaseError, OperationalError, connection, transaction
from django.utils import timezone

from config.infra import metrics
from config.infra.errors import DomainError
from tables.engine import fairness
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
    Hand,
    HandStatus,
    Table,
    TablePhase,
)
from tables.services import beacon
from tables.widerpoker.records import escrow_key
from tables.widerpoker.services import powerups
from tables.widerpoker.services import purchase_statements as statements
from tables.widerpoker.services.purchase_orders import (
    _FACTS,
    _FACTS_LOCK,
    DRAW,
    REDEAL,
    HandFacts,
    Order,
    Outcome,
    not_committed,
)
from wallet import protection
from wallet.errors import InsufficientFundsError
from wallet.models import Account, AccountKind, TransferKind
from wallet.money import format_minor

logger = logging.getLogger(__name__)

DEADLOCK_RETRIES = 3


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
    done = [outcome or Outcome(error=not_committed()) for outcome in outcomes]
    counts: Counter[tuple[str, str, str]] = Counter()
    for order, outcome in zip(orders, done, strict=True):
        action = "buy_draw" if order.kind == DRAW else "redeal"
        error = outcome.error
        counts[(action, "confirmed", "") if error is None else (action, "refused", error.code)] += 1
    for (action, result, code), count in counts.items():  # one increment per label set, not per order
        metrics.PLAYER_ACTIONS.labels("widerpoker", action, result, code).inc(count)
    return done


def _commit_with_retries(table_id: int, orders: list[Order]) -> list[Outcome]:
    for attempt in range(DEADLOCK_RETRIES + 1):
        try:
            return _commit_table(table_id, orders)
        except OperationalError as error:
            sqlstate = getattr(error.__cause__, "sqlstate", None)
            if sqlstate in ("40P01", "40001") and attempt < DEADLOCK_RETRIES:
                continue
            logger.exception("a purchase batch of table %s failed", table_id)
            return [Outcome(error=not_committed()) for _ in orders]
        except DatabaseError:
            logger.exception("a purchase batch of table %s failed", table_id)
            return [Outcome(error=not_committed()) for _ in orders]
    return [Outcome(error=not_committed()) for _ in orders]  # pragma: no cover - loop returns


@dataclass(slots=True)
class _Buy:
    """One order accepted so far in its batch: the buyer's locked entry (updated in place),
    the price, the hold's reference and, for a redeal, its number."""

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
    connection.ensure_connection()
    rows = statements.run(statements.HAND_SQL, [table_id])
    row = rows[0] if rows else None
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
    locked = statements.lock_entries(hand, table_id, orders, stamp)

    buys: list[_Buy] = []
    redeal_slots = statements.redeal_slots(hand, sum(1 for order in orders if order.kind == REDEAL))
    for index, order in enumerate(orders):
        entry = locked.entries.get(order.user_id)
        if entry is None:
            outcomes[index].error = NotInHandError("you are not playing this hand", hand_id=hand_id)
        elif order.ref is not None and order.ref in locked.refs.get(order.user_id, ()):
            outcomes[index].duplicate = True
        elif order.now >= facts.change_deadline:
            outcomes[index].error = PhaseClosedError("the change phase of this hand is over", hand_id=hand_id)
        elif order.kind == DRAW:
            if entry.draws_bought >= config["max_draws"]:
                outcomes[index].error = LimitReachedError(
                    f"at most {config['max_draws']} draws in this hand", max_draws=config["max_draws"]
                )
            else:
                price, number = int(config["draw_price_minor"]), entry.draws_bought + 1
                buys.append(_Buy(index, order, entry, price, reference=f"draw:{hand_id}:{order.user_id}:{number}"))
        elif order.now >= facts.redeal_deadline:
            outcomes[index].error = RedealClosedError("the redeal time of this hand is over", hand_id=hand_id)
        elif len(entry.redeals) >= config["max_redeals"]:
            outcomes[index].error = LimitReachedError(
                f"at most {config['max_redeals']} redeals in this hand", max_redeals=config["max_redeals"]
            )
        elif order.user_id in locked.waiting:
            outcomes[index].error = RedealPendingError("your last redeal has not arrived yet", hand_id=hand_id)
        elif redeal_slots <= 0:
            outcomes[index].error = LimitReachedError("every combination of this hand is taken", hand_id=hand_id)
        else:
            redeal_slots -= 1
            price, number = int(config["redeal_price_minor"]), len(entry.redeals) + 1
            buys.append(_Buy(index, order, entry, price, reference=f"redeal:{hand_id}:{order.user_id}:{number}"))

    buys = _check_protection(buys, outcomes, locked.guarded, hand, stamp)
    balances, sessions = _pay_and_write(buys, outcomes, facts, table_id, stamp)
    buys = [buy for buy in buys if outcomes[buy.index].error is None]
    if hand.algorithm < fairness.ALGORITHM_DEAL_BEACON:
        apply_redeals(hand, [buy for buy in buys if buy.order.kind == REDEAL], stamp)
    if buys and settings.PURCHASE_CAPTURE == "inline":
        from tables.widerpoker.services.settlement import capture_purchases

        capture_purchases(hand=hand, escrow_id=facts.escrow_id or 0)
    _frames(table_id, version, facts, buys, outcomes, locked.seats, balances, sessions)
    transaction.on_commit(lambda: _remember(facts, buys))
    return outcomes


def _facts_of(table_id: int, hand_id: int, seed: str) -> HandFacts:
    with _FACTS_LOCK:
        facts = _FACTS.get(table_id)
    if facts is not None and facts.hand.pk == hand_id and facts.seed == seed:
        return facts
    hand = Hand.objects.only(*_HAND_COLUMNS).get(pk=hand_id)
    escrow = Account.objects.filter(key=escrow_key(hand_id)).values_list("pk", flat=True).first()
    facts = HandFacts(
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


def _remember(facts: HandFacts, buys: list[_Buy]) -> None:
    """After commit: the buyers' counts, for ``precheck``."""
    with _FACTS_LOCK:
        for buy in buys:
            facts.counts[buy.order.user_id] = (buy.entry.draws_bought, len(buy.entry.redeals))


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


@dataclass(slots=True)
class _SessionRow:
    """An open power-up session's counts as the payment statement returned them (after
    its update): what ``powerups.session_state`` reads."""

    hands_played: int
    draws_bought: int
    redeals_bought: int
    free_draws: int
    free_redeals: int


def _pay_and_write(
    buys: list[_Buy], outcomes: list[Outcome], facts: HandFacts, table_id: int, now: datetime
) -> tuple[dict[int, int], dict[int, _SessionRow]]:
    """Pay every buy and write what it bought, in one statement (``statements.PAY_SQL``): a buyer the
    balance check refuses gets InsufficientFundsError and nothing of his is written. The
    entries of the paid buys are updated in place (draws bought, paid, redeals' hold reset);
    under algorithm 3 each paid redeal gets its number and its pending round
    (``_Buy.pending``). Returns every paid buyer's spendable balance after his hold, and the
    open sessions the statement updated (its ``apply`` buys), by user id."""
    if not buys:
        return {}, {}
    hand = facts.hand
    if facts.escrow_id is None and any(buy.price > 0 for buy in buys):
        from tables.widerpoker.services.settlement import hand_escrow

        facts.escrow_id = hand_escrow(hand_id=hand.pk, currency=hand.currency).pk
    deferred = hand.algorithm >= fairness.ALGORITHM_DEAL_BEACON
    round_number = beacon.round_after(now) if deferred else None
    rows = statements.run(
        statements.PAY_SQL,
        {
            "users": [buy.order.user_id for buy in buys],
            "amounts": [buy.price for buy in buys],
            "refs": [buy.order.ref for buy in buys],
            "kinds": [TransferKind.DRAW if buy.order.kind == DRAW else TransferKind.REDEAL for buy in buys],
            "references": [buy.reference for buy in buys],
            "entries": [buy.entry.pk for buy in buys],
            "draws": [1 if buy.order.kind == DRAW else 0 for buy in buys],
            "redeals": [0 if buy.order.kind == DRAW else 1 for buy in buys],
            "apply": [buy.order.kind == DRAW or deferred for buy in buys],
            "account_kind": AccountKind.PLAYER.value,
            "currency": hand.currency,
            "escrow": facts.escrow_id,
            "now": now,
            "hand": hand.pk,
            "table": table_id,
            "round": round_number,
        },
    )
    balances: dict[int, int] = {}
    numbers: dict[int, int] = {}
    sessions: dict[int, _SessionRow] = {}
    for what, user_id, value, *counts in rows:
        if what == "session":
            sessions[int(user_id)] = _SessionRow(*(int(count) for count in counts))
        else:
            (balances if what == "held" else numbers)[int(user_id)] = int(value)
    short = [buy for buy in buys if buy.price > 0 and buy.order.user_id not in balances]
    if short:
        _refuse_short(short, outcomes, hand.currency)
    free = [buy.order.user_id for buy in buys if buy.price <= 0]
    if free:
        balances.update(
            Account.objects.filter(kind=AccountKind.PLAYER, currency=hand.currency, user_id__in=free).values_list(
                "user_id", "balance_minor"
            )
        )
    for buy in buys:
        if outcomes[buy.index].error is not None:
            continue
        entry = buy.entry
        entry.paid_minor += buy.price
        if buy.order.kind == DRAW:
            entry.draws_bought += 1
        elif deferred:
            entry.hold_mask = None
            buy.redeal_number = numbers[buy.order.user_id]
            buy.pending = {
                "number": buy.redeal_number,
                "round": round_number,
                "round_at": beacon.time_of(int(round_number or 0)).isoformat(),
            }
    return balances, sessions


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


def apply_redeals(hand: Hand, redeals: list[_Buy], now: datetime) -> None:
    """Algorithm 2: give each paid redeal of the batch its number and new combination at once
    (rules C.2; docs/provably-fair.md, ``redeal:<n>``), in the order of the batch: the
    hand's redeal counter, then ``play._redeal_at_once`` (the ``Redeal`` row, the entry's
    combination, redeals, reset hold and payment, the session's count). Kept apart from
    paying (``_pay_and_write``), which under algorithm 3 numbers the redeals and leaves their
    combinations to their beacon round (``play.resolve_pending_redeals``)."""
    from tables.widerpoker.services.play import _next_redeal_number, _redeal_at_once

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
    facts: HandFacts,
    buys: list[_Buy],
    outcomes: list[Outcome],
    seats: dict[int, dict[str, Any]],
    balances: dict[int, int],
    sessions: dict[int, _SessionRow],
) -> None:
    """What each confirmed buyer's ``entry_state`` frame is built from (``Outcome.frame``):
    the rows the batch holds, the power-up sessions' counts the payment statement returned
    (a buyer it applied without an open session has none); only algorithm 2's redeals,
    whose sessions ``apply_redeals`` counted after it, have theirs read."""
    if not buys:
        return
    hand, rules = facts.hand, facts.rules
    states: dict[int, dict[str, Any] | None] = {}
    deferred = hand.algorithm >= fairness.ALGORITHM_DEAL_BEACON
    unread = {buy.order.user_id for buy in buys if buy.order.kind == REDEAL and not deferred}
    if rules.is_active:
        states = {user_id: powerups.session_state(row, rules) for user_id, row in sessions.items()}
        if unread:
            states.update(powerups.session_states(table_id=table_id, user_ids=unread, config=rules))
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
            "powerups": states.get(user_id),
            "redeal_pending": buy.pending,
        }
