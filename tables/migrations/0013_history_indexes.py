"""Indexes for years of hands (docs/platform.md, "Data that grows for years").

A player's history reads his entries newest first through ``entry_user_recent`` (user,
hand descending) instead of sorting all of them; auditors' date ranges find hands through
``hand_settled_at``. The single-column indexes of ``Entry.hand`` and ``Entry.user`` go:
``hand`` leads five other indexes and ``user`` leads ``entry_user_recent``, and each index
less is one write less per entry at the deal. The new indexes are built first (and
``CONCURRENTLY`` on PostgreSQL, so hands go on being dealt), then the old ones dropped.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from config.infra.migration_operations import AddIndexOnline, drop_single_column_index


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run in a transaction

    dependencies = [
        ("jackpots", "0001_initial"),
        ("tables", "0012_merge_0010_redeal_counter_0011_jackpot_totals"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        AddIndexOnline(
            model_name="entry",
            index=models.Index(fields=["user", "-hand"], name="entry_user_recent"),
        ),
        AddIndexOnline(
            model_name="hand",
            index=models.Index(fields=["settled_at"], name="hand_settled_at"),
        ),
        # The index only: AlterField would rebuild the table on SQLite and lose its trigger.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="entry",
                    name="hand",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="entries",
                        to="tables.hand",
                    ),
                ),
                migrations.AlterField(
                    model_name="entry",
                    name="user",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="entries",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            database_operations=[
                drop_single_column_index("tables", "entry", "hand_id"),
                drop_single_column_index("tables", "entry", "user_id"),
            ],
        ),
    ]
