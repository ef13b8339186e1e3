"""The table clock inside the ASGI process (embedded default, ``TABLE_CLOCK=in-process``).

The in-memory channel layer lives in one process, so the process that holds the sockets
must also run the clock. The loop starts on the first connection to the ASGI application
(daphne does not run ASGI lifespan events) and calls the same
``tables.services.advance_due_tables`` that Celery beat calls in production.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from config.infra import metrics, ops_state

logger = logging.getLogger(__name__)

TICK_SECONDS = 1.0


def tick() -> int:
    """One clock tick: take the sockets of dead ASGI processes off their seats, advance due
    tables, move the purchases confirmed since the last tick into their hands' escrows,
    push changed prize pools, then seal the ledger's waiting transfers (wallet/chain.py). A
    completed tick is recorded for readiness and the metrics (config/infra/ops_state.py: one cache
    write)."""
    from tables.services import advance_due_tables, publish_live_pools
    from tables.services.presence import reap_dead_processes
    from tables.widerpoker.services.play import resolve_pending_redeals
    from tables.widerpoker.services.settlement import capture_running_purchases
    from wallet.services import seal_pending

    close_old_connections()
    started = time.perf_counter()
    try:
        now = timezone.now()
        try:
            reap_dead_processes(now=now)
        except Exception:
            logger.exception("reaping dead ASGI processes failed; the tables still advance")
        advanced = advance_due_tables(now=now)
        try:
            resolve_pending_redeals(now=now)
        except Exception:
            logger.exception("dealing pending redeals failed; they wait for the next tick or the settlement")
        try:
            capture_running_purchases()
        except Exception:
            logger.exception("capturing purchases failed; the holds wait for the next tick or the settlement")
        publish_live_pools()
        try:
            seal_pending()
        except Exception:
            logger.exception("sealing the ledger failed; the next transfer or tick seals")
        elapsed = time.perf_counter() - started
        metrics.CLOCK_TICK_DURATION.observe(elapsed)
        ops_state.record_tick(duration_seconds=elapsed, advanced=advanced)
        return advanced
    finally:
        close_old_connections()


async def run_clock(stop: asyncio.Event | None = None) -> None:
    """Tick every second until ``stop`` is set; a failed tick is logged and the next one runs."""
    while stop is None or not stop.is_set():
        try:
            await sync_to_async(tick, thread_sensitive=True)()
        except Exception:
            logger.exception("table clock tick failed")
        await asyncio.sleep(TICK_SECONDS)


class ClockStarter:
    """ASGI middleware that starts the in-process clock once, on the first connection."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.task: asyncio.Task[None] | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        if self.task is None and settings.TABLE_CLOCK == "in-process":
            self.task = asyncio.get_running_loop().create_task(run_clock())
            logger.info("table clock started in this process")
        return await self.app(scope, receive, send)
