"""``manage.py ensure_partitions [--ahead N]``: create the partitions of entries and ledger
legs that hold the newest ids and the next N ranges (config/infra/partitions.py; docs/platform.md,
"Partitioning"). Idempotent; Celery beat runs it daily. A no-op on SQLite."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from config.infra.partitions import ensure_partitions


class Command(BaseCommand):
    help = "Create the partitions of entries and ledger legs the next ids need (PostgreSQL; idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--ahead", type=int, default=2, help="ranges to create past the newest id (default 2)")

    def handle(self, *args: Any, **options: Any) -> None:
        created = ensure_partitions(ahead=max(0, options["ahead"]))
        self.stdout.write(f"Created {len(created)} partitions" + (f": {', '.join(created)}" if created else "."))
