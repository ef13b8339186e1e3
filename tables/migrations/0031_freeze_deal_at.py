"""A freeze's ``deal_at`` (issue 23, item 2): the next hand's inputs freeze one beacon period
before the previous hand's results end, and the hand is dealt at the later of its deal
round's time and that end. Nullable: a freeze made before it deals at its round's time."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("tables", "0030_seat_left_recent")]

    operations = [
        migrations.AddField(
            model_name="handfreeze",
            name="deal_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
