"""Seal transfers after their commit, without serialising a currency (wallet/chain.py;
issue 23, item 7): a transfer carries a ``commit_mac`` until it is sealed; a partial index
lists the unsealed ones for the sealer; and the transfers' append-only trigger now lets
through exactly one change, the seal: ``sequence`` from null to a number and
``chain_hash`` from empty to a hash, every other column unchanged. Anything else is still
refused (PostgreSQL: UPDATE and DELETE; SQLite: UPDATE).

Reversible: going back seals whatever is still unsealed first, then restores the trigger
that refuses every change.
"""

from __future__ import annotations

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

SAME = ("id", "reference", "kind", "currency", "memo", "created_by_id", "created_at", "commit_mac")

PG_FUNCTION = """
CREATE OR REPLACE FUNCTION wallet_transfer_seal_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.sequence IS NULL AND NEW.sequence IS NOT NULL
            AND OLD.chain_hash = '' AND length(NEW.chain_hash) = 64
            AND ({new}) IS NOT DISTINCT FROM ({old}) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'ledger rows are append-only (%% on %%)', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
""".format(new=", ".join(f"NEW.{c}" for c in SAME), old=", ".join(f"OLD.{c}" for c in SAME))

SQLITE_SEAL_ONLY = (
    "CREATE TRIGGER wallet_transfer_no_update BEFORE UPDATE ON wallet_transfer WHEN NOT ("
    "OLD.sequence IS NULL AND NEW.sequence IS NOT NULL AND OLD.chain_hash = '' AND length(NEW.chain_hash) = 64 AND "
    + " AND ".join(f"NEW.{c} IS OLD.{c}" for c in SAME)
    + ") BEGIN SELECT RAISE(ABORT, 'ledger rows are append-only'); END;"
)
SQLITE_REFUSE = (
    "CREATE TRIGGER wallet_transfer_no_update BEFORE UPDATE ON wallet_transfer "
    "BEGIN SELECT RAISE(ABORT, 'ledger rows are append-only'); END;"
)


def allow_sealing(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(PG_FUNCTION)
        schema_editor.execute("DROP TRIGGER IF EXISTS wallet_transfer_append_only ON wallet_transfer;")
        schema_editor.execute(
            "CREATE TRIGGER wallet_transfer_append_only BEFORE UPDATE OR DELETE ON wallet_transfer "
            "FOR EACH ROW EXECUTE FUNCTION wallet_transfer_seal_only();"
        )
    elif vendor == "sqlite":
        schema_editor.execute("DROP TRIGGER IF EXISTS wallet_transfer_no_update;")
        schema_editor.execute(SQLITE_SEAL_ONLY)


def refuse_every_change(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    from wallet.services import seal_pending

    seal_pending()
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute("DROP TRIGGER IF EXISTS wallet_transfer_append_only ON wallet_transfer;")
        schema_editor.execute(
            "CREATE TRIGGER wallet_transfer_append_only BEFORE UPDATE OR DELETE ON wallet_transfer "
            "FOR EACH ROW EXECUTE FUNCTION wallet_refuse_change();"
        )
        schema_editor.execute("DROP FUNCTION IF EXISTS wallet_transfer_seal_only();")
    elif vendor == "sqlite":
        schema_editor.execute("DROP TRIGGER IF EXISTS wallet_transfer_no_update;")
        schema_editor.execute(SQLITE_REFUSE)


def restore_sqlite_refusal(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    """Backwards: removing ``commit_mac`` may rebuild SQLite's table and drop its trigger."""
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute("DROP TRIGGER IF EXISTS wallet_transfer_no_update;")
        schema_editor.execute(SQLITE_REFUSE)


class Migration(migrations.Migration):
    dependencies = [("wallet", "0011_legs_transfer_index_in_primary_key")]

    operations = [
        migrations.RunPython(migrations.RunPython.noop, restore_sqlite_refusal),
        migrations.AddField(
            model_name="transfer",
            name="commit_mac",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.AddIndex(
            model_name="transfer",
            index=models.Index(
                condition=models.Q(("sequence__isnull", True)), fields=["currency", "id"], name="transfer_unsealed"
            ),
        ),
        migrations.RunPython(allow_sealing, refuse_every_change),
    ]
