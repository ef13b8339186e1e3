"""The frozen players of an algorithm 3 freeze (``tables_handfreeze.players``) in
PostgreSQL's ``json`` type instead of ``jsonb``, and their number in a column of its own
(issue 23).

The freeze writes that value (6 MB for a hand of 100,000) inside the deadline-to-change-frame
path, and the deal round reads it back whole; nothing queries inside it. ``jsonb`` parses
it into its binary form on the way in and prints it back on the way out: 135-220 ms in and
60-75 ms out, against 50-60 and 15-20 ms as ``json`` (LZ4 both; docs/benchmarks.md). A
public frame only counts the players: ``json_array_length`` would parse the 6 MB (20-30 ms a
frame, where ``jsonb_array_length`` read a header), so the count is stored with the freeze
(``player_count``, filled here for the rows already stored). The column keeps LZ4
(migration 0029), set again after the type change. Stored rows are converted by
PostgreSQL's cast (``jsonb`` to ``json``: the same value). SQLite (the embedded default)
keeps its text column.
"""

from importlib import import_module

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

import tables.models.fields

# Migration 0029's ``ALTER COLUMN players SET COMPRESSION lz4`` (kept where the server has no LZ4).
_lz4 = import_module("tables.migrations.0029_freeze_players_lz4").forwards


def _count_players(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    freezes = apps.get_model("tables", "HandFreeze").objects.using(schema_editor.connection.alias)
    for freeze in freezes.only("pk", "players").iterator():
        freezes.filter(pk=freeze.pk).update(player_count=len(freeze.players))


class Migration(migrations.Migration):
    dependencies = [("tables", "0029_freeze_players_lz4")]

    operations = [
        migrations.AddField(
            model_name="handfreeze",
            name="player_count",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(_count_players, migrations.RunPython.noop, elidable=False),
        # Backwards, LZ4 again once the column is jsonb again (a type change resets it).
        migrations.RunPython(migrations.RunPython.noop, _lz4, elidable=False),
        migrations.AlterField(
            model_name="handfreeze",
            name="players",
            field=tables.models.fields.PlainJSONField(),
        ),
        migrations.RunPython(_lz4, migrations.RunPython.noop, elidable=False),
    ]
