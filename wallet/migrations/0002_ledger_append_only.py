"""Make ledger entries and transfers append-only in the database itself, so no code path,
raw SQL or admin slip can rewrite history (RELIABILITY_ANCHORS.md M5).

PostgreSQL (production) refuses UPDATE and DELETE. SQLite (the embedded default) refuses
UPDATE only: Django empties SQLite tables with DELETE (there is no TRUNCATE), which the test
suite and `manage.py flush` need on a development database.
"""

from __future__ import annotations

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

TABLES = ("wallet_ledgerentry", "wallet_transfer")


def create_triggers(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(
            """
            CREATE OR REPLACE FUNCTION wallet_refuse_change() RETURNS trigger AS $$
            BEGIN
                RAISE EXCEPTION 'ledger rows are append-only (%% on %%)', TG_OP, TG_TABLE_NAME
                    USING ERRCODE = 'integrity_constraint_violation';
            END;
            $$ LANGUAGE plpgsql;
            """
        )
        for table in TABLES:
            schema_editor.execute(
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION wallet_refuse_change();"
            )
    elif vendor == "sqlite":
        for table in TABLES:
            for operation in ("UPDATE",):
                schema_editor.execute(
                    f"CREATE TRIGGER {table}_no_{operation.lower()} BEFORE {operation} ON {table} "
                    f"BEGIN SELECT RAISE(ABORT, 'ledger rows are append-only'); END;"
                )


def drop_triggers(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    vendor = schema_editor.connection.vendor
    for table in TABLES:
        if vendor == "postgresql":
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_append_only ON {table};")
        elif vendor == "sqlite":
            for operation in ("update",):
                schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_no_{operation};")
    if vendor == "postgresql":
        schema_editor.execute("DROP FUNCTION IF EXISTS wallet_refuse_change();")


class Migration(migrations.Migration):
    dependencies = [("wallet", "0001_initial")]

    operations = [migrations.RunPython(create_triggers, drop_triggers)]
