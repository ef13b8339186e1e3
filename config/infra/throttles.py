"""API rate limits that hold across processes (they count in the shared cache: Redis in
production), per user and per client address, on every endpoint.

Each limit is one of DRF's ``SimpleRateThrottle``s (its rate, cache key and sliding window
of request times); a view checks its limits together (``ApiThrottles``,
``ActionThrottles``): every limit's history is read in one cache round trip and the
updated ones written in one, instead of a read and a write per limit (six Redis round trips
per play action; docs/benchmarks.md, "REST purchases").

When the shared cache cannot be reached (Redis down or cut off from this process), the
limits count in this process's own memory instead, and the fault is announced for the clock
(``config.infra.faults``; ``tables.services.degradation`` records it): requests keep being
served and limited, per process rather than across processes, and never answer 500 because of it (security audit L7;
docs/deployment.md, "When Redis is down")."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from typing import Any, ClassVar

from django.core.cache import BaseCache, cache
from django.core.cache.backends.locmem import LocMemCache
from django.utils import timezone
from redis.exceptions import RedisError
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle, SimpleRateThrottle, UserRateThrottle

from config.infra import faults

logger = logging.getLogger(__name__)


class UserThrottle(UserRateThrottle):
    """Every request of a signed-in user (``user`` rate); anonymous ones by address."""

    scope = "user"


class AddressThrottle(SimpleRateThrottle):
    """Every request from one client address (``address`` rate), signed in or not, so many
    accounts behind one address cannot add up their limits."""

    scope = "address"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class ActionThrottle(UserRateThrottle):
    """Play and wallet actions per player (``action`` rate), on top of the general limits."""

    scope = "action"


CACHE_DOWN: tuple[type[Exception], ...] = (RedisError,)
"""What the shared cache raises when Redis cannot be reached or does not answer in time."""

_local_counts = LocMemCache("api-throttles-fallback", {"OPTIONS": {"MAX_ENTRIES": 100_000}})
"""This process's own counters, used while the shared cache is down."""


WRITTEN: list[Callable[[dict[str, list[float]]], None]] = []
"""Told each history this process's checks write (key -> times, newest first): a mirror of
the histories in this process (tables/api/purchase_door.py) stays exact for its requests."""


def _cache_down(error: Exception) -> None:
    logger.warning("the API rate limits' cache is unreachable (%s): counting in this process", error)
    faults.report_redis_unreachable(timezone.now())


class ApiThrottles(BaseThrottle):
    """The limits of ``limits`` checked together, with DRF's rules for each (a sliding window
    of the last ``duration`` seconds; a request is refused when any limit is full, and counts
    in every limit that was not): one ``get_many`` reads every history, one ``set_many`` per
    distinct window writes the ones that count this request (one for the default rates, all
    per minute). ``wait()``: seconds until a refusing limit lets a request through (the
    longest), or None."""

    limits: ClassVar[tuple[type[SimpleRateThrottle], ...]] = (UserThrottle, AddressThrottle)

    def __init__(self) -> None:
        self.waits: list[float] = []

    def allow_request(self, request: Request, view: Any) -> bool:
        keyed: list[tuple[SimpleRateThrottle, str]] = []
        for limit in (cls() for cls in self.limits):
            key = limit.get_cache_key(request, view) if limit.rate is not None else None
            if key is not None:
                keyed.append((limit, key))
        if not keyed:
            return True
        store: BaseCache = cache
        try:
            histories = store.get_many([key for _, key in keyed])
        except CACHE_DOWN as error:
            _cache_down(error)
            store = _local_counts
            histories = store.get_many([key for _, key in keyed])
        writes: dict[int, dict[str, list[float]]] = defaultdict(dict)
        self.waits = []
        allowed = True
        for limit, key in keyed:
            number, duration = limit.parse_rate(limit.rate)
            assert number is not None and duration is not None  # a limit without a rate has no key
            limit.key, limit.history, limit.now = key, list(histories.get(key, [])), limit.timer()
            while limit.history and limit.history[-1] <= limit.now - duration:
                limit.history.pop()
            if len(limit.history) >= number:
                allowed = False
                wait = limit.wait()
                if wait is not None:
                    self.waits.append(wait)
                continue
            limit.history.insert(0, limit.now)
            writes[duration][key] = limit.history
        for duration, items in writes.items():
            try:
                store.set_many(items, duration)
            except CACHE_DOWN as error:
                _cache_down(error)
                _local_counts.set_many(items, duration)
            for listener in WRITTEN:
                listener(items)
        return allowed

    def wait(self) -> float | None:
        return max(self.waits, default=None)


class ActionThrottles(ApiThrottles):
    """A play or wallet action's limits: the general ones plus the per-player action rate."""

    limits = (UserThrottle, AddressThrottle, ActionThrottle)
