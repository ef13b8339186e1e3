"""A finished Hold'em hand is final in the database, as a WiderPoker hand is (0003, 0016).

Security audit 2026-11-26, M3: the app's role rewrote a settled Hold'em hand's results and
seed, then deleted it and its players' rows. Now:

- **PostgreSQL.** A trigger refuses every DELETE of ``tables_holdemhand`` and
  ``tables_holdemhandplayer`` rows, and any UPDATE that changes a settled or cancelled
  hand (every column but those in ``WRITABLE_AFTER_END``, none today: nothing writes a
  Hold'em hand once it is over, the seed is revealed by the settlement's own write). A hand
  that is still being played may change (its actions, its turn, then its settlement). A
  hand player's row may not be inserted into, moved into or out of, or updated in a
  finished hand. The app's role cannot disable the triggers (it owns no table), and
  ``grant_app_role`` no longer gives it DELETE on these tables either.
- **SQLite** (the embedded default): updates of a finished hand and of its players' rows,
  and inserts into a finished hand, are refused; deletes are not, because Django empties
  SQLite tables with DELETE (tests, ``flush``). A later ``AlterField`` that rebuilds one
  of these SQLite tables loses its triggers (as 0016 explains): create them again with
  ``create_sqlite_triggers``; ``tests/tables/test_final_records.py`` checks them on
  whatever database the suite runs.
"""

from __future__ import annotations

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

FINAL = "('settled', 'cancelled')"

WRITABLE_AFTER_END: tuple[str, ...] = ()
"""Columns of ``tables_holdemhand`` the platform may still write once a hand is settled or
cancelled (a later reveal, say). None today."""


def create_sqlite_triggers(schema_editor: BaseDatabaseSchemaEditor) -> None:
    """The SQLite triggers (idempotent: ``IF NOT EXISTS``)."""
    schema_editor.execute(
        "CREATE TRIGGER IF NOT EXISTS tables_holdemhand_final BEFORE UPDATE ON tables_holdemhand "
        f"WHEN OLD.status IN {FINAL} "
        "BEGIN SELECT RAISE(ABORT, 'the Hold''em hand is over: its record is final'); END;"
    )
    schema_editor.execute(
        "CREATE TRIGGER IF NOT EXISTS tables_holdemhandplayer_final BEFORE UPDATE ON tables_holdemhandplayer "
        f"WHEN (SELECT status FROM tables_holdemhand WHERE id = OLD.hand_id) IN {FINAL} "
        f"OR (SELECT status FROM tables_holdemhand WHERE id = NEW.hand_id) IN {FINAL} "
        "BEGIN SELECT RAISE(ABORT, 'the Hold''em hand is over: its players are final'); END;"
    )
    schema_editor.execute(
        "CREATE TRIGGER IF NOT EXISTS tables_holdemhandplayer_final_insert BEFORE INSERT ON tables_holdemhandplayer "
        f"WHEN (SELECT status FROM tables_holdemhand WHERE id = NEW.hand_id) IN {FINAL} "
        "BEGIN SELECT RAISE(ABORT, 'the Hold''em hand is over: its players are final'); END;"
    )


def forwards(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        create_sqlite_triggers(schema_editor)
        return
    if vendor != "postgresql":
        return
    writable = "ARRAY[" + ", ".join(f"'{column}'" for column in WRITABLE_AFTER_END) + "]::text[]"
    schema_editor.execute(
        f"""
        CREATE OR REPLACE FUNCTION tables_holdem_hand_is_final() RETURNS trigger AS $$
        BEGIN
            IF TG_OP = 'DELETE' THEN
                RAISE EXCEPTION 'hand records are never deleted (%% on %%)', TG_OP, TG_TABLE_NAME
                    USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            IF OLD.status IN {FINAL}
                AND (to_jsonb(NEW) - {writable}) IS DISTINCT FROM (to_jsonb(OLD) - {writable}) THEN
                RAISE EXCEPTION 'Hold''em hand %% is over: its record is final', OLD.id
                    USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN NEW;
        END;
        $$ LANGUAGE plpgsql;
        """
    )
    schema_editor.execute(
        f"""
        CREATE OR REPLACE FUNCTION tables_holdem_hand_player_is_final() RETURNS trigger AS $$
        BEGIN
            IF TG_OP = 'DELETE' THEN
                RAISE EXCEPTION 'hand records are never deleted (%% on %%)', TG_OP, TG_TABLE_NAME
                    USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            IF TG_OP = 'UPDATE'
                AND (SELECT status FROM tables_holdemhand WHERE id = OLD.hand_id) IN {FINAL} THEN
                RAISE EXCEPTION 'Hold''em hand %% is over: its players are final', OLD.hand_id
                    USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            IF (SELECT status FROM tables_holdemhand WHERE id = NEW.hand_id) IN {FINAL} THEN
                RAISE EXCEPTION 'Hold''em hand %% is over: its players are final', NEW.hand_id
                    USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN NEW;
        END;
        $$ LANGUAGE plpgsql;
        """
    )
    schema_editor.execute(
        "CREATE TRIGGER tables_holdemhand_final BEFORE UPDATE OR DELETE ON tables_holdemhand "
        "FOR EACH ROW EXECUTE FUNCTION tables_holdem_hand_is_final()"
    )
    schema_editor.execute(
        "CREATE TRIGGER tables_holdemhandplayer_final BEFORE INSERT OR UPDATE OR DELETE ON tables_holdemhandplayer "
        "FOR EACH ROW EXECUTE FUNCTION tables_holdem_hand_player_is_final()"
    )


def backwards(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        for name in (
            "tables_holdemhand_final",
            "tables_holdemhandplayer_final",
            "tables_holdemhandplayer_final_insert",
        ):
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}")
    elif vendor == "postgresql":
        schema_editor.execute("DROP TRIGGER IF EXISTS tables_holdemhand_final ON tables_holdemhand")
        schema_editor.execute("DROP TRIGGER IF EXISTS tables_holdemhandplayer_final ON tables_holdemhandplayer")
        schema_editor.execute("DROP FUNCTION IF EXISTS tables_holdem_hand_is_final()")
        schema_editor.execute("DROP FUNCTION IF EXISTS tables_holdem_hand_player_is_final()")


class Migration(migrations.Migration):
    dependencies = [("tables", "0018_partitioned_entries")]

    operations = [migrations.RunPython(forwards, backwards)]
