"""Entries and ledger legs partitioned by id range on PostgreSQL (config/infra/partitions.py,
tables 0018, wallet 0010; docs/platform.md, "Partitioning"): the tables are partitioned, rows
land in their range's partition, the guards hold in every partition, upkeep creates ranges
ahead (idempotent, moving rows out of ``DEFAULT``), the swap goes both ways keeping every
name, and an online index is built partition by partition. SQLite keeps plain tables."""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import IntegrityError, InternalError, ProgrammingError, connection, models, transaction
from django.db.migrations.state import ProjectState
from django.utils import timezone

from config.infra.migration_operations import AddIndexOnline
from config.infra.partitions import (
    ENTRIES,
    LEGS,
    PartitionSpec,
    ensure_partitions,
    ensure_spec,
    is_partitioned,
    partition_table,
    partitions,
    unpartition_table,
)
from tables.models import Entry
from tests.conftest import make_player
from tests.helpers import create_fun_table, deal_hand, settle
from wallet.models import LedgerEntry
from wallet.selectors import check_books

on_postgresql = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's declarative partitioning")
REFUSED = (IntegrityError, InternalError, ProgrammingError)
DEMO = PartitionSpec("part_demo", "k", "part_demo_source", "ENTRY_PARTITION_HANDS")


def one(sql: str, params: list[Any] | None = None) -> Any:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        row = cursor.fetchone()
    return row[0] if row else None


