"""A settled or cancelled hand is final, in the database itself (security audit F6).

The audit rewrote a settled hand's seed as the app's database user. On PostgreSQL a trigger
now refuses any UPDATE of a hand that is settled or cancelled, any UPDATE of an entry of such
a hand, and every DELETE of hands and entries; the app's role (``grant_app_role``) cannot
disable triggers, as it owns no table. On SQLite (the embedded default) only the UPDATEs are
refused: Django empties SQLite tables with DELETE, which tests and ``flush`` need.
"""

from __future__ import annotations

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

FINAL = "('settled', 'cancelled')"


def create_triggers(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(
            f"""
            CREATE OR REPLACE FUNCTION tables_hand_is_final() RETURNS trigger AS $$
            BEGIN
                IF TG_OP = 'DELETE' THEN
                    RAISE EXCEPTION 'hand records are never deleted (%% on %%)', TG_OP, TG_TABLE_NAME
                        USING ERRCODE = 'integrity_constraint_violation';
                END IF;
                IF OLD.status IN {FINAL} THEN
                    RAISE EXCEPTION 'hand %% is over: its record is final', OLD.id
                        USING ERRCODE = 'integrity_constraint_violation';
                END IF;
                RETURN NEW;
            END;
            $$ LANGUAGE plpgsql;
            """
        )
        schema_editor.execute(
            f"""
            CREATE OR REPLACE FUNCTION tables_entry_is_final() RETURNS trigger AS $$
            BEGIN
                IF TG_OP = 'DELETE' THEN
                    RAISE EXCEPTION 'hand records are never deleted (%% on %%)', TG_OP, TG_TABLE_NAME
                        USING ERRCODE = 'integrity_constraint_violation';
                END IF;
                IF (SELECT status FROM tables_hand WHERE id = OLD.hand_id) IN {FINAL} THEN
                    RAISE EXCEPTION 'hand %% is over: its entries are final', OLD.hand_id
                        USING ERRCODE = 'integrity_constraint_violation';
                END IF;
                RETURN NEW;
            END;
            $$ LANGUAGE plpgsql;
            """
        )
        for table, function in (("tables_hand", "tables_hand_is_final"), ("tables_entry", "tables_entry_is_final")):
            schema_editor.execute(
                f"CREATE TRIGGER {table}_final BEFORE UPDATE OR DELETE ON {table} "
                f"FOR EACH ROW EXECUTE FUNCTION {function}();"
            )
    elif vendor == "sqlite":
        schema_editor.execute(
            f"CREATE TRIGGER tables_hand_final BEFORE UPDATE ON tables_hand WHEN OLD.status IN {FINAL} "
            "BEGIN SELECT RAISE(ABORT, 'the hand is over: its record is final'); END;"
        )
        schema_editor.execute(
            "CREATE TRIGGER tables_entry_final BEFORE UPDATE ON tables_entry "
            f"WHEN (SELECT status FROM tables_hand WHERE id = OLD.hand_id) IN {FINAL} "
            "BEGIN SELECT RAISE(ABORT, 'the hand is over: its entries are final'); END;"
        )


def drop_triggers(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    vendor = schema_editor.connection.vendor
    for table in ("tables_hand", "tables_entry"):
        if vendor == "postgresql":
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_final ON {table};")
        elif vendor == "sqlite":
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_final;")
    if vendor == "postgresql":
        schema_editor.execute("DROP FUNCTION IF EXISTS tables_hand_is_final();")
        schema_editor.execute("DROP FUNCTION IF EXISTS tables_entry_is_final();")


class Migration(migrations.Migration):
    dependencies = [("tables", "0002_seat_socket_closed_at")]

    operations = [migrations.RunPython(create_triggers, drop_triggers)]
