"""The WebSocket origin check: scheme, host and port, not the host alone.

Channels' ``AllowedHostsOriginValidator`` compares only the Origin's host with
``ALLOWED_HOSTS``, so a page served from ``http://127.0.0.1:9999`` (any other program on the
player's machine or the operator's host) could open a player's table socket with his
session cookie (security audit F12). A socket is accepted here only when its ``Origin``
is exactly the origin the page itself was served from (the socket's own scheme, ``Host``
and port, the scheme taken from ``X-Forwarded-Proto`` when ``DJANGO_HTTPS`` trusts the
proxy), or one of ``DJANGO_CSRF_TRUSTED_ORIGINS``, and its ``Host`` is in ``ALLOWED_HOSTS``.
A socket without an Origin is refused: browsers always send one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

DEFAULT_PORTS = {"http": 80, "https": 443}
Origin = tuple[str, str, int]


def parse_origin(value: str) -> Origin | None:
    """``"https://Play.example:8443"`` -> ``("https", "play.example", 8443)``; the default
    port of the scheme when none is given; None for anything that is not an http(s) origin.

    >>> parse_origin("http://127.0.0.1")
    ('http', '127.0.0.1', 80)
    >>> parse_origin("null") is None
    True
    """
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/"):
        return None
    return parts.scheme, parts.hostname.lower(), port or DEFAULT_PORTS[parts.scheme]


def own_origin(scheme: str, host_header: str) -> Origin | None:
    """The origin a page reached at ``host_header`` over ``scheme`` (``http``/``https``) has."""
    return parse_origin(f"{scheme}://{host_header}")


def origin_allowed(scope: dict[str, Any], *, trusted: Iterable[str] | None = None) -> bool:
    """Whether a WebSocket handshake's ``Origin`` may open a socket (module docstring)."""
    headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope.get("headers", [])}
    origin = parse_origin(headers.get("origin", ""))
    host = headers.get("host", "")
    if origin is None or not host:
        return False
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return False
    scheme = "https" if scope.get("scheme") == "wss" else "http"
    proxy_header = settings.SECURE_PROXY_SSL_HEADER
    if proxy_header is not None:
        forwarded = headers.get(proxy_header[0].removeprefix("HTTP_").replace("_", "-").lower(), "")
        if forwarded.split(",")[0].strip() == proxy_header[1]:
            scheme = "https"
    allowed = {own_origin(scheme, host)}
    allowed.update(parse_origin(value) for value in (settings.CSRF_TRUSTED_ORIGINS if trusted is None else trusted))
    return origin in allowed


class SameOriginValidator:
    """ASGI middleware: refuses (HTTP 403 on the handshake) a WebSocket whose origin fails
    ``origin_allowed``."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket" and not origin_allowed(scope):
            denier = WebsocketDenier()
            return await denier(scope, receive, send)
        return await self.application(scope, receive, send)
