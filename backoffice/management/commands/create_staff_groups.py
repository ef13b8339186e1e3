"""``manage.py create_staff_groups``: the staff roles as permission groups (idempotent).

* **Auditors** may view everything the platform records (hands, entries, tables and their
  audit log, wallets, transfers and ledger entries) and the back-office reports, and change
  nothing.
* **Croupiers** may also run tables: change a table's conditions (with a reason), open,
  close, cancel a hand with refunds, record cash deposits and withdrawals, and suspend or
  reinstate players (with a reason; the automated play review, docs/platform.md).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group, Permission
from django.core.management.base import BaseCommand

APPS = ("tables", "wallet", "handhistory", "backoffice", "jackpots", "auth")
CROUPIER_CHANGES = (
    ("tables", "add_table"),
    ("tables", "change_table"),
    ("wallet", "change_account"),
    # Suspend and reinstate players (seed 001, Notes 4), from the automated play review or
    # the suspension form, always with a reason.
    ("wallet", "add_suspension"),
)


def ensure_staff_groups() -> dict[str, int]:
    """Create or refresh the Auditors and Croupiers groups; return their permission counts."""
    views = Permission.objects.filter(content_type__app_label__in=APPS, codename__startswith="view_")
    auditors, _ = Group.objects.get_or_create(name="Auditors")
    auditors.permissions.set(views)
    croupiers, _ = Group.objects.get_or_create(name="Croupiers")
    changes = [
        Permission.objects.get(content_type__app_label=app, codename=codename) for app, codename in CROUPIER_CHANGES
    ]
    croupiers.permissions.set([*views, *changes])
    return {group.name: group.permissions.count() for group in (auditors, croupiers)}


class Command(BaseCommand):
    help = "Create or refresh the Auditors (read-only) and Croupiers staff groups."

    def handle(self, *args: Any, **options: Any) -> None:
        for name, count in ensure_staff_groups().items():
            self.stdout.write(f"group {name!r}: {count} permissions")
