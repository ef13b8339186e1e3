"""Who is asking: the client address behind the configured proxies, and the lockout reply.

Throttles (DRF's ``NUM_PROXIES``) and login lockouts (django-axes) must key on the same
address, or an attacker behind one could dodge the other. Both follow ``DJANGO_NUM_PROXIES``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext


def client_ip(request: HttpRequest) -> str:
    """The client's address: the socket peer, or with ``NUM_PROXIES = n > 0`` the n-th
    address from the right of ``X-Forwarded-For`` (what the outermost trusted proxy saw),
    exactly as DRF's throttles resolve it.

    >>> from django.test import RequestFactory
    >>> client_ip(RequestFactory().get("/", REMOTE_ADDR="10.0.0.7"))
    '10.0.0.7'
    """
    remote = str(request.META.get("REMOTE_ADDR") or "")
    proxies = int(getattr(settings, "NUM_PROXIES", 0))
    forwarded = str(request.META.get("HTTP_X_FORWARDED_FOR") or "")
    if proxies and forwarded:
        addresses = [part.strip() for part in forwarded.split(",") if part.strip()]
        if addresses:
            return addresses[-min(proxies, len(addresses))]
    return remote


def lockout_response(request: HttpRequest, original_response: HttpResponse | None, credentials: Any) -> HttpResponse:
    """django-axes' reply to a locked-out login: ``429`` with a stable code.

    API clients (``/api/`` paths or JSON requests) get ``{"code": "login_locked_out",
    "message", "extra": {"retry_after_seconds"}}``; people get the login page's lockout text.
    """
    seconds = int(settings.AXES_COOLOFF_TIME.total_seconds())
    message = gettext("Too many failed logins. Try again in %(minutes)s minutes.") % {"minutes": seconds // 60}
    if request.path.startswith("/api/") or "json" in str(request.META.get("HTTP_ACCEPT", "")):
        response: HttpResponse = JsonResponse(
            {"code": "login_locked_out", "message": message, "extra": {"retry_after_seconds": seconds}},
            status=429,
        )
    else:
        response = render(request, "lobby/locked_out.html", {"message": message}, status=429)
    response["Retry-After"] = str(seconds)
    return response
