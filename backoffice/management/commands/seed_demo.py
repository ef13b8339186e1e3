"""``manage.py seed_demo``: demo tables and a demo staff user, safe to run any number of times.

Demo data belongs to the embedded default only (SQLite, no services): its staff password is
written in this repository, so on a production database (``DATABASE_URL`` or ``REDIS_URL``
set) the command refuses to run. Production staff are created with ``createsuperuser``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand, CommandError

from backoffice.management.commands.create_staff_groups import ensure_staff_groups
from tables.holdem.services import create_holdem_table
from tables.models import Table
from tables.widerpoker.services.create import create_table

DEMO_TABLES: tuple[dict[str, Any], ...] = (
    {
        "name": "Rookie Rail",
        "mode": "fun",
        "currency": "FUN",
        "ante_minor": 100,
        "draw_price_bps": 5000,
        "redeal_price_minor": 100,
        "change_seconds": 30,
    },
    {
        "name": "Speedway",
        "mode": "fun",
        "currency": "FUN",
        "ante_minor": 200,
        "draw_price_bps": 5000,
        "redeal_price_minor": 200,
        "change_seconds": 20,
        "results_seconds": 6,
        "redeal_seconds": 10,
    },
    {
        "name": "High Roller",
        "mode": "fun",
        "currency": "FUN",
        "ante_minor": 1_000,
        "draw_price_bps": 5000,
        "redeal_price_minor": 1_000,
        "change_seconds": 45,
        "rake_bps": 300,
    },
    {
        "name": "Euro Classic",
        "mode": "cash",
        "currency": "EUR",
        "ante_minor": 50,
        "draw_price_bps": 5000,
        "redeal_price_minor": 50,
        "change_seconds": 30,
    },
)
DEMO_HOLDEM_TABLES: tuple[dict[str, Any], ...] = (
    {
        "name": "Hold'em Fun (bots)",
        "mode": "fun",
        "currency": "FUN",
        "betting": "no-limit",
        "small_blind_minor": 50,
        "big_blind_minor": 100,
        "min_buy_in_minor": 2_000,
        "max_buy_in_minor": 10_000,
        "seats": 6,
        "bot_seats": 3,
        "show_probabilities": True,
    },
    {
        "name": "Hold'em Euro 0.05/0.10",
        "mode": "cash",
        "currency": "EUR",
        "betting": "no-limit",
        "small_blind_minor": 5,
        "big_blind_minor": 10,
        "min_buy_in_minor": 200,
        "max_buy_in_minor": 1_000,
        "seats": 9,
        "rake_cap_minor": 50,
    },
)
"""One Hold'em fun table with house bots and one cash Hold'em table (no bots: seed 001 Notes 4)."""

DEMO_STAFF = ("croupier", "croupier-demo")
"""The demo croupier: a member of the Croupiers group, not a superuser, so the demo shows
what a croupier may do (docs/deployment.md, "Staff roles")."""
DEMO_AUDITOR = ("auditor", "auditor-demo")
"""The demo auditor: a member of the Auditors group (reads everything, changes nothing)."""


class Command(BaseCommand):
    help = (
        "Create the demo tables, the staff groups and the demo staff users "
        "(croupier / croupier-demo, auditor / auditor-demo)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--no-staff",
            action="store_true",
            help="create the demo tables only, no staff user (bin/run does this off loopback)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.EMBEDDED_DEFAULT:
            raise CommandError(
                "seed_demo only runs on the embedded default (no DATABASE_URL, no REDIS_URL): its demo "
                "staff password is public. Create production staff with `manage.py createsuperuser`."
            )
        existing = set(Table.objects.values_list("name", flat=True))
        for config in DEMO_TABLES:
            if config["name"] in existing:
                self.stdout.write(f"table {config['name']!r} exists, skipped")
                continue
            table = create_table(**config)
            self.stdout.write(f"table {table.name!r} created (id {table.pk})")
        for config in DEMO_HOLDEM_TABLES:
            if config["name"] in existing:
                self.stdout.write(f"table {config['name']!r} exists, skipped")
                continue
            table = create_holdem_table(**config)
            self.stdout.write(f"Hold'em table {table.name!r} created (id {table.pk})")
        for name, count in ensure_staff_groups().items():
            self.stdout.write(f"group {name!r}: {count} permissions")
        if options["no_staff"]:
            return
        for (username, password), group in ((DEMO_STAFF, "Croupiers"), (DEMO_AUDITOR, "Auditors")):
            user = User.objects.filter(username=username).first()
            if user is None:
                user = User.objects.create_user(username=username, password=password, is_staff=True)
                self.stdout.write(f"staff user {username!r} ({group}) created (password {password!r})")
            else:
                self.stdout.write(f"staff user {username!r} exists, kept in {group}")
            # Earlier demos made the croupier a superuser: the demo staff hold their role only.
            User.objects.filter(pk=user.pk).update(is_staff=True, is_superuser=False)
            user.groups.set(Group.objects.filter(name=group))
