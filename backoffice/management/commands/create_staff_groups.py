"""``manage.py create_staff_groups``: the staff roles as permission groups (idempotent).

* **Auditors** may view everything the platform records (hands, entries, tables and their
  audit log, wallets, transfers and ledger entries) and the back-office reports, and change
  nothing.
* **Croupiers** may also run tables and promotions: create tables, change a table's
  conditions (with a reason), open, close, cancel a hand with refunds; create, change, pause
  and delete special-hand schedules; schedule and cancel tournaments; create, change and
  retire jackpots; change the power-up rules; record cash deposits and withdrawals, fund
  the jackpot reserve and promotions; and suspend or reinstate a player (with a reason; the
  automated play review, docs/platform.md).

Everything else (staff users and groups, deleting records) is for superusers only. The table
"Staff roles" in docs/deployment.md says the same, and tests/backoffice/test_staff_roles.py
holds these groups to it.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group, Permission
from django.core.management.base import BaseCommand

APPS = ("tables", "wallet", "handhistory", "backoffice", "jackpots", "auth")
CROUPIER_CHANGES = (
    ("tables", "add_table"),
    ("tables", "change_table"),
    ("tables", "add_specialhandschedule"),
    ("tables", "change_specialhandschedule"),
    ("tables", "delete_specialhandschedule"),
    # Schedule and cancel tournaments (docs/tournaments.md).
    ("tables", "add_tournament"),
    ("tables", "change_tournament"),
    ("tables", "add_poweruprules"),
    ("tables", "change_poweruprules"),
    ("jackpots", "add_jackpot"),
    ("jackpots", "change_jackpot"),
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
