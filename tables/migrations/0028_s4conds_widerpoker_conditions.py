"""The WiderPoker conditions leave the house's ``Table`` for a row of their own,
``WiderPokerConditions`` (one-to-one, primary key = the table; issue 21, stage 2).

Forwards: the new table is created, every WiderPoker table's values are copied into its
conditions row, then the columns and their check constraints leave ``tables_table``.
Backwards: the columns come back (nullable for a moment), every WiderPoker table gets its
values back from its row; a Hold'em table gets the neutral values it used to hold (the big
blind as the ante, its rake, no redeals, 3 s of results), any other table an ante of 1;
then the columns are NOT NULL again and the conditions table is dropped. Works on
PostgreSQL and SQLite (``tables_table`` has no triggers)."""

from typing import Any

import django.db.models.deletion
from django.db import migrations, models

FIELDS = (
    "ante_minor",
    "change_seconds",
    "results_seconds",
    "rake_bps",
    "paid_fraction_bps",
    "min_prize_minor",
    "draw_price_bps",
    "max_draws",
    "redeal_price_minor",
    "max_redeals",
    "redeal_seconds",
)


def copy_to_conditions(apps: Any, schema_editor: Any) -> None:
    """One conditions row per WiderPoker table, with the table's values."""
    table_model = apps.get_model("tables", "Table")
    conditions_model = apps.get_model("tables", "WiderPokerConditions")
    rows = table_model.objects.filter(game="widerpoker").values("pk", *FIELDS).order_by("pk")
    conditions_model.objects.bulk_create(
        [conditions_model(table_id=row.pop("pk"), **row) for row in rows.iterator()], batch_size=1000
    )


def copy_back_to_tables(apps: Any, schema_editor: Any) -> None:
    """Every table's columns filled again: WiderPoker's from its conditions row, Hold'em's
    with the neutral values it held before, any other game's with an ante of 1."""
    table_model = apps.get_model("tables", "Table")
    conditions_model = apps.get_model("tables", "WiderPokerConditions")
    holdem_model = apps.get_model("tables", "HoldemConditions")
    for row in conditions_model.objects.values("table_id", *FIELDS).order_by("table_id").iterator():
        table_model.objects.filter(pk=row.pop("table_id")).update(**row)
    for holdem in holdem_model.objects.values("table_id", "big_blind_minor", "rake_bps").iterator():
        table_model.objects.filter(pk=holdem["table_id"]).update(
            ante_minor=holdem["big_blind_minor"],
            rake_bps=holdem["rake_bps"],
            redeal_price_minor=0,
            max_redeals=0,
            results_seconds=3,
        )
    table_model.objects.filter(ante_minor__isnull=True).update(ante_minor=1)
    table_model.objects.filter(redeal_price_minor__isnull=True).update(redeal_price_minor=0)


class Migration(migrations.Migration):
    dependencies = [
        ("tables", "0027_merge_deal"),
    ]

    operations = [
        migrations.CreateModel(
            name="WiderPokerConditions",
            fields=[
                (
                    "table",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="widerpoker",
                        serialize=False,
                        to="tables.table",
                    ),
                ),
                ("ante_minor", models.BigIntegerField()),
                ("change_seconds", models.PositiveIntegerField(default=30, help_text="Length of the change phase.")),
                (
                    "results_seconds",
                    models.PositiveIntegerField(default=8, help_text="How long results stay on screen."),
                ),
                (
                    "rake_bps",
                    models.PositiveIntegerField(default=500, help_text="Rake in basis points (500 = 5%), at most 10%."),
                ),
                (
                    "paid_fraction_bps",
                    models.PositiveIntegerField(default=1500, help_text="Share of entries paid (1500 = 15%)."),
                ),
                ("min_prize_minor", models.BigIntegerField(default=0, help_text="Smallest prize of a paid place.")),
                (
                    "draw_price_bps",
                    models.PositiveIntegerField(
                        default=5000,
                        help_text=(
                            "Price of each draw after the first as a share of the ante (5000 = half the ante;"
                            " seed 001, C.1)."
                        ),
                    ),
                ),
                (
                    "max_draws",
                    models.PositiveSmallIntegerField(default=5, help_text="Draws per hand, the first included (1-5)."),
                ),
                ("redeal_price_minor", models.BigIntegerField()),
                ("max_redeals", models.PositiveSmallIntegerField(default=2)),
                (
                    "redeal_seconds",
                    models.PositiveIntegerField(
                        default=20, help_text="Redeals are sold during the first N seconds of the change phase."
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "WiderPoker conditions",
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("rake_bps__lte", 1000)), name="widerpoker_rake_at_most_10_percent"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("max_draws__gte", 1), ("max_draws__lte", 5)),
                        name="widerpoker_max_draws_1_to_5",
                    ),
                    models.CheckConstraint(condition=models.Q(("ante_minor__gt", 0)), name="widerpoker_ante_positive"),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("draw_price_bps__lte", 100000), ("min_prize_minor__gte", 0), ("redeal_price_minor__gte", 0)
                        ),
                        name="widerpoker_prices_non_negative",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("paid_fraction_bps__gte", 1), ("paid_fraction_bps__lte", 10000)),
                        name="widerpoker_paid_fraction_valid",
                    ),
                ],
            },
        ),
        # Nullable for the moment the migration runs backwards: the columns come back empty
        # before copy_back_to_tables fills them.
        migrations.AlterField(model_name="table", name="ante_minor", field=models.BigIntegerField(null=True)),
        migrations.AlterField(model_name="table", name="redeal_price_minor", field=models.BigIntegerField(null=True)),
        migrations.RunPython(copy_to_conditions, copy_back_to_tables),
        *(
            migrations.RemoveConstraint(model_name="table", name=name)
            for name in (
                "table_rake_at_most_10_percent",
                "table_max_draws_1_to_5",
                "table_ante_positive",
                "table_paid_fraction_valid",
                "table_prices_non_negative",
            )
        ),
        *(migrations.RemoveField(model_name="table", name=name) for name in FIELDS),
        migrations.AlterModelOptions(name="table", options={"ordering": ["name"]}),
    ]
