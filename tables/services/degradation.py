"""What the platform knows about its own faults, so a player is not punished for them
(security audit L7; docs/deployment.md, "When Redis is down").

A process that sees the platform degraded records it here, in the database (the one store
every process and the clock share, and the one that still works when Redis does not):

- a web process that cannot reach Redis (the API's rate limits, a push after a commit, any
  request that fails on it: ``REDIS``);
- the clock, when it finds a table's deadline passed by more than ``CLOCK_LATE_SECONDS``
  (a worker or beat down, or an overloaded box: ``CLOCK_LATE``).

At most one row per process and kind every ``RECORD_EVERY``; recording never raises. The
Hold'em clock asks ``degraded_between`` before it applies the timeout rule to a person
(``tables.holdem.services.hands``, platform grace).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from datetime import datetime, timedelta
from typing import Any

from tables.models import PlatformFault, PlatformFaultKind

logger = logging.getLogger(__name__)

REDIS = PlatformFaultKind.REDIS
CLOCK_LATE = PlatformFaultKind.CLOCK_LATE

RECORD_EVERY = timedelta(seconds=2)
"""A process records one fault of a kind at most this often (an outage is a run of rows)."""

KEEP = timedelta(days=7)
"""Rows older than this are deleted when a new one is written."""

_PROCESS = f"{socket.gethostname()[:80]}:{os.getpid()}"
_last: dict[str, datetime] = {}
_lock = threading.Lock()


def record_degradation(*, kind: str, now: datetime) -> bool:
    """Record that this process saw the platform degraded (``kind``: ``REDIS`` or
    ``CLOCK_LATE``) at ``now``; True if a row was written, False if one was written less
    than ``RECORD_EVERY`` ago or the database refused (logged, never raised: a fault while
    reporting a fault must not become a 500)."""
    with _lock:
        last = _last.get(kind)
        if last is not None and abs(now - last) < RECORD_EVERY:
            return False
        _last[kind] = now
    try:
        PlatformFault.objects.create(kind=kind, seen_at=now, process=_PROCESS)
        PlatformFault.objects.filter(seen_at__lt=now - KEEP).delete()
    except Exception:
        logger.exception("could not record a platform fault (%s)", kind)
        return False
    logger.warning("platform degraded: %s seen by %s", kind, _PROCESS)
    return True


def record_redis_fault(*, now: datetime, **signal_kwargs: Any) -> None:
    """Receiver of ``config.infra.faults.redis_unreachable``: record a Redis fault at ``now``
    (``record_degradation``)."""
    record_degradation(kind=REDIS, now=now)


def degraded_between(*, start: datetime, end: datetime) -> bool:
    """Whether any process recorded a fault between ``start`` and ``end`` (inclusive)."""
    return PlatformFault.objects.filter(seen_at__gte=start, seen_at__lte=end).exists()


def forget_recent() -> None:
    """Forget when this process last recorded each kind (tests: the next fault is written)."""
    with _lock:
        _last.clear()
