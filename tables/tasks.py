"""Celery adapters. Beat sends ``tables.tasks.advance_due_tables`` by name every second
(config/settings.py): the name stays, the clock is tables/clock.py."""

from __future__ import annotations

from celery import shared_task
from django.db import close_old_connections
from django.utils import timezone

from tables.clock import advance_isolated, tick


@shared_task(ignore_result=True)
def advance_due_tables() -> int:
    """The production table clock: one ``tables.clock.tick`` (every due table advanced
    through its game, each game's per-tick work, the ledger sealed); how many advanced."""
    return tick()


@shared_task(ignore_result=True)
def advance_table_at(table_id: int) -> bool:
    """A table's step at the moment its game asked for (``tables.clock.wake_table_at``: an
    algorithm 3 deal as the previous results end), not at the next tick: ``advance_table``
    isolated as the tick does it (``advance_isolated``). Not due (stepped already, or the
    deadline moved): nothing happens. Whether it advanced."""
    close_old_connections()
    try:
        return advance_isolated(table_id, now=timezone.now())
    finally:
        close_old_connections()