def where(table: str, sql_filter: str) -> set[str]:
    """The partitions holding the rows of ``table`` that match ``sql_filter``."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT DISTINCT tableoid::regclass::text FROM {table} WHERE {sql_filter}")
        return {row[0] for row in cursor.fetchall()}


def primary_key(table: str) -> list[str]:
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    return next(list(info["columns"]) for info in constraints.values() if info["primary_key"])


@pytest.mark.django_db
def test_sqlite_keeps_plain_tables_and_upkeep_is_a_no_op() -> None:
    if connection.vendor == "postgresql":
        assert primary_key("tables_entry") == ["hand_id", "id"]
        assert primary_key("wallet_ledgerentry") == ["transfer_id", "id"]
    else:
        assert primary_key("tables_entry") == ["id"]
        assert ensure_partitions(ahead=5) == []
        out = io.StringIO()
        call_command("ensure_partitions", stdout=out)
        assert "Created 0 partitions" in out.getvalue()


@on_postgresql
@pytest.mark.django_db
def test_entries_and_legs_are_partitioned_by_range_with_a_default_and_the_entries_fillfactor() -> None:
    with connection.cursor() as cursor:
        for spec, storage in ((ENTRIES, ["fillfactor=40"]), (LEGS, None)):
            assert is_partitioned(cursor, spec.table)
            assert one("SELECT partstrat FROM pg_partitioned_table WHERE partrelid = %s::regclass", [spec.table]) == "r"
            found = partitions(cursor, spec.table)
            ranges = [(first, after) for _, first, after in found if first is not None and after is not None]
            assert ranges[0][0] == 0 and len(ranges) >= 3  # from 0, the newest id's range and two ahead
            assert all(after - first == spec.width for first, after in ranges)
            assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))  # no gap
            assert found[-1] == (f"{spec.table}_default", None, None)
            for name, _, _ in found:
                assert one("SELECT reloptions FROM pg_class WHERE relname = %s", [name]) == storage
            # Django's names survive the swap (a later RemoveIndex/AddIndex finds them).
        assert {"entry_user_recent", "entry_redealt_initial", "entry_combination_unique_in_hand"} <= set(
            connection.introspection.get_constraints(cursor, "tables_entry")
        )
        assert "ledger_account_recent" in connection.introspection.get_constraints(cursor, "wallet_ledgerentry")
    # One identity: pg_get_serial_sequence still names it (Django's sequence reset uses it).
    assert one("SELECT pg_get_serial_sequence('tables_entry', 'id')") == "public.tables_entry_id_seq"
    assert one("SELECT pg_get_serial_sequence('wallet_ledgerentry', 'id')") == "public.wallet_ledgerentry_id_seq"


@on_postgresql
@pytest.mark.django_db
def test_a_hand_s_entries_and_legs_land_in_their_range_s_partition_and_stay_final() -> None:
    table = create_fun_table("Partition Rail")
    now = timezone.now()
    hand = deal_hand(table, [make_player(f"part{i}") for i in range(3)], now)
    settle(table)
    first = hand.pk // ENTRIES.width * ENTRIES.width
    assert where("tables_entry", f"hand_id = {hand.pk}") == {f"tables_entry_p{first}"}
    transfer_ids = sorted(set(LedgerEntry.objects.values_list("transfer_id", flat=True)))
    assert transfer_ids
    for transfer_id in transfer_ids:
        start = transfer_id // LEGS.width * LEGS.width
        assert where("wallet_ledgerentry", f"transfer_id = {transfer_id}") == {f"wallet_ledgerentry_p{start}"}
    # The final entries' statement trigger on the parent, the ledger's row trigger in every partition.
    with pytest.raises(REFUSED), transaction.atomic():
        Entry.objects.filter(hand=hand).update(place=1)
    with pytest.raises(REFUSED), transaction.atomic():
        LedgerEntry.objects.filter(transfer_id=transfer_ids[0]).update(delta_minor=0)
    with pytest.raises(REFUSED), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM wallet_ledgerentry_p{transfer_ids[0] // LEGS.width * LEGS.width}")
    with pytest.raises(REFUSED), transaction.atomic():
        Entry.objects.filter(hand=hand).delete()
    assert check_books().ok
    # A player's history: his entries newest first, found in the partitions.
    assert list(Entry.objects.filter(user__username="part0").order_by("-hand_id").values_list("hand_id", flat=True))
    assert list(Entry.objects.filter(user__username="part0").values_list("hand_id", flat=True)) == [hand.pk]


@pytest.fixture
def demo(settings: Any) -> Iterator[PartitionSpec]:
    """A scratch partitioned table like the entries (key ``k``, ids of ``part_demo_source``),
    with a row trigger refusing DELETE, ranges of 10 and a DEFAULT partition; dropped with
    the test's transaction."""
    settings.ENTRY_PARTITION_HANDS = 10
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE part_demo_source (id bigint PRIMARY KEY)")
        cursor.execute(
            "CREATE TABLE part_demo (id bigint GENERATED BY DEFAULT AS IDENTITY, k bigint NOT NULL, "
            "PRIMARY KEY (k, id)) PARTITION BY RANGE (k)"
        )
        cursor.execute("CREATE TABLE part_demo_default PARTITION OF part_demo DEFAULT WITH (fillfactor = 40)")
        cursor.execute(
            "CREATE FUNCTION pg_temp.part_demo_refuse() RETURNS trigger AS $$ BEGIN "
            "RAISE EXCEPTION 'append-only' USING ERRCODE = 'integrity_constraint_violation'; END; $$ LANGUAGE plpgsql"
        )
        cursor.execute(
            "CREATE TRIGGER part_demo_append_only BEFORE DELETE ON part_demo "
            "FOR EACH ROW EXECUTE FUNCTION pg_temp.part_demo_refuse()"
        )
    yield DEMO


def ranges(table: str) -> list[tuple[int | None, int | None]]:
    with connection.cursor() as cursor:
        return [(first, after) for _, first, after in partitions(cursor, table)]


@on_postgresql
@pytest.mark.django_db
def test_upkeep_creates_the_newest_id_s_range_and_the_next_ones_once(demo: PartitionSpec) -> None:
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO part_demo_source VALUES (25)")
    assert ensure_spec(demo, ahead=2) == ["part_demo_p20", "part_demo_p30", "part_demo_p40"]
    assert ensure_spec(demo, ahead=2) == []  # idempotent
    assert ranges("part_demo") == [(20, 30), (30, 40), (40, 50), (None, None)]
    # Partitions take the storage parameters of DEFAULT (the entries' fillfactor).
    assert one("SELECT reloptions FROM pg_class WHERE relname = 'part_demo_p30'") == ["fillfactor=40"]
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO part_demo (k) VALUES (33)")
    assert where("part_demo", "k = 33") == {"part_demo_p30"}
    # The real tables: the test database's newest ids are in ranges made ahead at migrate.
    assert ensure_partitions(ahead=2) == []


