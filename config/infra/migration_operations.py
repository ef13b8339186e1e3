"""Migration operations for tables that hold years of rows (docs/platform.md, "Data that
grows for years").

On PostgreSQL a plain ``CREATE INDEX`` locks the table against writes for as long as it
builds: 30-60 s for 10^7 entries on the benchmark box, during which no hand could be dealt.
``AddIndexOnline`` builds the index ``CONCURRENTLY`` there (writes go on; the migration must
be ``atomic = False``) and is an ordinary ``AddIndex`` on every other database (the embedded
SQLite default), so one migration file serves both. On a partitioned table (entries and
ledger legs on PostgreSQL, config/infra/partitions.py) it builds the index partition by partition
(``add_partitioned_index_online``).

``drop_single_column_index`` works on a partitioned table as it is: dropping the parent's
index drops every partition's, and its backwards ``CREATE INDEX`` on the parent builds them.
"""

from __future__ import annotations

from typing import Any

from django.db.migrations.operations import AddIndex


class AddIndexOnline(AddIndex):
    """``AddIndex`` that builds (and drops, backwards) the index ``CONCURRENTLY`` on
    PostgreSQL. Use it only in a migration with ``atomic = False``.

    Raises:
        django.db.NotSupportedError: on PostgreSQL inside a transaction (an atomic migration).
    """

    def _online(self, schema_editor: Any) -> bool:
        if schema_editor.connection.vendor != "postgresql":
            return False
        if schema_editor.connection.in_atomic_block:
            from django.db import NotSupportedError

            raise NotSupportedError(
                f"{self.index.name}: CREATE INDEX CONCURRENTLY needs a migration with atomic = False"
            )
        return True

    def database_forwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        if not self._online(schema_editor):
            super().database_forwards(app_label, schema_editor, from_state, to_state)
            return
        model = to_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            if _partitioned(schema_editor, model._meta.db_table):
                add_partitioned_index_online(schema_editor, model, self.index)
            else:
                schema_editor.add_index(model, self.index, concurrently=True)

    def database_backwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        if not self._online(schema_editor):
            super().database_backwards(app_label, schema_editor, from_state, to_state)
            return
        model = from_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            # A partitioned index cannot be dropped CONCURRENTLY: a plain, short DROP.
            concurrently = not _partitioned(schema_editor, model._meta.db_table)
            schema_editor.remove_index(model, self.index, concurrently=concurrently)

    def describe(self) -> str:
        return f"{super().describe()} (concurrently on PostgreSQL)"


def _partitioned(schema_editor: Any, table: str) -> bool:
    from config.infra.partitions import is_partitioned

    with schema_editor.connection.cursor() as cursor:
        return is_partitioned(cursor, table)


def add_partitioned_index_online(schema_editor: Any, model: Any, index: Any, *, unique: bool = False) -> None:
    """Build ``index`` on a partitioned table without stopping its writes (PostgreSQL has
    no ``CREATE INDEX CONCURRENTLY`` for one): the index ``ON ONLY`` the parent (invalid,
    empty), then ``CONCURRENTLY`` on each partition, each attached to it; the parent's
    index is valid once every partition's is attached. Partitions created later get it
    from the parent. A partition's index is named ``<partition>_<index name>`` (truncated
    with a hash past 63 characters). ``unique``: a unique index (its columns must include
    the partition key).

    Raises:
        django.db.DatabaseError: a partition's build failed (its invalid index is left for
            ``DROP INDEX``; the migration can be run again).
    """
    from django.db.backends.utils import truncate_name

    from config.infra.partitions import partitions

    table = model._meta.db_table
    parent = index.create_sql(model, schema_editor)
    parent.template = parent.template.replace(" ON %(table)s", " ON ONLY %(table)s")
    if unique:
        parent.template = parent.template.replace("CREATE INDEX", "CREATE UNIQUE INDEX", 1)
    schema_editor.execute(parent)
    with schema_editor.connection.cursor() as cursor:
        names = [name for name, _, _ in partitions(cursor, table)]
    for partition in names:
        name = truncate_name(f"{partition}_{index.name}", schema_editor.connection.ops.max_name_length())
        statement = index.create_sql(model, schema_editor, concurrently=True)
        if unique:
            statement.template = statement.template.replace("CREATE INDEX", "CREATE UNIQUE INDEX", 1)
        statement.parts["table"] = schema_editor.quote_name(partition)
        statement.parts["name"] = schema_editor.quote_name(name)
        schema_editor.execute(statement)
        schema_editor.execute(
            f"ALTER INDEX {schema_editor.quote_name(index.name)} ATTACH PARTITION {schema_editor.quote_name(name)}"
        )


