"""Index seat_left_recent: the seats that left a table lately (issue 23: the deal round asks
which frozen players left during the wait by this, not by 100,000 user ids). Adds an index
only, so the release before it runs on against it."""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tables", "0029_freeze_players_lz4"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name="seat",
            index=models.Index(
                condition=models.Q(("status", "left")), fields=["table", "left_at"], name="seat_left_recent"
            ),
        ),
    ]
