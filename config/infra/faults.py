"""Faults of the platform's own services that the plumbing notices but does not own.

The plumbing imports no app, so it announces a fault on a signal; the app that keeps the
record (``tables.services.degradation``, connected in ``tables.apps``) writes it, and the
clock spares the players of the hands it overlapped (docs/deployment.md, "When Redis is
down")."""

from __future__ import annotations

from datetime import datetime

from django.dispatch import Signal

redis_unreachable = Signal()
"""Sent with ``now`` (an aware datetime) when the shared cache (Redis) could not be reached.
Receivers must not raise: the request that noticed it is still being served."""


def report_redis_unreachable(now: datetime) -> None:
    """Announce that Redis could not be reached at ``now``; every receiver runs, and one that
    fails does not stop the others or the request (``send_robust``)."""
    redis_unreachable.send_robust(sender=None, now=now)
