"""The frozen players of an algorithm 3 freeze (``tables_handfreeze.players``, 6 MB of
JSON for a hand of 100,000) are compressed with LZ4 instead of PostgreSQL's default pglz
(issue 23).

The freeze writes that value inside the deadline-to-change-frame path. Measured on
PostgreSQL 15 (2 cores, docs/benchmarks.md): inserting it took 250-280 ms with pglz and
134 ms with LZ4. A server built without LZ4 keeps pglz (``feature_not_supported``), and
the value stays the same. Rows already stored keep their compression. SQLite (the embedded
default) has no such setting.
"""

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def _compression(method: str) -> str:
    return (
        "DO $$ BEGIN "
        f"ALTER TABLE tables_handfreeze ALTER COLUMN players SET COMPRESSION {method}; "
        "EXCEPTION WHEN feature_not_supported THEN NULL; "
        "END $$"
    )


def forwards(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(_compression("lz4"))


def backwards(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(_compression("pglz"))


class Migration(migrations.Migration):
    dependencies = [("tables", "0028_s4conds_widerpoker_conditions")]

    operations = [migrations.RunPython(forwards, backwards, elidable=False)]
