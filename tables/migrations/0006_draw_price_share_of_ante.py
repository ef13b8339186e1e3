# The draw price becomes a share of the ante (seed 001, C.1: "an amount proportional to the
# ante"). Existing tables keep their price: bps = round(price x 10000 / ante), capped.

from django.db import migrations, models


def price_to_share(apps, schema_editor):
    Table = apps.get_model("tables", "Table")
    for table in Table.objects.all().only("id", "ante_minor", "draw_price_minor", "pending_changes"):
        bps = min(100_000, (table.draw_price_minor * 10_000 + table.ante_minor // 2) // table.ante_minor)
        pending = dict(table.pending_changes or {})
        if "draw_price_minor" in pending:  # a change scheduled for after the running hand
            ante = pending.get("ante_minor", table.ante_minor)
            pending["draw_price_bps"] = min(100_000, (pending.pop("draw_price_minor") * 10_000 + ante // 2) // ante)
        Table.objects.filter(pk=table.pk).update(draw_price_bps=bps, pending_changes=pending)


def share_to_price(apps, schema_editor):
    Table = apps.get_model("tables", "Table")
    for table in Table.objects.all().only("id", "ante_minor", "draw_price_bps"):
        Table.objects.filter(pk=table.pk).update(draw_price_minor=table.ante_minor * table.draw_price_bps // 10_000)


class Migration(migrations.Migration):

    dependencies = [
        ('jackpots', '0001_initial'),
        ('tables', '0005_jackpots'),
    ]

    operations = [
        migrations.AddField(
            model_name='table',
            name='draw_price_bps',
            field=models.PositiveIntegerField(default=5000, help_text='Price of each draw after the first as a share of the ante (5000 = half the ante; seed 001, C.1).'),
        ),
        migrations.RunPython(price_to_share, share_to_price),
        migrations.RemoveConstraint(
            model_name='table',
            name='table_prices_non_negative',
        ),
        migrations.RemoveField(
            model_name='table',
            name='draw_price_minor',
        ),
        migrations.AddConstraint(
            model_name='table',
            constraint=models.CheckConstraint(condition=models.Q(('draw_price_bps__lte', 100000), ('min_prize_minor__gte', 0), ('redeal_price_minor__gte', 0)), name='table_prices_non_negative'),
        ),
    ]
