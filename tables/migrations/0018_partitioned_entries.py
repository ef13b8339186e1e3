"""Entries partitioned by hand id on PostgreSQL (issue 12; docs/platform.md, "Partitioning").

``tables_entry`` becomes ``PARTITION BY RANGE (hand_id)``: partitions of
``ENTRY_PARTITION_HANDS`` hands from 0 past the newest hand, two more ahead, and a
``DEFAULT`` one; ``manage.py ensure_partitions`` (Celery beat, daily) keeps creating them.
The primary key in the database is ``(hand_id, id)`` (PostgreSQL wants the partition key in
every unique constraint); Django's model state is unchanged, ``id`` stays unique (one
identity sequence, restarted past the old one's last value). Every index, constraint and
trigger (the final entries' statement triggers) keeps its name; each partition takes the
table's ``fillfactor = 40`` (0017). The rows are copied by one ``INSERT … SELECT`` under an
``ACCESS EXCLUSIVE`` lock: deals wait for the copy (docs/platform.md gives the cost and the
online way for a big database). Backwards: one plain table again. SQLite keeps its table.
"""

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

from config.infra.partitions import ENTRIES, partition_table, unpartition_table


def forwards(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    partition_table(schema_editor, ENTRIES)


def backwards(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    unpartition_table(schema_editor, ENTRIES)


class Migration(migrations.Migration):
    dependencies = [("tables", "0017_entries_at_scale")]

    operations = [migrations.RunPython(forwards, backwards)]
