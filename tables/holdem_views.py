"""HTTP snapshot of a Hold'em table (what a client re-reads when it missed a push).

Adapters only: parse, call the Hold'em selectors, reply. The actions arrive through the
shared command path (``tables.commands``); this module only reads."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from tables import services
from tables.services.holdem.selectors import get_holdem_private_frame, get_holdem_table_frame
from wallet.errors import DomainError


@require_GET
def holdem_snapshot(request: HttpRequest, table_id: int) -> JsonResponse:
    """``{"table": HoldemTableFrame, "private": HoldemPrivateFrame}`` (tables/holdem_frames.py);
    counts as presence. 401 ``not_authenticated``; 404 ``table_not_found``; 409
    ``wrong_game`` for a WiderPoker table. Hole cards only in ``private``, only the
    caller's; the seed only once the hand is over."""
    if not request.user.is_authenticated:
        return JsonResponse({"code": "not_authenticated", "message": "log in first"}, status=401)
    now = timezone.now()
    user_id = int(request.user.pk or 0)
    try:
        table = get_holdem_table_frame(table_id=table_id, now=now)
        private = get_holdem_private_frame(table_id=table_id, user_id=user_id, now=now)
    except DomainError as error:
        return JsonResponse({"code": error.code, "message": str(error)}, status=error.http_status)
    services.touch_presence(table_id=table_id, user_id=user_id, now=now)
    return JsonResponse({"table": table, "private": private})
