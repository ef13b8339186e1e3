"""What the processes of a deployment tell each other about their health, in the shared cache.

The clock ticks in the Celery worker (``TABLE_CLOCK=beat``) or inside the one ASGI process
(the embedded default); the beacon is fetched by whoever settles a hand; the books check runs
from beat. Readiness (``/readyz``), the metrics and the back-office status page are served
by the web processes, so each of these writes a small record to the default cache: Redis in
production (shared by every process), the local memory cache in the embedded default (one
process holds clock and web alike). One ``cache.set`` per clock tick, nothing per purchase.

Records are plain dicts of JSON numbers and strings; times are Unix seconds (UTC).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache

logger = logging.getLogger(__name__)

TICK_KEY = "ops:clock-tick"
BEACON_KEY = "ops:beacon"
BOOKS_KEY = "ops:books-check"
KEEP_SECONDS = 7 * 24 * 3600
"""How long a record lives in the cache without being written again."""


@dataclass(frozen=True)
class ClockTick:
    """The clock's last completed tick: when it ended (Unix seconds), how long it took
    (seconds) and how many tables it advanced."""

    at: float
    duration_seconds: float
    advanced: int


@dataclass(frozen=True)
class BeaconState:
    """The randomness beacon as its users saw it: the last round fetched or read (Unix
    seconds, ``None`` if never), and since when fetches have failed (``None`` while the last
    fetch succeeded)."""

    last_ok_at: float | None
    failing_since: float | None


@dataclass(frozen=True)
class BooksRun:
    """The last books check (``wallet.selectors.check_books``): when it finished (Unix
    seconds), whether the books were intact, how many findings, how long it took."""

    at: float
    ok: bool
    findings: int
    duration_seconds: float


def _set(key: str, value: dict[str, Any]) -> None:
    try:
        cache.set(key, value, KEEP_SECONDS)
    except Exception:  # an unreachable Redis must not stop the clock or a settlement
        logger.warning("could not record %s in the cache", key, exc_info=True)


def _get(key: str) -> dict[str, Any] | None:
    value = cache.get(key)
    return value if isinstance(value, dict) else None


def record_tick(*, duration_seconds: float, advanced: int, at: float | None = None) -> None:
    """Record a completed clock tick (tables/clock.py)."""
    _set(TICK_KEY, {"at": time.time() if at is None else at, "duration": duration_seconds, "advanced": advanced})


def last_tick() -> ClockTick | None:
    """The last recorded clock tick, or ``None`` (never ticked, or the cache was emptied).
    Raises whatever the cache raises when it is unreachable."""
    data = _get(TICK_KEY)
    if data is None:
        return None
    return ClockTick(at=float(data["at"]), duration_seconds=float(data["duration"]), advanced=int(data["advanced"]))


def record_beacon(*, ok: bool, at: float | None = None) -> None:
    """Record a beacon fetch: ``ok`` a round's value was obtained, else the source did not
    answer (tables/services/beacon.py)."""
    moment = time.time() if at is None else at
    try:
        previous = _get(BEACON_KEY) or {}
    except Exception:
        previous = {}
    if ok:
        _set(BEACON_KEY, {"last_ok": moment, "failing_since": None})
    else:
        _set(BEACON_KEY, {"last_ok": previous.get("last_ok"), "failing_since": previous.get("failing_since") or moment})


def beacon_state() -> BeaconState:
    """The beacon's last recorded state (both fields ``None`` if it was never used)."""
    data = _get(BEACON_KEY) or {}
    last_ok, failing = data.get("last_ok"), data.get("failing_since")
    return BeaconState(
        last_ok_at=None if last_ok is None else float(last_ok),
        failing_since=None if failing is None else float(failing),
    )


def record_books_check(*, ok: bool, findings: int, duration_seconds: float, at: float | None = None) -> None:
    """Record the result of a books check."""
    _set(
        BOOKS_KEY,
        {"at": time.time() if at is None else at, "ok": ok, "findings": findings, "duration": duration_seconds},
    )


def last_books_check() -> BooksRun | None:
    """The last recorded books check, or ``None``."""
    data = _get(BOOKS_KEY)
    if data is None:
        return None
    return BooksRun(
        at=float(data["at"]),
        ok=bool(data["ok"]),
        findings=int(data["findings"]),
        duration_seconds=float(data["duration"]),
    )
