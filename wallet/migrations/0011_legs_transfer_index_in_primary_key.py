"""Drop the single-column index of ``LedgerEntry.transfer`` on PostgreSQL: since 0010 the
legs' primary key there is ``(transfer_id, id)``, which serves every lookup by transfer (a
transfer's legs, ``verify_chain``'s chunks, the one-day ledger export), so the index was a
second write per leg for nothing (a deal of 100,000 players writes 100,001 legs).

SQLite (the embedded default) keeps its index: its primary key is ``id`` alone. The model
state says ``db_index=False`` on both; on SQLite the index stays as a physical extra (a
table rebuild there, by a later ``AlterField``, would drop it: give it back then)."""

import django.db.models.deletion
from django.db import migrations, models

from config.infra.migration_operations import drop_single_column_index


class Migration(migrations.Migration):
    dependencies = [("wallet", "0010_partitioned_ledger")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="ledgerentry",
                    name="transfer",
                    field=models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="entries",
                        to="wallet.transfer",
                    ),
                ),
            ],
            database_operations=[drop_single_column_index("wallet", "ledgerentry", "transfer_id", vendor="postgresql")],
        ),
    ]
