"""Index seat_left_recent: the seats that left a table lately (issue 23: the deal round asks
which frozen players left during the wait by this, not by 100,000 user ids). Built
``CONCURRENTLY`` on PostgreSQL (seats are written at every join, leave and heartbeat); an
index only, so the release before it runs on against it."""

from django.db import migrations, models

from config.infra.migration_operations import AddIndexOnline


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run in a transaction

    dependencies = [
        ("tables", "0029_freeze_players_lz4"),
    ]

    operations = [
        AddIndexOnline(
            model_name="seat",
            index=models.Index(
                condition=models.Q(("status", "left")), fields=["table", "left_at"], name="seat_left_recent"
            ),
        ),
    ]
