"""The purchase writer's statements (tables/widerpoker/services/purchase_batch.py; docs/
platform.md, "Purchase writer"): the same few texts for every batch, sent with server-side
parameters and prepared once per connection (``run``): planning them (the entries are
partitioned by hand) cost PostgreSQL more than running them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from django.db import connection

from tables.engine import fairness
from tables.engine.widerpoker import COMBINATION_COUNT
from tables.models import Entry, GamingSession, Hand, PurchaseRef, Redeal, RedealCounter, Seat, Table
from tables.widerpoker.services.purchase_orders import DRAW, REDEAL, Order
from wallet.models import Account, Exclusion, FundsHold, LimitKind, PlayerLimit, Suspension

PREPARE_THRESHOLD = 1_000_000
"""Given to the writer's connection so that only the statements it asks to prepare are
(Django leaves psycopg's preparation off, for transaction-mode poolers). The connection's
prepared statements then use their generic plan from the first execution
(``plan_cache_mode``): PostgreSQL's default plans each of the first five anew, then keeps
doing so when its estimate of the generic plan (arrays of unknown length) looks costlier,
and planning the payment's statement cost it 6 ms a batch. Django's own queries carry their
values in their text (client-side parameters): the setting does not concern them."""


def run(sql: str, params: dict[str, Any] | list[Any]) -> list[tuple[Any, ...]]:
    """Execute one of the batch's statements on Django's connection (in its transaction)
    with server-side parameters, prepared on the connection's first use of it; errors come
    as Django's database errors. Returns the rows (none for a statement without any)."""
    raw = connection.connection
    assert raw is not None
    with connection.wrap_database_errors, psycopg.Cursor(raw) as cursor:
        if raw.prepare_threshold is None:  # the connection's first batch
            raw.prepare_threshold = PREPARE_THRESHOLD
            cursor.execute("SET plan_cache_mode = force_generic_plan")
        cursor.execute(sql, params, prepare=True)
        return cursor.fetchall() if cursor.description is not None else []


HAND_SQL = (
    "SELECT h.id, h.server_seed, h.status, t.phase, t.version, h.change_deadline, h.redeal_deadline "
    f"FROM {Table._meta.db_table} t JOIN {Hand._meta.db_table} h ON h.id = t.current_hand_id "
    "WHERE t.id = %s FOR KEY SHARE OF h"
)


# The buyers' entries in the model's field order: ``Model.from_db`` places the values of a
# partial row by the model's concrete fields, not by the names it is given (a row read in
# another order gave the entry its initial combination as its combination after a redeal).
_ENTRY_FIELDS = [
    field
    for field in Entry._meta.concrete_fields
    if field.attname
    in {
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
    }
]
_ENTRY_NAMES = [field.attname for field in _ENTRY_FIELDS]
_ENTRY_CONVERTERS = [
    (position, field.from_db_value) for position, field in enumerate(_ENTRY_FIELDS) if hasattr(field, "from_db_value")
]
LOCK_SQL = (
    f"WITH seen AS (UPDATE {Seat._meta.db_table} SET last_seen_at = %(now)s "
    "WHERE table_id = %(table)s AND user_id = ANY(%(users)s::bigint[]) RETURNING user_id, status, status_reason) "
    f"SELECT {', '.join(f'e.{field.column}' for field in _ENTRY_FIELDS)}, s.status, s.status_reason, "
    f"(EXISTS (SELECT FROM {Suspension._meta.db_table} x WHERE x.user_id = e.user_id AND x.lifted_at IS NULL) "
    f"OR EXISTS (SELECT FROM {Exclusion._meta.db_table} x WHERE x.user_id = e.user_id "
    "AND x.starts_at <= %(now)s AND x.ends_at > %(now)s) "
    f"OR EXISTS (SELECT FROM {PlayerLimit._meta.db_table} x WHERE x.user_id = e.user_id "
    f"AND x.kind IN ('{LimitKind.LOSS.value}', '{LimitKind.SESSION.value}'))) AS guarded, "
    f"ARRAY(SELECT r.ref FROM {PurchaseRef._meta.db_table} r WHERE r.hand_id = %(hand)s AND r.user_id = e.user_id "
    "AND r.ref = ANY(%(refs)s::text[])) AS known, "
    f"(%(beacon)s AND EXISTS (SELECT FROM {Redeal._meta.db_table} r WHERE r.hand_id = %(hand)s "
    "AND r.user_id = e.user_id AND r.combination IS NULL)) AS waiting "
    f"FROM {Entry._meta.db_table} e LEFT JOIN seen s ON s.user_id = e.user_id "
    "WHERE e.hand_id = %(hand)s AND e.user_id = ANY(%(users)s::bigint[]) ORDER BY e.id FOR UPDATE OF e"
)


@dataclass(slots=True)
class Locked:
    """What ``_lock_entries`` read under the entries' locks, by user id: the entries, the
    seats (status and reason, for the frame), the buyers with a protection row, the refs of
    the batch they already used in the hand, and who has a redeal waiting for its round."""

    entries: dict[int, Entry]
    seats: dict[int, dict[str, Any]]
    guarded: set[int]
    refs: dict[int, set[str]]
    waiting: set[int]


def lock_entries(hand: Hand, table_id: int, orders: list[Order], now: datetime) -> Locked:
    """One statement: the buyers' entries locked in id order, their seats marked seen (and
    read for the frame), who has a row player protection could refuse him on, the refs of
    the batch already committed in the hand (read under the entries' locks: a concurrent
    batch of the same player committed before this read), and who has a redeal waiting for
    its beacon round (algorithm 3: his next redeal is refused with ``redeal_pending``)."""
    rows = run(
        LOCK_SQL,
        {
            "now": now,
            "table": table_id,
            "users": [order.user_id for order in orders],
            "hand": hand.pk,
            "refs": [order.ref for order in orders if order.ref is not None],
            "beacon": hand.algorithm >= fairness.ALGORITHM_DEAL_BEACON,
        },
    )
    locked = Locked({}, {}, set(), {}, set())
    count = len(_ENTRY_FIELDS)
    for row in rows:
        values = list(row[:count])
        for position, convert in _ENTRY_CONVERTERS:
            values[position] = convert(values[position], None, connection)
        entry = Entry.from_db(connection.alias, _ENTRY_NAMES, values)
        user_id = entry.user_id
        locked.entries[user_id] = entry
        status, reason, guarded, known, waiting = row[count:]
        if status is not None:
            locked.seats[user_id] = {"status": status, "reason": reason}
        if guarded:
            locked.guarded.add(user_id)
        if known:
            locked.refs[user_id] = set(known)
        if waiting:
            locked.waiting.add(user_id)
    return locked


SLOTS_SQL = f"SELECT count FROM {RedealCounter._meta.db_table} WHERE hand_id = %s FOR UPDATE"


def redeal_slots(hand: Hand, wanted: int) -> int:
    """How many of ``wanted`` redeals the hand can still give a combination to (the hand's
    redeal counter, locked by this read when it exists: redeals are ordered per hand)."""
    if not wanted:
        return 0
    rows = run(SLOTS_SQL, [hand.pk])
    return max(0, COMBINATION_COUNT - hand.entry_count - int(rows[0][0] if rows else 0))


_ACCOUNTS, _HOLDS, _ENTRIES = Account._meta.db_table, FundsHold._meta.db_table, Entry._meta.db_table
_SESSIONS, _REFS, _REDEALS = GamingSession._meta.db_table, PurchaseRef._meta.db_table, Redeal._meta.db_table
_COUNTERS = RedealCounter._meta.db_table
# Every write of a batch in one statement (data-modifying CTEs all run, once, on one
# snapshot; each later one reads what the earlier ones returned): the holds on the wallets
# with the balance check, the FundsHold rows, then for the buys that were paid (or cost nothing):
# their entries, their open sessions' counts (what raises the power-up level), their refs,
# and under algorithm 3 their redeals' numbers (the hand's counter, by the batch's order)
# and Redeal rows pending on ``round``. ``apply`` marks the buys whose entry and session
# this statement writes (algorithm 2's redeals are written by ``apply_redeals``).
# Each wallet and session is found by its own index probe (a scalar subquery per buyer,
# which the planner cannot turn into a join) and every row is written by primary key
# (``= ANY(ARRAY(...))``): plans that stay lookups whatever the statistics say, one generic
# plan for every batch. The sessions it updated come back with their counts (the answers'
# power-up levels: no read of the sessions afterwards). A join on the buyers, planned while
# the statistics did not know a first deal's 100,000 sessions, scanned every session of the
# table (370 ms a batch).
PAY_SQL = (
    "WITH v AS MATERIALIZED (SELECT * FROM unnest(%(users)s::bigint[], %(amounts)s::bigint[], "
    "%(refs)s::text[], %(kinds)s::text[], %(references)s::text[], %(entries)s::bigint[], %(draws)s::integer[], "
    "%(redeals)s::integer[], %(apply)s::boolean[]) "
    "WITH ORDINALITY AS v(user_id, amount, ref, kind, reference, entry_id, draw, redeal, apply, position)), "
    "found AS MATERIALIZED (SELECT * FROM (SELECT "
    f"(SELECT id FROM {_ACCOUNTS} WHERE user_id = v.user_id AND kind = %(account_kind)s "
    "AND currency = %(currency)s) AS id, v.user_id, v.amount FROM v WHERE v.amount > 0) w WHERE w.id IS NOT NULL), "
    f"locked AS MATERIALIZED (SELECT id FROM {_ACCOUNTS} WHERE id = ANY(ARRAY(SELECT id FROM found)) "
    "ORDER BY id FOR UPDATE), "
    f"held AS (UPDATE {_ACCOUNTS} a SET held_minor = a.held_minor + f.amount FROM found f "
    "WHERE a.id = ANY(ARRAY(SELECT id FROM locked)) AND a.id = f.id "
    "AND a.balance_minor - a.held_minor >= f.amount "
    "RETURNING a.user_id, a.id, a.balance_minor - a.held_minor AS available), "
    "paid AS MATERIALIZED (SELECT v.*, h.id AS account_id FROM v LEFT JOIN held h ON h.user_id = v.user_id "
    "WHERE v.amount <= 0 OR h.user_id IS NOT NULL), "
    f"holds AS (INSERT INTO {_HOLDS} (reference, kind, account_id, destination_id, amount_minor, created_at) "
    "SELECT reference, kind, account_id, %(escrow)s::bigint, amount, %(now)s FROM paid WHERE amount > 0), "
    f"entries AS (UPDATE {_ENTRIES} e SET draws_bought = e.draws_bought + p.draw, "
    "paid_minor = e.paid_minor + p.amount, hold_mask = CASE WHEN p.redeal > 0 THEN NULL ELSE e.hold_mask END "
    "FROM paid p WHERE e.hand_id = %(hand)s AND e.id = ANY(ARRAY(SELECT entry_id FROM paid WHERE apply)) "
    "AND e.id = p.entry_id AND p.apply), "
    f"opened AS MATERIALIZED (SELECT (SELECT id FROM {_SESSIONS} WHERE table_id = %(table)s "
    "AND user_id = p.user_id AND ended_at IS NULL LIMIT 1) AS id, p.draw, p.redeal FROM paid p WHERE p.apply), "
    f"sessions AS (UPDATE {_SESSIONS} s SET draws_bought = s.draws_bought + c.draw, "
    "redeals_bought = s.redeals_bought + c.redeal FROM opened c "
    "WHERE s.id = ANY(ARRAY(SELECT id FROM opened WHERE id IS NOT NULL)) AND s.id = c.id "
    "RETURNING s.user_id, s.hands_played, s.draws_bought, s.redeals_bought, s.free_draws, s.free_redeals), "
    f"refs AS (INSERT INTO {_REFS} (hand_id, user_id, ref, kind, created_at) "
    f"SELECT %(hand)s, user_id, ref, CASE WHEN draw > 0 THEN '{DRAW}' ELSE '{REDEAL}' END, %(now)s "
    "FROM paid WHERE ref IS NOT NULL), "
    "deferred AS MATERIALIZED (SELECT user_id, position, row_number() OVER (ORDER BY position) AS rank "
    "FROM paid WHERE apply AND redeal > 0), "
    f"counter AS (INSERT INTO {_COUNTERS} (hand_id, count) SELECT %(hand)s, count(*) FROM deferred "
    f"HAVING count(*) > 0 ON CONFLICT (hand_id) DO UPDATE SET count = {_COUNTERS}.count + EXCLUDED.count "
    "RETURNING count), "
    f"numbered AS (INSERT INTO {_REDEALS} (hand_id, number, user_id, combination, created_at, beacon_round) "
    "SELECT %(hand)s, c.count - (SELECT count(*) FROM deferred) + d.rank - 1, d.user_id, NULL, %(now)s, "
    "%(round)s::bigint "
    "FROM deferred d CROSS JOIN counter c RETURNING user_id, number) "
    "SELECT 'held', user_id, available, NULL::integer, NULL::integer, NULL::integer, NULL::integer, NULL::integer "
    "FROM held UNION ALL SELECT 'redeal', user_id, number, NULL, NULL, NULL, NULL, NULL FROM numbered "
    "UNION ALL SELECT 'session', user_id, 0, hands_played, draws_bought, redeals_bought, free_draws, free_redeals "
    "FROM sessions"
)