@on_postgresql
@pytest.mark.django_db
def test_upkeep_that_stopped_moves_the_rows_default_took_into_their_new_partition(demo: PartitionSpec) -> None:
    """Ids went past the last range while upkeep did not run: their rows went to DEFAULT,
    where a new range's partition cannot be created over them (PostgreSQL refuses). Upkeep
    moves them into the new partition in the same transaction, despite the DELETE trigger."""
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO part_demo_source VALUES (5)")
    assert ensure_spec(demo, ahead=0) == ["part_demo_p0"]
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO part_demo_source VALUES (27)")
        cursor.execute("INSERT INTO part_demo (k) VALUES (3), (12), (19), (27)")
    assert where("part_demo", "k >= 10") == {"part_demo_default"}
    with pytest.raises(REFUSED), transaction.atomic(), connection.cursor() as cursor:
        # What PostgreSQL says without the move.
        cursor.execute("CREATE TABLE part_demo_bad PARTITION OF part_demo FOR VALUES FROM (10) TO (20)")
    assert ensure_spec(demo, ahead=1) == ["part_demo_p10", "part_demo_p20", "part_demo_p30"]
    assert where("part_demo", "k IN (12, 19)") == {"part_demo_p10"}
    assert where("part_demo", "k = 27") == {"part_demo_p20"}
    assert one("SELECT count(*) FROM part_demo_default") == 0
    assert one("SELECT count(*) FROM part_demo") == 4
    # The trigger is on again, in the new partitions too.
    with pytest.raises(REFUSED), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM part_demo WHERE k = 12")


