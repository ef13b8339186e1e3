"""Celery adapters. Beat sends ``advance_due_tables`` every second (config/settings.py)."""

from __future__ import annotations

from celery import shared_task


@shared_task(ignore_result=True)
def advance_due_tables() -> int:
    """The production table clock: see tables.services.advance_due_tables."""
    from tables.clock import tick

    return tick()
