"""Site-wide middleware of our own: a busy database or an unreachable Redis answers 503,
never 500."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.utils.translation import gettext
from redis.exceptions import RedisError

from tables.services import degradation

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 2


def _is_pool_timeout(exc: BaseException) -> bool:
    try:
        from psycopg_pool import PoolTimeout
    except ImportError:  # the embedded default (SQLite) has no pool
        return False
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, PoolTimeout):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class DatabaseBusyMiddleware:
    """Turn "no free database connection within ``DB_POOL_TIMEOUT_SECONDS``" into a
    ``503 Service Unavailable`` with ``Retry-After`` and the stable code ``busy`` (JSON on
    ``/api/``), so overload is shed politely and nothing is half done: the request had no
    connection, so it changed nothing.

    The same answer for a request that fails because Redis cannot be reached (a
    ``RedisError`` reaching the view's caller; the fault is recorded for the clock,
    ``tables.services.degradation``). The paths players use do not get there: the API's rate
    limits count in the process while Redis is down and pushes after a commit are logged
    and dropped (docs/deployment.md, "When Redis is down"); this is the net under the rest.
    A view that changes data does its writes in one transaction, so a 503 from here changed
    nothing unless the failure came after its commit."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, RedisError):
            logger.warning("Redis unreachable (%s); %s %s answered 503", exception, request.method, request.path)
            degradation.record_degradation(kind=degradation.REDIS, now=timezone.now())
        elif isinstance(exception, OperationalError) and _is_pool_timeout(exception):
            logger.warning("database pool exhausted; %s %s answered 503", request.method, request.path)
        else:
            return None
        message = gettext("The server is busy. Try again in a moment.")
        response: HttpResponse
        if request.path.startswith("/api/"):
            response = JsonResponse({"code": "busy", "message": message, "extra": {}}, status=503)
        else:
            response = HttpResponse(message, status=503, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