@on_postgresql
@pytest.mark.django_db
def test_the_swap_goes_both_ways_keeping_rows_names_triggers_and_ids(settings: Any) -> None:
    settings.ENTRY_PARTITION_HANDS = 10
    spec = PartitionSpec("part_swap", "k", "part_swap_source", "ENTRY_PARTITION_HANDS")

    class Editor:
        def __init__(self) -> None:
            self.connection = connection

    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE part_swap_source (id bigint PRIMARY KEY)")
        cursor.execute("INSERT INTO part_swap_source VALUES (14)")
        cursor.execute(
            "CREATE TABLE part_swap (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, k bigint NOT NULL, "
            "v integer CHECK (v >= 0), CONSTRAINT part_swap_one_v UNIQUE (k, v)) WITH (fillfactor = 40)"
        )
        cursor.execute("CREATE INDEX part_swap_v ON part_swap (v) WHERE v > 1")
        cursor.execute(
            "CREATE FUNCTION pg_temp.part_swap_refuse() RETURNS trigger AS $$ BEGIN "
            "RAISE EXCEPTION 'final' USING ERRCODE = 'integrity_constraint_violation'; END; $$ LANGUAGE plpgsql"
        )
        cursor.execute(
            "CREATE TRIGGER part_swap_final BEFORE UPDATE ON part_swap "
            "FOR EACH ROW EXECUTE FUNCTION pg_temp.part_swap_refuse()"
        )
        cursor.execute("INSERT INTO part_swap (k, v) VALUES (1, 1), (14, 2), (14, 3)")
        partition_table(Editor(), spec, ahead=1)
        assert is_partitioned(cursor, "part_swap")
        assert ranges("part_swap") == [(0, 10), (10, 20), (20, 30), (None, None)]
        assert primary_key("part_swap") == ["k", "id"]
        assert {"part_swap_v", "part_swap_one_v", "part_swap_pkey"} <= set(
            connection.introspection.get_constraints(cursor, "part_swap")
        )
        assert one("SELECT reloptions FROM pg_class WHERE relname = 'part_swap_p10'") == ["fillfactor=40"]
        assert where("part_swap", "k = 14") == {"part_swap_p10"}
        cursor.execute("INSERT INTO part_swap (k, v) VALUES (15, 4) RETURNING id")
        assert cursor.fetchone() == (4,)  # the ids go on from the old sequence
        with pytest.raises(REFUSED), transaction.atomic():
            cursor.execute("UPDATE part_swap SET v = 9 WHERE k = 1")
        with pytest.raises(REFUSED), transaction.atomic():
            cursor.execute("INSERT INTO part_swap (k, v) VALUES (-1, -1)")  # the CHECK came along

        unpartition_table(Editor(), spec)
        assert not is_partitioned(cursor, "part_swap")
        assert primary_key("part_swap") == ["id"]
        assert {"part_swap_v", "part_swap_one_v"} <= set(connection.introspection.get_constraints(cursor, "part_swap"))
        assert one("SELECT reloptions FROM pg_class WHERE relname = 'part_swap'") == ["fillfactor=40"]
        assert one("SELECT count(*) FROM part_swap") == 4
        cursor.execute("INSERT INTO part_swap (k, v) VALUES (15, 5) RETURNING id")
        assert cursor.fetchone() == (6,)  # 5 went to the INSERT the CHECK refused
        with pytest.raises(REFUSED), transaction.atomic():
            cursor.execute("UPDATE part_swap SET v = 9 WHERE k = 1")


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_an_online_index_on_a_partitioned_table_is_built_partition_by_partition() -> None:
    """CREATE INDEX CONCURRENTLY does not exist for a partitioned table: AddIndexOnline
    builds it ON ONLY the parent, CONCURRENTLY on each partition, and attaches each."""
    operation = AddIndexOnline(model_name="entry", index=models.Index(fields=["hold_at"], name="entry_hold_at_test"))
    state = ProjectState.from_apps(apps)
    to_state = state.clone()
    operation.state_forwards("tables", to_state)
    try:
        with connection.schema_editor(atomic=False) as editor:
            operation.database_forwards("tables", editor, state, to_state)
        assert one("SELECT indisvalid FROM pg_index WHERE indexrelid = 'entry_hold_at_test'::regclass") is True
        with connection.cursor() as cursor:
            names = [name for name, _, _ in partitions(cursor, "tables_entry")]
            cursor.execute(
                "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
                "WHERE i.inhparent = 'entry_hold_at_test'::regclass"
            )
            attached = {row[0] for row in cursor.fetchall()}
        assert attached == {f"{name}_entry_hold_at_test" for name in names}
        # A partition created afterwards gets it from the parent.
        with connection.cursor() as cursor:
            cursor.execute("CREATE TABLE part_index_late (LIKE tables_entry INCLUDING DEFAULTS INCLUDING CONSTRAINTS)")
            cursor.execute(
                "ALTER TABLE tables_entry ATTACH PARTITION part_index_late "
                "FOR VALUES FROM (10000000000) TO (10000000010)"
            )
            cursor.execute(
                "SELECT count(*) FROM pg_inherits WHERE inhparent = 'entry_hold_at_test'::regclass "
                "AND inhrelid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'part_index_late'::regclass)"
            )
            assert cursor.fetchone() == (1,)
    finally:
        with connection.schema_editor(atomic=False) as editor:
            operation.database_backwards("tables", editor, to_state, state)
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS part_index_late")
    assert one("SELECT to_regclass('entry_hold_at_test')") is None


@pytest.mark.django_db
def test_beat_runs_the_upkeep_daily(settings: Any) -> None:
    from backoffice.tasks import ensure_partitions as task

    entry = settings.CELERY_BEAT_SCHEDULE["ensure-partitions"]
    assert entry["task"] == task.name == "backoffice.tasks.ensure_partitions"
    assert entry["schedule"] == 24 * 3600
    # The test database's newest ids are in ranges made ahead at migrate (PostgreSQL); a
    # no-op on SQLite.
    assert task() == []


