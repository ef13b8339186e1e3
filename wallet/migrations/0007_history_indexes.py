"""Drop the single-column index of ``LedgerEntry.account``: ``ledger_account_recent``
(account, id descending) serves every lookup by account, and each index less is one write
less per ledger leg (a deal of 100,000 players writes 100,001 legs)."""

import django.db.models.deletion
from django.db import migrations, models

from config.infra.migration_operations import drop_single_column_index


class Migration(migrations.Migration):
    dependencies = [
        ("wallet", "0006_merge_0005_funds_holds_0005_player_protection"),
    ]

    operations = [
        # The index only: AlterField would rebuild the table on SQLite and lose its trigger.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="ledgerentry",
                    name="account",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="entries",
                        to="wallet.account",
                    ),
                ),
            ],
            database_operations=[drop_single_column_index("wallet", "ledgerentry", "account_id")],
        ),
    ]
