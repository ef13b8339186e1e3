"""ASGI entry point: HTTP through Django, WebSockets through Channels.

WebSockets need a logged-in session and the page's own origin (scheme, host and port;
config/origin.py). In the embedded
default (``TABLE_CLOCK=in-process``) the table clock runs inside this process, started on
the first connection, because the in-memory channel layer cannot reach other processes.
"""

from __future__ import annotations

import gc
import os
import sys

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_asgi_app = get_asgi_application()

from django.conf import settings  # noqa: E402

# The event loop thread gets the GIL back sooner after each write or read of a socket while
# another thread runs Python (the private states' rendering): docs/deployment.md.
sys.setswitchinterval(settings.ASGI_SWITCH_INTERVAL)

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

# Every socket keeps a few hundred objects alive for as long as it is open, so a process
# holding thousands of them has millions of long-lived objects, and each of the cyclic
# collector's full collections walks them all with the event loop stopped. The modules and
# settings loaded above are moved out of its reach for good (gc.freeze), and it collects
# less often: docs/deployment.md, POKER_ASGI_GC_THRESHOLDS. (None in the test settings:
# test processes import this module and keep CPython's collector.)
if settings.ASGI_GC_THRESHOLDS is not None:
    gc.freeze()
    gc.set_threshold(*settings.ASGI_GC_THRESHOLDS)
