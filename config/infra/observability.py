"""Request metrics and structured logs, shared by web, worker and beat.

Logs: ``LOG_FORMAT=json`` (production's default) writes one JSON object per line with the
time, level, logger, message, the process's role (``web``, ``worker``, ``beat``, from
``POKER_PROCESS_ROLE`` or guessed from the command line) and whatever context is bound:
``request_id`` (from the local nginx's ``X-Request-ID``, or new), ``task_id`` (a Celery
task), ``table_id``, ``hand_id``, ``user_id``. ``bind`` adds context for a block;
``ContextFilter`` copies it onto every record. ``LOG_FORMAT=text`` keeps plain lines (the
embedded default). python-json-logger does the formatting.

Requests: ``RequestMetricsMiddleware`` counts every response by route pattern (``/tables/
<int:table_id>/``, never the raw path: bounded labels), method and status, times it, and at
most once a second copies the database pool's statistics into the pool metrics.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Any

from django.http import HttpRequest, HttpResponse

from config.infra import metrics

_context: ContextVar[dict[str, Any] | None] = ContextVar("log_context", default=None)
REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")
CONTEXT_FIELDS = ("request_id", "task_id", "table_id", "hand_id", "user_id")


@contextmanager
def bind(**fields: Any) -> Iterator[None]:
    """Add ``fields`` to every log record written inside the block (nested binds add up)."""
    token = _context.set({**(_context.get() or {}), **fields})
    try:
        yield
    finally:
        _context.reset(token)


def push(**fields: Any) -> Token[dict[str, Any] | None]:
    """Add ``fields`` to the log context until ``pop`` (for hooks that cannot wrap a block,
    such as Celery's task signals)."""
    return _context.set({**(_context.get() or {}), **fields})


def pop(token: Token[dict[str, Any] | None]) -> None:
    """Undo the ``push`` that returned ``token``."""
    _context.reset(token)


def bound() -> dict[str, Any]:
    """The context bound now (a copy)."""
    return dict(_context.get() or {})


def process_role() -> str:
    """``POKER_PROCESS_ROLE``, else ``worker``/``beat`` for Celery, ``web`` otherwise."""
    role = os.environ.get("POKER_PROCESS_ROLE", "")
    if role:
        return role
    argv = " ".join(sys.argv[:4])
    if "celery" in argv:
        return "beat" if " beat" in argv else "worker"
    return "web"


class ContextFilter(logging.Filter):
    """Copy the bound context and the process's role and pid onto each record."""

    role = process_role()

    def filter(self, record: logging.LogRecord) -> bool:
        for key, value in (_context.get() or {}).items():
            setattr(record, key, value)
        if not hasattr(record, "request_id"):  # Django logs a response after the middleware
            request_id = getattr(getattr(record, "request", None), "request_id", None)
            if request_id is not None:
                record.request_id = request_id
        record.role = self.role
        return True


def request_id_of(request: HttpRequest) -> str:
    """The request's id: the ``X-Request-ID`` nginx set (``$request_id``) when well formed,
    else a new one."""
    given = str(request.META.get("HTTP_X_REQUEST_ID", ""))
    return given if REQUEST_ID.match(given) else uuid.uuid4().hex


class _PoolSampler:
    """Copies the psycopg pool's statistics into the metrics at most once a second."""

    def __init__(self) -> None:
        self.next_at = 0.0

    def sample(self) -> None:
        now = time.monotonic()
        if now < self.next_at:
            return
        self.next_at = now + 1.0
        from django.db import connection

        pool = getattr(connection, "pool", None) if connection.vendor == "postgresql" else None
        if pool is None:
            return
        stats = pool.pop_stats()
        metrics.DB_POOL_SIZE.labels("open").set(stats.get("pool_size", 0))
        metrics.DB_POOL_SIZE.labels("idle").set(stats.get("pool_available", 0))
        metrics.DB_POOL_SIZE.labels("waiting").set(stats.get("requests_waiting", 0))
        metrics.DB_POOL_WAIT.inc(stats.get("requests_wait_ms", 0) / 1000.0)
        metrics.DB_POOL_WAITS.inc(stats.get("requests_queued", 0))
        metrics.DB_POOL_TIMEOUTS.inc(stats.get("requests_errors", 0))


pool_sampler = _PoolSampler()


class RequestMetricsMiddleware:
    """Bind a request id for the logs, answer it in ``X-Request-ID``, and count and time the
    response by route pattern (module docstring)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request_id_of(request)
        request.request_id = request_id  # type: ignore[attr-defined]  # read by ContextFilter
        started = time.perf_counter()
        with bind(request_id=request_id):
            response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = f"/{match.route}" if match is not None else "unmatched"
        metrics.HTTP_REQUESTS.labels(route, request.method or "", str(response.status_code)).inc()
        metrics.HTTP_DURATION.labels(route).observe(time.perf_counter() - started)
        response["X-Request-ID"] = request_id
        try:
            pool_sampler.sample()
        except Exception:  # metrics never fail a request
            logging.getLogger(__name__).debug("pool statistics unavailable", exc_info=True)
        return response