def drop_single_column_index(app_label: str, model_name: str, column: str, *, vendor: str | None = None) -> Any:
    """A ``RunPython`` pair that drops (forwards) and recreates (backwards) the plain
    single-column index Django made for a foreign key, found by introspection; only on the
    database ``vendor`` (``"postgresql"``, ``"sqlite"``) when given, on every one otherwise.

    For the database side of an ``AlterField(db_index=False)`` (inside a
    ``SeparateDatabaseAndState``): on SQLite ``AlterField`` rebuilds the whole table, which
    drops the table's triggers (the ledger's append-only trigger, the final entries
    trigger); dropping the index alone changes nothing else, on either database.
    """
    from django.db import migrations

    def _index_names(schema_editor: Any, table: str) -> list[str]:
        with schema_editor.connection.cursor() as cursor:
            constraints = schema_editor.connection.introspection.get_constraints(cursor, table)
        return [
            name
            for name, info in constraints.items()
            if info["index"] and not info["unique"] and not info["primary_key"] and info["columns"] == [column]
        ]

    def _skipped(schema_editor: Any) -> bool:
        return vendor is not None and schema_editor.connection.vendor != vendor

    def forwards(apps: Any, schema_editor: Any) -> None:
        if _skipped(schema_editor):
            return
        table = apps.get_model(app_label, model_name)._meta.db_table
        for name in _index_names(schema_editor, table):
            schema_editor.execute(f"DROP INDEX IF EXISTS {schema_editor.quote_name(name)}")

    def backwards(apps: Any, schema_editor: Any) -> None:
        if _skipped(schema_editor):
            return
        model = apps.get_model(app_label, model_name)
        table = model._meta.db_table
        if not _index_names(schema_editor, table):
            name = schema_editor._create_index_name(table, [column])
            schema_editor.execute(
                f"CREATE INDEX {schema_editor.quote_name(name)} ON {schema_editor.quote_name(table)} "
                f"({schema_editor.quote_name(column)})"
            )

    return migrations.RunPython(forwards, backwards)


def sqlite_triggers_around(*tables: str) -> tuple[Any, Any]:
    """Two ``RunPython`` operations to put first and last in a migration that makes SQLite
    rebuild ``tables`` (an ``AddField`` with a default, an ``AlterField``): the first drops
    every SQLite trigger whose text names one of them, the second creates them again from
    the text it kept. SQLite refuses to rename the rebuilt table while a trigger of another
    table names it ("error in trigger tables_entry_final: no such table: main.tables_hand"),
    and a rebuilt table loses its own triggers (0016_final_records_on_sqlite). On every other
    database both are no-ops."""
    from django.db import migrations

    kept: list[str] = []

    def drop(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "sqlite":
            return
        with schema_editor.connection.cursor() as cursor:
            cursor.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
            found = [(name, sql) for name, sql in cursor.fetchall() if any(table in sql for table in tables)]
        kept[:] = [sql for _, sql in found]
        for name, _sql in found:
            schema_editor.execute(f'DROP TRIGGER IF EXISTS "{name}"')

    def restore(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "sqlite":
            return
        for sql in kept:
            schema_editor.execute(sql)
        kept.clear()

    # Backwards the operations run in reverse order: the last one drops, the first restores.
    return (
        migrations.RunPython(drop, restore, elidable=False),
        migrations.RunPython(restore, drop, elidable=False),
    )
