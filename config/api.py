"""REST API plumbing every app's API shares: the exception handler that turns domain errors into
stable error bodies, the error body's serializer, pagination, the action throttles and the
authenticated player's id. No domain code: each app's API lives in its app (wallet/api.py,
handhistory/api.py, tables/api/)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.db.models import QuerySet
from django.http import HttpRequest, JsonResponse
from django.urls import Resolver404, resolve
from django.utils.translation import gettext
from django.views.decorators.csrf import csrf_exempt
from rest_framework import serializers, status
from rest_framework.exceptions import NotAuthenticated
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from config.errors import DomainError
from config.throttles import ActionThrottles


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


# --- the REST plumbing every app's API shares ------------------------------------------

# Play and wallet actions: the general limits plus the tighter per-player action rate,
# checked together (config/throttles.py).
ACTION_THROTTLES = [ActionThrottles]


class ErrorSerializer(serializers.Serializer[Any]):
    """The body of every error answer (config.api.exception_handler)."""

    code = serializers.CharField(help_text="Stable machine-readable code, e.g. phase_closed.")
    message = serializers.CharField()
    extra = serializers.JSONField()


def request_player_id(request: Request) -> int:
    """The id of the authenticated player (every view requires authentication)."""
    user_id = request.user.pk
    if not isinstance(user_id, int):
        raise NotAuthenticated()
    return user_id


def paginate(
    view: APIView,
    request: Request,
    items: QuerySet[Any] | Sequence[Any],
    serializer_class: type[serializers.Serializer[Any]],
    describe: Callable[[list[Any]], list[Any]] = list,
) -> Response:
    """One page of ``items`` (a queryset or list), each page's rows passed through
    ``describe`` before serialising, in the paginator's envelope."""
    paginator = ApiPagination()
    page: list[Any] | None = paginator.paginate_queryset(items, request, view=view)  # type: ignore[arg-type]  # querysets and lists both page
    assert page is not None
    return paginator.get_paginated_response(serializer_class(describe(page), many=True).data)


class ApiPagination(PageNumberPagination):
    """``?page=N&page_size=M`` (at most 200 a page)."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


ERRORS = {400: ErrorSerializer, 404: ErrorSerializer, 409: ErrorSerializer}
