"""Migration operations for tables that hold years of rows (docs/platform.md, "Data that
grows for years").

On PostgreSQL a plain ``CREATE INDEX`` locks the table against writes for as long as it
builds: 30-60 s for 10^7 entries on the benchmark box, during which no hand could be dealt.
``AddIndexOnline`` builds the index ``CONCURRENTLY`` there (writes go on; the migration must
be ``atomic = False``) and is an ordinary ``AddIndex`` on every other database (the embedded
SQLite default), so one migration file serves both.
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
            schema_editor.add_index(model, self.index, concurrently=True)

    def database_backwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        if not self._online(schema_editor):
            super().database_backwards(app_label, schema_editor, from_state, to_state)
            return
        model = from_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.remove_index(model, self.index, concurrently=True)

    def describe(self) -> str:
        return f"{super().describe()} (concurrently on PostgreSQL)"


def drop_single_column_index(app_label: str, model_name: str, column: str) -> Any:
    """A ``RunPython`` pair that drops (forwards) and recreates (backwards) the plain
    single-column index Django made for a foreign key, found by introspection.

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

    def forwards(apps: Any, schema_editor: Any) -> None:
        table = apps.get_model(app_label, model_name)._meta.db_table
        for name in _index_names(schema_editor, table):
            schema_editor.execute(f"DROP INDEX IF EXISTS {schema_editor.quote_name(name)}")

    def backwards(apps: Any, schema_editor: Any) -> None:
        model = apps.get_model(app_label, model_name)
        table = model._meta.db_table
        if not _index_names(schema_editor, table):
            name = schema_editor._create_index_name(table, [column])
            schema_editor.execute(
                f"CREATE INDEX {schema_editor.quote_name(name)} ON {schema_editor.quote_name(table)} "
                f"({schema_editor.quote_name(column)})"
            )

    return migrations.RunPython(forwards, backwards)
