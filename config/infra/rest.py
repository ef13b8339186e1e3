"""The REST plumbing every app's API shares: the error body's serializer, pagination, the
action throttles and the authenticated player's id (wallet/api.py, handhistory/api.py,
tables/api/). The exception handler that writes the error bodies is config/api.py."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.db.models import QuerySet
from rest_framework import serializers
from rest_framework.exceptions import NotAuthenticated
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.infra.throttles import ActionThrottles

# Play and wallet actions: the general limits plus the tighter per-player action rate,
# checked together (config/infra/throttles.py).
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
