"""Ledger legs written 100,000 at a time (a hand's antes, its prizes): no per-row foreign-key
check (issue 12).

PostgreSQL checked both references of every new leg at commit, one index lookup each: 2.2 s
for a hand of 100,000 antes on the project's 2-core box (docs/benchmarks.md). Nothing can
break those references: ``wallet.services._post`` creates the transfer and locks and reads
every leg's account (refusing unknown ones) in the same transaction; transfers and legs are
append-only (0002); and an account with legs can no longer be deleted (the trigger below, on
PostgreSQL; Django's ``PROTECT`` everywhere). ``wallet.selectors.check_books`` checks that
every leg's account and transfer exist.

Play sessions: the deal extends every dealt player's open session (``last_play_at``); the
index ``(user, -last_play_at)`` made each of those 100,000 updates write a new index entry.
The foreign key's index on ``user`` serves every read (a player has one session per break),
and ``fillfactor = 45`` leaves each page room for a new version of every row in it (HOT).
``wallet_account`` goes from 70 (0007) to 45 for the same reason: a deal updates every dealt
player's balance, and at 70 a third of those updates found no room in their page.

SQLite (the embedded default) rebuilds the table for this change and loses its append-only
trigger: it is created again.
"""

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def forwards(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        schema_editor.execute(
            "CREATE TRIGGER IF NOT EXISTS wallet_ledgerentry_no_update BEFORE UPDATE ON wallet_ledgerentry "
            "BEGIN SELECT RAISE(ABORT, 'ledger rows are append-only'); END;"
        )
        return
    if vendor != "postgresql":
        return
    schema_editor.execute("ALTER TABLE wallet_playsession SET (fillfactor = 45)")
    schema_editor.execute("ALTER TABLE wallet_account SET (fillfactor = 45)")
    schema_editor.execute(
        """
        CREATE OR REPLACE FUNCTION wallet_account_with_legs() RETURNS trigger AS $$
        BEGIN
            IF EXISTS (SELECT 1 FROM wallet_ledgerentry WHERE account_id = OLD.id) THEN
                RAISE EXCEPTION 'account %% has ledger entries: it is never deleted', OLD.key
                    USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN OLD;
        END;
        $$ LANGUAGE plpgsql;
        """
    )
    schema_editor.execute(
        "CREATE TRIGGER wallet_account_with_legs BEFORE DELETE ON wallet_account "
        "FOR EACH ROW EXECUTE FUNCTION wallet_account_with_legs()"
    )


def backwards(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP TRIGGER IF EXISTS wallet_account_with_legs ON wallet_account")
        schema_editor.execute("DROP FUNCTION IF EXISTS wallet_account_with_legs()")
        schema_editor.execute("ALTER TABLE wallet_playsession RESET (fillfactor)")
        schema_editor.execute("ALTER TABLE wallet_account SET (fillfactor = 70)")


class Migration(migrations.Migration):
    dependencies = [("wallet", "0008_merge_fillfactor_history_indexes_holdem_kinds")]

    operations = [
        migrations.RemoveIndex(model_name="playsession", name="play_session_recent"),
        migrations.AlterField(
            model_name="ledgerentry",
            name="account",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=models.PROTECT,
                related_name="entries",
                to="wallet.account",
            ),
        ),
        migrations.AlterField(
            model_name="ledgerentry",
            name="transfer",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=models.PROTECT,
                related_name="entries",
                to="wallet.transfer",
            ),
        ),
        migrations.RunPython(forwards, backwards),
    ]
