"""One index by player and hand instead of two (issue 23, item 2: every index of an entry is
written 100,000 times at a deal of 100,000).

The entries had a unique constraint by hand and player (``one_entry_per_player_and_hand``)
and a plain index by player and hand, newest first (``entry_user_recent``, a player's
history). Both hold the same pairs: the index by player becomes **unique**, under its old
name, and the constraint by hand goes. A hand's entries are found by the two other
indexes that lead with the hand (the primary key ``(hand_id, id)`` on PostgreSQL and
``entry_combination_unique_in_hand``); one player's entry in one hand by the unique index.
Measured on a copy of 100,000 entries: 2.44-2.67 s to insert them with four indexes,
1.70-1.90 s with three (docs/benchmarks.md).

On PostgreSQL the unique index is built without stopping the deals: ``ON ONLY`` the
partitioned parent, then ``CONCURRENTLY`` on each partition and attached
(``add_partitioned_index_online``), under a temporary name; then the old index and the
constraint are dropped (short catalogue changes) and the new index takes the old name. On
SQLite (the embedded default) Django's own operations run; dropping a unique constraint
rebuilds the table there, so the table's SQLite triggers are dropped before and made again
after (``sqlite_triggers_around``). Backwards restores both, blocking writes while the
constraint builds.
"""

from typing import Any

from django.db import migrations, models
from django.db.models import F

from config.infra.migration_operations import add_partitioned_index_online, sqlite_triggers_around
from config.infra.partitions import is_partitioned

OLD_UNIQUE = models.UniqueConstraint(fields=["hand", "user"], name="one_entry_per_player_and_hand")
OLD_INDEX = models.Index(fields=["user", "-hand"], name="entry_user_recent")
NEW_UNIQUE = models.UniqueConstraint(F("user"), F("hand").desc(), name="entry_user_recent")
BUILDING = "entry_user_recent_unique"  # the new index's name until the old one is dropped


class OnlyOn(migrations.operations.base.Operation):
    """``operation`` on the database ``vendor`` only; its state change everywhere (inside
    ``SeparateDatabaseAndState``'s database operations, whose states it keeps in step)."""

    reversible = True

    def __init__(self, vendor: str, operation: Any) -> None:
        self.vendor = vendor
        self.operation = operation

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        return (self.__class__.__qualname__, [self.vendor, self.operation], {})

    def state_forwards(self, app_label: str, state: Any) -> None:
        self.operation.state_forwards(app_label, state)

    def database_forwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        if schema_editor.connection.vendor == self.vendor:
            self.operation.database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        if schema_editor.connection.vendor == self.vendor:
            self.operation.database_backwards(app_label, schema_editor, from_state, to_state)

    def describe(self) -> str:
        return f"{self.operation.describe()} (on {self.vendor})"


def _postgres_forwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    model = apps.get_model("tables", "Entry")
    table = model._meta.db_table
    quote = schema_editor.quote_name
    building = models.Index(fields=["user", "-hand"], name=BUILDING)
    with schema_editor.connection.cursor() as cursor:
        partitioned = is_partitioned(cursor, table)
    if partitioned:
        add_partitioned_index_online(schema_editor, model, building, unique=True)
    else:
        schema_editor.execute(
            f"CREATE UNIQUE INDEX CONCURRENTLY {quote(BUILDING)} ON {quote(table)} (user_id, hand_id DESC)"
        )
    schema_editor.execute(f"DROP INDEX {quote(OLD_INDEX.name)}")
    schema_editor.execute(f"ALTER INDEX {quote(BUILDING)} RENAME TO {quote(NEW_UNIQUE.name)}")
    schema_editor.execute(f"ALTER TABLE {quote(table)} DROP CONSTRAINT {quote(OLD_UNIQUE.name)}")


def _postgres_backwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    table = apps.get_model("tables", "Entry")._meta.db_table
    quote = schema_editor.quote_name
    schema_editor.execute(
        f"ALTER TABLE {quote(table)} ADD CONSTRAINT {quote(OLD_UNIQUE.name)} UNIQUE (hand_id, user_id)"
    )
    schema_editor.execute(f"DROP INDEX {quote(NEW_UNIQUE.name)}")
    schema_editor.execute(f"CREATE INDEX {quote(OLD_INDEX.name)} ON {quote(table)} (user_id, hand_id DESC)")


DROP_TRIGGERS, RESTORE_TRIGGERS = sqlite_triggers_around("tables_entry")


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run in a transaction

    dependencies = [("tables", "0031_freeze_deal_at")]

    operations = [
        DROP_TRIGGERS,
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveIndex(model_name="entry", name=OLD_INDEX.name),
                migrations.RemoveConstraint(model_name="entry", name=OLD_UNIQUE.name),
                migrations.AddConstraint(model_name="entry", constraint=NEW_UNIQUE),
            ],
            database_operations=[
                OnlyOn("sqlite", migrations.RemoveIndex(model_name="entry", name=OLD_INDEX.name)),
                OnlyOn("sqlite", migrations.RemoveConstraint(model_name="entry", name=OLD_UNIQUE.name)),
                OnlyOn("sqlite", migrations.AddConstraint(model_name="entry", constraint=NEW_UNIQUE)),
                migrations.RunPython(_postgres_forwards, _postgres_backwards),
            ],
        ),
        RESTORE_TRIGGERS,
    ]
