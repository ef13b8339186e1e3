"""Celery adapters of the back office's upkeep."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from backoffice import services
from backoffice.operations import run_books_check
from config.infra.partitions import ensure_partitions as ensure


@shared_task(ignore_result=True)
def ensure_partitions() -> list[str]:
    """Create the partitions of entries and ledger legs the next ids need (daily, from
    beat; config/infra/partitions.py). Returns the names created (none on SQLite)."""
    return ensure(ahead=2)


@shared_task(ignore_result=True)
def record_play_patterns() -> int:
    """Recompute the players' play patterns for the automated play review (hourly, from
    beat; backoffice.services.record_play_patterns). Returns the players recorded."""
    return services.record_play_patterns(now=timezone.now())


@shared_task(ignore_result=True)
def check_books() -> bool:
    """Run the books check (the one ``verify_books`` runs) and record its result for the
    metrics and the status page (every ``POKER_BOOKS_CHECK_MINUTES``, from beat)."""
    return run_books_check().ok
