"""Ledger legs partitioned by transfer id on PostgreSQL (issue 12; docs/platform.md,
"Partitioning").

``wallet_ledgerentry`` becomes ``PARTITION BY RANGE (transfer_id)``: partitions of
``LEDGER_PARTITION_TRANSFERS`` transfers from 0 past the newest transfer, two more ahead,
and a ``DEFAULT`` one; ``manage.py ensure_partitions`` (Celery beat, daily) keeps creating
them. The primary key in the database is ``(transfer_id, id)``; Django's model state is
unchanged, ``id`` stays unique (one identity sequence, restarted past the old one's last
value). ``ledger_account_recent`` and the append-only row trigger (0002, cloned by
PostgreSQL onto every partition, present and future) keep their names. The hash chain
seals legs by content, not by place: ``verify_books`` gives the same heads before and
after. Backwards: one plain table again. SQLite keeps its table.
"""

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

from config.infra.partitions import LEGS, partition_table, unpartition_table


def forwards(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    partition_table(schema_editor, LEGS)


def backwards(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    unpartition_table(schema_editor, LEGS)


class Migration(migrations.Migration):
    dependencies = [("wallet", "0009_ledger_at_scale")]

    operations = [migrations.RunPython(forwards, backwards)]
