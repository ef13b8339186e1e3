"""ASGI entry point: HTTP through Django, WebSockets through Channels.

WebSockets need a logged-in session and the page's own origin (scheme, host and port;
config/origin.py). In the embedded
default (``TABLE_CLOCK=in-process``) the table clock runs inside this process, started on
the first connection, because the in-memory channel layer cannot reach other processes.
"""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from config.origin import SameOriginValidator  # noqa: E402
from tables.api.purchase_door import RestPurchaseDoor  # noqa: E402
from tables.clock import ClockStarter  # noqa: E402
from tables.realtime.routing import websocket_urlpatterns  # noqa: E402

application = ClockStarter(
    ProtocolTypeRouter(
        {
            # The REST purchases it can answer exactly on the event loop (the writer's queue);
            # every other request, and those, otherwise, through Django.
            "http": RestPurchaseDoor(django_asgi_app),
            "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
        }
    )
)