def _contents(table: str) -> str:
    return str(one(f"SELECT md5(string_agg(t::text, ',' ORDER BY id)) FROM {table} t"))


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_the_migrations_go_back_to_plain_tables_and_forwards_again_with_the_same_rows() -> None:
    from django.db.migrations.executor import MigrationExecutor

    table = create_fun_table("Migration Rail")
    deal_hand(table, [make_player(f"mig{i}") for i in range(3)], timezone.now())
    settle(table)
    before = {name: _contents(name) for name in ("tables_entry", "wallet_ledgerentry")}
    kinds = "SELECT string_agg(relkind::text, '' ORDER BY relname) FROM pg_class WHERE relname = ANY(%s)"
    names = ["tables_entry", "wallet_ledgerentry"]
    executor = MigrationExecutor(connection)
    leaves = [node for node in executor.loader.graph.leaf_nodes() if node[0] in ("tables", "wallet")]
    try:
        executor.migrate([("tables", "0017_entries_at_scale"), ("wallet", "0009_ledger_at_scale")])
        assert one(kinds, [names]) == "rr"
        assert {name: _contents(name) for name in names} == before
        assert one("SELECT to_regprocedure('partition_add_range(text, bigint, bigint)')") is None
        with pytest.raises(REFUSED), transaction.atomic():
            Entry.objects.filter(hand__table=table).update(place=1)  # still final
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(leaves)
    assert one(kinds, [names]) == "pp"
    assert {name: _contents(name) for name in names} == before
    assert check_books().ok
    with pytest.raises(REFUSED), transaction.atomic():
        LedgerEntry.objects.update(delta_minor=0)


@on_postgresql
@pytest.mark.django_db
def test_a_single_column_index_is_dropped_and_rebuilt_in_every_partition() -> None:
    """``drop_single_column_index`` (tables 0013) on the partitioned entries: dropping the
    parent's index drops each partition's; backwards builds them all again."""
    from config.infra.migration_operations import drop_single_column_index

    def count() -> int:
        return int(
            one(
                "SELECT count(*) FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
                "AND a.attnum = i.indkey[0] WHERE i.indnatts = 1 AND a.attname = 'hold_at' "
                "AND (i.indrelid = 'tables_entry'::regclass "
                "OR i.indrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'tables_entry'::regclass))"
            )
        )

    with connection.cursor() as cursor:
        cursor.execute("CREATE INDEX entry_hold_at_single ON tables_entry (hold_at)")
        parts = len(partitions(cursor, "tables_entry"))
    assert count() == parts + 1
    operation = drop_single_column_index("tables", "entry", "hold_at")
    state_apps = ProjectState.from_apps(apps).apps
    with connection.schema_editor() as editor:
        operation.code(state_apps, editor)
    assert count() == 0
    with connection.schema_editor() as editor:
        assert operation.reverse_code is not None
        operation.reverse_code(state_apps, editor)
    assert count() == parts + 1


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_two_upkeeps_at_once_create_each_partition_once() -> None:
    """Beat and a hand-run command at the same moment: the advisory lock makes the second
    wait and then find the partitions made."""
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connections

    def run() -> list[str]:
        try:
            return ensure_partitions(ahead=4)
        finally:
            connections.close_all()

    created = ["tables_entry_p300000", "tables_entry_p400000"]
    created += ["wallet_ledgerentry_p3000000", "wallet_ledgerentry_p4000000"]
    try:
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda _: run(), range(2)))
        assert sorted(results[0] + results[1]) == sorted(created)
        with connection.cursor() as cursor:
            assert [first for _, first, _ in partitions(cursor, "tables_entry")][-3:] == [300000, 400000, None]
    finally:
        with connection.cursor() as cursor:
            for name in created:
                cursor.execute(f"DROP TABLE IF EXISTS {name}")
