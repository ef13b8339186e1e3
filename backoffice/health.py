"""Endpoints for load balancers and Prometheus: ``/healthz``, ``/readyz``, ``/metrics``.

They are answered by ``OperationsMiddleware``, first in the middleware list, before the host
check, the HTTPS redirect, sessions and authentication: a balancer polls a daphne process
directly (``http://127.0.0.1:8001/readyz``), with whatever Host header it sends, every
second, and must not create sessions or hit the session table.

Who sees what (nothing is given away to outsiders):

* ``/healthz`` (liveness: the process answers): ``{"status": "ok"}`` to anyone; no database.
* ``/readyz`` (readiness: backoffice/operations.py): the HTTP status (200 or 503) and
  ``{"status": "ok" | "degraded" | "unavailable"}`` to anyone; the checks' detail only to a
  *trusted* caller. Staff read the same detail on ``/backoffice/status/``.
* ``/metrics`` (Prometheus text format): trusted callers only; anyone else gets 404.

A caller is trusted when it sends ``Authorization: Bearer <POKER_OPS_TOKEN>`` (when the
token is set), or when it connects from a loopback address **without** any forwarding
header (``X-Forwarded-For``, ``X-Real-IP``, ``Forwarded``): a request relayed by the local
nginx comes from loopback too, but carries those headers, so an outsider never passes for
the local Prometheus.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest, multiprocess
from prometheus_client import REGISTRY as PROCESS_REGISTRY

from backoffice.operations import FiguresCollector, check_readiness
from config.infra import metrics

HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
METRICS_PATH = "/metrics"
FORWARDING_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_X_REAL_IP", "HTTP_FORWARDED")

_figures_collector = FiguresCollector()


def is_trusted(request: HttpRequest) -> bool:
    """Whether ``request`` may read health detail and metrics (module docstring)."""
    token = str(settings.OPS_TOKEN)
    header = str(request.META.get("HTTP_AUTHORIZATION", ""))
    if token and header.startswith("Bearer ") and hmac.compare_digest(header[7:].strip().encode(), token.encode()):
        return True
    if any(request.META.get(name) for name in FORWARDING_HEADERS):
        return False
    try:
        return ipaddress.ip_address(str(request.META.get("REMOTE_ADDR", ""))).is_loopback
    except ValueError:
        return False


def _no_store(response: HttpResponse) -> HttpResponse:
    response["Cache-Control"] = "no-store"
    return response


def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness: the process runs and answers (nothing else is checked)."""
    return _no_store(JsonResponse({"status": "ok"}))


def readyz(request: HttpRequest) -> HttpResponse:
    """Readiness: 200 while the process can serve, 503 when it cannot; detail if trusted."""
    readiness = check_readiness()
    body = readiness.as_json() if is_trusted(request) else {"status": readiness.status}
    return _no_store(JsonResponse(body, status=readiness.http_status))


if not metrics.MULTIPROCESS:
    PROCESS_REGISTRY.register(_figures_collector)


def registry() -> CollectorRegistry:
    """The registry ``/metrics`` serves: every process's samples added up (multiprocess
    mode, a registry per scrape as prometheus_client asks) or this process's own, plus the
    figures read at scrape time."""
    if not metrics.MULTIPROCESS:
        return PROCESS_REGISTRY
    combined = CollectorRegistry()
    multiprocess.MultiProcessCollector(combined)  # type: ignore[no-untyped-call]  # untyped in prometheus_client
    combined.register(_figures_collector)
    return combined


def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus' text format, to trusted callers only (404 for anyone else)."""
    if not is_trusted(request):
        return HttpResponse("Not found", status=404, content_type="text/plain")
    return _no_store(HttpResponse(generate_latest(registry()), content_type=CONTENT_TYPE_LATEST))


ROUTES: dict[str, Callable[[HttpRequest], HttpResponse]] = {
    HEALTH_PATH: healthz,
    READY_PATH: readyz,
    METRICS_PATH: metrics_view,
}


class OperationsMiddleware:
    """Answer ``GET``/``HEAD`` of the three operations paths before any other middleware
    (module docstring); every other request passes through untouched."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        view = ROUTES.get(request.path_info.rstrip("/") or "/")
        if view is None:
            return self.get_response(request)
        if request.method not in ("GET", "HEAD"):
            response = HttpResponse("Method not allowed", status=405, content_type="text/plain")
            response["Allow"] = "GET, HEAD"
            return response
        return view(request)
