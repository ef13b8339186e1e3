"""Entries written and settled in bulk: a hand of 100,000 players (issue 12).

What a deal and a settlement of 100,000 entries cost, measured on PostgreSQL 15 (2 cores,
docs/benchmarks.md), and what this migration changes:

- **Fewer indexes.** ``COPY`` of 100,000 entries into the table's 8 indexes took 2.7 s, into
  4 took 1.5 s. Dropped: the unique ``(hand, join_order)`` (the deal numbers entries 0..n-1
  itself, from the hand's seed: docs/provably-fair.md), ``entry_hand_initial`` (replaced by
  ``entry_redealt_initial``, which holds only the entries that redealt: a redeal's free
  combination is checked against ``(hand, combination)``, it and the redeal log),
  ``entry_hand_place`` (a hand's entries are sorted by place when listed: a top-N sort of
  one hand's rows) and ``entry_user_missed`` (the missed-result lookup reads
  ``entry_user_recent`` down to the table's first hand settled in the last day, found by
  the new ``hand_table_settled``, one row per hand).
- **Results written in place (HOT).** None of the columns settlement writes is indexed any
  more, and ``fillfactor = 40`` leaves room in every page for its entries' results (a
  settled entry is ~233 bytes against ~145 when dealt), so PostgreSQL writes each result as a
  heap-only tuple: no index entry, no new page. The settlement's ``UPDATE`` of 100,000
  entries went from 4.7 s (8 indexes, no room) to 0.54 s (all HOT). The price: the heap takes
  about 1.6 times the room of a packed one.
- **One check per statement, not per row.** The trigger that keeps a finished hand's
  entries final (0003) read the hand once per updated entry; it now reads the updated rows'
  hands once per statement (a transition table). Deletes stay refused.
- **No per-row foreign-key check for the entry's hand and player.** PostgreSQL checked both
  references of each new entry at commit, one lookup each (2.2 s for 100,000 entries). The
  deal inserts the hand in the same transaction and takes the players from their seats
  (whose own foreign keys stand); hands are never deleted (0003), and a player with entries
  can no longer be deleted either (the trigger below), so the references cannot break.
  ``tables.selectors.check_references`` and ``wallet.selectors.check_books`` check it.

Gaming sessions: the deal counts a hand in every dealt player's session; ``fillfactor = 45``
leaves each page room for a new version of every row in it, so those 100,000 updates (no
indexed column) stay in their pages (HOT; at 70, 42% were).

SQLite (the embedded default) rebuilds the table for these changes and loses its triggers:
they are created again (0016's function).
"""

from importlib import import_module

from django.conf import settings
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

from config.infra.migration_operations import AddIndexOnline

FILLFACTOR = 40
FINAL = "('settled', 'cancelled')"
_restore_sqlite_triggers = import_module("tables.migrations.0016_final_records_on_sqlite").restore_sqlite_triggers


def forwards(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        _restore_sqlite_triggers(apps, schema_editor)
        return
    schema_editor.execute(f"ALTER TABLE tables_entry SET (fillfactor = {FILLFACTOR})")
    schema_editor.execute("ALTER TABLE tables_gamingsession SET (fillfactor = 45)")
    schema_editor.execute("DROP TRIGGER IF EXISTS tables_entry_final ON tables_entry")
    schema_editor.execute(
        f"""
        CREATE OR REPLACE FUNCTION tables_entries_are_final() RETURNS trigger AS $$
        BEGIN
            IF TG_OP = 'DELETE' THEN
                IF EXISTS (SELECT 1 FROM old_entries) THEN
                    RAISE EXCEPTION 'hand records are never deleted (%% on %%)', TG_OP, TG_TABLE_NAME
                        USING ERRCODE = 'integrity_constraint_violation';
                END IF;
                RETURN NULL;
            END IF;
            IF EXISTS (
                SELECT 1 FROM tables_hand AS h
                WHERE h.id IN (SELECT DISTINCT hand_id FROM old_entries) AND h.status IN {FINAL}
            ) THEN
                RAISE EXCEPTION 'the hand is over: its entries are final'
                    USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN NULL;
        END;
        $$ LANGUAGE plpgsql;
        """
    )
    for operation in ("UPDATE", "DELETE"):
        schema_editor.execute(
            f"CREATE TRIGGER tables_entry_final_{operation.lower()} AFTER {operation} ON tables_entry "
            "REFERENCING OLD TABLE AS old_entries FOR EACH STATEMENT EXECUTE FUNCTION tables_entries_are_final()"
        )
    schema_editor.execute(
        """
        CREATE OR REPLACE FUNCTION tables_player_with_entries() RETURNS trigger AS $$
        BEGIN
            IF EXISTS (SELECT 1 FROM tables_entry WHERE user_id = OLD.id) THEN
                RAISE EXCEPTION 'user %% played hands: hand records are never deleted', OLD.id
                    USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN OLD;
        END;
        $$ LANGUAGE plpgsql;
        """
    )
    schema_editor.execute(
        "CREATE TRIGGER tables_player_with_entries BEFORE DELETE ON auth_user "
        "FOR EACH ROW EXECUTE FUNCTION tables_player_with_entries()"
    )


def backwards(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("DROP TRIGGER IF EXISTS tables_player_with_entries ON auth_user")
    schema_editor.execute("DROP FUNCTION IF EXISTS tables_player_with_entries()")
    for operation in ("update", "delete"):
        schema_editor.execute(f"DROP TRIGGER IF EXISTS tables_entry_final_{operation} ON tables_entry")
    schema_editor.execute("DROP FUNCTION IF EXISTS tables_entries_are_final()")
    schema_editor.execute(
        "CREATE TRIGGER tables_entry_final BEFORE UPDATE OR DELETE ON tables_entry "
        "FOR EACH ROW EXECUTE FUNCTION tables_entry_is_final()"
    )
    schema_editor.execute("ALTER TABLE tables_entry RESET (fillfactor)")
    schema_editor.execute("ALTER TABLE tables_gamingsession RESET (fillfactor)")


class Migration(migrations.Migration):
    # The two new indexes are built CONCURRENTLY on PostgreSQL (deals go on meanwhile: a
    # plain CREATE INDEX over 10^7 entries stops them for the minute it takes).
    atomic = False

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("tables", "0016_final_records_on_sqlite"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="entry", name="entry_join_order_unique"),
        migrations.RemoveIndex(model_name="entry", name="entry_hand_initial"),
        migrations.RemoveIndex(model_name="entry", name="entry_hand_place"),
        migrations.RemoveIndex(model_name="entry", name="entry_user_missed"),
        AddIndexOnline(
            model_name="entry",
            index=models.Index(
                condition=models.Q(("combination", models.F("initial_combination")), _negated=True),
                fields=["hand", "initial_combination"],
                name="entry_redealt_initial",
            ),
        ),
        AddIndexOnline(
            model_name="hand",
            index=models.Index(fields=["table", "settled_at"], name="hand_table_settled"),
        ),
        migrations.AlterField(
            model_name="entry",
            name="hand",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=models.PROTECT,
                related_name="entries",
                to="tables.hand",
            ),
        ),
        migrations.AlterField(
            model_name="entry",
            name="user",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=models.PROTECT,
                related_name="entries",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.RunPython(forwards, backwards),
    ]
