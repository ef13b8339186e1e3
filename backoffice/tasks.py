"""Celery adapters of the back office's upkeep."""

from __future__ import annotations

from celery import shared_task

from config.partitions import ensure_partitions as ensure


@shared_task(ignore_result=True)
def ensure_partitions() -> list[str]:
    """Create the partitions of entries and ledger legs the next ids need (daily, from
    beat; config/partitions.py). Returns the names created (none on SQLite)."""
    return ensure(ahead=2)
