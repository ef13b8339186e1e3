"""Finished hands are final on SQLite again (the embedded default).

0003 created SQLite triggers refusing updates of a settled or cancelled hand and of its
entries; SQLite cannot alter a column in place, so Django rebuilds the table for an
``AlterField`` (0005, 0009-0011 on ``tables_hand``, 0013 on ``tables_entry``), and a
rebuilt table has lost its triggers. They are created again here, and
``tests/tables/test_final_records.py`` keeps them checked on whatever database the suite
runs. PostgreSQL keeps its triggers through ``ALTER TABLE``: nothing to do there.
"""

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

FINAL = "('settled', 'cancelled')"


def restore_sqlite_triggers(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor != "sqlite":
        return
    schema_editor.execute(
        f"CREATE TRIGGER IF NOT EXISTS tables_hand_final BEFORE UPDATE ON tables_hand WHEN OLD.status IN {FINAL} "
        "BEGIN SELECT RAISE(ABORT, 'the hand is over: its record is final'); END;"
    )
    schema_editor.execute(
        "CREATE TRIGGER IF NOT EXISTS tables_entry_final BEFORE UPDATE ON tables_entry "
        f"WHEN (SELECT status FROM tables_hand WHERE id = OLD.hand_id) IN {FINAL} "
        "BEGIN SELECT RAISE(ABORT, 'the hand is over: its entries are final'); END;"
    )


class Migration(migrations.Migration):
    dependencies = [  # also merges the two branches of 0015
        ("tables", "0015_merge_0014_entry_user_missed_0014_holdem_hand_players"),
        ("tables", "0015_practice_games"),
    ]

    operations = [migrations.RunPython(restore_sqlite_triggers, migrations.RunPython.noop)]
