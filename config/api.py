"""REST API wiring: the exception handler that turns domain errors into stable error bodies,
and the answer to an unknown API path. Each app's API lives in its app (wallet/api.py,
handhistory/api.py, tables/api/); what they share is config/infra/rest.py."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, JsonResponse
from django.urls import Resolver404, resolve
from django.utils.translation import gettext
from django.views.decorators.csrf import csrf_exempt
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from config.infra.errors import DomainError


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Map a ``DomainError`` to ``{"code", "message", "extra"}`` with its HTTP status.
    ``message`` is for people, in the request's language (``DomainError.for_people``:
    the detailed English sentence, or the code's translated summary); ``code`` never changes.

    Other exceptions fall through to DRF's handler, whose bodies are wrapped the same way
    (``code`` is DRF's own error code, e.g. ``invalid``, ``not_authenticated``).
    """
    if isinstance(exc, RequestDataTooBig):  # Django refuses the body before any parser runs
        return Response(
            {"code": "too_large", "message": gettext("The body is too large."), "extra": {}},
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, DomainError):
        return Response(
            {"code": exc.code, "message": exc.for_people(), "extra": exc.extra},
            status=exc.http_status,
        )
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(response.data, dict) and "code" not in response.data:
        codes = exc.get_codes() if hasattr(exc, "get_codes") else None
        code = codes if isinstance(codes, str) else "invalid"
        response.data = {"code": code, "message": _flatten(response.data), "extra": response.data}
    elif response is not None and isinstance(response.data, list):
        response.data = {"code": "invalid", "message": _flatten(response.data), "extra": {}}
    if response is None:
        return None
    if response.status_code == status.HTTP_429_TOO_MANY_REQUESTS:
        response.data["code"] = "rate_limited"
    return response


def _flatten(data: Any) -> str:
    if isinstance(data, dict):
        if "detail" in data:
            return str(data["detail"])
        return "; ".join(f"{key}: {_flatten(value)}" for key, value in data.items())
    if isinstance(data, list):
        return " ".join(_flatten(item) for item in data)
    return str(data)


@csrf_exempt  # it changes nothing; a POST to a wrong path gets the JSON 404, not a CSRF page
def api_not_found(request: HttpRequest, unmatched: str = "") -> JsonResponse:
    """Any ``/api/`` path no route matches: a JSON 404 with code ``not_found`` (never the
    HTML page), naming the path with a slash when that one exists."""
    extra: dict[str, Any] = {"path": request.path[:200]}
    if not request.path.endswith("/"):
        try:
            match = resolve(request.path + "/")
        except Resolver404:
            match = None
        if match is not None and match.func is not api_not_found:
            extra["did_you_mean"] = request.path + "/"
    return JsonResponse({"code": "not_found", "message": gettext("No such API endpoint."), "extra": extra}, status=404)
