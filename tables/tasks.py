"""Celery adapters. Beat sends ``tables.tasks.advance_due_tables`` by name every second
(config/settings.py): the name stays, the clock is tables/clock.py."""

from __future__ import annotations

from celery import shared_task

from tables.clock import tick


@shared_task(ignore_result=True)
def advance_due_tables() -> int:
    """The production table clock: one ``tables.clock.tick`` (every due table advanced
    through its game, each game's per-tick work, the ledger sealed); how many advanced."""
    return tick()
