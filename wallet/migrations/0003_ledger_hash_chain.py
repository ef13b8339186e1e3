"""Seal the ledger into a keyed hash chain per currency (wallet/chain.py; security audit F6).

Transfers written before this migration are sealed here, in id order, with the key of the
environment that runs it. On SQLite, adding the unique constraint rebuilds the table and so
drops its append-only trigger: it is created again at the end.
"""

from __future__ import annotations

import django.utils.timezone
from django.conf import settings
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def seal_existing(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    from wallet.chain import GENESIS_HASH, canonical, ledger_key, seal

    vendor = schema_editor.connection.vendor
    transfer_model = apps.get_model("wallet", "Transfer")
    entry_model = apps.get_model("wallet", "LedgerEntry")
    head_model = apps.get_model("wallet", "LedgerHead")
    if vendor == "postgresql":
        schema_editor.execute("ALTER TABLE wallet_transfer DISABLE TRIGGER wallet_transfer_append_only;")
    else:
        schema_editor.execute("DROP TRIGGER IF EXISTS wallet_transfer_no_update;")
    key = ledger_key()
    for currency in sorted(set(transfer_model.objects.values_list("currency", flat=True))):
        previous, sequence = GENESIS_HASH, 0
        for transfer in transfer_model.objects.filter(currency=currency).order_by("id").iterator(chunk_size=2000):
            sequence += 1
            legs = list(entry_model.objects.filter(transfer_id=transfer.pk).values_list(
                "account_id", "delta_minor", "balance_after_minor"
            ))
            previous = seal(key, canonical(
                currency=currency,
                sequence=sequence,
                previous_hash=previous,
                reference=transfer.reference,
                kind=transfer.kind,
                memo=transfer.memo,
                created_by_id=transfer.created_by_id,
                created_at=transfer.created_at,
                legs=legs,
            ))
            transfer_model.objects.filter(pk=transfer.pk).update(sequence=sequence, chain_hash=previous)
        head_model.objects.update_or_create(currency=currency, defaults={"sequence": sequence, "chain_hash": previous})
    if vendor == "postgresql":
        schema_editor.execute("ALTER TABLE wallet_transfer ENABLE TRIGGER wallet_transfer_append_only;")


def restore_sqlite_triggers(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor != "sqlite":
        return
    for table in ("wallet_ledgerentry", "wallet_transfer"):
        schema_editor.execute(
            f"CREATE TRIGGER IF NOT EXISTS {table}_no_update BEFORE UPDATE ON {table} "
            "BEGIN SELECT RAISE(ABORT, 'ledger rows are append-only'); END;"
        )


class Migration(migrations.Migration):

    dependencies = [
        ('wallet', '0002_ledger_append_only'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='LedgerHead',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('currency', models.CharField(choices=[('EUR', 'Euro'), ('FUN', 'Fun chips')], max_length=3, unique=True)),
                ('sequence', models.BigIntegerField(default=0)),
                ('chain_hash', models.CharField(default='0000000000000000000000000000000000000000000000000000000000000000', max_length=64)),
            ],
        ),
        migrations.AddField(
            model_name='transfer',
            name='chain_hash',
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.AddField(
            model_name='transfer',
            name='sequence',
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name='transfer',
            name='created_at',
            field=models.DateTimeField(db_index=True, default=django.utils.timezone.now),
        ),
        migrations.RunPython(seal_existing, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name='transfer',
            constraint=models.UniqueConstraint(fields=('currency', 'sequence'), name='transfer_sequence_unique_per_currency'),
        ),
        migrations.RunPython(restore_sqlite_triggers, migrations.RunPython.noop),
    ]
