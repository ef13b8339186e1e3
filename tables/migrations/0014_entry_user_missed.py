"""A partial index of the entries whose player was not connected at the end of the hand,
by player and newest hand: the table page looks for a result the player missed on every
visit (``tables.selectors.find_missed_result``), which otherwise reads all of a player's
entries (50,000 for a player of years, docs/benchmarks.md). Built ``CONCURRENTLY`` on
PostgreSQL."""

from django.db import migrations, models

from config.infra.migration_operations import AddIndexOnline


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run in a transaction

    dependencies = [
        ("tables", "0013_history_indexes"),
    ]

    operations = [
        AddIndexOnline(
            model_name="entry",
            index=models.Index(
                condition=models.Q(("connected_at_end", False)),
                fields=["user", "-hand"],
                name="entry_user_missed",
            ),
        ),
    ]
