"""Entries and ledger legs partitioned by id range on PostgreSQL (docs/platform.md,
"Partitioning"; issue 12).

``tables_entry`` is ``PARTITION BY RANGE (hand_id)`` and ``wallet_ledgerentry``
``PARTITION BY RANGE (transfer_id)``, in partitions of a fixed width of ids
(``settings.ENTRY_PARTITION_HANDS``, ``settings.LEDGER_PARTITION_TRANSFERS``) plus a
``DEFAULT`` partition for rows past the last range. The primary keys are ``(hand_id, id)``
and ``(transfer_id, id)`` in the database (PostgreSQL wants the partition key in every
unique constraint); Django's model state keeps ``id`` as the primary key, which stays
unique: every id still comes from the table's one identity sequence.

- ``partition_table`` / ``unpartition_table``: the swap of the migrations (tables 0018,
  wallet 0010), from a plain table to a partitioned one and back, keeping every index,
  constraint and trigger by name (read back from the catalogue, not written twice).
- ``ensure_partitions``: the upkeep (``manage.py ensure_partitions``, and Celery beat
  daily): the partition holding the newest id and the next ``ahead`` ranges, each made by
  the owner's ``partition_add_range`` function (``SECURITY DEFINER``: beat runs as the
  app's role, which owns no table).

SQLite (the embedded default) keeps plain tables: everything here is a no-op there. Nothing
here is imported by ``tables.engine``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection as default_connection
from django.db import transaction

# A range's partition is named ``<table>_p<first id>``; the DEFAULT one ``<table>_default``.
DEFAULT_SUFFIX = "_default"
_BOUND = re.compile(r"FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)")


class PartitionError(Exception):
    """A swap that cannot go on (code ``partition_error``): a unique constraint without the
    partition key, or an id column that is neither an identity nor a serial. (The upkeep
    function raises ``invalid_parameter_value`` with the same code in its message.)"""

    code = "partition_error"


@dataclass(frozen=True, slots=True)
class PartitionSpec:
    """One partitioned table: its name, its partition key (a column holding the id of
    ``source``, the table whose rows come first: a hand before its entries), and the name
    of the setting that gives the width of a range (ids per partition)."""

    table: str
    key: str
    source: str
    width_setting: str

    @property
    def width(self) -> int:
        """Ids of ``source`` per partition (a positive int, from settings)."""
        return int(getattr(settings, self.width_setting))


ENTRIES = PartitionSpec("tables_entry", "hand_id", "tables_hand", "ENTRY_PARTITION_HANDS")
LEGS = PartitionSpec("wallet_ledgerentry", "transfer_id", "wallet_transfer", "LEDGER_PARTITION_TRANSFERS")
SPECS = (ENTRIES, LEGS)


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _one(cursor: Any, sql: str, params: list[Any] | None = None) -> Any:
    cursor.execute(sql, params or [])
    row = cursor.fetchone()
    return row[0] if row else None


def is_partitioned(cursor: Any, table: str) -> bool:
    """Whether ``table`` is a partitioned table (PostgreSQL's ``pg_partitioned_table``)."""
    return bool(
        _one(
            cursor,
            "SELECT EXISTS (SELECT FROM pg_partitioned_table WHERE partrelid = to_regclass(%s))",
            [table],
        )
    )


def partitions(cursor: Any, table: str) -> list[tuple[str, int | None, int | None]]:
    """The partitions of ``table`` as (name, first id, first id after), in order of their
    range; the ``DEFAULT`` partition last, as (name, None, None)."""
    cursor.execute(
        "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i "
        "JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass(%s)",
        [table],
    )
    ranges: list[tuple[str, int | None, int | None]] = []
    default: list[tuple[str, int | None, int | None]] = []
    for name, bound in cursor.fetchall():
        found = _BOUND.search(bound)
        if found is None:
            default.append((name, None, None))
        else:
            ranges.append((name, int(found.group(1)), int(found.group(2))))
    ranges.sort(key=lambda row: row[1] or 0)
    return ranges + default


def _storage(cursor: Any, relation: str) -> str:
    """`` WITH (…)`` of ``relation``'s storage parameters (fillfactor), or ``""``."""
    options = _one(cursor, "SELECT reloptions FROM pg_class WHERE oid = to_regclass(%s)", [relation])
    return f" WITH ({', '.join(options)})" if options else ""


def _newest_id(cursor: Any, spec: PartitionSpec, table: str) -> int:
    """The highest id of ``spec.source`` or of ``table``'s partition key (0 if none)."""
    return int(
        _one(
            cursor,
            f"SELECT GREATEST((SELECT max(id) FROM {_q(spec.source)}), (SELECT max({_q(spec.key)}) FROM {_q(table)}))",
        )
        or 0
    )


def _definitions(cursor: Any, table: str) -> dict[str, list[tuple[str, str]]]:
    """What ``table`` carries besides its columns, by name: its own triggers (not the
    clones PostgreSQL keeps on partitions), its plain indexes and its primary key and
    unique constraints (``CHECK`` and ``NOT NULL`` come with ``LIKE … INCLUDING
    CONSTRAINTS``)."""
    cursor.execute(
        "SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger "
        "WHERE tgrelid = to_regclass(%s) AND NOT tgisinternal AND tgparentid = 0 ORDER BY tgname",
        [table],
    )
    triggers = cursor.fetchall()
    cursor.execute(
        "SELECT c.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "WHERE i.indrelid = to_regclass(%s) "
        "AND NOT EXISTS (SELECT FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.conrelid = i.indrelid) "
        "ORDER BY c.relname",
        [table],
    )
    indexes = cursor.fetchall()
    cursor.execute(
        "SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE conrelid = to_regclass(%s) AND contype IN ('p', 'u', 'f', 'x') ORDER BY contype, conname",
        [table],
    )
    constraints = [(name, f"{kind}:{definition}") for name, kind, definition in cursor.fetchall()]
    return {"triggers": triggers, "indexes": indexes, "constraints": constraints}


def _swap(cursor: Any, spec: PartitionSpec, *, partitioned: bool, ahead: int) -> None:
    """Rebuild ``spec.table`` as a partitioned table (or back as a plain one), rows,
    indexes, constraints, triggers and id sequence included, under an ``ACCESS EXCLUSIVE``
    lock (the caller's transaction: the migration's)."""
    table, key = spec.table, spec.key
    new = f"{table}__swap"
    cursor.execute(f"LOCK TABLE {_q(table)} IN ACCESS EXCLUSIVE MODE")
    found = _definitions(cursor, table)
    sequence = _one(cursor, "SELECT pg_get_serial_sequence(%s, 'id')", [table])
    identity = _one(
        cursor, "SELECT attidentity FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attname = 'id'", [table]
    )
    next_id = 1
    if sequence:
        cursor.execute(f"SELECT last_value, is_called FROM {sequence}")
        last, called = cursor.fetchone()
        next_id = int(last) + 1 if called else int(last)
    next_id = max(next_id, int(_one(cursor, f"SELECT max(id) FROM {_q(table)}") or 0) + 1)
    if partitioned:
        storage = _storage(cursor, table)
        cursor.execute(
            f"CREATE TABLE {_q(new)} (LIKE {_q(table)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS) "
            f"PARTITION BY RANGE ({_q(key)})"
        )
        newest, width = _newest_id(cursor, spec, table), spec.width
        for first in range(0, (newest // width + 1 + ahead) * width, width):
            cursor.execute(
                f"CREATE TABLE {_q(f'{table}_p{first}')} PARTITION OF {_q(new)} "
                f"FOR VALUES FROM ({first}) TO ({first + width}){storage}"
            )
        cursor.execute(f"CREATE TABLE {_q(table + DEFAULT_SUFFIX)} PARTITION OF {_q(new)} DEFAULT{storage}")
    else:
        # The storage parameters of the partitions (a partitioned table has none).
        storage = _storage(cursor, table + DEFAULT_SUFFIX)
        cursor.execute(f"CREATE TABLE {_q(new)} (LIKE {_q(table)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS){storage}")
    cursor.execute(f"INSERT INTO {_q(new)} SELECT * FROM {_q(table)}")
    if identity:
        cursor.execute(f"DROP TABLE {_q(table)}")
    elif sequence:  # a serial column: the sequence follows the column it is owned by
        cursor.execute(f"ALTER SEQUENCE {sequence} OWNED BY {_q(new)}.id")
        cursor.execute(f"DROP TABLE {_q(table)}")
    else:
        raise PartitionError(f"{table}.id is neither an identity nor a serial column")
    cursor.execute(f"ALTER TABLE {_q(new)} RENAME TO {_q(table)}")
    if identity:
        kind = "ALWAYS" if identity == "a" else "BY DEFAULT"
        cursor.execute(
            f"ALTER TABLE {_q(table)} ALTER COLUMN id ADD GENERATED {kind} AS IDENTITY (START WITH {next_id})"
        )
        created = _one(cursor, "SELECT pg_get_serial_sequence(%s, 'id')", [table])
        old_name = (sequence or f"public.{table}_id_seq").split(".")[-1].strip('"')
        if created.split(".")[-1].strip('"') != old_name:
            cursor.execute(f"ALTER SEQUENCE {created} RENAME TO {_q(old_name)}")
    for name, definition in found["constraints"]:
        kind, body = definition.split(":", 1)
        if kind == "p":
            body = f"PRIMARY KEY ({_q(key)}, id)" if partitioned else "PRIMARY KEY (id)"
        elif partitioned and kind in "ux" and key not in body:
            raise PartitionError(f"{name} of {table} lacks the partition key {key}: {body}")
        cursor.execute(f"ALTER TABLE {_q(table)} ADD CONSTRAINT {_q(name)} {body}")
    for _, definition in found["indexes"]:
        cursor.execute(definition.replace(" ON ONLY ", " ON "))
    for _, definition in found["triggers"]:
        cursor.execute(definition)
    cursor.execute(f"ANALYZE {_q(table)}")


def partition_table(schema_editor: Any, spec: PartitionSpec, *, ahead: int = 2) -> None:
    """Make ``spec.table`` partitioned by range of ``spec.key`` on PostgreSQL (a no-op
    elsewhere, or if it is already): ranges of ``spec.width`` ids from 0 past the newest id
    plus ``ahead`` more, and a ``DEFAULT`` partition; each partition takes the table's
    storage parameters (fillfactor). Rows are copied by one ``INSERT … SELECT`` under an
    ``ACCESS EXCLUSIVE`` lock (docs/platform.md says what that costs on a big database).

    Raises:
        PartitionError: a unique constraint lacks the partition key, or ``id`` has no
            sequence.
    """
    if schema_editor.connection.vendor != "postgresql":
        return
    create_upkeep_function(schema_editor)
    with schema_editor.connection.cursor() as cursor:
        if not is_partitioned(cursor, spec.table):
            _swap(cursor, spec, partitioned=True, ahead=ahead)


def unpartition_table(schema_editor: Any, spec: PartitionSpec) -> None:
    """The way back of ``partition_table``: one plain table with the same rows, indexes,
    constraints, triggers, id sequence and the partitions' storage parameters."""
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        if is_partitioned(cursor, spec.table):
            _swap(cursor, spec, partitioned=False, ahead=0)
    drop_upkeep_function(schema_editor)


# Creates one range's partition, moving the rows ``DEFAULT`` holds of it (upkeep stopped for
# a while), and attaches it. SECURITY DEFINER: the app's role (``grant_app_role``), which
# runs the Celery beat task, owns no table and so could not create or attach one; it may
# call this, on a partitioned table of the owner only. ``ATTACH`` takes a ``SHARE UPDATE
# EXCLUSIVE`` lock on the parent, which reads and writes do not wait for (``CREATE TABLE …
# PARTITION OF`` would stop them all). The triggers refusing DELETE (append-only ledger,
# final hands) are off for the move's one statement, inside the caller's transaction:
# rows are moved, not changed.
UPKEEP_FUNCTION = "partition_add_range"
UPKEEP_SQL = f"""
CREATE OR REPLACE FUNCTION {UPKEEP_FUNCTION}(parent text, first bigint, after bigint) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    key text;
    name text := parent || '_p' || first;
    fallback text := parent || '{DEFAULT_SUFFIX}';
    options text[];
    storage text := '';
    moving boolean := false;
BEGIN
    SELECT a.attname INTO key FROM pg_partitioned_table p
        JOIN pg_class c ON c.oid = p.partrelid
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = p.partattrs[0]
        WHERE c.oid = to_regclass(parent) AND c.relowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)
            AND p.partstrat = 'r' AND p.partnatts = 1;
    IF key IS NULL THEN
        RAISE EXCEPTION 'partition_error: % is not a table partitioned by range of its owner', parent
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF first < 0 OR after <= first THEN
        RAISE EXCEPTION 'partition_error: empty or negative range [%, %)', first, after
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT reloptions INTO options FROM pg_class WHERE oid = to_regclass(fallback);
    IF options IS NOT NULL THEN
        storage := ' WITH (' || array_to_string(options, ', ') || ')';
    END IF;
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name, parent) || storage;
    IF to_regclass(fallback) IS NOT NULL THEN
        EXECUTE format('SELECT EXISTS (SELECT FROM %I WHERE %I >= $1 AND %I < $2)', fallback, key, key)
            INTO moving USING first, after;
        IF moving THEN
            EXECUTE format('ALTER TABLE %I DISABLE TRIGGER USER', fallback);
            EXECUTE format(
                'WITH moved AS (DELETE FROM %I WHERE %I >= $1 AND %I < $2 RETURNING *) '
                'INSERT INTO %I SELECT * FROM moved',
                fallback, key, key, name
            ) USING first, after;
            EXECUTE format('ALTER TABLE %I ENABLE TRIGGER USER', fallback);
        END IF;
    END IF;
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%s)', parent, name, first, after);
    RETURN name;
END;
$$;
REVOKE ALL ON FUNCTION {UPKEEP_FUNCTION}(text, bigint, bigint) FROM PUBLIC;
"""


def create_upkeep_function(schema_editor: Any) -> None:
    """Create (or replace) ``partition_add_range`` on PostgreSQL, callable by its owner only
    until ``grant_app_role`` grants it to the app's role."""
    if schema_editor.connection.vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(UPKEEP_SQL)  # no parameters: its % are PL/pgSQL's


def drop_upkeep_function(schema_editor: Any) -> None:
    """Drop ``partition_add_range`` once no table is partitioned any more (backwards)."""
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        if not any(is_partitioned(cursor, spec.table) for spec in SPECS):
            cursor.execute(f"DROP FUNCTION IF EXISTS {UPKEEP_FUNCTION}(text, bigint, bigint)")


def ensure_spec(spec: PartitionSpec, *, ahead: int, using: Any = None) -> list[str]:
    """``ensure_partitions`` for one table; returns the partitions created."""
    connection = using or default_connection
    if connection.vendor != "postgresql":
        return []
    width = spec.width
    created: list[str] = []
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        if not is_partitioned(cursor, spec.table):
            return []
        # One upkeep at a time per table (beat and a hand-run command may overlap).
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"ensure_partitions:{spec.table}"])
        # Never queue for long behind a long statement: every deal would queue behind us.
        cursor.execute("SET LOCAL lock_timeout = '10s'")
        existing = partitions(cursor, spec.table)
        ends = [after for _, first, after in existing if after is not None]
        newest = _newest_id(cursor, spec, spec.table)
        first = max(ends) if ends else newest // width * width
        target = (newest // width + 1 + ahead) * width
        while first < target:
            created.append(_one(cursor, f"SELECT {UPKEEP_FUNCTION}(%s, %s, %s)", [spec.table, first, first + width]))
            first += width
    return created


def ensure_partitions(*, ahead: int = 2, using: Any = None) -> list[str]:
    """Create, for entries and ledger legs, the partitions that hold the newest id (of
    hands, of transfers) and the next ``ahead`` ranges, if missing; return their names.

    Idempotent and safe to run concurrently (a transaction-level advisory lock per table);
    a no-op on SQLite and on tables that are not partitioned. New ranges start where the
    last range ends (a changed width applies from there). Rows of a new range already in
    the ``DEFAULT`` partition (upkeep stopped while ids went past the last range) are moved
    into it in the same transaction.

    Raises:
        django.db.OperationalError: a lock not obtained within 10 s (``lock_timeout``);
            nothing is created, the next run tries again.
        django.db.ProgrammingError: the role may not run ``partition_add_range``
            (``grant_app_role`` not run since ``migrate``).
    """
    created: list[str] = []
    for spec in SPECS:
        created += ensure_spec(spec, ahead=ahead, using=using)
    return created
