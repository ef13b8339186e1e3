"""The game screen (HTML), its JSON snapshot, and the seat actions as plain POST forms.

The screen plays over the table WebSocket (tables/realtime/consumers.py); these views give it its first
state, a snapshot to resynchronise from after a reconnect or a missed version, and a
fallback for browsers without JavaScript.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET, require_POST

from config.infra.errors import DomainError
from tables import commands, games
from tables.errors import TableNotFoundError
from tables.selectors import get_table_details, list_recent_hands
from tables.services import seating

SEAT_ACTIONS: dict[str, tuple[str, Promise]] = {
    "join": ("join", _("You are seated: you play from the next hand.")),
    "leave": ("leave", _("You left the table.")),
    "sit-out": ("sit_out", _("You sit out from the next hand and pay no ante.")),
    "sit-in": ("sit_in", _("You play again from the next hand.")),
}
"""The seat actions of the no-JavaScript forms: URL slug -> (action, confirmation)."""


class AuthenticatedHttpRequest(HttpRequest):
    """The request of a ``login_required`` view (for the type checker)."""

    user: User


def _snapshot(table_id: int, user_id: int) -> dict[str, Any]:
    """The public and private state of a table as the game screen consumes them: its game's
    frames (``Game.public_frame``, ``Game.private_frame``). Raises Http404."""
    try:
        game = games.game_of(table_id)
        return {"table": game.public_frame(table_id), "private": game.private_frame(table_id, user_id)}
    except TableNotFoundError as missing:
        raise Http404(str(missing)) from missing


@require_GET
def table_details(request: HttpRequest, table_id: int) -> HttpResponse:
    """Every condition of a table, as the lobby promises (seed 001, Rake: "Inside the Game
    Lobby the player can get information on the cost of the ante and on the rake"): ante,
    speed, rake, prizes, draws, redeals, jackpots, the next special hand and the changes
    staff have scheduled for after the running hand. Public: nothing here is secret."""
    try:
        details = get_table_details(table_id=table_id)
    except TableNotFoundError as missing:
        raise Http404(str(missing)) from missing
    return render(request, "tables/details.html", {"t": details})


@login_required
@require_GET
def table_page(request: AuthenticatedHttpRequest, table_id: int) -> HttpResponse:
    """The game screen of the table's game (``Game.page``: WiderPoker's board, purchases and
    results, tables/widerpoker/page.py; Hold'em's, tables/holdem/page.py), rendered with the
    current snapshot embedded; its script then follows the table socket."""
    try:
        game = games.game_of(table_id)
    except TableNotFoundError as missing:
        raise Http404(str(missing)) from missing
    return game.page(request, table_id)


@require_GET
def table_recall(request: HttpRequest, table_id: int) -> JsonResponse:
    """Game recall: ``{"hands": [...]}``, the table's last finished hands (``list_recent_hands``)."""
    if not request.user.is_authenticated:
        return JsonResponse({"code": "not_authenticated", "message": gettext("Log in first.")}, status=401)
    return JsonResponse({"hands": list_recent_hands(table_id=table_id, user_id=int(request.user.pk or 0))})


@require_GET
def table_snapshot(request: HttpRequest, table_id: int) -> JsonResponse:
    """``{"table": public state, "private": the caller's entry state}``; counts as presence.

    Never contains a running hand's secrets (server seed, change keys): the selectors leave
    them out until the hand is settled or cancelled.
    """
    if not request.user.is_authenticated:
        return JsonResponse({"code": "not_authenticated", "message": gettext("Log in first.")}, status=401)
    snapshot = _snapshot(table_id, request.user.pk)
    seating.touch_presence(table_id=table_id, user_id=request.user.pk, now=timezone.now())
    return JsonResponse(snapshot)


@login_required
@require_POST
def seat_action(request: AuthenticatedHttpRequest, table_id: int, action: str) -> HttpResponse:
    """Join, leave, sit out or sit in with a plain form (the screen uses the socket)."""
    if action not in SEAT_ACTIONS:
        raise Http404(f"no seat action {action!r}")
    name, done = SEAT_ACTIONS[action]
    try:
        game = games.game_of(table_id)
        parsed = commands.parse_body(name, request.POST, game=game)
        commands.execute(parsed, table_id=table_id, user_id=request.user.pk, now=timezone.now(), game=game)
    except TableNotFoundError as missing:
        raise Http404(str(missing)) from missing
    except DomainError as refusal:
        messages.error(request, refusal.for_people())
    else:
        messages.success(request, str(done))
        if action == "leave":
            return redirect("lobby")
    return redirect("table", table_id=table_id)
